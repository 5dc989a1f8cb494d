// The client side of the xiaozhi WebSocket protocol (78/xiaozhi-esp32, docs/websocket.md), the
// one protocol Lo-Bug's firmware and the xiaozhi firmwares both speak to the server: the JSON
// control messages, the binary audio framing of protocol versions 1-3, the OTA answer that
// hands out the WebSocket address, and URL parsing. Pure functions; the session that uses them
// is xiaozhi_session.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lobug {
namespace xiaozhi {

// ------------------------------------------------------------------ JSON control messages

struct AudioParams {
  std::string format = "opus";
  uint32_t sample_rate = 16000;
  uint32_t channels = 1;
  uint32_t frame_ms = 60;
};

// The firmware's defaults for what the server sends when its hello leaves them out.
constexpr uint32_t kDefaultServerRate = 24000;
constexpr uint32_t kDefaultServerFrameMs = 60;

enum class ListenMode { Auto, Manual, Realtime };
enum class ListenState { Start, Stop, Detect };

const char* listen_mode_name(ListenMode mode);

// {"type":"hello","version":N,"transport":"websocket","audio_params":{...}}
std::string client_hello(int version, const AudioParams& mic);
// {"session_id":"..","type":"listen","state":"start","mode":"auto"}; stop has no mode.
std::string listen_message(std::string_view session_id, ListenState state, ListenMode mode);
// {"session_id":"..","type":"listen","state":"detect","text":".."} (a wake word was heard)
std::string detect_message(std::string_view session_id, std::string_view wake_word);
// {"session_id":"..","type":"abort"} (+ "reason" when not empty, e.g. "wake_word_detected")
std::string abort_message(std::string_view session_id, std::string_view reason = "");

enum class MessageKind {
  Invalid,   // not JSON, or no "type"
  Hello,
  Stt,
  Llm,
  TtsStart,
  TtsSentence,
  TtsStop,
  Abort,     // the server stopped the reply (some servers send it)
  Other,     // mcp, system, alert, iot, a type from a newer server: not for the session
};

struct ServerMessage {
  MessageKind kind = MessageKind::Invalid;
  std::string type;        // as sent
  std::string session_id;
  std::string text;        // stt / sentence_start / llm text
  std::string emotion;     // llm
  // Hello only:
  bool websocket_transport = false;
  AudioParams audio;       // the server's downlink (defaults: 24 kHz, 60 ms)
};

ServerMessage parse_server_message(std::string_view json);
const char* message_kind_name(MessageKind kind);

// ------------------------------------------------------------------ binary audio framing

// Version 1: the Opus packet alone. Version 2: 16-byte header, big-endian
// {u16 version, u16 type, u32 reserved, u32 timestamp_ms, u32 payload_size}. Version 3: 4-byte
// header {u8 type, u8 reserved, u16 payload_size big-endian}. Type 0 is audio (Opus).
constexpr size_t kMaxFrameHeader = 16;
bool supported_version(int version);
size_t frame_header_size(int version);  // 0 for version 1 (and for unsupported ones)

// Writes the header for `payload_size` bytes of Opus into `out` (frame_header_size bytes).
// False when the size does not fit the version's field (v3: 65535).
bool write_frame_header(int version, size_t payload_size, uint32_t timestamp_ms, uint8_t* out);
// Header + payload as one WebSocket binary message.
bool encode_audio_frame(int version, const uint8_t* payload, size_t size, uint32_t timestamp_ms,
                        std::vector<uint8_t>* out);

enum class FrameError { None, Truncated, SizeMismatch, NotAudio, BadVersion };

struct AudioFrame {
  FrameError error = FrameError::None;
  uint16_t type = 0;
  uint32_t timestamp_ms = 0;
  const uint8_t* payload = nullptr;  // inside the decoded message
  size_t size = 0;
};

// The payload of one binary WebSocket message; error set when its header does not hold up.
AudioFrame decode_audio_frame(int version, const uint8_t* data, size_t size);
const char* frame_error_name(FrameError error);

// ------------------------------------------------------------------ OTA and URLs

struct Url {
  bool valid = false;
  std::string scheme;  // "http", "https", "ws", "wss"
  std::string host;
  uint16_t port = 0;
  std::string path;    // with the query, "/" at least
};

Url parse_url(std::string_view url);

// The answer to POST <ota_url>: {"websocket":{"url","token","version"},"server_time":{...},
// "firmware":{...}}. Only the websocket section matters here.
struct OtaAnswer {
  bool ok = false;
  std::string error;     // why not, in words for the serial console
  std::string url;       // ws:// or wss://
  std::string token;     // may be empty
  int version = 1;       // binary protocol version, 1 when not given
  long long server_time_ms = 0;  // 0 when not given
};

OtaAnswer parse_ota_answer(std::string_view json);

// The body of the OTA request: what the device is, in the xiaozhi firmware's field names.
std::string ota_request_body(std::string_view device_id, std::string_view client_id,
                             std::string_view firmware_version);

// The Authorization header value: a token without a space gets "Bearer " in front.
std::string authorization_value(std::string_view token);

// A stable UUID-shaped Client-Id derived from the device id (the xiaozhi firmware stores a
// random one in NVS; one derived from the id survives an NVS erase the same way).
std::string client_id_for(std::string_view device_id);

}  // namespace xiaozhi
}  // namespace lobug
