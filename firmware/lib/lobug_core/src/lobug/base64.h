// Streaming base64 decoding: the reply's audio arrives in network-sized pieces and is decoded
// straight into the reply buffer, so the base64 text itself is never held in memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lobug/bytes.h"

namespace lobug {

class Base64Decoder {
 public:
  explicit Base64Decoder(ByteSink& out) : out_(out) {}

  // Decodes `size` characters. Whitespace and backslashes are skipped: a JSON encoder may send
  // "/" as "\/". Returns false (and stays failed) on a character outside the alphabet.
  bool feed(const char* text, size_t size);
  // Flushes a final group written without "=" padding; false if the input was cut mid-byte.
  bool finish();

  bool failed() const { return failed_; }
  void reset();

 private:
  bool emit(size_t bytes);

  ByteSink& out_;
  uint32_t bits_ = 0;
  uint8_t count_ = 0;     // sextets collected in the current group of four
  uint8_t padding_ = 0;   // '=' seen; only more padding or whitespace may follow
  bool failed_ = false;
};

// Decodes a complete string into out (at most `capacity` bytes). Returns the number of bytes
// written, or -1 when the input is not base64.
long base64_decode(const char* text, size_t size, uint8_t* out, size_t capacity);

}  // namespace lobug
