// One device's xiaozhi WebSocket session as a state machine, fed with what happens (the socket
// opened or closed, a message arrived, the person pressed or spoke, time passed) and acting
// through a SessionLink (the socket). No hardware, no clock of its own: host-tested.
//
//   Disconnected --start/backoff--> Connecting --open--> Greeting (client hello sent)
//   Greeting --server hello--> Idle --begin_listening--> Listening (mic frames streamed)
//   Listening --stt / tts start (the server's endpointing: the turn is over)--> Thinking/Speaking
//   Listening --end_listening (pressed again)--> Thinking (listen stop sent)
//   Thinking --tts start--> Speaking --tts stop--> Idle (or Listening, continue_conversation)
//   Speaking --barge_in (button or speech): abort sent, playback dropped--> Idle
//   Idle --tts start (the server speaks first: a reminder)--> Speaking
//   any --socket closed / hello timeout--> Disconnected, reconnect after a backoff
//
// Listening has no fixed silence wait and no length cap of its own: the server's endpointing
// ends the turn. max_listen_ms is only a safety net for a server that never answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lobug/backoff.h"
#include "lobug/xiaozhi.h"

namespace lobug {
namespace xiaozhi {

class SessionLink {
 public:
  virtual ~SessionLink() = default;
  // Starts opening the WebSocket; the outcome arrives as on_connected() or on_closed().
  virtual bool open() = 0;
  virtual bool send_text(const std::string& text) = 0;
  virtual bool send_binary(const uint8_t* data, size_t size) = 0;
  virtual void close() = 0;
};

enum class SessionState { Disconnected, Connecting, Greeting, Idle, Listening, Thinking, Speaking };
const char* session_state_name(SessionState state);

struct SessionConfig {
  int version = 1;                    // binary protocol version (the OTA answer's)
  AudioParams mic;                    // what the device sends: Opus, 16 kHz, mono, 60 ms
  ListenMode mode = ListenMode::Auto;  // auto: the server's endpointing ends the turn
  bool continue_conversation = false;  // after a reply, listen again without a trigger
  uint32_t connect_timeout_ms = 10000;
  uint32_t hello_timeout_ms = 10000;  // the xiaozhi firmware's
  uint32_t reply_timeout_ms = 30000;  // Thinking / Speaking with nothing from the server
  uint32_t max_listen_ms = 60000;     // a safety net, not a cut: the server ends turns
  BackoffConfig reconnect{1000, 30000, 2, 20};
};

class Session {
 public:
  Session(SessionLink& link, const SessionConfig& config) : link_(link), config_(config) {}

  void start(uint32_t now);  // connect now (from Disconnected)
  void stop();               // close and stay disconnected
  void tick(uint32_t now, uint32_t random);  // timeouts and reconnecting

  void on_connected(uint32_t now);
  void on_closed(uint32_t now, uint32_t random);
  ServerMessage on_text(uint32_t now, std::string_view json);
  // A binary message from the server: the Opus packet to play (error set, size 0 when the
  // frame is malformed or the device is not speaking: late audio of an aborted reply).
  AudioFrame on_binary(uint32_t now, const uint8_t* data, size_t size);

  bool begin_listening(uint32_t now);  // Idle -> Listening (listen start, the configured mode)
  bool end_listening(uint32_t now);    // Listening -> Thinking (listen stop: manual end)
  bool barge_in(uint32_t now, std::string_view reason = "");  // Speaking -> Idle, abort sent
  // One encoded mic frame, framed for the protocol version; false when not streaming now.
  bool send_audio(uint32_t now, const uint8_t* opus, size_t size);

  SessionState state() const { return state_; }
  bool ready() const { return state_ >= SessionState::Idle; }
  bool streams_mic() const;
  bool plays_audio() const { return state_ == SessionState::Speaking; }
  // Bumped whenever queued reply audio must be dropped at once (barge-in, server abort).
  uint32_t playback_generation() const { return playback_generation_; }
  const std::string& session_id() const { return session_id_; }
  const AudioParams& server_audio() const { return server_audio_; }
  const std::string& heard() const { return heard_; }        // the last stt text
  const std::string& sentence() const { return sentence_; }  // the sentence being spoken
  const std::string& emotion() const { return emotion_; }
  const std::string& last_problem() const { return problem_; }
  uint32_t frames_sent() const { return frames_sent_; }

 private:
  void enter(SessionState state, uint32_t now);
  void fail(uint32_t now, uint32_t random, const std::string& why);
  void on_hello(uint32_t now, const ServerMessage& message);
  void on_reply_over(uint32_t now);
  bool send(const std::string& text);

  SessionLink& link_;
  SessionConfig config_;
  Backoff backoff_{config_.reconnect};
  SessionState state_ = SessionState::Disconnected;
  uint32_t state_since_ms_ = 0;
  uint32_t last_heard_ms_ = 0;      // the last message of any kind from the server
  uint32_t reconnect_at_ms_ = 0;
  bool reconnect_pending_ = false;
  bool stopped_ = true;
  uint32_t playback_generation_ = 0;
  uint32_t frames_sent_ = 0;
  uint32_t first_frame_ms_ = 0;
  std::string session_id_;
  AudioParams server_audio_{"opus", kDefaultServerRate, 1, kDefaultServerFrameMs};
  std::string heard_;
  std::string sentence_;
  std::string emotion_;
  std::string problem_;
  std::vector<uint8_t> frame_buffer_;
};

}  // namespace xiaozhi
}  // namespace lobug
