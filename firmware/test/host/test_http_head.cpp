#include <algorithm>
#include <string>
#include <vector>

#include "lobug/http_head.h"
#include "runner.h"

using namespace lobug;

namespace {

// Feeds `wire` in pieces of at most `piece` bytes; returns the bytes the head did not use.
std::string feed(ResponseHead& head, const std::string& wire, size_t piece) {
  size_t at = 0;
  while (at < wire.size() && !head.complete() && !head.failed()) {
    size_t size = std::min(piece, wire.size() - at);
    at += head.feed(reinterpret_cast<const uint8_t*>(wire.data() + at), size);
  }
  return wire.substr(at);
}

const std::string kReply =
    "HTTP/1.1 200 OK\r\n"
    "date: Mon, 23 Nov 2026 21:00:00 GMT\r\n"
    "x-lobug-action: respond\r\n"
    "x-lobug-transcription: what%20time%20is%20it\r\n"
    "transfer-encoding:chunked\r\n"
    "\r\n"
    "2c\r\nRIFF";

}  // namespace

TEST(http_head_of_a_chunked_post) {
  std::vector<Header> headers = {{"Authorization", "Bearer t0k"}, {"X-Device-Id", "kitchen"}};
  CHECK_EQ(chunked_post_head("192.168.1.50", 8321, "/chat/audio/stream", "audio/wav", headers),
           std::string("POST /chat/audio/stream HTTP/1.1\r\n"
                       "Host: 192.168.1.50:8321\r\n"
                       "Content-Type: audio/wav\r\n"
                       "Transfer-Encoding: chunked\r\n"
                       "Connection: close\r\n"
                       "Authorization: Bearer t0k\r\n"
                       "X-Device-Id: kitchen\r\n"
                       "\r\n"));
}

TEST(http_head_reads_status_and_headers_and_leaves_the_body) {
  for (size_t piece : {size_t(1), size_t(3), size_t(1000)}) {
    ResponseHead head;
    std::string rest = feed(head, kReply, piece);
    CHECK(head.complete());
    CHECK_EQ(head.status(), 200);
    CHECK_EQ(rest, std::string("2c\r\nRIFF"));
    CHECK_EQ(head.header("X-Lobug-Action"), std::string("respond"));  // any case
    CHECK_EQ(head.header("X-Lobug-Transcription"), std::string("what%20time%20is%20it"));
    CHECK_EQ(head.header("Transfer-Encoding"), std::string("chunked"));
    CHECK_EQ(head.header("X-Lobug-Turn"), std::string());
  }
}

TEST(http_head_of_an_error_reply) {
  ResponseHead head;
  std::string rest = feed(head, "HTTP/1.1 415 Unsupported Media Type\r\ncontent-length: 2\r\n\r\n{}", 7);
  CHECK(head.complete());
  CHECK_EQ(head.status(), 415);
  CHECK_EQ(head.header("Content-Length"), std::string("2"));
  CHECK_EQ(rest, std::string("{}"));
}

TEST(http_head_refuses_what_is_not_an_http_reply) {
  const char* bad[] = {"SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
                       "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"};
  for (const char* wire : bad) {
    ResponseHead head;
    feed(head, wire, 5);
    CHECK(head.failed());
    CHECK(!head.complete());
  }
  ResponseHead endless;
  feed(endless, "HTTP/1.1 200 OK\r\nX-Long: " + std::string(ResponseHead::kMaxBytes, 'a'), 100);
  CHECK(endless.failed());
}
