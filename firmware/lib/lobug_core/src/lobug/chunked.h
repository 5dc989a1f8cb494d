// HTTP/1.1 chunked transfer, both ways. The streamed reply (/chat/audio/stream) has no length;
// the ESP32 HTTPClient hands over the raw socket, framing included, so the device undoes it.
// The recording sent while it is made has no length either: each piece goes out as one chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lobug/bytes.h"

namespace lobug {

// The zero-size chunk that ends a chunked body (no trailer).
constexpr const char* kLastChunk = "0\r\n\r\n";

// One chunk, framing included: "<size in hex>\r\n", the data, "\r\n". No data gives an empty
// string, never a zero-size chunk, which would end the body early.
std::string encode_chunk(const uint8_t* data, size_t size);

class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(ByteSink& out) : out_(out) {}

  // Returns false once the framing is broken or the sink refused data.
  bool feed(const uint8_t* data, size_t size);
  // The terminating zero-size chunk (and trailer) was read: the body is complete. A body that
  // ends without it was cut off (server error mid-stream, connection lost).
  bool complete() const { return state_ == State::Done; }
  bool failed() const { return state_ == State::Error; }

 private:
  enum class State { Size, Extension, SizeLf, Data, DataCr, DataLf, Trailer, TrailerLf, Done,
                     Error };

  size_t step(const uint8_t* data, size_t size);
  void on_size_char(uint8_t c);
  void on_trailer_char(uint8_t c);

  ByteSink& out_;
  State state_ = State::Size;
  uint32_t remaining_ = 0;
  uint8_t size_digits_ = 0;
  bool trailer_line_empty_ = true;
};

}  // namespace lobug
