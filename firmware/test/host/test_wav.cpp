#include <cstring>
#include <vector>

#include "lobug/bytes.h"
#include "lobug/wav.h"
#include "runner.h"

using namespace lobug;

namespace {

std::vector<uint8_t> wav_bytes(const WavFormat& format, uint32_t data_bytes, size_t actual_data) {
  std::vector<uint8_t> out(kWavHeaderSize + actual_data, 0);
  wav_write_header(out.data(), format, data_bytes);
  for (size_t i = 0; i < actual_data; ++i) out[kWavHeaderSize + i] = static_cast<uint8_t>(i);
  return out;
}

void put_chunk(std::vector<uint8_t>& out, const char* id, const std::vector<uint8_t>& body) {
  out.insert(out.end(), id, id + 4);
  uint8_t size[4];
  write_le32(size, static_cast<uint32_t>(body.size()));
  out.insert(out.end(), size, size + 4);
  out.insert(out.end(), body.begin(), body.end());
  if (body.size() % 2 == 1) out.push_back(0);  // RIFF pads chunks to even sizes
}

std::vector<uint8_t> fmt_body(uint16_t tag, uint16_t channels, uint32_t rate, uint16_t bits) {
  std::vector<uint8_t> body(16);
  write_le16(body.data(), tag);
  write_le16(body.data() + 2, channels);
  write_le32(body.data() + 4, rate);
  write_le32(body.data() + 8, rate * channels * bits / 8);
  write_le16(body.data() + 12, static_cast<uint16_t>(channels * bits / 8));
  write_le16(body.data() + 14, bits);
  return body;
}

std::vector<uint8_t> riff(const std::vector<uint8_t>& chunks) {
  std::vector<uint8_t> out = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'A', 'V', 'E'};
  write_le32(out.data() + 4, static_cast<uint32_t>(chunks.size() + 4));
  out.insert(out.end(), chunks.begin(), chunks.end());
  return out;
}

}  // namespace

TEST(wav_header_is_the_canonical_44_bytes) {
  uint8_t header[kWavHeaderSize];
  wav_write_header(header, WavFormat{16000, 1, 16}, 32000);
  const uint8_t expected[kWavHeaderSize] = {
      'R', 'I', 'F', 'F', 0x24, 0x7D, 0x00, 0x00, 'W', 'A', 'V', 'E', 'f', 'm', 't', ' ',
      16, 0, 0, 0, 1, 0, 1, 0, 0x80, 0x3E, 0, 0, 0x00, 0x7D, 0, 0,
      2, 0, 16, 0, 'd', 'a', 't', 'a', 0x00, 0x7D, 0x00, 0x00};
  CHECK(std::memcmp(header, expected, kWavHeaderSize) == 0);
}

TEST(wav_header_round_trips_through_the_parser) {
  auto wav = wav_bytes(WavFormat{22050, 1, 16}, 100, 100);
  WavHeader parsed = wav_parse_header(wav.data(), wav.size());
  CHECK_EQ(parsed.error, WavError::None);
  CHECK_EQ(parsed.info.format.sample_rate, 22050u);
  CHECK_EQ(parsed.info.format.channels, uint16_t{1});
  CHECK_EQ(parsed.info.format.bits_per_sample, uint16_t{16});
  CHECK_EQ(parsed.info.data_offset, kWavHeaderSize);
  CHECK_EQ(parsed.info.declared_bytes, 100u);
  CHECK_EQ(wav_playable_bytes(parsed.info, wav.size()), size_t{100});
}

TEST(wav_riff_size_saturates_for_unknown_length) {
  uint8_t header[kWavHeaderSize];
  wav_write_header(header, WavFormat{16000, 1, 16}, 0xFFFFFFFFu - 36u);
  CHECK_EQ(read_le32(header + 4), 0xFFFFFFFFu);
  wav_write_header(header, WavFormat{16000, 1, 16}, 0xFFFFFFFFu);
  CHECK_EQ(read_le32(header + 4), 0xFFFFFFFFu);
}

TEST(wav_parser_walks_past_extra_chunks) {
  std::vector<uint8_t> chunks;
  put_chunk(chunks, "LIST", std::vector<uint8_t>(27, 'x'));  // odd size: padded
  put_chunk(chunks, "fmt ", fmt_body(1, 1, 16000, 16));
  put_chunk(chunks, "fact", {1, 2, 3, 4});
  put_chunk(chunks, "data", {1, 2, 3, 4, 5, 6});
  auto wav = riff(chunks);
  WavHeader parsed = wav_parse_header(wav.data(), wav.size());
  CHECK_EQ(parsed.error, WavError::None);
  CHECK_EQ(parsed.info.data_offset, wav.size() - 6);
  CHECK_EQ(wav_playable_bytes(parsed.info, wav.size()), size_t{6});
}

TEST(wav_parser_accepts_extensible_pcm) {
  auto body = fmt_body(0xFFFE, 2, 48000, 16);
  body.resize(40, 0);
  write_le16(body.data() + 16, 22);  // cbSize
  write_le16(body.data() + 24, 1);   // sub-format: PCM
  std::vector<uint8_t> chunks;
  put_chunk(chunks, "fmt ", body);
  put_chunk(chunks, "data", {0, 0, 0, 0});
  auto wav = riff(chunks);
  WavHeader parsed = wav_parse_header(wav.data(), wav.size());
  CHECK_EQ(parsed.error, WavError::None);
  CHECK_EQ(parsed.info.format.channels, uint16_t{2});
  CHECK_EQ(parsed.info.format.frame_bytes(), 4u);
}

TEST(wav_parser_refuses_what_the_speaker_cannot_play) {
  const struct {
    uint16_t tag, channels;
    uint32_t rate;
    uint16_t bits;
  } cases[] = {{3, 1, 16000, 32}, {1, 1, 16000, 8}, {1, 3, 16000, 16}, {1, 1, 4000, 16},
               {1, 1, 96000, 16}, {6, 1, 8000, 16}};
  for (const auto& c : cases) {
    std::vector<uint8_t> chunks;
    put_chunk(chunks, "fmt ", fmt_body(c.tag, c.channels, c.rate, c.bits));
    put_chunk(chunks, "data", {0, 0});
    auto wav = riff(chunks);
    CHECK_EQ(wav_parse_header(wav.data(), wav.size()).error, WavError::Unsupported);
  }
}

TEST(wav_parser_reports_bad_and_incomplete_input) {
  const uint8_t not_wav[] = "RIFX\0\0\0\0WAVEfmt ";
  CHECK_EQ(wav_parse_header(not_wav, 16).error, WavError::NotWav);
  const uint8_t mp3[] = "ID3\x03\0\0\0\0\0\0\0\0";
  CHECK_EQ(wav_parse_header(mp3, 12).error, WavError::NotWav);
  auto wav = wav_bytes(WavFormat{16000, 1, 16}, 10, 10);
  for (size_t cut = 0; cut < kWavHeaderSize; ++cut) {
    CHECK_EQ(wav_parse_header(wav.data(), cut).error, WavError::NeedMoreData);
  }
  std::vector<uint8_t> chunks;
  put_chunk(chunks, "data", {0, 0});
  put_chunk(chunks, "fmt ", fmt_body(1, 1, 16000, 16));
  auto data_first = riff(chunks);
  CHECK_EQ(wav_parse_header(data_first.data(), data_first.size()).error, WavError::NoFormat);
  std::vector<uint8_t> huge;
  put_chunk(huge, "LIST", std::vector<uint8_t>(2000, 'x'));
  auto big = riff(huge);
  CHECK_EQ(wav_parse_header(big.data(), big.size()).error, WavError::HeaderTooLarge);
}

TEST(wav_playable_bytes_trusts_the_body_over_the_header) {
  auto wav = wav_bytes(WavFormat{16000, 1, 16}, 0xFFFFFFFFu - 36u, 101);  // streamed, odd end
  WavHeader parsed = wav_parse_header(wav.data(), wav.size());
  CHECK_EQ(parsed.error, WavError::None);
  CHECK_EQ(wav_playable_bytes(parsed.info, wav.size()), size_t{100});
  auto short_declared = wav_bytes(WavFormat{16000, 2, 16}, 8, 20);
  parsed = wav_parse_header(short_declared.data(), short_declared.size());
  CHECK_EQ(wav_playable_bytes(parsed.info, short_declared.size()), size_t{8});
  CHECK_EQ(wav_playable_bytes(parsed.info, 40), size_t{0});
}
