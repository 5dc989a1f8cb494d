// The device code (src/) on the host: setup() and loop() run against the fake world of
// test/stubs, through one whole turn: connect, record what the person says, upload it, play
// the reply.
#include <string>
#include <vector>

#include "fake_world.h"
#include "lobug/wav.h"
#include "runner.h"

void setup();
void loop();

namespace {

constexpr uint32_t kReplyRate = 22050;

std::vector<int16_t> reply_samples() {
  std::vector<int16_t> samples(kReplyRate / 10);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = int16_t((i % 50) * 400 - 10000);
  return samples;
}

std::string base64(const std::string& bytes) {
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

std::string reply_wav() {
  std::vector<int16_t> samples = reply_samples();
  std::string wav(lobug::kWavHeaderSize, '\0');
  lobug::wav_write_header(reinterpret_cast<uint8_t*>(&wav[0]),
                          lobug::WavFormat{kReplyRate, 1, 16}, uint32_t(samples.size() * 2));
  wav.append(reinterpret_cast<const char*>(samples.data()), samples.size() * 2);
  return wav;
}

// Runs the device loop until `done` or the fake clock has moved `limit_ms` on.
template <typename Done>
bool run_until(Done done, uint32_t limit_ms) {
  uint32_t until = fake::world().now_ms + limit_ms;
  while (!done()) {
    if (fake::world().now_ms > until) return false;
    loop();
  }
  return true;
}

bool drawn(const std::string& text) {
  for (const std::string& line : fake::world().drawn) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

void boot_and_connect() {
  fake::reset();
  fake::World& world = fake::world();
  world.routes["/health"] = {200, {}, "{\"status\":\"ok\"}"};
  setup();
  CHECK(run_until([&] { return !world.requests.empty(); }, 10000));
  CHECK_EQ(world.requests.at(0).path, std::string("/health"));
}

}  // namespace

TEST(device_records_uploads_and_plays_one_turn) {
  boot_and_connect();
  fake::World& world = fake::world();
  std::string audio = base64(reply_wav());
  world.routes["/chat/audio"] = {
      200, {{"Content-Type", "application/json"}},
      "{\"transcription\": \"what is the time\", \"response\": \"It is noon.\", "
      "\"action\": \"respond\", \"audio_b64\": \"" + audio + "\"}"};
  // The person speaks for 1.2 s, then is quiet: the recording ends on the silence.
  world.voice = [](uint32_t ms) { return int16_t(ms < 1200 ? 6000 : 0); };
  fake::press();
  CHECK(run_until([&] { return !world.played.empty(); }, 20000));

  const fake::Request& upload = world.requests.back();
  CHECK_EQ(upload.method, std::string("POST"));
  CHECK_EQ(upload.path, std::string("/chat/audio"));
  CHECK_EQ(upload.header("X-Device-Id"), std::string("test-device"));
  CHECK(upload.header("Content-Type").rfind("multipart/form-data; boundary=", 0) == 0);
  size_t riff = upload.body.find("RIFF");
  CHECK(riff != std::string::npos);
  lobug::WavHeader wav = lobug::wav_parse_header(
      reinterpret_cast<const uint8_t*>(upload.body.data() + riff), upload.body.size() - riff);
  CHECK(wav.error == lobug::WavError::None);
  CHECK_EQ(wav.info.format.sample_rate, uint32_t(16000));
  double seconds = double(wav.info.declared_bytes) / 2 / 16000;
  CHECK(seconds > 1.5 && seconds < 3.0);  // the speech, the pre-roll and the closing silence

  CHECK_EQ(world.played, reply_samples());
  CHECK_EQ(world.played_rate, kReplyRate);
  CHECK(drawn("It is noon."));
  CHECK(drawn("> what is the time"));
}
