// The device in the xiaozhi WebSocket mode on the host (LOBUG_WEBSOCKET=1 with an OTA address):
// the OTA request, the WebSocket handshake's headers and hello, a turn streamed until the
// server's endpointing ends it (no 800 ms silence wait, no 5 s cap), the reply played as it
// arrives, a touch that interrupts the reply (abort) and listens at once, the server speaking
// first, a dropped connection. The server is scripted against the fake world; WebSocketsClient
// and libopus are stubs (an "encoded" mic frame carries its level, see test/stubs/opus.h).
#include <string>
#include <vector>

#include "device_test.h"
#include "lobug/json_lite.h"
#include "lobug/xiaozhi.h"

using namespace device_test;
namespace xz = lobug::xiaozhi;

namespace {

constexpr int kVersion = 3;
constexpr uint32_t kReplyRate24k = 24000;
constexpr size_t kReplyFrameSamples = kReplyRate24k / 1000 * 60;

const char* kOtaAnswer =
    R"({"server_time":{"timestamp":1764172800000},"firmware":{"version":"0.0.0","url":""},
        "websocket":{"url":"ws://192.168.1.50:8321/xiaozhi/v1/","token":"ws-token","version":3}})";

std::string text_field(const std::string& json, const char* path) {
  lobug::JsonFields fields;
  return fields.parse(json) ? fields.string(path) : "";
}

std::vector<int16_t> reply_frame(size_t index) {
  std::vector<int16_t> pcm(kReplyFrameSamples);
  for (size_t i = 0; i < pcm.size(); ++i) pcm[i] = int16_t((i * 37 + index * 1000) % 20000 - 10000);
  return pcm;
}

fake::WsMessage audio_message(const std::vector<int16_t>& pcm) {
  std::string packet = "P" + std::string(reinterpret_cast<const char*>(pcm.data()), pcm.size() * 2);
  std::vector<uint8_t> framed;
  xz::encode_audio_frame(kVersion, reinterpret_cast<const uint8_t*>(packet.data()), packet.size(),
                         0, &framed);
  return {true, std::string(framed.begin(), framed.end())};
}

fake::WsMessage text(const std::string& json) { return {false, json}; }

// A xiaozhi server with its own endpointing: a turn ends once it has heard speech and then
// `end_after_quiet_ms` of quiet (the device's frames carry their level, see opus.h's stub).
struct Server {
  uint32_t end_after_quiet_ms = 1500;
  size_t reply_frames = 3;
  bool listening = false;
  bool heard_speech = false;
  uint32_t quiet_ms = 0;
  size_t turn_frames = 0;      // mic frames received in the current turn
  size_t frames_outside = 0;   // mic frames received when no turn was open (in-flight ones aside)
  uint32_t turn_ended_ms = 0;
  size_t bad_frames = 0;
  int aborts = 0;
  std::vector<std::string> texts;  // from the device

  void attach() {
    fake::world().ws.on_message = [this](const fake::WsMessage& message) { handle(message); };
  }

  void send(const fake::WsMessage& message) { fake::world().ws.to_device.push_back(message); }

  void reply() {
    send(text(R"({"session_id":"s-1","type":"tts","state":"start"})"));
    send(text(R"({"session_id":"s-1","type":"tts","state":"sentence_start","text":"It is noon."})"));
    for (size_t i = 0; i < reply_frames; ++i) send(audio_message(reply_frame(i)));
    send(text(R"({"session_id":"s-1","type":"tts","state":"stop"})"));
  }

  void end_turn() {
    listening = false;
    turn_ended_ms = fake::world().now_ms;
    send(text(R"({"session_id":"s-1","type":"stt","text":"what is the time"})"));
    send(text(R"({"session_id":"s-1","type":"llm","emotion":"neutral","text":"x"})"));
    reply();
  }

  void handle(const fake::WsMessage& message) {
    if (!message.binary) {
      texts.push_back(message.data);
      std::string type = text_field(message.data, "type");
      std::string state = text_field(message.data, "state");
      if (type == "hello") {
        send(text(R"({"type":"hello","transport":"websocket","session_id":"s-1",
                     "audio_params":{"format":"opus","sample_rate":24000,"channels":1,
                     "frame_duration":60}})"));
      } else if (type == "listen" && state == "start") {
        listening = true;
        heard_speech = false;
        quiet_ms = 0;
        turn_frames = 0;
      } else if (type == "listen" && state == "stop" && listening) {
        end_turn();
      } else if (type == "abort") {
        ++aborts;
      }
      return;
    }
    xz::AudioFrame frame = xz::decode_audio_frame(
        kVersion, reinterpret_cast<const uint8_t*>(message.data.data()), message.data.size());
    if (frame.error != xz::FrameError::None || frame.size != 5 || frame.payload[0] != 'L') {
      ++bad_frames;
      return;
    }
    if (!listening) {
      // Frames the device sent in the same pass as the one that ended the turn were already
      // on their way; any later one was sent after the device heard the turn was over.
      if (fake::world().now_ms > turn_ended_ms || turn_ended_ms == 0) ++frames_outside;
      return;
    }
    ++turn_frames;
    uint16_t level = uint16_t(frame.payload[1] | frame.payload[2] << 8);
    if (level > 1000) {
      heard_speech = true;
      quiet_ms = 0;
    } else if (heard_speech) {
      quiet_ms += 60;
      if (quiet_ms >= end_after_quiet_ms) end_turn();
    }
  }
};

size_t texts_of_type(const Server& server, const char* type, const char* state = nullptr) {
  size_t n = 0;
  for (const std::string& t : server.texts) {
    if (text_field(t, "type") == type && (state == nullptr || text_field(t, "state") == state)) ++n;
  }
  return n;
}

// The person's voice as a function of the fake clock (the mic restarts between turns).
template <typename Voice>
void say(Voice voice) {
  uint32_t t0 = fake::world().now_ms;
  fake::world().voice = [t0, voice](uint32_t) { return voice(fake::world().now_ms - t0); };
}

std::vector<int16_t> reply_samples_played(size_t frames) {
  std::vector<int16_t> all;
  for (size_t i = 0; i < frames; ++i) {
    std::vector<int16_t> frame = reply_frame(i);
    all.insert(all.end(), frame.begin(), frame.end());
  }
  return all;
}

// Boots the device against a server that answers the OTA request, until the hello exchange.
void boot_websocket(Server& server) {
  fake::reset();
  fake::World& world = fake::world();
  world.routes["/xiaozhi/ota/"] = {200, {{"Content-Type", "application/json"}}, kOtaAnswer};
  server.attach();
  setup();
  CHECK(run_until([&] { return texts_of_type(server, "hello") == 1 && world.ws.to_device.empty(); },
                  10000));
  loop();  // the server's hello arrives
}

std::string serial_status() {
  fake::world().serial_out.clear();
  fake::world().serial_in = "status\n";
  loop();
  return fake::world().serial_out;
}

}  // namespace

TEST(ws_device_asks_ota_then_connects_with_the_protocol_headers) {
  Server server;
  boot_websocket(server);
  fake::World& world = fake::world();
  const fake::Request& ota = world.requests.at(0);
  CHECK_EQ(ota.method, std::string("POST"));
  CHECK_EQ(ota.path, std::string("/xiaozhi/ota/"));
  CHECK_EQ(ota.header("Device-Id"), std::string("test-device"));
  CHECK_EQ(ota.header("Client-Id"), xz::client_id_for("test-device"));
  CHECK_EQ(text_field(ota.body, "mac_address"), std::string("test-device"));
  CHECK_EQ(world.ws.host, std::string("192.168.1.50"));
  CHECK_EQ(world.ws.port, uint16_t(8321));
  CHECK_EQ(world.ws.path, std::string("/xiaozhi/v1/"));
  const std::string& headers = world.ws.extra_headers;
  CHECK(headers.find("Authorization: Bearer ws-token\r\n") != std::string::npos);
  CHECK(headers.find("Protocol-Version: 3\r\n") != std::string::npos);
  CHECK(headers.find("Device-Id: test-device\r\n") != std::string::npos);
  CHECK(headers.find("Client-Id: " + xz::client_id_for("test-device")) != std::string::npos);
  lobug::JsonFields hello;
  CHECK(hello.parse(server.texts.at(0)));
  CHECK_EQ(hello.integer("version", 0), 3LL);
  CHECK_EQ(hello.string("audio_params.format"), std::string("opus"));
  CHECK_EQ(hello.integer("audio_params.sample_rate", 0), 16000LL);
  CHECK_EQ(hello.integer("audio_params.frame_duration", 0), 60LL);
  CHECK(serial_status().find("websocket: idle, session s-1") != std::string::npos);
  CHECK(world.played.empty());
  CHECK_EQ(server.frames_outside, size_t(0));  // waiting for speech sends nothing
}

TEST(ws_device_streams_until_the_server_ends_the_turn) {
  Server server;
  boot_websocket(server);
  fake::World& world = fake::world();
  // 7 s of speech (past the HTTP mode's 5 s cap) with a 1 s pause in it (past its 800 ms
  // silence), then quiet: only the server's endpointing ends the turn.
  say([](uint32_t ms) {
    bool pause = ms >= 3000 && ms < 4000;
    return int16_t(ms >= 500 && ms < 8500 && !pause ? 6000 : 0);
  });
  CHECK(run_until([&] { return world.played.size() >= 3 * kReplyFrameSamples; }, 30000));
  CHECK_EQ(texts_of_type(server, "listen", "start"), size_t(1));
  CHECK_EQ(texts_of_type(server, "listen", "stop"), size_t(0));  // the server ended it
  CHECK_EQ(text_field(server.texts.at(1), "mode"), std::string("auto"));
  CHECK_EQ(text_field(server.texts.at(1), "session_id"), std::string("s-1"));
  // Every frame from the trigger (with its pre-roll) to the server's end: 7.4 s and 1.5 s quiet.
  CHECK(server.turn_frames * 60 >= 7400 + 1500);
  CHECK(server.turn_frames * 60 < 7400 + 1500 + 800);
  CHECK_EQ(server.bad_frames, size_t(0));
  CHECK(world.played == reply_samples_played(3));
  CHECK_EQ(world.played_rate, kReplyRate24k);
  CHECK(drawn("> what is the time"));
  CHECK(drawn("It is noon."));
  say([](uint32_t) { return int16_t(0); });
  run_until([] { return false; }, 1000);
  CHECK_EQ(server.frames_outside, size_t(0));  // nothing sent once the turn was over
  CHECK(serial_status().find("websocket: idle") != std::string::npos);
}

TEST(ws_device_touch_interrupts_the_reply_and_listens_at_once) {
  Server server;
  server.reply_frames = 2;
  boot_websocket(server);
  fake::World& world = fake::world();
  // The server speaks (a long reply): its first frames arrive and play.
  server.send(text(R"({"session_id":"s-1","type":"tts","state":"start"})"));
  server.send(audio_message(reply_frame(0)));
  CHECK(run_until([&] { return !world.played.empty(); }, 2000));
  size_t played_before = world.played.size();
  int stops_before = world.speaker_stops;
  fake::press();
  loop();
  CHECK_EQ(server.aborts, 1);
  CHECK_EQ(text_field(server.texts.back(), "type"), std::string("listen"));  // the next turn
  CHECK_EQ(text_field(server.texts.back(), "state"), std::string("start"));
  CHECK(world.speaker_stops > stops_before);  // what was queued stopped at once
  // The aborted reply's late audio is not played; the new turn streams.
  server.send(audio_message(reply_frame(1)));
  server.send(text(R"({"session_id":"s-1","type":"tts","state":"stop"})"));
  say([](uint32_t ms) { return int16_t(ms < 1000 ? 6000 : 0); });
  server.end_after_quiet_ms = 600;
  CHECK(run_until([&] { return world.played.size() > played_before; }, 10000));
  CHECK(server.turn_frames > 0);
  // What was played after the barge-in is the new reply, from its first frame.
  std::vector<int16_t> after(world.played.begin() + long(played_before), world.played.end());
  CHECK(after == reply_samples_played(2));
}

TEST(ws_device_plays_what_the_server_says_first) {
  Server server;
  boot_websocket(server);
  fake::World& world = fake::world();
  run_until([] { return false; }, 2000);
  server.reply();  // a reminder that is due: no one asked
  CHECK(run_until([&] { return world.played.size() >= 3 * kReplyFrameSamples; }, 2000));
  CHECK(world.played == reply_samples_played(3));
  CHECK(drawn("It is noon."));
  CHECK_EQ(texts_of_type(server, "listen"), size_t(0));
}

TEST(ws_device_reconnects_and_greets_again_after_a_dropped_connection) {
  Server server;
  boot_websocket(server);
  fake::World& world = fake::world();
  world.ws.drop = true;
  loop();
  CHECK(!world.ws.connected);
  CHECK(run_until([&] { return texts_of_type(server, "hello") == 2; }, 5000));
  CHECK_EQ(world.ws.connects, 2);
  loop();
  CHECK(serial_status().find("websocket: idle") != std::string::npos);
}

TEST(ws_device_reports_an_ota_answer_it_cannot_use_and_retries) {
  Server server;
  fake::reset();
  fake::World& world = fake::world();
  server.attach();
  // No OTA route yet (404), then an answer with a wss:// address: neither opens a WebSocket.
  setup();
  CHECK(run_until([&] { return world.requests.size() >= 2; }, 20000));
  CHECK(world.serial_out.find("ota: OTA request failed (status 404)") != std::string::npos);
  world.routes["/xiaozhi/ota/"] = {200, {}, R"({"websocket":{"url":"wss://example.org/xiaozhi/v1/"}})"};
  size_t before = world.requests.size();
  CHECK(run_until([&] { return world.requests.size() > before; }, 40000));
  loop();
  CHECK(world.serial_out.find("wss:// is not supported") != std::string::npos);
  CHECK_EQ(world.ws.connects, 0);
  for (const fake::Request& request : world.requests) {
    CHECK_EQ(request.path, std::string("/xiaozhi/ota/"));  // never the HTTP contract's /health
  }
}

TEST(ws_device_gathers_packets_into_blocks_while_the_speaker_plays) {
  Server server;
  boot_websocket(server);
  fake::World& world = fake::world();
  world.speaker_real_time = true;  // each block takes its time: packets arriving meanwhile gather
  server.reply_frames = 12;         // 720 ms, sent at once (faster than real time)
  server.reply();
  CHECK(run_until([&] { return world.played.size() >= 12 * kReplyFrameSamples; }, 5000));
  CHECK(world.played == reply_samples_played(12));
  // The first packet starts at once; later ones are queued in blocks of several packets.
  CHECK_EQ(world.played_blocks.at(0), kReplyFrameSamples);
  CHECK(world.played_blocks.size() < 12);
  size_t largest = 0;
  for (size_t block : world.played_blocks) largest = block > largest ? block : largest;
  CHECK(largest >= 3 * kReplyFrameSamples && largest <= 5760);
  // Then back to listening for the voice trigger once it has played out.
  CHECK(run_until([&] { return world.speaker_queue_end_ms.empty(); }, 2000));
  run_until([] { return false; }, 200);
  CHECK(serial_status().find("websocket: idle") != std::string::npos);
  world.speaker_real_time = false;
}

// Last: it leaves the device's settings changed.
TEST(ws_build_without_ota_url_keeps_the_http_contract) {
  fake::reset();
  fake::World& world = fake::world();
  world.preferences["ota_url"] = "";  // `unset` would restore the build's default: set it empty
  world.routes["/health"] = {200, {}, "{\"status\":\"ok\"}"};
  setup();
  CHECK(run_until([&] { return !world.requests.empty(); }, 10000));
  CHECK_EQ(world.requests.at(0).path, std::string("/health"));
  run_until([] { return false; }, 2000);
  CHECK_EQ(world.ws.connects, 0);
}
