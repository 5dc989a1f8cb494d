#include "lobug/base64.h"

namespace lobug {
namespace {

constexpr int kSkip = -2;
constexpr int kPad = -3;
constexpr int kInvalid = -1;

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  if (c == '=') return kPad;
  if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\\') return kSkip;
  return kInvalid;
}

}  // namespace

void Base64Decoder::reset() {
  bits_ = 0;
  count_ = padding_ = 0;
  failed_ = false;
}

bool Base64Decoder::emit(size_t bytes) {
  uint8_t group[3] = {static_cast<uint8_t>(bits_ >> 16), static_cast<uint8_t>(bits_ >> 8),
                      static_cast<uint8_t>(bits_)};
  bits_ = 0;
  count_ = 0;
  return out_.write(group, bytes);
}

bool Base64Decoder::feed(const char* text, size_t size) {
  for (size_t i = 0; i < size && !failed_; ++i) {
    int value = sextet(text[i]);
    if (value == kSkip) continue;
    if (value == kInvalid || (padding_ > 0 && value != kPad)) {
      failed_ = true;
    } else if (value == kPad) {
      // "xx==" and "xxx=" are the only legal places for padding.
      if (count_ + padding_ < 2 || count_ + padding_ >= 4) {
        failed_ = true;
      } else if (++padding_ + count_ == 4) {
        bits_ <<= 6 * padding_;
        failed_ = !emit(count_ - 1u);
        padding_ = 4;  // the group is closed; only whitespace may follow
      }
    } else {
      bits_ = (bits_ << 6) | static_cast<uint32_t>(value);
      if (++count_ == 4) failed_ = !emit(3);
    }
  }
  return !failed_;
}

bool Base64Decoder::finish() {
  if (failed_) return false;
  if (padding_ > 0 && padding_ < 4) failed_ = true;  // "xx=" with the second '=' missing
  if (count_ == 1) failed_ = true;                   // six bits cannot make a byte
  if (!failed_ && count_ > 1) {
    uint8_t have = count_;
    bits_ <<= 6 * (4 - have);
    failed_ = !emit(have - 1u);
  }
  return !failed_;
}

long base64_decode(const char* text, size_t size, uint8_t* out, size_t capacity) {
  ByteBuffer buffer(out, capacity);
  Base64Decoder decoder(buffer);
  if (!decoder.feed(text, size) || !decoder.finish()) return -1;
  return static_cast<long>(buffer.size());
}

}  // namespace lobug
