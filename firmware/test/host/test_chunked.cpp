#include <algorithm>
#include <string>
#include <vector>

#include "lobug/chunked.h"
#include "runner.h"

using namespace lobug;

namespace {

struct Collect : ByteSink {
  std::string data;
  bool write(const uint8_t* bytes, size_t size) override {
    data.append(reinterpret_cast<const char*>(bytes), size);
    return true;
  }
};

struct Decoded {
  std::string data;
  bool ok = true;
  bool complete = false;
};

Decoded decode(const std::string& body, size_t max_piece = 0, uint32_t seed = 1) {
  Collect sink;
  ChunkedDecoder decoder(sink);
  mini::Random random(seed);
  Decoded result;
  for (size_t at = 0; at < body.size() && result.ok;) {
    size_t piece = max_piece == 0 ? body.size() : 1 + random.below(max_piece);
    if (at + piece > body.size()) piece = body.size() - at;
    result.ok = decoder.feed(reinterpret_cast<const uint8_t*>(body.data() + at), piece);
    at += piece;
  }
  result.data = sink.data;
  result.complete = decoder.complete();
  return result;
}

}  // namespace

TEST(chunked_decodes_a_body) {
  Decoded d = decode("4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n");
  CHECK(d.ok && d.complete);
  CHECK_EQ(d.data, std::string("Wikipedia in\r\n\r\nchunks."));
}

TEST(chunked_handles_extensions_trailers_and_hex_case) {
  Decoded d = decode("a;name=x\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\nX-Trailer: 1\r\n\r\n");
  CHECK(d.ok && d.complete);
  CHECK_EQ(d.data, std::string("0123456789abcdefghij"));
}

TEST(chunked_binary_data_survives_every_split) {
  std::string payload;
  for (int i = 0; i < 3000; ++i) payload += static_cast<char>(i * 7);
  std::string body;
  for (size_t at = 0; at < payload.size(); at += 1000) {
    body += "3e8\r\n" + payload.substr(at, 1000) + "\r\n";
  }
  body += "0\r\n\r\n";
  for (uint32_t seed = 1; seed < 100; ++seed) {
    Decoded d = decode(body, 1 + seed % 13, seed);
    CHECK(d.ok && d.complete);
    CHECK(d.data == payload);
  }
}

TEST(chunked_a_body_cut_off_is_not_complete) {
  Decoded d = decode("4\r\nWiki\r\n5\r\nped");
  CHECK(d.ok);
  CHECK(!d.complete);
  CHECK_EQ(d.data, std::string("Wikiped"));
}

TEST(chunked_rejects_broken_framing) {
  const char* bad[] = {"x\r\nabc\r\n", "4\r\nWikiXY", "4\nWiki\r\n", "\r\n", "123456789\r\n"};
  for (const char* body : bad) {
    Decoded d = decode(body);
    CHECK(!d.ok);
  }
}

TEST(chunked_encodes_one_chunk_with_its_size_line) {
  std::string frame(1280, 'x');
  std::string chunk = encode_chunk(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
  CHECK_EQ(chunk, "500\r\n" + frame + "\r\n");
  const uint8_t header[44] = {};
  CHECK_EQ(encode_chunk(header, sizeof header).substr(0, 4), std::string("2c\r\n"));
  CHECK_EQ(encode_chunk(header, 1), std::string("1\r\n") + std::string(1, '\0') + "\r\n");
}

TEST(chunked_encodes_nothing_for_no_data_so_the_body_does_not_end_early) {
  const uint8_t byte = 0;
  CHECK_EQ(encode_chunk(&byte, 0), std::string());
  CHECK_EQ(std::string(kLastChunk), std::string("0\r\n\r\n"));
}

TEST(chunked_what_is_encoded_decodes_to_the_same_bytes) {
  std::string payload;
  for (int i = 0; i < 5000; ++i) payload += static_cast<char>(i * 11);
  std::string body;
  mini::Random random(7);
  for (size_t at = 0; at < payload.size();) {
    size_t size = std::min(payload.size() - at, random.below(1500));  // 0 included
    body += encode_chunk(reinterpret_cast<const uint8_t*>(payload.data() + at), size);
    at += size;
  }
  Decoded open = decode(body, 9, 3);
  CHECK(open.ok && !open.complete);  // no end yet: the server keeps listening
  Decoded d = decode(body + kLastChunk, 9, 3);
  CHECK(d.ok && d.complete);
  CHECK(d.data == payload);
}
