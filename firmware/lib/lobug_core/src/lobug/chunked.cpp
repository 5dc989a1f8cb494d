#include "lobug/chunked.h"

#include <cstdio>

namespace lobug {
namespace {

int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr uint8_t kMaxSizeDigits = 7;  // chunks up to 256 MB; larger is not a speech reply

}  // namespace

std::string encode_chunk(const uint8_t* data, size_t size) {
  if (size == 0) return {};
  char size_line[20];
  int n = std::snprintf(size_line, sizeof size_line, "%lx\r\n", static_cast<unsigned long>(size));
  std::string chunk(size_line, static_cast<size_t>(n));
  chunk.append(reinterpret_cast<const char*>(data), size);
  chunk += "\r\n";
  return chunk;
}

bool ChunkedDecoder::feed(const uint8_t* data, size_t size) {
  size_t offset = 0;
  while (offset < size && state_ != State::Error && state_ != State::Done) {
    offset += step(data + offset, size - offset);
  }
  return state_ != State::Error;
}

size_t ChunkedDecoder::step(const uint8_t* data, size_t size) {
  uint8_t c = data[0];
  switch (state_) {
    case State::Size:
      on_size_char(c);
      return 1;
    case State::Extension:  // ";name=value" after the size carries nothing we need
      if (c == '\r') state_ = State::SizeLf;
      return 1;
    case State::SizeLf:
      if (c != '\n') state_ = State::Error;
      else if (remaining_ == 0) state_ = State::Trailer;
      else state_ = State::Data;
      trailer_line_empty_ = true;
      return 1;
    case State::Data: {
      size_t take = size < remaining_ ? size : remaining_;
      remaining_ -= static_cast<uint32_t>(take);
      if (!out_.write(data, take)) state_ = State::Error;
      else if (remaining_ == 0) state_ = State::DataCr;
      return take;
    }
    case State::DataCr:
      state_ = c == '\r' ? State::DataLf : State::Error;
      return 1;
    case State::DataLf:
      state_ = c == '\n' ? State::Size : State::Error;
      size_digits_ = 0;
      return 1;
    case State::Trailer:
    case State::TrailerLf:
      on_trailer_char(c);
      return 1;
    case State::Done:
    case State::Error:
      return size;
  }
  return 1;
}

void ChunkedDecoder::on_size_char(uint8_t c) {
  int digit = hex_value(c);
  if (digit >= 0 && size_digits_ < kMaxSizeDigits) {
    remaining_ = (remaining_ << 4) | static_cast<uint32_t>(digit);
    ++size_digits_;
  } else if (size_digits_ > 0 && (c == ';' || c == ' ' || c == '\t')) {
    state_ = State::Extension;
  } else if (size_digits_ > 0 && c == '\r') {
    state_ = State::SizeLf;
  } else {
    state_ = State::Error;
  }
}

// After the last chunk: optional "Name: value" trailer lines, then an empty line.
void ChunkedDecoder::on_trailer_char(uint8_t c) {
  if (state_ == State::TrailerLf) {
    if (c != '\n') {
      state_ = State::Error;
    } else {
      state_ = trailer_line_empty_ ? State::Done : State::Trailer;
      trailer_line_empty_ = true;
    }
  } else if (c == '\r') {
    state_ = State::TrailerLf;
  } else {
    trailer_line_empty_ = false;
  }
}

}  // namespace lobug
