// What went wrong, in words the screen can show, and what the face looks like in each state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lobug {

enum class NetError {
  None,
  NoWifi,
  Connect,   // refused / unreachable / DNS
  Timeout,   // connected, but no (complete) answer in time
  Broken,    // connection lost mid-answer, or an answer that is not HTTP/JSON/WAV
};

enum class Problem {
  None,
  NoWifi,
  ServerUnreachable,
  Unauthorized,   // 401: wrong or missing token
  Rejected,       // other 4xx: the request was refused (too large, bad audio, ...)
  ServerError,    // 5xx: e.g. 503 llm_unavailable
  Timeout,
  BadReply,
};

// The device checks only for 200 (the contract); everything else is a problem.
Problem classify_result(int http_status, NetError error);
// Problems after which the server may be gone: the link goes back to checking /health.
bool suggests_server_down(Problem problem);

// Two short lines for the screen, e.g. "Server error 503" / "llm_unavailable".
struct ProblemText {
  std::string title;
  std::string detail;
};
ProblemText describe_problem(Problem problem, int http_status, std::string_view error_code);

enum class AppState { Connecting, Idle, Listening, Thinking, Speaking, Reacting, Error };
enum class Face { Idle, Listening, Thinking, Speaking, Happy, Error };

Face face_for(AppState state);
const char* app_state_name(AppState state);

}  // namespace lobug
