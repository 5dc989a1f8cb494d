// What the device loop tests share: the fake world set up for a provisioned device, a reply to
// play, and a loop runner on the fake clock.
#pragma once

#include <string>
#include <vector>

#include "fake_world.h"
#include "lobug/wav.h"
#include "runner.h"

void setup();
void loop();

namespace device_test {

constexpr uint32_t kReplyRate = 22050;

inline std::vector<int16_t> reply_samples() {
  std::vector<int16_t> samples(kReplyRate / 10);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = int16_t((i % 50) * 400 - 10000);
  return samples;
}

inline std::string base64(const std::string& bytes) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) group |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) group |= uint8_t(bytes[i + 2]);
    size_t left = bytes.size() - i, chars = left >= 3 ? 4 : left + 1;
    for (size_t k = 0; k < 4; ++k) out += k < chars ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

inline std::string reply_wav() {
  std::vector<int16_t> samples = reply_samples();
  std::string wav(lobug::kWavHeaderSize, '\0');
  lobug::wav_write_header(reinterpret_cast<uint8_t*>(&wav[0]),
                          lobug::WavFormat{kReplyRate, 1, 16}, uint32_t(samples.size() * 2));
  wav.append(reinterpret_cast<const char*>(samples.data()), samples.size() * 2);
  return wav;
}

// Runs the device loop until `done` or the fake clock has moved `limit_ms` on.
template <typename Done>
inline bool run_until(Done done, uint32_t limit_ms) {
  uint32_t until = fake::world().now_ms + limit_ms;
  while (!done()) {
    if (fake::world().now_ms > until) return false;
    loop();
  }
  return true;
}

inline bool drawn(const std::string& text) {
  for (const std::string& line : fake::world().drawn) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

inline void boot_and_connect() {
  fake::reset();
  fake::World& world = fake::world();
  world.routes["/health"] = {200, {}, "{\"status\":\"ok\"}"};
  setup();
  CHECK(run_until([&] { return !world.requests.empty(); }, 10000));
  CHECK_EQ(world.requests.at(0).path, std::string("/health"));
}


}  // namespace device_test
