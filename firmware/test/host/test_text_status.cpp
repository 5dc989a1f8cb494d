#include <string>
#include <vector>

#include "lobug/status.h"
#include "lobug/text.h"
#include "runner.h"

using namespace lobug;

using Lines = std::vector<std::string>;

TEST(text_ascii_folding_for_the_screen) {
  CHECK_EQ(to_display_ascii("It\xE2\x80\x99s \xE2\x80\x9C" "fine\xE2\x80\x9D \xE2\x80\x94 ok\xE2\x80\xA6"),
           std::string("It's \"fine\" - ok..."));
  CHECK_EQ(to_display_ascii("caf\xC3\xA9\n\xF0\x9F\x98\x80!"), std::string("caf? ?!"));
  CHECK_EQ(to_display_ascii("bad \xC3 byte"), std::string("bad ? byte"));
  CHECK_EQ(to_display_ascii(std::string("nul\0x", 5)), std::string("nulx"));
}

TEST(text_wraps_at_words) {
  CHECK_EQ(wrap_text("the quick brown fox jumps", 10, 5), (Lines{"the quick", "brown fox", "jumps"}));
  CHECK_EQ(wrap_text("  spaced   out  ", 20, 5), (Lines{"spaced out"}));
  CHECK_EQ(wrap_text("", 10, 3), Lines{});
  CHECK_EQ(wrap_text("abcdefghijklmnop xy", 6, 5), (Lines{"abcdef", "ghijkl", "mnop", "xy"}));
}

TEST(text_too_long_ends_with_an_ellipsis) {
  CHECK_EQ(wrap_text("one two three four five six", 9, 2), (Lines{"one two", "three..."}));
  CHECK_EQ(wrap_text("aaaa bbbb cccc", 4, 2), (Lines{"aaaa", "b..."}));
  for (const std::string& line : wrap_text(std::string(500, 'x'), 26, 6)) CHECK(line.size() <= 26);
}

TEST(status_classifies_results) {
  CHECK_EQ(classify_result(200, NetError::None), Problem::None);
  CHECK_EQ(classify_result(401, NetError::None), Problem::Unauthorized);
  CHECK_EQ(classify_result(413, NetError::None), Problem::Rejected);
  CHECK_EQ(classify_result(503, NetError::None), Problem::ServerError);
  CHECK_EQ(classify_result(204, NetError::None), Problem::BadReply);
  CHECK_EQ(classify_result(0, NetError::Timeout), Problem::Timeout);
  CHECK_EQ(classify_result(0, NetError::Connect), Problem::ServerUnreachable);
  CHECK_EQ(classify_result(0, NetError::NoWifi), Problem::NoWifi);
  CHECK_EQ(classify_result(200, NetError::Broken), Problem::BadReply);
  CHECK(suggests_server_down(Problem::ServerUnreachable));
  CHECK(suggests_server_down(Problem::Timeout));
  CHECK(!suggests_server_down(Problem::ServerError));  // it answered: it is there
}

TEST(status_problem_text_names_the_cause) {
  ProblemText text = describe_problem(Problem::ServerError, 503, "llm_unavailable");
  CHECK_EQ(text.title, std::string("Server error 503"));
  CHECK_EQ(text.detail, std::string("llm_unavailable"));
  CHECK_EQ(describe_problem(Problem::Unauthorized, 401, "unauthorized").title,
           std::string("Token rejected (401)"));
  CHECK_EQ(describe_problem(Problem::Rejected, 413, "audio_too_large").title,
           std::string("Request refused (413)"));
}

TEST(status_every_state_has_a_face) {
  CHECK_EQ(face_for(AppState::Idle), Face::Idle);
  CHECK_EQ(face_for(AppState::Listening), Face::Listening);
  CHECK_EQ(face_for(AppState::Thinking), Face::Thinking);
  CHECK_EQ(face_for(AppState::Speaking), Face::Speaking);
  CHECK_EQ(face_for(AppState::Reacting), Face::Happy);
  CHECK_EQ(face_for(AppState::Error), Face::Error);
  CHECK_EQ(face_for(AppState::Connecting), Face::Thinking);
}
