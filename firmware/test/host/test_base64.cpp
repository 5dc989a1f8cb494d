#include <cstdio>
#include <string>
#include <vector>

#include "lobug/base64.h"
#include "runner.h"

using namespace lobug;

namespace {

std::string decode(const std::string& text, long* result = nullptr) {
  std::vector<uint8_t> out(text.size() + 4);
  long n = base64_decode(text.data(), text.size(), out.data(), out.size());
  if (result != nullptr) *result = n;
  return n < 0 ? "<error>" : std::string(out.begin(), out.begin() + n);
}

// A reference encoder, only for producing test input.
std::string encode(const std::vector<uint8_t>& data) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < data.size(); i += 3) {
    uint32_t group = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < data.size()) group |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < data.size()) group |= data[i + 2];
    out += alphabet[(group >> 18) & 63];
    out += alphabet[(group >> 12) & 63];
    out += i + 1 < data.size() ? alphabet[(group >> 6) & 63] : '=';
    out += i + 2 < data.size() ? alphabet[group & 63] : '=';
  }
  return out;
}

}  // namespace

TEST(base64_decodes_the_rfc4648_vectors) {
  CHECK_EQ(decode(""), std::string(""));
  CHECK_EQ(decode("Zg=="), std::string("f"));
  CHECK_EQ(decode("Zm8="), std::string("fo"));
  CHECK_EQ(decode("Zm9v"), std::string("foo"));
  CHECK_EQ(decode("Zm9vYg=="), std::string("foob"));
  CHECK_EQ(decode("Zm9vYmE="), std::string("fooba"));
  CHECK_EQ(decode("Zm9vYmFy"), std::string("foobar"));
}

TEST(base64_accepts_missing_padding_whitespace_and_escaped_slashes) {
  CHECK_EQ(decode("Zg"), std::string("f"));
  CHECK_EQ(decode("Zm8"), std::string("fo"));
  CHECK_EQ(decode("Zm9v\r\nYmFy"), std::string("foobar"));
  CHECK_EQ(decode("Zm9v YmE ="), std::string("fooba"));
  CHECK_EQ(decode("P\\/8="), decode("P/8="));  // JSON may write "/" as "\/"
}

TEST(base64_rejects_malformed_input) {
  long n = 0;
  const char* bad[] = {"Z", "Zg=", "Z===", "=Zg=", "Zg==Zg==", "Zm9v!", "Zm9v-_", "Zg==="};
  for (const char* text : bad) {
    decode(text, &n);
    CHECK_EQ(n, -1L);
    if (n != -1) std::printf("  accepted: %s\n", text);
  }
}

TEST(base64_streams_across_any_split) {
  std::vector<uint8_t> data(1000);
  mini::Random random(7);
  for (auto& byte : data) byte = static_cast<uint8_t>(random.next());
  std::string text = encode(data);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> out(data.size());
    ByteBuffer buffer(out.data(), out.size());
    Base64Decoder decoder(buffer);
    for (size_t at = 0; at < text.size();) {
      size_t piece = 1 + random.below(9);
      if (at + piece > text.size()) piece = text.size() - at;
      CHECK(decoder.feed(text.data() + at, piece));
      at += piece;
    }
    CHECK(decoder.finish());
    CHECK_EQ(buffer.size(), data.size());
    CHECK(out == data);
  }
}

TEST(base64_output_that_does_not_fit_is_cut_and_flagged) {
  uint8_t out[4];
  ByteBuffer buffer(out, sizeof out);
  Base64Decoder decoder(buffer);
  CHECK(decoder.feed("Zm9vYmFy", 8));  // six bytes into four
  CHECK(decoder.finish());
  CHECK_EQ(buffer.size(), size_t{4});
  CHECK(buffer.overflowed());
  CHECK_EQ(std::string(out, out + 4), std::string("foob"));
}
