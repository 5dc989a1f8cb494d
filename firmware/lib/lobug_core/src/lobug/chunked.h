// HTTP/1.1 chunked transfer decoding. The streamed reply (/chat/audio/stream) has no length;
// the ESP32 HTTPClient hands over the raw socket, framing included, so the device undoes it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lobug/bytes.h"

namespace lobug {

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
