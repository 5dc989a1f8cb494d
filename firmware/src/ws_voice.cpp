#include "config.h"

#if LOBUG_WEBSOCKET
#include "ws_voice.h"

#include <Arduino.h>
#include <M5Unified.h>

#include <memory>

#include "hal_audio.h"
#include "hal_display.h"
#include "hal_net.h"
#include "hal_opus.h"
#include "hal_ws.h"
#include "lobug/frame_ring.h"
#include "lobug/vad.h"
#include "lobug/xiaozhi.h"
#include "lobug/xiaozhi_session.h"

namespace ws_voice {
namespace {

namespace xz = lobug::xiaozhi;

constexpr uint32_t kMicRate = 16000;
constexpr size_t kRingSlots = 16;            // about 1 s of 60 ms frames
constexpr size_t kMaxPacket = 1500;          // an Opus packet of one frame fits easily
// A speaker block holds several packets: 240 ms at 24 kHz, at least one 120 ms packet at 48 kHz.
constexpr size_t kReplyBlockSamples = 5760;
constexpr uint32_t kMaxPacketMs = 120;  // Opus's longest packet
constexpr const char* kFirmwareVersion = "lobug-ws-1";

size_t mic_frame_samples() { return kMicRate / 1000 * LOBUG_OPUS_FRAME_MS; }
size_t preroll_frames() {
  return (LOBUG_PREROLL_MS + LOBUG_OPUS_FRAME_MS - 1) / LOBUG_OPUS_FRAME_MS;
}

xz::SessionConfig session_config(int version) {
  xz::SessionConfig config;
  config.version = version;
  config.mic.frame_ms = LOBUG_OPUS_FRAME_MS;
  config.mode = LOBUG_WS_LISTEN_MODE == 1   ? xz::ListenMode::Manual
                : LOBUG_WS_LISTEN_MODE == 2 ? xz::ListenMode::Realtime
                                            : xz::ListenMode::Auto;
  config.continue_conversation = LOBUG_WS_CONTINUE != 0;
  return config;
}

lobug::VadConfig trigger_config() {
  lobug::VadConfig vad;
  vad.frame_ms = LOBUG_OPUS_FRAME_MS;
  vad.min_level = LOBUG_VAD_MIN_LEVEL;
  return vad;
}

struct Voice {
  hal::WsLink link;
  std::unique_ptr<xz::Session> session;
  std::unique_ptr<lobug::FrameRing> ring;
  hal::MicStream mic;
  lobug::Vad trigger{trigger_config()};
  hal::OpusMicEncoder encoder;
  hal::OpusReplyDecoder decoder;
  hal::SpeakerBlocks speaker;
  bool speaker_on = false;
  int16_t* filling = nullptr;  // the speaker block being filled with decoded packets
  size_t filled = 0;           // samples in it (all channels)
  lobug::WavFormat filling_format{24000, 1, 16};
  bool start_pending = false;  // the OTA answer came: connect at the next loop
  uint32_t generation = 0;  // the session's playback generation last acted on
  std::string shown_heard;
  std::string shown_sentence;
  uint8_t packet[kMaxPacket];
};

Voice* voice = nullptr;

// ------------------------------------------------------------------------------ speaker

void speaker_off() {
  if (!voice->speaker_on) return;
  hal::speaker_stop();
  voice->speaker_on = false;
}

// Queues the block being filled. Called when the speaker has room (at most one block playing),
// when the block is full, and at the end of a reply: while a block plays, the packets that
// arrive are gathered into the next one, so network jitter up to a block's length is absorbed
// and the speaker is never handed 60 ms at a time.
void submit_filling() {
  if (voice->filling == nullptr || voice->filled == 0) return;
  voice->speaker.submit(voice->filling, voice->filled, voice->filling_format);
  voice->filling = nullptr;
  voice->filled = 0;
}

void flush_playback(bool reply_over) {
  if (voice->filling == nullptr) return;
  size_t channels = voice->filling_format.channels;
  size_t room = (kReplyBlockSamples - voice->filled) / channels;
  bool full = room < voice->filling_format.sample_rate / 1000 * kMaxPacketMs;
  if (reply_over || full || hal::speaker_can_queue()) submit_filling();
}

void play_packet(const uint8_t* opus, size_t size) {
  const xz::AudioParams& audio = voice->session->server_audio();
  if (!voice->decoder.begin(audio.sample_rate, audio.channels)) return;
  if (voice->mic.running()) voice->mic.stop();  // one I2S bus on the Core2
  if (!voice->speaker_on) {
    hal::speaker_start();
    voice->speaker_on = true;
  }
  lobug::WavFormat format{audio.sample_rate, static_cast<uint16_t>(audio.channels), 16};
  if (voice->filling == nullptr) {
    voice->filling = voice->speaker.take_free();
    voice->filled = 0;
    voice->filling_format = format;
  }
  size_t room = (kReplyBlockSamples - voice->filled) / audio.channels;
  size_t samples = voice->decoder.decode(opus, size, voice->filling + voice->filled, room);
  voice->filled += samples * audio.channels;  // a packet that does not decode adds nothing
  flush_playback(false);
}

// A barge-in or the server's abort: what is queued stops now.
void drop_playback_if_told() {
  if (voice->generation == voice->session->playback_generation()) return;
  voice->generation = voice->session->playback_generation();
  voice->filling = nullptr;  // what was gathered is dropped too
  voice->filled = 0;
  if (voice->speaker_on) voice->speaker.drop();
  speaker_off();
}

// ------------------------------------------------------------------------------ socket events

void on_text(const char* text, size_t size) {
  xz::ServerMessage message = voice->session->on_text(millis(), std::string(text, size));
  if (message.kind == xz::MessageKind::Invalid) {
    Serial.printf("ws: ignored a message that is not JSON with a type (%u bytes)\n",
                  unsigned(size));
  }
  if (message.kind == xz::MessageKind::Stt) {
    Serial.printf("heard \"%s\"\n", message.text.c_str());
    hal::show_status("> " + message.text);
  } else if (message.kind == xz::MessageKind::TtsSentence && voice->session->plays_audio()) {
    hal::show_text(message.text);
  } else if (message.kind == xz::MessageKind::TtsStart) {
    hal::clear_text();
  }
  drop_playback_if_told();
}

void on_binary(const uint8_t* data, size_t size) {
  xz::AudioFrame frame = voice->session->on_binary(millis(), data, size);
  if (frame.error != xz::FrameError::None) {
    Serial.printf("ws: audio frame dropped: %s\n", xz::frame_error_name(frame.error));
    return;
  }
  if (frame.size > 0) play_packet(frame.payload, frame.size);
}

// ------------------------------------------------------------------------------ the mic

// The mic runs while waiting for speech (voice trigger, pre-roll) and while streaming; not
// while the reply plays (one I2S bus; realtime mode aside).
bool mic_wanted() {
  xz::SessionState state = voice->session->state();
  if (voice->session->streams_mic()) return !voice->speaker_on || state != xz::SessionState::Speaking;
  return state == xz::SessionState::Idle && !voice->speaker_on;
}

void start_mic() {
  voice->mic.start(*voice->ring, kMicRate);
  voice->trigger.arm(lobug::VadMode::VoiceTrigger);
}

void begin_turn(uint32_t now) {
  if (voice->session->begin_listening(now)) {
    hal::clear_text();
    Serial.println("listening (the server ends the turn)");
  }
}

void send_mic_frames(uint32_t now) {
  while (const int16_t* frame = voice->ring->take()) {
    size_t size = voice->encoder.encode(frame, mic_frame_samples(), voice->packet, kMaxPacket);
    if (size > 0 && !voice->session->send_audio(now, voice->packet, size)) return;
  }
}

void service_mic(uint32_t now) {
  bool wanted = mic_wanted();
  if (wanted && !voice->mic.running()) start_mic();
  if (!wanted && voice->mic.running()) voice->mic.stop();
  if (!voice->mic.running()) return;
  size_t finished = voice->mic.pump();
  xz::SessionState state = voice->session->state();
  if (state == xz::SessionState::Idle) {
    for (size_t back = finished; back > 0; --back) {  // oldest first, for the trigger
      const int16_t* frame = voice->ring->recent(back - 1);
      if (frame == nullptr) continue;
      uint16_t level = lobug::frame_level(frame, mic_frame_samples());
      // Manual mode is push-to-talk: only a touch starts (and ends) a turn.
      bool trigger_starts = LOBUG_VOICE_TRIGGER && LOBUG_WS_LISTEN_MODE != 1;
      if (trigger_starts && voice->trigger.on_frame(level) == lobug::VadState::Recording) {
        begin_turn(now);  // the pre-roll still in the ring goes out first
        break;
      }
    }
    if (voice->session->state() == xz::SessionState::Idle) voice->ring->keep_newest(preroll_frames());
  }
  if (voice->session->streams_mic()) send_mic_frames(now);
}

}  // namespace

bool allocate() {
  if (voice != nullptr) return true;
  voice = new Voice();
  size_t samples = kRingSlots * mic_frame_samples();
  auto* storage = static_cast<int16_t*>(hal::alloc_psram(samples * sizeof(int16_t)));
  if (storage == nullptr || !voice->speaker.allocate(kReplyBlockSamples)) return false;
  voice->ring.reset(new lobug::FrameRing(storage, mic_frame_samples(), kRingSlots));
  voice->session.reset(new xz::Session(voice->link, session_config(1)));
  voice->link.on_connected = [] { voice->session->on_connected(millis()); };
  voice->link.on_closed = [] {
    voice->session->on_closed(millis(), esp_random());
    drop_playback_if_told();
  };
  voice->link.on_text = on_text;
  voice->link.on_binary = on_binary;
  return voice->encoder.begin(kMicRate, LOBUG_OPUS_COMPLEXITY);
}

bool check_ota(const lobug::DeviceSettings& settings, std::string* problem) {
  std::string client_id = xz::client_id_for(settings.device_id);
  std::string answer_text;
  hal::HttpResult result = hal::post_ota(
      settings, client_id, xz::ota_request_body(settings.device_id, client_id, kFirmwareVersion),
      &answer_text);
  if (result.status != 200 || result.error != lobug::NetError::None) {
    *problem = "OTA request failed (status " + std::to_string(result.status) + ")";
    return false;
  }
  xz::OtaAnswer answer = xz::parse_ota_answer(answer_text);
  if (!answer.ok) {
    *problem = answer.error;
    return false;
  }
  std::string token = answer.token.empty() ? settings.token : answer.token;
  xz::Url url = xz::parse_url(answer.url);
  std::string authorization = token.empty() ? "" : xz::authorization_value(token);
  if (!voice->link.configure(url, authorization, answer.version, settings.device_id, client_id)) {
    *problem = "wss:// is not supported by this firmware: serve ws:// on the LAN";
    return false;
  }
  voice->session->stop();
  voice->session.reset(new xz::Session(voice->link, session_config(answer.version)));
  voice->generation = 0;
  voice->start_pending = true;
  Serial.printf("ota: websocket %s (protocol version %d)\n", answer.url.c_str(), answer.version);
  return true;
}

void loop(uint32_t now, bool pressed) {
  xz::Session& session = *voice->session;
  if (voice->start_pending) {
    voice->start_pending = false;
    session.start(now);
  }
  voice->link.poll();
  session.tick(now, esp_random());
  drop_playback_if_told();
  if (pressed) {
    if (session.state() == xz::SessionState::Speaking) {
      session.barge_in(now);  // abort: the reply stops now, and the next turn starts at once
      drop_playback_if_told();
      begin_turn(now);
    } else if (session.state() == xz::SessionState::Idle) {
      begin_turn(now);
    } else if (session.state() == xz::SessionState::Listening) {
      session.end_listening(now);  // pressed again: that is all
    }
  }
  flush_playback(session.state() != xz::SessionState::Speaking);
  if (voice->speaker_on && session.state() != xz::SessionState::Speaking && !hal::speaker_busy()) {
    speaker_off();  // the reply has played out
  }
  if (session.ready()) service_mic(now);
  else if (voice->mic.running()) voice->mic.stop();
}

void disconnect() {
  if (voice == nullptr) return;
  if (voice->mic.running()) voice->mic.stop();
  speaker_off();
  voice->session->stop();
}

uint16_t level() {
  if (voice == nullptr) return 0;
  if (voice->speaker_on) return voice->speaker.level();
  const int16_t* frame = voice->mic.running() ? voice->ring->newest() : nullptr;
  return frame != nullptr ? lobug::frame_level(frame, mic_frame_samples()) : 0;
}

lobug::AppState app_state() {
  if (voice == nullptr) return lobug::AppState::Connecting;
  switch (voice->session->state()) {
    case xz::SessionState::Idle: return lobug::AppState::Idle;
    case xz::SessionState::Listening: return lobug::AppState::Listening;
    case xz::SessionState::Thinking: return lobug::AppState::Thinking;
    case xz::SessionState::Speaking: return lobug::AppState::Speaking;
    default: return lobug::AppState::Connecting;
  }
}

std::string describe() {
  if (voice == nullptr) return "websocket: not started";
  const xz::Session& session = *voice->session;
  std::string text = std::string("websocket: ") + xz::session_state_name(session.state()) +
                     ", session " + (session.session_id().empty() ? "-" : session.session_id()) +
                     ", frames sent " + std::to_string(session.frames_sent()) +
                     ", mic frames lost " + std::to_string(voice->ring->dropped());
  if (!session.last_problem().empty()) text += ", last problem: " + session.last_problem();
  return text;
}

}  // namespace ws_voice
#endif  // LOBUG_WEBSOCKET
