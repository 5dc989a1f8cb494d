#include "lobug/xiaozhi_session.h"

namespace lobug {
namespace xiaozhi {

const char* session_state_name(SessionState state) {
  switch (state) {
    case SessionState::Disconnected: return "disconnected";
    case SessionState::Connecting: return "connecting";
    case SessionState::Greeting: return "greeting";
    case SessionState::Idle: return "idle";
    case SessionState::Listening: return "listening";
    case SessionState::Thinking: return "thinking";
    case SessionState::Speaking: return "speaking";
  }
  return "disconnected";
}

void Session::enter(SessionState state, uint32_t now) {
  state_ = state;
  state_since_ms_ = now;
  last_heard_ms_ = now;
}

bool Session::send(const std::string& text) { return link_.send_text(text); }

void Session::start(uint32_t now) {
  stopped_ = false;
  reconnect_pending_ = false;
  if (state_ != SessionState::Disconnected) return;
  enter(SessionState::Connecting, now);
  if (!link_.open()) fail(now, 0, "could not open the WebSocket");
}

void Session::stop() {
  stopped_ = true;
  reconnect_pending_ = false;
  if (state_ != SessionState::Disconnected) link_.close();
  state_ = SessionState::Disconnected;
}

// Closes the socket and schedules the next attempt after a growing, jittered delay.
void Session::fail(uint32_t now, uint32_t random, const std::string& why) {
  problem_ = why;
  if (state_ == SessionState::Speaking) ++playback_generation_;
  if (state_ != SessionState::Disconnected) link_.close();
  state_ = SessionState::Disconnected;
  state_since_ms_ = now;
  if (stopped_) return;
  reconnect_pending_ = true;
  reconnect_at_ms_ = now + backoff_.next_delay(random);
}

// Deadlines are compared with reached(): a `now` taken before the last event (the loop's
// clock, read before the socket ran) is not a huge elapsed time.
void Session::tick(uint32_t now, uint32_t random) {
  auto after = [now](uint32_t since, uint32_t span) { return reached(now, since + span); };
  switch (state_) {
    case SessionState::Disconnected:
      if (reconnect_pending_ && reached(now, reconnect_at_ms_)) start(now);
      break;
    case SessionState::Connecting:
      if (after(state_since_ms_, config_.connect_timeout_ms)) fail(now, random, "connection timed out");
      break;
    case SessionState::Greeting:
      if (after(state_since_ms_, config_.hello_timeout_ms)) fail(now, random, "no hello from the server");
      break;
    case SessionState::Listening:
      if (after(state_since_ms_, config_.max_listen_ms)) end_listening(now);
      break;
    case SessionState::Thinking:
    case SessionState::Speaking:
      if (after(last_heard_ms_, config_.reply_timeout_ms)) {
        problem_ = "no reply from the server";
        if (state_ == SessionState::Speaking) ++playback_generation_;
        enter(SessionState::Idle, now);
      }
      break;
    case SessionState::Idle:
      break;
  }
}

void Session::on_connected(uint32_t now) {
  if (state_ != SessionState::Connecting) return;
  enter(SessionState::Greeting, now);
  if (!send(client_hello(config_.version, config_.mic))) fail(now, 0, "could not send hello");
}

void Session::on_closed(uint32_t now, uint32_t random) {
  if (state_ == SessionState::Disconnected) return;
  fail(now, random, state_ == SessionState::Connecting ? "could not connect" : "connection closed");
}

void Session::on_hello(uint32_t now, const ServerMessage& message) {
  if (state_ != SessionState::Greeting) return;  // a second hello changes nothing
  if (!message.websocket_transport) {
    fail(now, 0, "the server's hello is not for a websocket transport");
    return;
  }
  session_id_ = message.session_id;
  server_audio_ = message.audio;
  backoff_.reset();
  problem_.clear();
  enter(SessionState::Idle, now);
}

// tts stop: the reply has been sent; what is queued still plays out.
void Session::on_reply_over(uint32_t now) {
  enter(SessionState::Idle, now);
  if (config_.continue_conversation) begin_listening(now);
}

ServerMessage Session::on_text(uint32_t now, std::string_view json) {
  ServerMessage message = parse_server_message(json);
  if (state_ < SessionState::Greeting) return message;
  last_heard_ms_ = now;
  bool in_turn = state_ == SessionState::Listening || state_ == SessionState::Thinking;
  switch (message.kind) {
    case MessageKind::Hello:
      on_hello(now, message);
      break;
    case MessageKind::Stt:  // the server heard the end of the turn: stop streaming
      heard_ = message.text;
      if (state_ == SessionState::Listening) {
        enter(config_.mode == ListenMode::Realtime ? SessionState::Listening
                                                   : SessionState::Thinking,
              now);
      }
      break;
    case MessageKind::Llm:
      emotion_ = message.emotion;
      break;
    case MessageKind::TtsStart:  // also from Idle: the server speaks first (a reminder)
      if (in_turn || state_ == SessionState::Idle) {
        sentence_.clear();
        enter(SessionState::Speaking, now);
      }
      break;
    case MessageKind::TtsSentence:
      if (state_ == SessionState::Speaking) sentence_ = message.text;
      break;
    case MessageKind::TtsStop:  // a late stop of an interrupted reply ends nothing
      if (state_ == SessionState::Speaking) on_reply_over(now);
      break;
    case MessageKind::Abort:
      if (state_ == SessionState::Speaking) {
        ++playback_generation_;
        enter(SessionState::Idle, now);
      }
      break;
    case MessageKind::Invalid:
    case MessageKind::Other:
      break;
  }
  return message;
}

AudioFrame Session::on_binary(uint32_t now, const uint8_t* data, size_t size) {
  AudioFrame frame = decode_audio_frame(config_.version, data, size);
  if (state_ >= SessionState::Greeting) last_heard_ms_ = now;
  if (frame.error == FrameError::None && state_ != SessionState::Speaking) {
    frame.payload = nullptr;  // not speaking (listening, or after a barge-in): dropped
    frame.size = 0;
  }
  return frame;
}

bool Session::streams_mic() const {
  if (state_ == SessionState::Listening) return true;
  return config_.mode == ListenMode::Realtime &&
         (state_ == SessionState::Thinking || state_ == SessionState::Speaking);
}

bool Session::begin_listening(uint32_t now) {
  if (state_ != SessionState::Idle) return false;
  if (!send(listen_message(session_id_, ListenState::Start, config_.mode))) {
    fail(now, 0, "could not send listen");
    return false;
  }
  heard_.clear();
  frames_sent_ = 0;
  first_frame_ms_ = now;
  enter(SessionState::Listening, now);
  return true;
}

bool Session::end_listening(uint32_t now) {
  if (state_ != SessionState::Listening) return false;
  if (!send(listen_message(session_id_, ListenState::Stop, config_.mode))) {
    fail(now, 0, "could not send listen stop");
    return false;
  }
  enter(SessionState::Thinking, now);
  return true;
}

bool Session::barge_in(uint32_t now, std::string_view reason) {
  if (state_ != SessionState::Speaking) return false;
  ++playback_generation_;  // stop playing at once, whatever the server still sends
  if (!send(abort_message(session_id_, reason))) {
    fail(now, 0, "could not send abort");
    return false;
  }
  enter(SessionState::Idle, now);
  return true;
}

bool Session::send_audio(uint32_t now, const uint8_t* opus, size_t size) {
  if (!streams_mic()) return false;
  uint32_t timestamp = elapsed_ms(now, first_frame_ms_);
  if (!encode_audio_frame(config_.version, opus, size, timestamp, &frame_buffer_)) return false;
  if (!link_.send_binary(frame_buffer_.data(), frame_buffer_.size())) {
    fail(now, 0, "could not send audio");
    return false;
  }
  ++frames_sent_;
  return true;
}

}  // namespace xiaozhi
}  // namespace lobug
