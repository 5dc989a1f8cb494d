#include "lobug/xiaozhi.h"

#include <algorithm>
#include <cstdio>

#include "lobug/json_lite.h"

namespace lobug {
namespace xiaozhi {
namespace {

constexpr uint32_t kMaxFrameMs = 120;       // Opus packs at most 120 ms in one packet
constexpr uint32_t kMaxSampleRate = 48000;  // Opus's highest rate

std::string session_prefix(std::string_view session_id) {
  return "{\"session_id\":" + json_quote(session_id);
}

void put_be16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>((v >> 8) & 0xFF);
  p[1] = static_cast<uint8_t>(v & 0xFF);
}

void put_be32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>((v >> (24 - 8 * i)) & 0xFF);
}

uint16_t get_be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

uint32_t get_be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

MessageKind kind_of(const std::string& type, const std::string& state) {
  if (type == "hello") return MessageKind::Hello;
  if (type == "stt") return MessageKind::Stt;
  if (type == "llm") return MessageKind::Llm;
  if (type == "abort") return MessageKind::Abort;
  if (type == "tts") {
    if (state == "start") return MessageKind::TtsStart;
    if (state == "sentence_start") return MessageKind::TtsSentence;
    if (state == "stop") return MessageKind::TtsStop;
  }
  return MessageKind::Other;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

const char* listen_mode_name(ListenMode mode) {
  switch (mode) {
    case ListenMode::Auto: return "auto";
    case ListenMode::Manual: return "manual";
    case ListenMode::Realtime: return "realtime";
  }
  return "auto";
}

std::string client_hello(int version, const AudioParams& mic) {
  return "{\"type\":\"hello\",\"version\":" + std::to_string(version) +
         ",\"transport\":\"websocket\",\"audio_params\":{\"format\":" + json_quote(mic.format) +
         ",\"sample_rate\":" + std::to_string(mic.sample_rate) +
         ",\"channels\":" + std::to_string(mic.channels) +
         ",\"frame_duration\":" + std::to_string(mic.frame_ms) + "}}";
}

std::string listen_message(std::string_view session_id, ListenState state, ListenMode mode) {
  std::string message = session_prefix(session_id) + ",\"type\":\"listen\",\"state\":";
  switch (state) {
    case ListenState::Start:
      return message + "\"start\",\"mode\":\"" + listen_mode_name(mode) + "\"}";
    case ListenState::Stop: return message + "\"stop\"}";
    case ListenState::Detect: return message + "\"detect\"}";
  }
  return message + "\"stop\"}";
}

std::string detect_message(std::string_view session_id, std::string_view wake_word) {
  return session_prefix(session_id) + ",\"type\":\"listen\",\"state\":\"detect\",\"text\":" +
         json_quote(wake_word) + "}";
}

std::string abort_message(std::string_view session_id, std::string_view reason) {
  std::string message = session_prefix(session_id) + ",\"type\":\"abort\"";
  if (!reason.empty()) message += ",\"reason\":" + json_quote(reason);
  return message + "}";
}

ServerMessage parse_server_message(std::string_view json) {
  ServerMessage message;
  JsonFields fields;
  if (!fields.parse(json)) return message;
  message.type = fields.string("type");
  if (message.type.empty()) return message;
  message.kind = kind_of(message.type, fields.string("state"));
  message.session_id = fields.string("session_id");
  message.text = fields.string("text");
  message.emotion = fields.string("emotion");
  if (message.kind == MessageKind::Hello) {
    message.websocket_transport = fields.string("transport") == "websocket";
    AudioParams& audio = message.audio;
    audio.format = fields.string("audio_params.format", "opus");
    audio.sample_rate = static_cast<uint32_t>(
        fields.integer("audio_params.sample_rate", kDefaultServerRate, 8000, kMaxSampleRate));
    audio.channels = static_cast<uint32_t>(fields.integer("audio_params.channels", 1, 1, 2));
    audio.frame_ms = static_cast<uint32_t>(
        fields.integer("audio_params.frame_duration", kDefaultServerFrameMs, 10, kMaxFrameMs));
  }
  return message;
}

const char* message_kind_name(MessageKind kind) {
  switch (kind) {
    case MessageKind::Invalid: return "invalid";
    case MessageKind::Hello: return "hello";
    case MessageKind::Stt: return "stt";
    case MessageKind::Llm: return "llm";
    case MessageKind::TtsStart: return "tts start";
    case MessageKind::TtsSentence: return "tts sentence_start";
    case MessageKind::TtsStop: return "tts stop";
    case MessageKind::Abort: return "abort";
    case MessageKind::Other: return "other";
  }
  return "invalid";
}

bool supported_version(int version) { return version >= 1 && version <= 3; }

size_t frame_header_size(int version) {
  if (version == 2) return 16;
  if (version == 3) return 4;
  return 0;
}

bool write_frame_header(int version, size_t payload_size, uint32_t timestamp_ms, uint8_t* out) {
  if (version == 2) {
    if (payload_size > 0xFFFFFFFFu) return false;
    put_be16(out, 2);
    put_be16(out + 2, 0);  // type 0: Opus
    put_be32(out + 4, 0);
    put_be32(out + 8, timestamp_ms);
    put_be32(out + 12, static_cast<uint32_t>(payload_size));
    return true;
  }
  if (version == 3) {
    if (payload_size > 0xFFFF) return false;
    out[0] = 0;  // type 0: Opus
    out[1] = 0;
    put_be16(out + 2, static_cast<uint32_t>(payload_size));
    return true;
  }
  return version == 1;
}

bool encode_audio_frame(int version, const uint8_t* payload, size_t size, uint32_t timestamp_ms,
                        std::vector<uint8_t>* out) {
  if (!supported_version(version)) return false;
  size_t header = frame_header_size(version);
  out->resize(header + size);
  if (!write_frame_header(version, size, timestamp_ms, out->data())) return false;
  if (size > 0) std::copy(payload, payload + size, out->begin() + static_cast<long>(header));
  return true;
}

AudioFrame decode_audio_frame(int version, const uint8_t* data, size_t size) {
  AudioFrame frame;
  if (!supported_version(version)) {
    frame.error = FrameError::BadVersion;
    return frame;
  }
  size_t header = frame_header_size(version);
  if (size < header) {
    frame.error = FrameError::Truncated;
    return frame;
  }
  size_t declared = size - header;
  if (version == 2) {
    frame.type = get_be16(data + 2);
    frame.timestamp_ms = get_be32(data + 8);
    declared = get_be32(data + 12);
  } else if (version == 3) {
    frame.type = data[0];
    declared = get_be16(data + 2);
  }
  if (declared > size - header) {
    frame.error = FrameError::Truncated;
  } else if (declared < size - header) {
    frame.error = FrameError::SizeMismatch;
  } else if (frame.type != 0) {
    frame.error = FrameError::NotAudio;
  } else {
    frame.payload = data + header;
    frame.size = declared;
  }
  return frame;
}

const char* frame_error_name(FrameError error) {
  switch (error) {
    case FrameError::None: return "none";
    case FrameError::Truncated: return "truncated";
    case FrameError::SizeMismatch: return "size mismatch";
    case FrameError::NotAudio: return "not audio";
    case FrameError::BadVersion: return "unsupported version";
  }
  return "none";
}

Url parse_url(std::string_view url) {
  Url out;
  size_t colon = url.find("://");
  if (colon == std::string_view::npos) return out;
  out.scheme = std::string(url.substr(0, colon));
  uint16_t default_port = out.scheme == "http" || out.scheme == "ws"     ? 80
                          : out.scheme == "https" || out.scheme == "wss" ? 443
                                                                         : 0;
  if (default_port == 0) return out;
  std::string_view rest = url.substr(colon + 3);
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  out.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (out.path[0] == '?') out.path = "/" + out.path;
  if (authority.find('@') != std::string_view::npos) return out;  // no user info
  size_t port_colon = authority.rfind(':');
  out.port = default_port;
  if (port_colon != std::string_view::npos) {
    std::string_view port = authority.substr(port_colon + 1);
    if (!all_digits(port) || port.size() > 5) return out;
    unsigned long value = 0;
    for (char c : port) value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value == 0 || value > 65535) return out;
    out.port = static_cast<uint16_t>(value);
    authority = authority.substr(0, port_colon);
  }
  if (authority.empty()) return out;
  for (char c : authority) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-';
    if (!ok) return out;  // IPv6 literals and odd hosts are refused
  }
  out.host = std::string(authority);
  out.valid = true;
  return out;
}

OtaAnswer parse_ota_answer(std::string_view json) {
  OtaAnswer answer;
  JsonFields fields;
  if (!fields.parse(json)) {
    answer.error = "the OTA answer is not JSON";
    return answer;
  }
  if (!fields.has_object("websocket")) {
    answer.error = "the OTA answer has no websocket section";
    return answer;
  }
  answer.url = fields.string("websocket.url");
  Url url = parse_url(answer.url);
  if (!url.valid || (url.scheme != "ws" && url.scheme != "wss")) {
    answer.error = "the OTA answer's websocket url is not ws:// or wss://";
    return answer;
  }
  answer.token = fields.string("websocket.token");
  answer.version = static_cast<int>(fields.integer("websocket.version", 1, 1, 3));
  answer.server_time_ms = fields.integer("server_time.timestamp", 0, 0, 9007199254740991LL);
  answer.ok = true;
  return answer;
}

std::string ota_request_body(std::string_view device_id, std::string_view client_id,
                             std::string_view firmware_version) {
  return "{\"version\":2,\"uuid\":" + json_quote(client_id) +
         ",\"mac_address\":" + json_quote(device_id) +
         ",\"application\":{\"name\":\"lobug\",\"version\":" + json_quote(firmware_version) +
         "},\"board\":{\"type\":\"lobug\",\"name\":\"lobug\"}}";
}

std::string authorization_value(std::string_view token) {
  if (token.find(' ') != std::string_view::npos) return std::string(token);
  return "Bearer " + std::string(token);
}

std::string client_id_for(std::string_view device_id) {
  // Two FNV-1a hashes with different seeds: 64 bits from the id, shaped as a version-4 UUID.
  uint32_t a = 2166136261u, b = 0x9E3779B9u;
  for (char c : device_id) {
    a = (a ^ static_cast<uint8_t>(c)) * 16777619u;
    b = (b ^ static_cast<uint8_t>(c)) * 16777619u;
  }
  uint32_t c = a * 2654435761u ^ b, d = b * 2246822519u ^ a;
  char out[40];
  std::snprintf(out, sizeof out, "%08x-%04x-4%03x-%04x-%04x%08x", unsigned(a), unsigned(b >> 16),
                unsigned(b & 0xFFF), unsigned(0x8000 | (c & 0x3FFF)), unsigned(c >> 16),
                unsigned(d));
  return out;
}

}  // namespace xiaozhi
}  // namespace lobug
