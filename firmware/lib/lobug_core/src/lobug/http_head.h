// The head of an HTTP/1.1 exchange written and read by the device itself, for the one request
// HTTPClient cannot make: a POST whose body is sent with chunked transfer while it is being
// recorded (/chat/audio/stream). The request head is built here and the response's status line
// and headers are parsed here, byte by byte as they arrive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lobug/wire.h"

namespace lobug {

// "POST <path> HTTP/1.1", Host, Content-Type, Transfer-Encoding: chunked, Connection: close,
// then `headers` (the device's own), then the empty line.
std::string chunked_post_head(std::string_view host, uint16_t port, std::string_view path,
                              std::string_view content_type, const std::vector<Header>& headers);

class ResponseHead {
 public:
  // A head larger than this is not a reply of ours (the transcription header is the longest).
  static constexpr size_t kMaxBytes = 8 * 1024;

  // Takes bytes until the empty line after the headers; returns how many were used (the rest
  // is the body). Nothing more is taken once complete() or failed().
  size_t feed(const uint8_t* data, size_t size);
  bool complete() const { return state_ == State::Done; }
  bool failed() const { return state_ == State::Error; }

  int status() const { return status_; }
  // The value of a header (its name matched case-insensitively), or "" when it was not sent.
  std::string header(std::string_view name) const;

 private:
  enum class State { StatusLine, Headers, Done, Error };

  void on_line();

  State state_ = State::StatusLine;
  std::string line_;
  size_t total_ = 0;
  int status_ = 0;
  std::vector<Header> headers_;
};

}  // namespace lobug
