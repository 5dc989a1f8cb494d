#include "lobug/json_reply.h"

#include <cstring>

#include "lobug/json_lite.h"

namespace lobug {
namespace {

constexpr size_t kMaxKeyBytes = 32;
constexpr uint32_t kReplacement = 0xFFFD;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_scalar_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         c == '-' || c == '+' || c == '.';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_high_surrogate(uint32_t cp) { return cp >= 0xD800 && cp <= 0xDBFF; }
bool is_low_surrogate(uint32_t cp) { return cp >= 0xDC00 && cp <= 0xDFFF; }

}  // namespace

void trim_partial_utf8(std::string& text) {
  size_t end = text.size();
  size_t start = end;
  // Walk back over at most three continuation bytes to the lead byte of the last character.
  while (start > 0 && end - start < 3 &&
         (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) {
    --start;
  }
  if (start == 0) {
    if (end > 0 && (static_cast<unsigned char>(text[0]) & 0xC0) == 0x80) text.clear();
    return;
  }
  auto lead = static_cast<unsigned char>(text[start - 1]);
  size_t needed = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  size_t have = end - (start - 1);
  if (lead >= 0x80 && have < needed) text.resize(start - 1);
}

ReplyScanner::ReplyScanner(ByteSink& audio, size_t max_text)
    : audio_sink_(audio), audio_(audio), max_text_(max_text) {}

bool ReplyScanner::feed(const char* data, size_t size) {
  size_t offset = 0;
  while (offset < size && state_ != State::Error) offset += step(data + offset, size - offset);
  return state_ != State::Error;
}

size_t ReplyScanner::step(const char* data, size_t size) {
  char c = data[0];
  switch (state_) {
    case State::Start:
      if (c == '{') state_ = State::KeyOrEnd;
      else if (!is_space(c)) state_ = State::Error;
      return 1;
    case State::KeyOrEnd:
    case State::KeyAfterComma:
      if (c == '"') begin_string(Target::Key);
      else if (c == '}' && state_ == State::KeyOrEnd) state_ = State::End;
      else if (!is_space(c)) state_ = State::Error;
      return 1;
    case State::String:
      return string_run(data, size);
    case State::Escape:
      on_escape(c);
      return 1;
    case State::Unicode:
      on_unicode_digit(c);
      return 1;
    case State::Colon:
      if (c == ':') state_ = State::Value;
      else if (!is_space(c)) state_ = State::Error;
      return 1;
    case State::Value:
      on_value_start(c);
      return 1;
    case State::Scalar:
      if (is_scalar_char(c)) return 1;
      state_ = State::CommaOrEnd;
      return step(data, size);  // the delimiter belongs to the next state
    case State::Nested:
    case State::NestedString:
    case State::NestedEscape:
      on_nested(c);
      return 1;
    case State::CommaOrEnd:
      if (c == ',') state_ = State::KeyAfterComma;
      else if (c == '}') state_ = State::End;
      else if (!is_space(c)) state_ = State::Error;
      return 1;
    case State::End:
      if (!is_space(c)) state_ = State::Error;
      return 1;
    case State::Error:
      return size;
  }
  return 1;
}

size_t ReplyScanner::string_run(const char* data, size_t size) {
  size_t run = 0;
  while (run < size) {
    auto c = static_cast<unsigned char>(data[run]);
    if (c == '"' || c == '\\' || c < 0x20) break;
    ++run;
  }
  if (run > 0) {
    emit(data, run);
    return run;
  }
  auto c = static_cast<unsigned char>(data[0]);
  if (c == '"') end_string();
  else if (c == '\\') state_ = State::Escape;
  else state_ = State::Error;  // raw control characters are not allowed in JSON strings
  return 1;
}

void ReplyScanner::begin_string(Target target) {
  target_ = target;
  high_surrogate_ = 0;
  if (target == Target::Key) key_.clear();
  state_ = State::String;
}

void ReplyScanner::begin_value_string() {
  text_ = nullptr;
  if (key_ == "transcription") text_ = &fields_.transcription;
  else if (key_ == "response") text_ = &fields_.response;
  else if (key_ == "action") text_ = &fields_.action;
  if (text_ != nullptr) {
    text_->clear();
    begin_string(Target::Text);
  } else if (key_ == "audio_b64" && !audio_taken_) {
    audio_.reset();
    audio_chars_ = 0;
    begin_string(Target::Audio);
  } else {
    begin_string(Target::Skip);
  }
}

void ReplyScanner::end_string() {
  flush_pending_surrogate();
  switch (target_) {
    case Target::Key:
      state_ = State::Colon;
      return;
    case Target::Text:
      trim_partial_utf8(*text_);
      break;
    case Target::Audio:
      audio_taken_ = true;
      fields_.has_audio = audio_chars_ > 0;
      fields_.audio_valid = audio_.finish();
      break;
    case Target::Skip:
      break;
  }
  state_ = State::CommaOrEnd;
}

void ReplyScanner::on_escape(char c) {
  const char* from = "\"\\/bfnrt";
  const char* to = "\"\\/\b\f\n\r\t";
  if (c == 'u') {
    unicode_ = 0;
    unicode_digits_ = 0;
    state_ = State::Unicode;
    return;
  }
  const char* found = std::strchr(from, c);
  if (c == '\0' || found == nullptr) {
    state_ = State::Error;
    return;
  }
  state_ = State::String;
  emit(to + (found - from), 1);
}

void ReplyScanner::on_unicode_digit(char c) {
  int value = hex_value(c);
  if (value < 0) {
    state_ = State::Error;
    return;
  }
  unicode_ = (unicode_ << 4) | static_cast<uint32_t>(value);
  if (++unicode_digits_ < 4) return;
  state_ = State::String;
  uint32_t cp = unicode_;
  if (high_surrogate_ != 0 && is_low_surrogate(cp)) {
    uint32_t combined = 0x10000 + ((high_surrogate_ - 0xD800) << 10) + (cp - 0xDC00);
    high_surrogate_ = 0;
    emit_code_point(combined);
    return;
  }
  flush_pending_surrogate();
  if (is_high_surrogate(cp)) high_surrogate_ = cp;
  else emit_code_point(is_low_surrogate(cp) ? kReplacement : cp);
}

void ReplyScanner::flush_pending_surrogate() {
  if (high_surrogate_ == 0) return;
  high_surrogate_ = 0;
  emit_code_point(kReplacement);
}

void ReplyScanner::emit_code_point(uint32_t code_point) {
  char bytes[4];
  emit(bytes, encode_utf8(code_point, bytes));
}

void ReplyScanner::emit(const char* bytes, size_t size) {
  flush_pending_surrogate();  // a high surrogate not followed by a low one
  switch (target_) {
    case Target::Key:
      if (key_.size() + size <= kMaxKeyBytes) key_.append(bytes, size);
      else key_.assign(kMaxKeyBytes + 1, '?');  // too long to be a field we read
      return;
    case Target::Text: {
      size_t room = max_text_ > text_->size() ? max_text_ - text_->size() : 0;
      if (size > room) fields_.text_truncated = true;
      text_->append(bytes, size < room ? size : room);
      return;
    }
    case Target::Audio:
      audio_chars_ += size;
      audio_.feed(bytes, size);
      return;
    case Target::Skip:
      return;
  }
}

void ReplyScanner::on_value_start(char c) {
  if (is_space(c)) return;
  if (c == '"') {
    begin_value_string();
  } else if (c == '{' || c == '[') {
    nested_depth_ = 1;
    state_ = State::Nested;
  } else if (is_scalar_char(c)) {
    state_ = State::Scalar;
  } else {
    state_ = State::Error;
  }
}

void ReplyScanner::on_nested(char c) {
  if (state_ == State::NestedEscape) {
    state_ = State::NestedString;
  } else if (state_ == State::NestedString) {
    if (c == '\\') state_ = State::NestedEscape;
    else if (c == '"') state_ = State::Nested;
  } else if (c == '"') {
    state_ = State::NestedString;
  } else if (c == '{' || c == '[') {
    ++nested_depth_;
  } else if ((c == '}' || c == ']') && --nested_depth_ == 0) {
    state_ = State::CommaOrEnd;
  }
}

}  // namespace lobug
