// A device that streams (LOBUG_STREAM_REPLY=1) on the host: it sends its recording to
// /chat/audio/stream while the person speaks (raw audio/wav, chunked transfer, a WAV header of
// unknown length) and plays the reply as it arrives. The tests share the device's state (one
// firmware image), so the one that leaves it changed, the fallback to an older server, is last.
#include <cstdlib>

#include "device_test.h"
#include "lobug/chunked.h"

using namespace device_test;

namespace {

constexpr uint32_t kSpeechMs = 1200;

std::string chunked(const std::string& bytes) {
  return lobug::encode_chunk(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) +
         lobug::kLastChunk;
}

// The reply of /chat/audio/stream: the action in headers, the WAV (length unknown) chunked.
fake::Response streamed_reply() {
  std::string wav = reply_wav();
  lobug::write_le32(reinterpret_cast<uint8_t*>(&wav[40]), lobug::kWavUnknownDataBytes);
  return {200,
          {{"Transfer-Encoding", "chunked"},
           {"X-Lobug-Action", "respond"},
           {"X-Lobug-Transcription", "what%20is%20the%20time"},
           {"X-Lobug-Turn", "turn-1"}},
          chunked(wav)};
}

// The chunk sizes of a chunked body, in order, the terminating 0 included.
std::vector<size_t> chunk_sizes(const std::string& wire) {
  std::vector<size_t> sizes;
  size_t at = 0;
  while (at < wire.size()) {
    size_t line_end = wire.find("\r\n", at);
    if (line_end == std::string::npos) break;
    size_t size = std::strtoul(wire.substr(at, line_end - at).c_str(), nullptr, 16);
    sizes.push_back(size);
    at = line_end + 2 + size + 2;
    if (size == 0) break;
  }
  return sizes;
}

// The requests to /chat/... in order (sensor reports come and go between them).
std::vector<fake::Request> chat_requests() {
  std::vector<fake::Request> chat;
  for (const fake::Request& request : fake::world().requests) {
    if (request.path.rfind("/chat/", 0) == 0) chat.push_back(request);
  }
  return chat;
}

void speak_for(uint32_t speech_ms) {
  fake::world().voice = [speech_ms](uint32_t ms) { return int16_t(ms < speech_ms ? 6000 : 0); };
  fake::press();
}

}  // namespace

TEST(streaming_device_sends_its_recording_while_the_person_speaks) {
  boot_and_connect();
  fake::World& world = fake::world();
  world.routes["/chat/audio/stream"] = streamed_reply();
  world.routes["/chat/turns/turn-1"] = {200, {}, "{\"response\": \"It is noon.\"}"};
  uint32_t pressed_ms = world.now_ms;
  speak_for(kSpeechMs);
  CHECK(run_until([&] { return !world.played.empty(); }, 20000));

  const fake::Request upload = chat_requests().at(0);
  CHECK_EQ(upload.method, std::string("POST"));
  CHECK_EQ(upload.path, std::string("/chat/audio/stream"));
  CHECK_EQ(upload.header("Content-Type"), std::string("audio/wav"));
  CHECK_EQ(upload.header("Transfer-Encoding"), std::string("chunked"));
  CHECK_EQ(upload.header("X-Device-Id"), std::string("test-device"));
  // Sent as it was recorded: the first audio reached the server while the person still spoke.
  CHECK(!upload.body_write_ms.empty());
  if (upload.body_write_ms.empty()) return;
  CHECK(upload.body_write_ms.front() - pressed_ms < kSpeechMs);
  CHECK(upload.body_write_ms.back() - upload.body_write_ms.front() > kSpeechMs);

  // The framing: the WAV header alone, one chunk per 40 ms frame, the terminating chunk.
  std::vector<size_t> sizes = chunk_sizes(upload.wire_body);
  CHECK(sizes.size() > 30);
  CHECK_EQ(sizes.front(), lobug::kWavHeaderSize);
  for (size_t i = 1; i + 1 < sizes.size(); ++i) CHECK_EQ(sizes[i], size_t(640 * 2));
  CHECK_EQ(sizes.back(), size_t(0));
  CHECK(upload.wire_body.size() >= 5);
  CHECK_EQ(upload.wire_body.substr(upload.wire_body.size() - 5), std::string(lobug::kLastChunk));

  // What the server reads: a WAV of unknown length whose samples are the whole recording.
  const auto* body = reinterpret_cast<const uint8_t*>(upload.body.data());
  lobug::WavHeader wav = lobug::wav_parse_header(body, upload.body.size());
  CHECK(wav.error == lobug::WavError::None);
  CHECK_EQ(wav.info.declared_bytes, lobug::kWavUnknownDataBytes);
  CHECK_EQ(wav.info.format.sample_rate, uint32_t(16000));
  double seconds = double(upload.body.size() - lobug::kWavHeaderSize) / 2 / 16000;
  CHECK(seconds > 1.5 && seconds < 3.0);  // the speech, the pre-roll and the closing silence

  CHECK_EQ(world.played, reply_samples());
  CHECK_EQ(world.played_rate, kReplyRate);
  CHECK(drawn("> what is the time"));
  CHECK(drawn("It is noon."));
  CHECK(world.abandoned.empty());
}

TEST(streaming_device_drops_an_upload_that_was_too_short) {
  boot_and_connect();
  fake::World& world = fake::world();
  world.routes["/chat/audio/stream"] = streamed_reply();
  speak_for(160);  // heard (the trigger's 120 ms), but under the 240 ms worth sending
  CHECK(run_until([&] { return !world.abandoned.empty(); }, 10000));
  run_until([] { return false; }, 2000);
  CHECK_EQ(world.abandoned.at(0).path, std::string("/chat/audio/stream"));
  CHECK(world.abandoned.at(0).wire_body.find(lobug::kLastChunk) == std::string::npos);
  CHECK(chat_requests().empty());  // nothing was answered
  CHECK(world.played.empty());
}

TEST(streaming_device_falls_back_to_the_whole_recording_on_an_older_server) {
  boot_and_connect();
  fake::World& world = fake::world();
  std::string audio = base64(reply_wav());
  world.routes["/chat/audio"] = {
      200, {{"Content-Type", "application/json"}},
      "{\"transcription\": \"what is the time\", \"response\": \"It is noon.\", "
      "\"action\": \"respond\", \"audio_b64\": \"" + audio + "\"}"};
  speak_for(kSpeechMs);
  CHECK(run_until([&] { return !world.played.empty(); }, 20000));
  // No /chat/audio/stream (404): the live upload, then the same recording as the contract's
  // multipart to /chat/audio/stream and /chat/audio; from then on only the contract's.
  std::vector<fake::Request> chat = chat_requests();
  std::vector<std::string> paths;
  for (const fake::Request& request : chat) paths.push_back(request.path);
  CHECK_EQ(paths, (std::vector<std::string>{"/chat/audio/stream", "/chat/audio/stream",
                                            "/chat/audio"}));
  CHECK_EQ(chat.at(0).header("Transfer-Encoding"), std::string("chunked"));
  CHECK(chat.at(2).header("Content-Type").rfind("multipart/form-data", 0) == 0);
  CHECK_EQ(chat.at(2).body.size(), chat.at(1).body.size());
  CHECK_EQ(world.played, reply_samples());
}
