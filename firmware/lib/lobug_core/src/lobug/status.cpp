#include "lobug/status.h"

namespace lobug {

Problem classify_result(int http_status, NetError error) {
  switch (error) {
    case NetError::NoWifi: return Problem::NoWifi;
    case NetError::Connect: return Problem::ServerUnreachable;
    case NetError::Timeout: return Problem::Timeout;
    case NetError::Broken: return Problem::BadReply;
    case NetError::None: break;
  }
  if (http_status == 200) return Problem::None;
  if (http_status == 401) return Problem::Unauthorized;
  if (http_status >= 500) return Problem::ServerError;
  if (http_status >= 400) return Problem::Rejected;
  return Problem::BadReply;  // 1xx/2xx other than 200/3xx: not what the contract promises
}

bool suggests_server_down(Problem problem) {
  return problem == Problem::ServerUnreachable || problem == Problem::Timeout;
}

ProblemText describe_problem(Problem problem, int http_status, std::string_view error_code) {
  std::string status = std::to_string(http_status);
  std::string code(error_code);
  switch (problem) {
    case Problem::None: return {"", ""};
    case Problem::NoWifi: return {"No WiFi", "retrying..."};
    case Problem::ServerUnreachable: return {"Server unreachable", "retrying..."};
    case Problem::Unauthorized: return {"Token rejected (401)", "set token over serial"};
    case Problem::Rejected: return {"Request refused (" + status + ")", code};
    case Problem::ServerError: return {"Server error " + status, code};
    case Problem::Timeout: return {"Server timed out", "try again"};
    case Problem::BadReply: return {"Bad reply", code.empty() ? "try again" : code};
  }
  return {"?", ""};
}

Face face_for(AppState state) {
  switch (state) {
    case AppState::Connecting: return Face::Thinking;
    case AppState::Idle: return Face::Idle;
    case AppState::Listening: return Face::Listening;
    case AppState::Thinking: return Face::Thinking;
    case AppState::Speaking: return Face::Speaking;
    case AppState::Reacting: return Face::Happy;
    case AppState::Error: return Face::Error;
  }
  return Face::Idle;
}

const char* app_state_name(AppState state) {
  switch (state) {
    case AppState::Connecting: return "connecting";
    case AppState::Idle: return "idle";
    case AppState::Listening: return "listening";
    case AppState::Thinking: return "thinking";
    case AppState::Speaking: return "speaking";
    case AppState::Reacting: return "reacting";
    case AppState::Error: return "error";
  }
  return "?";
}

}  // namespace lobug
