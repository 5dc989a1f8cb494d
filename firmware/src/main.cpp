// Lo-Bug on an M5Stack Core2 / CoreS3: boot, listen, send, answer; recover from every failure
// without a reboot. Decisions live in lib/lobug_core (tested on the host); this file wires them
// to the hardware layer (hal_*.h) and owns the device's state.
#include <Arduino.h>
#include <M5Unified.h>

#include <cctype>
#include <string>

#include "config.h"
#include "hal_audio.h"
#include "hal_display.h"
#include "hal_imu.h"
#include "hal_net.h"
#include "hal_store.h"
#include "lobug/imu.h"
#include "lobug/json_reply.h"
#include "lobug/link.h"
#include "lobug/recorder.h"
#include "lobug/reply.h"
#include "lobug/settings.h"
#include "lobug/status.h"
#include "lobug/wav.h"
#include "lobug/wav_stream.h"
#include "lobug/wire.h"
#include "ws_voice.h"

#if LOBUG_WEBSOCKET
// libopus encodes on the loop task: it needs far more stack than Arduino's 8 KB default.
SET_LOOP_TASK_STACK_SIZE(32 * 1024);
#endif

namespace {

using lobug::AppState;
using lobug::VadMode;
using lobug::VadState;

constexpr uint32_t kImuEveryMs = 10;       // 100 Hz: a knock lasts a few samples
constexpr uint32_t kErrorShowMs = 5000;    // then back to idle; the next turn may work
constexpr uint32_t kReactShowMs = 2500;
constexpr uint32_t kRearmDelayMs = 400;    // let the speaker's tail fade before listening
constexpr uint32_t kSensorsTimeoutMs = 5000;  // a slow server must not stall the device
constexpr uint32_t kStreamFlushAfterMs = 150;  // network quiet this long: play what we have
constexpr uint32_t kStreamTotalMs = 180000;
constexpr size_t kStreamBlockSamples = 4096;  // about 0.19 s at 22.05 kHz
constexpr size_t kMaxReplyText = 600;

struct Device {
  lobug::DeviceSettings settings;
  lobug::Link link;
  lobug::RecorderConfig recording;
  lobug::VadConfig vad;
  lobug::Recorder* recorder = nullptr;
  uint8_t* upload_buffer = nullptr;  // multipart head + WAV header + recording + tail
  uint8_t* reply_buffer = nullptr;   // the decoded reply WAV
  hal::MicInput mic;
  hal::SpeakerBlocks speaker_blocks;
  lobug::MotionTracker motion;
  AppState state = AppState::Connecting;
  uint32_t state_until_ms = 0;  // when Error / Reacting go back to Idle
  uint32_t next_imu_ms = 0;
  uint32_t next_sensors_ms = 0;
  uint32_t listen_after_ms = 0;
  bool stream_reply = LOBUG_STREAM_REPLY != 0;
  bool stream_upload = LOBUG_STREAM_UPLOAD != 0;  // while streaming replies
  bool was_ready = false;
  std::string last_sensors_json;
};

Device device;

// The xiaozhi WebSocket mode: compiled in (LOBUG_WEBSOCKET) and an OTA address set. Otherwise
// the HTTP device contract, exactly as before.
bool websocket_mode() { return LOBUG_WEBSOCKET && !device.settings.ota_url.empty(); }

// What stops the device; a build without the WebSocket mode needs server_host even when an
// ota_url is set.
std::string missing_setting() {
  std::string missing = lobug::missing_settings(device.settings);
  if (missing.empty() && !LOBUG_WEBSOCKET && device.settings.server_host.empty()) {
    missing = "server_host (this build has no WebSocket mode)";
  }
  return missing;
}

// ------------------------------------------------------------------------------ state and UI

void set_state(AppState state, uint32_t for_ms = 0) {
  device.state = state;
  device.state_until_ms = for_ms ? millis() + for_ms : 0;
  hal::show_face(lobug::face_for(state), 0, millis());
}

void end_transient_state(uint32_t now) {
  bool transient = device.state == AppState::Error || device.state == AppState::Reacting;
  if (transient && device.state_until_ms && lobug::reached(now, device.state_until_ms)) {
    set_state(device.link.ready() ? AppState::Idle : AppState::Connecting);
  }
}

void show_problem(const hal::HttpResult& result, const char* during) {
  lobug::Problem problem = result.problem();
  lobug::ProblemText text = lobug::describe_problem(problem, result.status, result.error_code);
  Serial.printf("%s failed: %s %s\n", during, text.title.c_str(), text.detail.c_str());
  hal::show_text(text.title + (text.detail.empty() ? "" : " - " + text.detail));
  set_state(AppState::Error, kErrorShowMs);
  device.listen_after_ms = millis() + kErrorShowMs;
  if (lobug::suggests_server_down(problem)) device.link.on_server_unreachable(millis());
}

void animate(lobug::Face face, uint16_t level) {
  M5.update();
  hal::show_face(face, level, millis());
}

bool push_to_talk_pressed() {
  if (M5.BtnA.wasPressed() || M5.BtnB.wasPressed() || M5.BtnC.wasPressed()) return true;
  for (uint8_t i = 0; i < M5.Touch.getCount(); ++i) {
    if (M5.Touch.getDetail(i).wasPressed()) return true;
  }
  return false;
}

// ------------------------------------------------------------------------------ connection

std::string link_status_line() {
  const lobug::DeviceSettings& s = device.settings;
  switch (device.link.state()) {
    case lobug::LinkState::WifiConnecting:
      return "Connecting to " + s.wifi_ssid + "...";
    case lobug::LinkState::WifiWaiting:
      return "No WiFi (" + s.wifi_ssid + "), retrying";
    case lobug::LinkState::ServerChecking:
      if (websocket_mode()) return "Waiting for " + s.ota_url;
      return "Waiting for " + s.server_host + ":" + std::to_string(s.server_port);
    case lobug::LinkState::Ready:
      if (websocket_mode()) return "Ready  " + hal::wifi_address() + "  (websocket)";
      return "Ready  " + hal::wifi_address() + (device.stream_reply ? "  (stream)" : "");
  }
  return "";
}

void check_health() {
#if LOBUG_WEBSOCKET
  if (websocket_mode()) {  // the OTA request is the WebSocket mode's health check
    std::string problem;
    bool ok = ws_voice::check_ota(device.settings, &problem);
    device.link.on_health(millis(), ok, esp_random());
    if (!ok) Serial.printf("ota: %s\n", problem.c_str());
    return;
  }
#endif
  hal::HttpResult result = hal::get_health(device.settings);
  bool ok = result.problem() == lobug::Problem::None;
  device.link.on_health(millis(), ok, esp_random());
  if (!ok) Serial.printf("health: status %d, error %d\n", result.status, int(result.error));
}

// While the link is down its state is the device's state, unless a turn's error is still
// on screen (it ends by itself, see end_transient_state).
void show_link_state(bool ready) {
  bool turn_error_showing = device.state == AppState::Error && device.state_until_ms != 0;
  if (turn_error_showing) return;
  if (ready) {
    if (!device.was_ready) set_state(AppState::Idle);
    return;
  }
  bool failing = device.link.state() == lobug::LinkState::WifiWaiting ||
                 device.link.health_attempts() > 0;
  AppState wanted = failing ? AppState::Error : AppState::Connecting;
  if (device.state != wanted) set_state(wanted);
}

void service_link(uint32_t now) {
  switch (device.link.tick(now, hal::wifi_connected(), esp_random())) {
    case lobug::LinkCommand::StartWifi: hal::wifi_start(device.settings); break;
    case lobug::LinkCommand::CheckHealth: check_health(); break;
    case lobug::LinkCommand::None: break;
  }
  bool ready = device.link.ready();
  show_link_state(ready);
  // Once ready, the status line belongs to the turns (it shows what was heard).
  if (!ready || !device.was_ready) hal::show_status(link_status_line());
  device.was_ready = ready;
}

// ------------------------------------------------------------------------------ sensors

void sample_imu(uint32_t now) {
  if (!lobug::reached(now, device.next_imu_ms)) return;
  device.next_imu_ms = now + kImuEveryMs;
  lobug::ImuSample sample;
  if (hal::imu_read(&sample, now)) device.motion.add(sample);
}

void post_sensors_if_due(uint32_t now) {
  if (!lobug::reached(now, device.next_sensors_ms) || device.state != AppState::Idle) return;
  if (device.settings.server_host.empty()) return;  // a WebSocket-only device: no Lo-Bug HTTP
  device.next_sensors_ms = now + LOBUG_SENSORS_EVERY_MS;
  device.last_sensors_json = lobug::sensors_json(device.motion.take_report(now));
  hal::HttpResult result = hal::post_json(device.settings, lobug::kPathSensors,
                                          device.last_sensors_json, kSensorsTimeoutMs);
  if (result.problem() == lobug::Problem::None) return;
  // In the WebSocket mode the session is the link to the server: a sensors report that
  // fails is only logged.
  if (websocket_mode()) Serial.printf("sensors failed: status %d\n", result.status);
  else show_problem(result, "sensors");
}

// ------------------------------------------------------------------------------ the reply

void speak(const int16_t* samples, size_t count, const lobug::WavFormat& format) {
  set_state(AppState::Speaking);
  hal::speaker_start();
  hal::play_pcm(samples, count, format,
                [](uint16_t level) { animate(lobug::Face::Speaking, level); });
  hal::speaker_stop();
}

// After the reply's audio (if any) has been played: what stays on screen.
void carry_out(lobug::ReplyPlan plan, const std::string& text) {
  switch (plan) {
    case lobug::ReplyPlan::Speak:  // the caller showed the text with the audio
      set_state(AppState::Idle);
      break;
    case lobug::ReplyPlan::ShowText:
      hal::show_text(text);
      set_state(AppState::Idle);
      break;
    case lobug::ReplyPlan::Express:
      set_state(AppState::Reacting, kReactShowMs);
      break;
    case lobug::ReplyPlan::Nothing:
      set_state(AppState::Idle);
      break;
  }
  device.listen_after_ms = millis() + kRearmDelayMs;
}

// The contract's /chat/audio: one JSON reply, its audio base64-decoded into PSRAM as it arrives.
hal::HttpResult chat_whole(const lobug::UploadBody& body, const std::string& boundary) {
  hal::HttpExchange exchange(device.settings, lobug::kPathChatAudio, LOBUG_HTTP_TIMEOUT_MS);
  std::string content_type = lobug::multipart_content_type(boundary);
  hal::HttpResult result = exchange.post(content_type.c_str(), body.data, body.size);
  if (result.problem() != lobug::Problem::None) return result;

  lobug::ByteBuffer audio(device.reply_buffer, LOBUG_REPLY_BUFFER_BYTES);
  lobug::ReplyScanner reply(audio, kMaxReplyText);
  result = exchange.read_body(reply, LOBUG_HTTP_TIMEOUT_MS, 2 * LOBUG_HTTP_TIMEOUT_MS,
                              [] { animate(lobug::Face::Thinking, 0); });
  if (result.error == lobug::NetError::None && !reply.complete()) {
    result.error = lobug::NetError::Broken;
    result.error_code = "reply is not JSON";
  }
  if (result.problem() != lobug::Problem::None) return result;

  const lobug::ReplyFields& fields = reply.fields();
  lobug::WavHeader wav = lobug::wav_parse_header(audio.data(), audio.size());
  size_t playable = fields.has_audio && fields.audio_valid && wav.error == lobug::WavError::None &&
                            wav.info.data_offset % 2 == 0
                        ? lobug::wav_playable_bytes(wav.info, audio.size())
                        : 0;
  lobug::ReplyPlan plan =
      lobug::plan_reply(lobug::parse_action(fields.action), playable > 0, !fields.response.empty());
  Serial.printf("heard \"%s\" -> %s (%s)%s\n", fields.transcription.c_str(), fields.action.c_str(),
                lobug::plan_name(plan), audio.overflowed() ? ", audio cut to fit" : "");
  if (plan != lobug::ReplyPlan::Nothing) hal::show_status("> " + fields.transcription);
  if (plan == lobug::ReplyPlan::Speak) {
    hal::show_text(fields.response);
    const auto* samples = reinterpret_cast<const int16_t*>(audio.data() + wav.info.data_offset);
    speak(samples, playable / 2, wav.info.format);
  }
  carry_out(plan, fields.response);
  return result;
}

// Remembers when bytes last arrived, so a quiet network can flush a partly filled block.
class TimedSink : public lobug::ByteSink {
 public:
  explicit TimedSink(lobug::WavStream& out) : out_(out) {}
  bool write(const uint8_t* data, size_t size) override {
    last_write_ms = millis();
    return out_.write(data, size);
  }
  uint32_t last_write_ms = 0;

 private:
  lobug::WavStream& out_;
};

bool valid_turn_id(const std::string& turn) {
  if (turn.empty() || turn.size() > 64) return false;
  for (char c : turn) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

void show_streamed_reply_text(const std::string& turn) {
  std::string response;
  if (!valid_turn_id(turn)) return;
  hal::HttpResult result = hal::get_turn_response(device.settings, turn, &response);
  if (result.problem() == lobug::Problem::None) hal::show_text(response);
}

// /chat/audio/stream's reply: the action in a header, then a WAV of unknown length played as it
// comes. `result` is the request's outcome so far (its status line has arrived).
hal::HttpResult play_streamed_reply(hal::ReplyBody& reply, hal::HttpResult result) {
  if (result.problem() != lobug::Problem::None) return result;
  lobug::Action action = lobug::parse_action(reply.header(lobug::kHeaderAction));
  std::string heard = lobug::percent_decode(reply.header(lobug::kHeaderTranscription));
  Serial.printf("heard \"%s\" -> %s (streamed)\n", heard.c_str(), lobug::action_name(action));
  if (action != lobug::Action::Ignore) hal::show_status("> " + heard);  // ignore shows nothing
  if (action != lobug::Action::Respond && action != lobug::Action::Unknown) {
    carry_out(lobug::plan_reply(action, false, false), "");
    return result;
  }

  set_state(AppState::Speaking);
  hal::speaker_start();
  lobug::WavStream wav(device.speaker_blocks, device.speaker_blocks.block_samples());
  TimedSink timed(wav);
  result = reply.read_body(timed, LOBUG_HTTP_TIMEOUT_MS, kStreamTotalMs, [&] {
    if (millis() - timed.last_write_ms > kStreamFlushAfterMs) wav.flush();
    animate(lobug::Face::Speaking, hal::speaker_busy() ? device.speaker_blocks.level() : 0);
  });
  wav.finish();
  hal::wait_for_speaker([](uint16_t level) { animate(lobug::Face::Speaking, level); },
                        device.speaker_blocks.level());
  hal::speaker_stop();
  if (result.error == lobug::NetError::None && !wav.header_ready()) {
    result.error = lobug::NetError::Broken;
    result.error_code = lobug::wav_error_name(wav.error());
  }
  if (result.problem() != lobug::Problem::None) return result;  // what came was played
  show_streamed_reply_text(reply.header(lobug::kHeaderTurn));
  carry_out(lobug::ReplyPlan::Speak, "");
  return result;
}

// /chat/audio/stream with the whole recording as the contract's multipart upload.
hal::HttpResult chat_streamed(const lobug::UploadBody& body, const std::string& boundary,
                              bool* not_supported) {
  hal::HttpExchange exchange(device.settings, lobug::kPathChatAudioStream, LOBUG_HTTP_TIMEOUT_MS);
  std::string content_type = lobug::multipart_content_type(boundary);
  hal::HttpResult result = exchange.post(content_type.c_str(), body.data, body.size);
  *not_supported = result.status == 404 || result.status == 405;
  return play_streamed_reply(exchange, result);
}

void send_recording(size_t samples) {
  std::string boundary = lobug::make_boundary(esp_random(), esp_random());
  lobug::UploadBody body = lobug::finish_upload(device.upload_buffer, samples, boundary);
  Serial.printf("uploading %u ms of audio\n", unsigned(samples / 16));
  hal::HttpResult result;
  bool not_supported = false;
  if (device.stream_reply) {
    result = chat_streamed(body, boundary, &not_supported);
    if (not_supported) {  // an older server: use the contract's endpoint from now on
      Serial.println("server has no /chat/audio/stream; using /chat/audio");
      device.stream_reply = false;
    }
  }
  if (!device.stream_reply) result = chat_whole(body, boundary);
  if (result.problem() != lobug::Problem::None) show_problem(result, "chat");
}

// ------------------------------------------------------------------------------ sent as recorded

// The recording sent while it is made (/chat/audio/stream, raw audio/wav with chunked transfer):
// the connection opens once the person is heard, each finished frame goes out as one chunk, and
// the server transcribes what was said while the person is still speaking.
struct LiveSend {
  hal::LiveUpload upload;
  size_t frames_sent = 0;
  bool failed = false;
};

bool sends_while_recording() { return device.stream_reply && device.stream_upload; }

// The connection, the request head and a WAV header of unknown length (the server's own).
bool open_live_upload(hal::LiveUpload& upload) {
  uint8_t header[lobug::kWavHeaderSize];
  lobug::wav_write_header(header, lobug::WavFormat{lobug::kRecordRate, 1, 16},
                          lobug::kWavUnknownDataBytes);
  return upload.begin(device.settings, lobug::kPathChatAudioStream, lobug::kAudioContentType) &&
         upload.send(header, sizeof header);
}

// Sends the frames recorded since the last call (opening the upload once speech was heard).
void feed_live_upload(LiveSend& live) {
  if (live.failed) return;
  if (!live.upload.open()) {
    if (!device.recorder->vad().heard_speech()) return;
    if (!open_live_upload(live.upload)) {
      live.failed = true;
      return;
    }
  }
  size_t frame_bytes = device.recording.frame_samples() * sizeof(int16_t);
  while (live.frames_sent < device.recorder->kept_frames()) {
    const int16_t* frame = device.recorder->kept_frame(live.frames_sent);
    if (!live.upload.send(reinterpret_cast<const uint8_t*>(frame), frame_bytes)) {
      live.failed = true;
      return;
    }
    ++live.frames_sent;
  }
}

// Ends the live upload and plays its reply. False when the recording is to be sent again the
// usual way: the connection failed before a reply, or the server cannot hear as it records
// (one older than that answers 415 to a raw WAV, one without the stream endpoint 404).
bool finish_live_upload(LiveSend& live) {
  hal::HttpResult result =
      live.upload.finish(LOBUG_HTTP_TIMEOUT_MS, [] { animate(lobug::Face::Thinking, 0); });
  if (result.status == 404 || result.status == 405 || result.status == 415) {
    Serial.println("server does not hear while recording; sending recordings whole");
    device.stream_upload = false;
    return false;
  }
  if (result.status == 0 && result.error != lobug::NetError::Timeout) return false;
  result = play_streamed_reply(live.upload, result);
  if (result.problem() != lobug::Problem::None) show_problem(result, "chat");
  return true;
}

// ------------------------------------------------------------------------------ listening

size_t record_until_done(LiveSend* live) {
  while (device.mic.pump() != VadState::Done) {
    M5.update();
    if (push_to_talk_pressed()) device.recorder->stop();  // pressed again: that is all
    hal::show_face(lobug::Face::Listening, device.recorder->last_level(), millis());
    if (live != nullptr) feed_live_upload(*live);
    delay(4);
  }
  return device.mic.stop();
}

void run_turn() {
  set_state(AppState::Listening);
  hal::clear_text();
  LiveSend live;
  bool send_live = sends_while_recording();
  size_t samples = record_until_done(send_live ? &live : nullptr);
  if (!device.recorder->should_upload()) {
    live.upload.abandon();  // the server drops what it had
    Serial.printf("recording dropped: %s\n", lobug::vad_end_name(device.recorder->end_reason()));
    set_state(AppState::Idle);
    return;
  }
  set_state(AppState::Thinking);
  if (send_live) feed_live_upload(live);  // the frames recorded since the last call
  if (live.upload.open() && finish_live_upload(live)) return;
  send_recording(samples);  // the recording is still whole in the upload buffer
}

void start_push_to_talk() {
  if (device.mic.running()) device.mic.stop();  // drop the voice trigger's waiting
  device.mic.start(*device.recorder, VadMode::PushToTalk, device.recording.frame_samples(),
                   device.recording.sample_rate);
  run_turn();
}

void listen_for_voice(uint32_t now) {
  if (!LOBUG_VOICE_TRIGGER || device.state != AppState::Idle) return;
  if (!device.mic.running()) {
    if (!lobug::reached(now, device.listen_after_ms)) return;
    device.mic.start(*device.recorder, VadMode::VoiceTrigger, device.recording.frame_samples(),
                     device.recording.sample_rate);
  }
  VadState state = device.mic.pump();
  if (state == VadState::Recording) {
    run_turn();
  } else if (state == VadState::Done) {  // the driver refused a buffer: try again later
    device.mic.stop();
    device.listen_after_ms = now + 1000;
  }
}

// ------------------------------------------------------------------------------ provisioning

void apply_settings(const lobug::DeviceSettings& updated) {
  const lobug::DeviceSettings& old = device.settings;
  bool wifi_changed = updated.wifi_ssid != old.wifi_ssid ||
                      updated.wifi_password != old.wifi_password;
  bool server_changed = updated.server_host != old.server_host ||
                        updated.server_port != old.server_port || updated.ota_url != old.ota_url;
  device.settings = updated;
  if (wifi_changed) device.link.restart();
  else if (server_changed) device.link.recheck_server(millis());
}

void print_status() {
  Serial.printf("link: %s, state: %s, reply: %s, upload: %s\n",
                lobug::link_state_name(device.link.state()), lobug::app_state_name(device.state),
                device.stream_reply ? "stream" : "whole",
                sends_while_recording() ? "while recording" : "whole");
  if (hal::wifi_connected()) Serial.printf("ip: %s\n", hal::wifi_address().c_str());
#if LOBUG_WEBSOCKET
  if (websocket_mode()) Serial.printf("%s\n", ws_voice::describe().c_str());
#endif
  std::string sensors = lobug::sensors_json(device.motion.report(millis()));
  Serial.printf("sensors now: %s\n", sensors.c_str());
  Serial.printf("last posted: %s\n", device.last_sensors_json.c_str());
}

void handle_serial() {
  std::string line;
  if (!hal::read_serial_line(&line)) return;
  lobug::Command command = lobug::parse_command(line);
  std::string error;
  lobug::DeviceSettings updated = device.settings;
  switch (command.kind) {
    case lobug::CommandKind::Empty: return;
    case lobug::CommandKind::Help: Serial.print(lobug::help_text()); return;
    case lobug::CommandKind::Show:
      Serial.print(lobug::describe_settings(device.settings).c_str());
      return;
    case lobug::CommandKind::Status: print_status(); return;
    case lobug::CommandKind::Invalid: Serial.printf("error: %s\n", command.error.c_str()); return;
    case lobug::CommandKind::Set:
      if (!lobug::apply_setting(updated, command.key, command.value, &error)) {
        Serial.printf("error: %s\n", error.c_str());
        return;
      }
      if (!hal::save_setting(command.key, command.value)) Serial.println("warning: not stored");
      apply_settings(updated);
      break;
    case lobug::CommandKind::Unset:
      hal::forget_setting(command.key);
      apply_settings(hal::load_settings());
      break;
    case lobug::CommandKind::Reset:
      hal::forget_all_settings();
      apply_settings(hal::load_settings());
      break;
  }
  Serial.println("ok");
}

// ------------------------------------------------------------------------------ setup

bool allocate_buffers() {
  if (device.recorder != nullptr) return true;  // setup() again (the host tests): keep them
  size_t samples = device.recording.storage_samples();
  device.upload_buffer = static_cast<uint8_t*>(
      hal::alloc_psram(lobug::UploadLayout::buffer_size(samples)));
  device.reply_buffer = static_cast<uint8_t*>(hal::alloc_psram(LOBUG_REPLY_BUFFER_BYTES));
  if (device.upload_buffer == nullptr || device.reply_buffer == nullptr) return false;
  if (!device.speaker_blocks.allocate(kStreamBlockSamples)) return false;
  auto* storage =
      reinterpret_cast<int16_t*>(device.upload_buffer + lobug::UploadLayout::pcm_offset);
  device.recorder = new lobug::Recorder(storage, device.recording, device.vad);
  return true;
}

void configure_recording() {
  device.recording.sample_rate = lobug::kRecordRate;
  device.recording.frame_ms = LOBUG_FRAME_MS;
  device.recording.preroll_ms = LOBUG_PREROLL_MS;
  device.recording.max_ms = LOBUG_MAX_RECORD_MS;
  device.vad.frame_ms = LOBUG_FRAME_MS;
  device.vad.silence_ms = LOBUG_SILENCE_MS;
  device.vad.no_speech_ms = LOBUG_NO_SPEECH_MS;
  device.vad.min_level = LOBUG_VAD_MIN_LEVEL;
}

// ------------------------------------------------------------------------------ WebSocket mode

#if LOBUG_WEBSOCKET
// The xiaozhi WebSocket mode's loop: the link (WiFi, then the OTA request) as in HTTP mode,
// then the session; the face follows the session's state.
void run_websocket_mode(uint32_t now) {
  if (device.link.ready()) {
    post_sensors_if_due(now);
    ws_voice::loop(now, push_to_talk_pressed());
    bool turn_error_showing = device.state == AppState::Error && device.state_until_ms != 0;
    AppState state = ws_voice::app_state();
    if (!turn_error_showing && state != device.state) set_state(state);
  } else {
    ws_voice::disconnect();
  }
  end_transient_state(millis());
  hal::show_face(lobug::face_for(device.state), ws_voice::level(), millis());
  delay(2);
}
#endif

}  // namespace

void setup() {
  auto config = M5.config();
  M5.begin(config);  // also starts Serial at 115200
  hal::display_begin();
  hal::audio_begin(LOBUG_SPEAKER_VOLUME);
  hal::imu_begin();
  configure_recording();
  device.settings = hal::load_settings();
  Serial.print(lobug::help_text());
  bool allocated = allocate_buffers();
#if LOBUG_WEBSOCKET
  allocated = allocated && ws_voice::allocate();
#endif
  if (!allocated) {
    hal::show_text("Out of memory: this firmware needs PSRAM");
    set_state(AppState::Error);
    Serial.println("error: could not allocate the audio buffers");
  } else {
    set_state(AppState::Connecting);
  }
}

void loop() {
  M5.update();
  uint32_t now = millis();
  handle_serial();
  if (device.recorder == nullptr) return;  // no memory: only the serial console works
  std::string missing = missing_setting();
  if (!missing.empty()) {
    hal::show_status("Set " + missing + " over USB serial (type help)");
    delay(20);
    return;
  }
  service_link(now);
  sample_imu(now);
#if LOBUG_WEBSOCKET
  if (websocket_mode()) {
    run_websocket_mode(now);
    return;
  }
#endif
  if (device.link.ready()) {
    post_sensors_if_due(now);
    bool can_talk = device.state == AppState::Idle || device.state == AppState::Error;
    if (can_talk && push_to_talk_pressed()) start_push_to_talk();
    else listen_for_voice(now);
  } else if (device.mic.running()) {
    device.mic.stop();
  }
  end_transient_state(millis());
  hal::show_face(lobug::face_for(device.state), 0, millis());
  delay(2);
}
