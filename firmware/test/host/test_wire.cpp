// The wire format against firmware/test/golden/, which tests/firmware/test_device_sim.py also
// checks scripts/device_sim.py against: the firmware and the simulator send the same bytes.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lobug/bytes.h"
#include "lobug/chunked.h"
#include "lobug/imu.h"
#include "lobug/wav.h"
#include "lobug/wire.h"
#include "runner.h"

#ifndef LOBUG_GOLDEN_DIR
#error "build with -DLOBUG_GOLDEN_DIR=\"firmware/test/golden\""
#endif

using namespace lobug;

namespace {

constexpr const char* kBoundary = "lobug-0123456789abcdef";

std::string golden(const char* name) {
  std::ifstream file(std::string(LOBUG_GOLDEN_DIR) + "/" + name, std::ios::binary);
  if (!file) {
    mini::fail(__FILE__, __LINE__, std::string("missing golden file ") + name);
    return {};
  }
  return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

TEST(wire_boundary_has_a_fixed_length) {
  CHECK_EQ(make_boundary(0x01234567u, 0x89abcdefu), std::string(kBoundary));
  CHECK_EQ(make_boundary(0, 0), std::string("lobug-0000000000000000"));
  CHECK_EQ(make_boundary(0xFFFFFFFFu, 0xFFFFFFFFu).size(), std::strlen(kBoundary));
}

TEST(wire_multipart_matches_the_golden_bytes) {
  CHECK_EQ(multipart_head(kBoundary), golden("multipart_head.bin"));
  CHECK_EQ(multipart_tail(kBoundary), golden("multipart_tail.bin"));
  CHECK_EQ(multipart_content_type(kBoundary) + "\n", golden("content_type.txt"));
}

TEST(wire_upload_is_assembled_around_the_recording_in_place) {
  const size_t samples = 1600;  // 100 ms
  std::vector<uint8_t> buffer(UploadLayout::buffer_size(samples), 0xEE);
  auto* pcm = reinterpret_cast<int16_t*>(buffer.data() + UploadLayout::pcm_offset);
  CHECK_EQ(reinterpret_cast<uintptr_t>(pcm) % alignof(int16_t), uintptr_t{0});
  for (size_t i = 0; i < samples; ++i) pcm[i] = static_cast<int16_t>(i * 3 - 2400);

  UploadBody body = finish_upload(buffer.data(), samples, kBoundary);
  std::string head = golden("multipart_head.bin");
  std::string tail = golden("multipart_tail.bin");
  CHECK_EQ(body.size, head.size() + kWavHeaderSize + samples * 2 + tail.size());
  std::string sent(reinterpret_cast<const char*>(body.data), body.size);
  CHECK_EQ(sent.substr(0, head.size()), head);
  CHECK_EQ(sent.substr(sent.size() - tail.size()), tail);
  std::string wav = sent.substr(head.size(), kWavHeaderSize + samples * 2);
  CHECK_EQ(wav.substr(0, kWavHeaderSize), golden("wav_header_16k_100ms.bin"));
  WavHeader parsed = wav_parse_header(reinterpret_cast<const uint8_t*>(wav.data()), wav.size());
  CHECK_EQ(parsed.error, WavError::None);
  CHECK_EQ(parsed.info.format.sample_rate, 16000u);
  CHECK_EQ(wav_playable_bytes(parsed.info, wav.size()), samples * 2);
  CHECK_EQ(static_cast<uint8_t>(wav[kWavHeaderSize]), uint8_t{0xA0});  // -2400 = 0xF6A0, little-endian
  CHECK_EQ(static_cast<uint8_t>(wav[kWavHeaderSize + 1]), uint8_t{0xF6});
}

TEST(wire_upload_refuses_a_boundary_too_long_for_the_reserve) {
  std::vector<uint8_t> buffer(UploadLayout::buffer_size(10));
  UploadBody body = finish_upload(buffer.data(), 10, std::string(300, 'b'));
  CHECK(body.data == nullptr);
  CHECK_EQ(body.size, size_t{0});
}

TEST(wire_sensors_json_matches_the_golden_bytes) {
  SensorReport report;
  report.orientation = Orientation::FaceUp;
  report.accel_g = {0.01f, -0.02f, 0.98f};
  report.gyro_dps = {0.5f, -1.25f, 0};
  CHECK_EQ(sensors_json(report) + "\n", golden("sensors.json"));
}

TEST(wire_paths_and_headers) {
  CHECK_EQ(std::string(kPathChatAudio), std::string("/chat/audio"));
  CHECK_EQ(std::string(kPathChatAudioStream), std::string("/chat/audio/stream"));
  CHECK_EQ(std::string(kPathSensors), std::string("/context/sensors"));
  CHECK_EQ(std::string(kHeaderTranscription), std::string("X-Lobug-Transcription"));
}

TEST(wire_a_recording_sent_while_it_is_made_matches_the_golden_bytes) {
  // What main.cpp sends: the header of unknown length, then each 40 ms frame as it is recorded.
  uint8_t header[kWavHeaderSize];
  wav_write_header(header, WavFormat{kRecordRate, 1, 16}, kWavUnknownDataBytes);
  std::vector<int16_t> pcm(1280);
  for (size_t i = 0; i < pcm.size(); ++i) pcm[i] = static_cast<int16_t>(i * 3 - 2400);
  const auto* bytes = reinterpret_cast<const uint8_t*>(pcm.data());
  std::string body = encode_chunk(header, sizeof header) + encode_chunk(bytes, 1280) +
                     encode_chunk(bytes + 1280, 1280) + kLastChunk;
  CHECK(body == golden("live_upload_16k_80ms.bin"));
  WavHeader parsed = wav_parse_header(header, sizeof header);
  CHECK_EQ(parsed.error, WavError::None);
  CHECK_EQ(parsed.info.declared_bytes, 0xFFFFFFFFu - 36u);
  CHECK_EQ(read_le32(header + 4), 0xFFFFFFFFu);  // the RIFF size says "unknown" too
}
