// The xiaozhi session state machine against a fake socket: connect, hello, a turn ended by the
// server, speaking, barge-in, the server speaking first, failures and reconnecting.
#include <string>
#include <vector>

#include "lobug/json_lite.h"
#include "lobug/xiaozhi_session.h"
#include "runner.h"

using namespace lobug;
using namespace lobug::xiaozhi;

namespace {

class FakeLink : public SessionLink {
 public:
  bool open() override {
    ++opens;
    return open_works;
  }
  bool send_text(const std::string& text) override {
    texts.push_back(text);
    return sends_work;
  }
  bool send_binary(const uint8_t* data, size_t size) override {
    binaries.emplace_back(data, data + size);
    return sends_work;
  }
  void close() override { ++closes; }

  std::string last_type() const {
    JsonFields json;
    return !texts.empty() && json.parse(texts.back()) ? json.string("type") : "";
  }
  std::string last_field(const char* path) const {
    JsonFields json;
    return !texts.empty() && json.parse(texts.back()) ? json.string(path) : "";
  }

  int opens = 0, closes = 0;
  bool open_works = true, sends_work = true;
  std::vector<std::string> texts;
  std::vector<std::vector<uint8_t>> binaries;
};

const char* kHello =
    R"({"type":"hello","transport":"websocket","session_id":"sess-1",
        "audio_params":{"format":"opus","sample_rate":24000,"channels":1,"frame_duration":60}})";

void greet(Session& session, FakeLink& link, uint32_t now = 0) {
  session.start(now);
  session.on_connected(now + 10);
  CHECK_EQ(link.last_type(), std::string("hello"));
  session.on_text(now + 20, kHello);
  CHECK(session.state() == SessionState::Idle);
}

const uint8_t kOpus[] = {0xF8, 0xFF, 0xFE};

}  // namespace

TEST(session_connects_greets_and_keeps_the_server_hello) {
  FakeLink link;
  SessionConfig config;
  config.version = 2;
  Session session(link, config);
  CHECK(session.state() == SessionState::Disconnected);
  session.start(0);
  CHECK(session.state() == SessionState::Connecting);
  CHECK_EQ(link.opens, 1);
  session.on_connected(10);
  CHECK(session.state() == SessionState::Greeting);
  JsonFields hello;
  CHECK(hello.parse(link.texts.at(0)));
  CHECK_EQ(hello.integer("version", 0), 2LL);
  CHECK_EQ(hello.integer("audio_params.sample_rate", 0), 16000LL);
  CHECK(!session.ready());
  session.on_text(20, kHello);
  CHECK(session.ready());
  CHECK_EQ(session.session_id(), std::string("sess-1"));
  CHECK_EQ(session.server_audio().sample_rate, 24000u);
  CHECK(!session.streams_mic());
}

TEST(session_streams_until_the_server_ends_the_turn) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  CHECK(!session.send_audio(100, kOpus, sizeof kOpus));  // idle: the mic is not sent
  CHECK(session.begin_listening(100));
  CHECK_EQ(link.texts.back(),
           std::string(R"({"session_id":"sess-1","type":"listen","state":"start","mode":"auto"})"));
  // No fixed silence wait, no 5 s cap: 20 s of speech and pauses are all streamed.
  for (uint32_t t = 100; t < 20100; t += 60) {
    session.tick(t, 0);
    CHECK(session.send_audio(t, kOpus, sizeof kOpus));
  }
  CHECK_EQ(session.frames_sent(), uint32_t(334));
  CHECK_EQ(link.binaries.back(), std::vector<uint8_t>(kOpus, kOpus + 3));  // version 1: bare
  session.on_text(20200, R"({"session_id":"sess-1","type":"stt","text":"remind me at six"})");
  CHECK(session.state() == SessionState::Thinking);
  CHECK_EQ(session.heard(), std::string("remind me at six"));
  CHECK(!session.send_audio(20260, kOpus, sizeof kOpus));  // the turn is over: nothing more
  session.on_text(20300, R"({"type":"llm","emotion":"happy","text":"x"})");
  CHECK_EQ(session.emotion(), std::string("happy"));
  session.on_text(20400, R"({"type":"tts","state":"start"})");
  CHECK(session.state() == SessionState::Speaking);
  session.on_text(20410, R"({"type":"tts","state":"sentence_start","text":"I will remind you."})");
  CHECK_EQ(session.sentence(), std::string("I will remind you."));
  AudioFrame frame = session.on_binary(20420, kOpus, sizeof kOpus);
  CHECK(frame.error == FrameError::None && frame.size == 3);
  session.on_text(21000, R"({"type":"tts","state":"stop"})");
  CHECK(session.state() == SessionState::Idle);
  uint32_t sent_texts = uint32_t(link.texts.size());
  CHECK_EQ(sent_texts, uint32_t(2));  // hello and listen start: the server ended the turn
}

TEST(session_tts_start_while_listening_ends_the_turn_too) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.begin_listening(100);
  session.on_text(900, R"({"type":"tts","state":"start"})");
  CHECK(session.state() == SessionState::Speaking);
  CHECK(!session.streams_mic());
}

TEST(session_audio_is_played_only_while_speaking) {
  FakeLink link;
  SessionConfig config;
  config.version = 3;
  Session session(link, config);
  greet(session, link);
  std::vector<uint8_t> framed;
  CHECK(encode_audio_frame(3, kOpus, sizeof kOpus, 0, &framed));
  CHECK_EQ(session.on_binary(50, framed.data(), framed.size()).size, size_t(0));  // idle
  session.begin_listening(100);
  CHECK_EQ(session.on_binary(150, framed.data(), framed.size()).size, size_t(0));  // listening
  session.on_text(200, R"({"type":"tts","state":"start"})");
  AudioFrame frame = session.on_binary(250, framed.data(), framed.size());
  CHECK_EQ(frame.size, size_t(3));
  CHECK_EQ(frame.payload[0], uint8_t(0xF8));
  AudioFrame broken = session.on_binary(260, framed.data(), framed.size() - 1);
  CHECK(broken.error == FrameError::Truncated && broken.size == 0);
  CHECK(session.state() == SessionState::Speaking);  // a bad frame is dropped, not fatal
}

TEST(session_manual_stop_sends_listen_stop) {
  FakeLink link;
  SessionConfig config;
  config.mode = ListenMode::Manual;
  Session session(link, config);
  greet(session, link);
  session.begin_listening(100);
  CHECK_EQ(link.last_field("mode"), std::string("manual"));
  CHECK(session.end_listening(3000));
  CHECK_EQ(link.last_field("state"), std::string("stop"));
  CHECK(session.state() == SessionState::Thinking);
  CHECK(!session.end_listening(3100));
}

TEST(session_barge_in_aborts_and_drops_the_rest_of_the_reply) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  CHECK(!session.barge_in(50));  // nothing to interrupt
  session.begin_listening(100);
  session.on_text(500, R"({"type":"stt","text":"tell me a story"})");
  session.on_text(600, R"({"type":"tts","state":"start"})");
  uint32_t generation = session.playback_generation();
  CHECK(session.barge_in(900));
  CHECK_EQ(link.texts.back(), std::string(R"({"session_id":"sess-1","type":"abort"})"));
  CHECK(session.playback_generation() != generation);
  CHECK(session.state() == SessionState::Idle);
  // The next turn starts at once; the aborted reply's late audio and stop end nothing.
  CHECK(session.begin_listening(910));
  CHECK_EQ(session.on_binary(920, kOpus, sizeof kOpus).size, size_t(0));
  session.on_text(930, R"({"type":"tts","state":"sentence_start","text":"Once upon"})");
  session.on_text(940, R"({"type":"tts","state":"stop"})");
  CHECK(session.state() == SessionState::Listening);
  CHECK(session.sentence().empty());
  CHECK(session.send_audio(950, kOpus, sizeof kOpus));
}

TEST(session_speech_barge_in_gives_its_reason) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.on_text(100, R"({"type":"tts","state":"start"})");
  CHECK(session.barge_in(200, "wake_word_detected"));
  CHECK_EQ(link.last_field("reason"), std::string("wake_word_detected"));
}

TEST(session_server_abort_stops_playback) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.on_text(100, R"({"type":"tts","state":"start"})");
  uint32_t generation = session.playback_generation();
  session.on_text(200, R"({"type":"abort"})");
  CHECK(session.state() == SessionState::Idle);
  CHECK(session.playback_generation() != generation);
}

TEST(session_server_speaks_first_from_idle) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.on_text(60000, R"({"type":"tts","state":"start"})");
  CHECK(session.state() == SessionState::Speaking);
  session.on_text(60010, R"({"type":"tts","state":"sentence_start","text":"Call Anna."})");
  CHECK_EQ(session.sentence(), std::string("Call Anna."));
  CHECK_EQ(session.on_binary(60020, kOpus, sizeof kOpus).size, size_t(3));
  session.on_text(61000, R"({"type":"tts","state":"stop"})");
  CHECK(session.state() == SessionState::Idle);
}

TEST(session_continue_conversation_listens_again_after_a_reply) {
  FakeLink link;
  SessionConfig config;
  config.continue_conversation = true;
  Session session(link, config);
  greet(session, link);
  session.begin_listening(100);
  session.on_text(500, R"({"type":"tts","state":"start"})");
  session.on_text(900, R"({"type":"tts","state":"stop"})");
  CHECK(session.state() == SessionState::Listening);
  CHECK_EQ(link.last_field("state"), std::string("start"));
}

TEST(session_realtime_keeps_the_mic_open_while_speaking) {
  FakeLink link;
  SessionConfig config;
  config.mode = ListenMode::Realtime;
  Session session(link, config);
  greet(session, link);
  session.begin_listening(100);
  session.on_text(500, R"({"type":"stt","text":"hi"})");
  CHECK(session.streams_mic());
  session.on_text(600, R"({"type":"tts","state":"start"})");
  CHECK(session.streams_mic());
  CHECK(session.send_audio(700, kOpus, sizeof kOpus));
}

TEST(session_version_2_frames_carry_the_time_since_listening_began) {
  FakeLink link;
  SessionConfig config;
  config.version = 2;
  Session session(link, config);
  greet(session, link);
  session.begin_listening(1000);
  session.send_audio(1060, kOpus, sizeof kOpus);
  AudioFrame frame = decode_audio_frame(2, link.binaries.back().data(), link.binaries.back().size());
  CHECK(frame.error == FrameError::None);
  CHECK_EQ(frame.timestamp_ms, 60u);
  CHECK_EQ(frame.size, size_t(3));
}

TEST(session_without_hello_gives_up_and_reconnects_with_backoff) {
  FakeLink link;
  SessionConfig config;
  config.reconnect = BackoffConfig{1000, 8000, 2, 0};
  Session session(link, config);
  session.start(0);
  session.on_connected(5);
  session.tick(9000, 0);
  CHECK(session.state() == SessionState::Greeting);
  session.tick(10005, 0);
  CHECK(session.state() == SessionState::Disconnected);
  CHECK_EQ(link.closes, 1);
  CHECK_EQ(session.last_problem(), std::string("no hello from the server"));
  session.tick(10900, 0);
  CHECK_EQ(link.opens, 1);
  session.tick(11005, 0);  // 1 s later
  CHECK_EQ(link.opens, 2);
  session.on_closed(11100, 0);  // refused
  session.tick(13000, 0);
  CHECK_EQ(link.opens, 2);
  session.tick(13100, 0);  // 2 s later
  CHECK_EQ(link.opens, 3);
  session.on_connected(13200);
  session.on_text(13300, kHello);
  CHECK(session.ready());
  session.on_closed(50000, 0);  // after a good hello the backoff starts again at 1 s
  session.tick(51000, 0);
  CHECK_EQ(link.opens, 4);
}

TEST(session_refuses_a_hello_for_another_transport) {
  FakeLink link;
  Session session(link, SessionConfig{});
  session.start(0);
  session.on_connected(1);
  session.on_text(2, R"({"type":"hello","transport":"udp"})");
  CHECK(session.state() == SessionState::Disconnected);
  CHECK_EQ(link.closes, 1);
}

TEST(session_connection_lost_mid_reply_stops_playback) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.on_text(100, R"({"type":"tts","state":"start"})");
  uint32_t generation = session.playback_generation();
  session.on_closed(200, 0);
  CHECK(session.state() == SessionState::Disconnected);
  CHECK(session.playback_generation() != generation);
  CHECK(!session.begin_listening(300));
  CHECK(!session.send_audio(300, kOpus, sizeof kOpus));
}

TEST(session_a_silent_server_does_not_hold_the_device) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.begin_listening(0);
  session.tick(59999, 0);
  CHECK(session.state() == SessionState::Listening);
  session.tick(60000, 0);  // the safety net: listen stop, wait for a reply
  CHECK(session.state() == SessionState::Thinking);
  CHECK_EQ(link.last_field("state"), std::string("stop"));
  session.tick(89999, 0);
  CHECK(session.state() == SessionState::Thinking);
  session.tick(90000, 0);
  CHECK(session.state() == SessionState::Idle);
  CHECK_EQ(session.last_problem(), std::string("no reply from the server"));
}

TEST(session_failed_sends_close_the_connection) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  link.sends_work = false;
  CHECK(!session.begin_listening(100));
  CHECK(session.state() == SessionState::Disconnected);
  FakeLink refusing;
  refusing.open_works = false;
  Session other(refusing, SessionConfig{});
  other.start(0);
  CHECK(other.state() == SessionState::Disconnected);
  other.stop();
  other.tick(100000, 0);
  CHECK_EQ(refusing.opens, 1);  // stopped: no reconnecting
}

TEST(session_ignores_garbage_and_unknown_messages) {
  FakeLink link;
  Session session(link, SessionConfig{});
  greet(session, link);
  session.begin_listening(100);
  for (const char* text : {"", "{", "null", R"({"type":"mcp","payload":{"method":"tools/list"}})",
                           R"({"type":"iot"})", R"({"type":"tts"})"}) {
    session.on_text(200, text);
  }
  CHECK(session.state() == SessionState::Listening);
}

TEST(session_a_clock_read_before_the_last_event_is_not_a_timeout) {
  FakeLink link;
  Session session(link, SessionConfig{});
  session.start(1000);
  session.on_connected(1030);  // the socket ran after the loop read the clock
  session.tick(1000, 0);
  CHECK(session.state() == SessionState::Greeting);
  session.on_text(1040, kHello);
  session.begin_listening(1050);
  session.tick(1045, 0);
  CHECK(session.state() == SessionState::Listening);
}
