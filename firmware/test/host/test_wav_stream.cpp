#include <string>
#include <vector>

#include "lobug/wav.h"
#include "lobug/wav_stream.h"
#include "runner.h"

using namespace lobug;

namespace {

// Plays the role of the speaker: hands out buffers and records what was submitted.
struct FakeSpeaker : PcmBlockSink {
  explicit FakeSpeaker(size_t block_samples, int buffers = 3) {
    for (int i = 0; i < buffers; ++i) pool.emplace_back(block_samples);
  }
  int16_t* acquire() override {
    if (free_limit == 0) return nullptr;
    --free_limit;
    return pool[next++ % pool.size()].data();
  }
  void submit(int16_t* block, size_t samples, const WavFormat& format) override {
    played.insert(played.end(), block, block + samples);
    block_sizes.push_back(samples);
    rate = format.sample_rate;
  }
  std::vector<std::vector<int16_t>> pool;
  size_t next = 0;
  int free_limit = 1 << 30;
  std::vector<int16_t> played;
  std::vector<size_t> block_sizes;
  uint32_t rate = 0;
};

std::vector<uint8_t> streamed_wav(const std::vector<int16_t>& samples, uint32_t rate,
                                  uint16_t channels = 1) {
  std::vector<uint8_t> out(kWavHeaderSize);
  wav_write_header(out.data(), WavFormat{rate, channels, 16}, 0xFFFFFFFFu - 36u);
  for (int16_t s : samples) {
    out.push_back(static_cast<uint8_t>(static_cast<uint16_t>(s) & 0xFF));
    out.push_back(static_cast<uint8_t>(static_cast<uint16_t>(s) >> 8));
  }
  return out;
}

std::vector<int16_t> ramp(int count) {
  std::vector<int16_t> samples;
  for (int i = 0; i < count; ++i) samples.push_back(static_cast<int16_t>(i * 37 - 20000));
  return samples;
}

}  // namespace

TEST(wav_stream_plays_every_sample_across_any_split) {
  auto samples = ramp(1001);
  auto wav = streamed_wav(samples, 22050);
  mini::Random random(3);
  for (int round = 0; round < 100; ++round) {
    FakeSpeaker speaker(64);
    WavStream stream(speaker, 64);
    for (size_t at = 0; at < wav.size();) {
      size_t piece = 1 + random.below(round % 2 == 0 ? 5 : 300);
      if (at + piece > wav.size()) piece = wav.size() - at;
      CHECK(stream.write(wav.data() + at, piece));
      at += piece;
    }
    stream.finish();
    CHECK(stream.header_ready());
    CHECK_EQ(speaker.rate, 22050u);
    CHECK(speaker.played == samples);
    CHECK_EQ(stream.samples_submitted(), samples.size());
  }
}

TEST(wav_stream_sends_full_blocks_and_flushes_the_rest) {
  auto wav = streamed_wav(ramp(150), 16000);
  FakeSpeaker speaker(64);
  WavStream stream(speaker, 64);
  CHECK(stream.write(wav.data(), wav.size()));
  CHECK_EQ(speaker.block_sizes, (std::vector<size_t>{64, 64}));
  stream.flush();  // the network went quiet between sentences
  CHECK_EQ(speaker.block_sizes, (std::vector<size_t>{64, 64, 22}));
  stream.finish();
  CHECK_EQ(speaker.block_sizes.size(), size_t{3});
}

TEST(wav_stream_header_only_plays_nothing) {
  auto wav = streamed_wav({}, 16000);
  FakeSpeaker speaker(64);
  WavStream stream(speaker, 64);
  CHECK(stream.write(wav.data(), wav.size()));
  stream.finish();
  CHECK(stream.header_ready());
  CHECK(speaker.played.empty());
}

TEST(wav_stream_refuses_a_body_that_is_not_wav) {
  std::string json = R"({"error":"llm_unavailable","detail":"..."})";
  FakeSpeaker speaker(64);
  WavStream stream(speaker, 64);
  CHECK(!stream.write(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
  CHECK_EQ(stream.error(), WavError::NotWav);
}

TEST(wav_stream_gives_up_when_the_speaker_never_frees_a_buffer) {
  auto wav = streamed_wav(ramp(300), 16000);
  FakeSpeaker speaker(64);
  speaker.free_limit = 2;
  WavStream stream(speaker, 64);
  CHECK(!stream.write(wav.data(), wav.size()));
  CHECK_EQ(speaker.played.size(), size_t{128});
}

TEST(wav_stream_keeps_stereo_frames_whole) {
  auto samples = ramp(100);  // 50 stereo frames
  auto wav = streamed_wav(samples, 16000, 2);
  FakeSpeaker speaker(64);
  WavStream stream(speaker, 64);
  CHECK(stream.write(wav.data(), kWavHeaderSize + 2 * 11));  // 11 samples: 5.5 frames
  stream.flush();
  CHECK_EQ(speaker.block_sizes, (std::vector<size_t>{10}));
  CHECK(stream.write(wav.data() + kWavHeaderSize + 22, wav.size() - kWavHeaderSize - 22));
  stream.finish();
  CHECK(speaker.played == samples);
  for (size_t size : speaker.block_sizes) CHECK_EQ(size % 2, size_t{0});
}
