// A tiny reader and writer for the small JSON control messages of the xiaozhi WebSocket
// protocol (hello, listen, stt, tts, the OTA answer): a whole message is read at once into a
// flat list of "path" -> scalar, nested objects joined with dots ("audio_params.sample_rate").
// Arrays are checked and skipped. A message larger than the caps is refused, never truncated.
// ReplyScanner (json_reply.h) stays the reader for the large streamed /chat/audio reply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lobug {

enum class JsonKind { String, Number, Bool, Null };

struct JsonField {
  std::string path;   // "type", "audio_params.sample_rate", "websocket.url"
  JsonKind kind = JsonKind::Null;
  std::string value;  // a string decoded (UTF-8), a number as written, "true"/"false"
};

struct JsonLimits {
  size_t max_bytes = 16 * 1024;  // the whole message
  size_t max_depth = 8;
  size_t max_fields = 96;
};

class JsonFields {
 public:
  // Parses one complete JSON object; false (and empty) when it is not one or breaks a limit.
  bool parse(std::string_view text, const JsonLimits& limits = JsonLimits{});

  const JsonField* find(std::string_view path) const;
  // The string at `path`, or `fallback` when absent or not a string.
  std::string string(std::string_view path, std::string_view fallback = "") const;
  // The integer at `path` when it is a number within [min, max]; else `fallback`.
  long long integer(std::string_view path, long long fallback, long long min = -2147483647LL,
                    long long max = 2147483647LL) const;
  bool boolean(std::string_view path, bool fallback) const;
  bool has_object(std::string_view path) const;  // an object was at `path` (even an empty one)

  const std::vector<JsonField>& fields() const { return fields_; }

 private:
  friend class JsonParser;
  std::vector<JsonField> fields_;
  std::vector<std::string> objects_;
};

// `text` as a JSON string literal, quotes included; control characters escaped.
std::string json_quote(std::string_view text);

// Writes a code point as UTF-8 into out (up to 4 bytes); returns the number of bytes written.
size_t encode_utf8(uint32_t code_point, char* out);

}  // namespace lobug
