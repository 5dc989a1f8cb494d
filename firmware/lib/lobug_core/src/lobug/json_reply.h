// A streaming reader for the /chat/audio reply, {"transcription", "response", "action",
// "audio_b64"}, fed as bytes arrive from the socket. The three text fields are kept (up to a
// cap); audio_b64 is base64-decoded on the fly into a ByteSink; everything else is skipped
// without being stored, whatever its type. A general JSON library would have to hold the
// whole ~300 KB base64 string before decoding it; this never holds more than one character.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lobug/base64.h"
#include "lobug/bytes.h"

namespace lobug {

struct ReplyFields {
  std::string transcription;
  std::string response;
  std::string action;
  bool has_audio = false;      // audio_b64 was a non-empty string
  bool audio_valid = true;     // ...and decoded cleanly
  bool text_truncated = false;  // a text field was longer than the cap
};

class ReplyScanner : public ByteSink {
 public:
  // `max_text` bytes are kept of each text field (cut at a UTF-8 character boundary).
  explicit ReplyScanner(ByteSink& audio, size_t max_text = 1024);

  // Returns false once the input is not JSON (the reader may stop early).
  bool feed(const char* data, size_t size);
  bool write(const uint8_t* data, size_t size) override {
    return feed(reinterpret_cast<const char*>(data), size);
  }
  // True when one complete top-level object was read.
  bool complete() const { return state_ == State::End; }
  bool failed() const { return state_ == State::Error; }
  const ReplyFields& fields() const { return fields_; }

 private:
  enum class State {
    Start, KeyOrEnd, KeyAfterComma, String, Escape, Unicode, Colon, Value, Scalar,
    Nested, NestedString, NestedEscape, CommaOrEnd, End, Error,
  };
  enum class Target { Key, Text, Audio, Skip };

  size_t step(const char* data, size_t size);  // consumes at least one byte
  size_t string_run(const char* data, size_t size);
  void begin_string(Target target);
  void begin_value_string();
  void end_string();
  void on_escape(char c);
  void on_unicode_digit(char c);
  void emit_code_point(uint32_t code_point);
  void flush_pending_surrogate();
  void emit(const char* bytes, size_t size);
  void on_value_start(char c);
  void on_nested(char c);

  ByteSink& audio_sink_;
  Base64Decoder audio_;
  size_t max_text_;
  ReplyFields fields_;
  State state_ = State::Start;
  Target target_ = Target::Skip;
  std::string key_;
  std::string* text_ = nullptr;
  uint32_t unicode_ = 0;
  uint8_t unicode_digits_ = 0;
  uint32_t high_surrogate_ = 0;
  size_t nested_depth_ = 0;
  size_t audio_chars_ = 0;
  bool audio_taken_ = false;
};

// Drops an incomplete UTF-8 sequence at the end of `text` (left by cutting at a byte count).
void trim_partial_utf8(std::string& text);

}  // namespace lobug
