// The device code (src/) on the host: setup() and loop() run against the fake world of
// test/stubs, through one whole turn: connect, record what the person says, upload it, play
// the reply.
#include "device_test.h"

using namespace device_test;

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

TEST(device_without_the_websocket_mode_ignores_an_ota_url) {
  fake::reset();
  fake::World& world = fake::world();
  world.preferences["ota_url"] = "http://192.168.1.50:8321/xiaozhi/ota/";
  world.routes["/health"] = {200, {}, "{\"status\":\"ok\"}"};
  setup();
  CHECK(run_until([&] { return !world.requests.empty(); }, 10000));
  CHECK_EQ(world.requests.at(0).path, std::string("/health"));  // the HTTP contract, as before
}
