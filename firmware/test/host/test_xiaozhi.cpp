// The xiaozhi WebSocket protocol's client side: messages as 78/xiaozhi-esp32 docs/websocket.md
// writes them, the binary framing of versions 1-3, the OTA answer and URLs.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lobug/json_lite.h"
#include "lobug/xiaozhi.h"
#include "runner.h"

using namespace lobug;
using namespace lobug::xiaozhi;

TEST(xiaozhi_client_hello_announces_opus_16k_60ms) {
  std::string hello = client_hello(3, AudioParams{});
  CHECK_EQ(hello, std::string("{\"type\":\"hello\",\"version\":3,\"transport\":\"websocket\","
                              "\"audio_params\":{\"format\":\"opus\",\"sample_rate\":16000,"
                              "\"channels\":1,\"frame_duration\":60}}"));
  JsonFields json;
  CHECK(json.parse(hello));
}

TEST(xiaozhi_listen_abort_and_detect_messages) {
  CHECK_EQ(listen_message("s1", ListenState::Start, ListenMode::Auto),
           std::string(R"({"session_id":"s1","type":"listen","state":"start","mode":"auto"})"));
  CHECK_EQ(listen_message("s1", ListenState::Start, ListenMode::Manual),
           std::string(R"({"session_id":"s1","type":"listen","state":"start","mode":"manual"})"));
  CHECK_EQ(
      listen_message("s1", ListenState::Start, ListenMode::Realtime),
      std::string(R"({"session_id":"s1","type":"listen","state":"start","mode":"realtime"})"));
  CHECK_EQ(listen_message("s1", ListenState::Stop, ListenMode::Auto),
           std::string(R"({"session_id":"s1","type":"listen","state":"stop"})"));
  CHECK_EQ(detect_message("s1", "hey \"bug\""),
           std::string(R"({"session_id":"s1","type":"listen","state":"detect","text":"hey \"bug\""})"));
  CHECK_EQ(abort_message("s1"), std::string(R"({"session_id":"s1","type":"abort"})"));
  CHECK_EQ(abort_message("s\"1", "wake_word_detected"),
           std::string(R"({"session_id":"s\"1","type":"abort","reason":"wake_word_detected"})"));
}

TEST(xiaozhi_server_hello_gives_session_and_audio_params) {
  ServerMessage hello = parse_server_message(
      R"({"type":"hello","transport":"websocket","session_id":"abc",
          "audio_params":{"format":"opus","sample_rate":16000,"channels":1,"frame_duration":20}})");
  CHECK(hello.kind == MessageKind::Hello);
  CHECK(hello.websocket_transport);
  CHECK_EQ(hello.session_id, std::string("abc"));
  CHECK_EQ(hello.audio.sample_rate, 16000u);
  CHECK_EQ(hello.audio.frame_ms, 20u);
  // Left out or out of range: the firmware's defaults, 24 kHz and 60 ms.
  ServerMessage bare = parse_server_message(
      R"({"type":"hello","transport":"websocket","audio_params":{"sample_rate":1}})");
  CHECK_EQ(bare.audio.sample_rate, kDefaultServerRate);
  CHECK_EQ(bare.audio.frame_ms, kDefaultServerFrameMs);
  CHECK(bare.session_id.empty());
  ServerMessage mqtt = parse_server_message(R"({"type":"hello","transport":"udp"})");
  CHECK(mqtt.kind == MessageKind::Hello && !mqtt.websocket_transport);
}

TEST(xiaozhi_server_messages_by_type_and_state) {
  struct Case {
    const char* json;
    MessageKind kind;
  } cases[] = {
      {R"({"session_id":"s","type":"stt","text":"what time is it"})", MessageKind::Stt},
      {R"({"session_id":"s","type":"llm","emotion":"happy","text":"x"})", MessageKind::Llm},
      {R"({"session_id":"s","type":"tts","state":"start"})", MessageKind::TtsStart},
      {R"({"session_id":"s","type":"tts","state":"sentence_start","text":"It is noon."})",
       MessageKind::TtsSentence},
      {R"({"session_id":"s","type":"tts","state":"stop"})", MessageKind::TtsStop},
      {R"({"session_id":"s","type":"tts","state":"later"})", MessageKind::Other},
      {R"({"session_id":"s","type":"abort"})", MessageKind::Abort},
      {R"({"session_id":"s","type":"mcp","payload":{"jsonrpc":"2.0","id":1,"method":"tools/list"}})",
       MessageKind::Other},
      {R"({"type":"alert","status":"x","message":"y"})", MessageKind::Other},
      {R"({"session_id":"s","text":"no type"})", MessageKind::Invalid},
      {R"({"type":7})", MessageKind::Invalid},
      {"not json", MessageKind::Invalid},
  };
  for (const Case& c : cases) {
    ServerMessage message = parse_server_message(c.json);
    if (message.kind != c.kind) CHECK_EQ(std::string(c.json), std::string(message_kind_name(c.kind)));
  }
  ServerMessage stt = parse_server_message(cases[0].json);
  CHECK_EQ(stt.text, std::string("what time is it"));
  CHECK_EQ(stt.session_id, std::string("s"));
  CHECK_EQ(parse_server_message(cases[1].json).emotion, std::string("happy"));
  CHECK_EQ(parse_server_message(cases[3].json).text, std::string("It is noon."));
}

TEST(xiaozhi_frame_version_1_is_the_bare_packet) {
  const uint8_t opus[] = {0xF8, 1, 2, 3};
  std::vector<uint8_t> frame;
  CHECK(encode_audio_frame(1, opus, sizeof opus, 1234, &frame));
  CHECK_EQ(frame, std::vector<uint8_t>(opus, opus + 4));
  AudioFrame decoded = decode_audio_frame(1, frame.data(), frame.size());
  CHECK(decoded.error == FrameError::None);
  CHECK_EQ(decoded.size, size_t(4));
  CHECK(decoded.payload == frame.data());
}

TEST(xiaozhi_frame_version_2_header_is_big_endian_with_timestamp) {
  const uint8_t opus[] = {0xAA, 0xBB, 0xCC};
  std::vector<uint8_t> frame;
  CHECK(encode_audio_frame(2, opus, sizeof opus, 0x01020304, &frame));
  std::vector<uint8_t> expected = {0, 2, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 3,
                                   0xAA, 0xBB, 0xCC};
  CHECK_EQ(frame, expected);
  AudioFrame decoded = decode_audio_frame(2, frame.data(), frame.size());
  CHECK(decoded.error == FrameError::None);
  CHECK_EQ(decoded.timestamp_ms, 0x01020304u);
  CHECK_EQ(decoded.size, size_t(3));
  CHECK_EQ(decoded.payload[0], uint8_t(0xAA));
}

TEST(xiaozhi_frame_version_3_header_is_four_bytes) {
  std::vector<uint8_t> opus(300, 0x55);
  std::vector<uint8_t> frame;
  CHECK(encode_audio_frame(3, opus.data(), opus.size(), 99, &frame));
  CHECK_EQ(frame.size(), size_t(304));
  CHECK_EQ(std::vector<uint8_t>(frame.begin(), frame.begin() + 4),
           (std::vector<uint8_t>{0, 0, 0x01, 0x2C}));
  AudioFrame decoded = decode_audio_frame(3, frame.data(), frame.size());
  CHECK(decoded.error == FrameError::None);
  CHECK_EQ(decoded.size, size_t(300));
  std::vector<uint8_t> huge(70000);
  CHECK(!encode_audio_frame(3, huge.data(), huge.size(), 0, &frame));  // u16 size field
  CHECK(!encode_audio_frame(4, opus.data(), opus.size(), 0, &frame));
}

TEST(xiaozhi_frame_headers_that_do_not_hold_up_are_refused) {
  std::vector<uint8_t> v2 = {0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3};
  CHECK(decode_audio_frame(2, v2.data(), v2.size()).error == FrameError::Truncated);
  v2[15] = 2;
  CHECK(decode_audio_frame(2, v2.data(), v2.size()).error == FrameError::SizeMismatch);
  v2[15] = 3;
  v2[3] = 1;  // type 1: JSON, not audio
  CHECK(decode_audio_frame(2, v2.data(), v2.size()).error == FrameError::NotAudio);
  CHECK(decode_audio_frame(2, v2.data(), 10).error == FrameError::Truncated);
  std::vector<uint8_t> v3 = {0, 0, 0xFF, 0xFF, 1};
  CHECK(decode_audio_frame(3, v3.data(), v3.size()).error == FrameError::Truncated);
  CHECK(decode_audio_frame(3, v3.data(), 2).error == FrameError::Truncated);
  CHECK(decode_audio_frame(0, v3.data(), v3.size()).error == FrameError::BadVersion);
  AudioFrame bad = decode_audio_frame(3, v3.data(), v3.size());
  CHECK(bad.payload == nullptr && bad.size == 0);
  // Random bytes never read past the message (ASan would say so).
  mini::Random random(5);
  for (int i = 0; i < 500; ++i) {
    std::vector<uint8_t> bytes(random.below(24));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(random.next());
    for (int version = 1; version <= 3; ++version) {
      AudioFrame frame = decode_audio_frame(version, bytes.data(), bytes.size());
      if (frame.error == FrameError::None) CHECK(frame.size <= bytes.size());
    }
  }
}

TEST(xiaozhi_urls_split_into_scheme_host_port_path) {
  Url ota = parse_url("http://192.168.1.50:8321/xiaozhi/ota/");
  CHECK(ota.valid);
  CHECK_EQ(ota.scheme, std::string("http"));
  CHECK_EQ(ota.host, std::string("192.168.1.50"));
  CHECK_EQ(ota.port, uint16_t(8321));
  CHECK_EQ(ota.path, std::string("/xiaozhi/ota/"));
  Url ws = parse_url("wss://lobug.local/xiaozhi/v1/?x=1");
  CHECK(ws.valid && ws.port == 443 && ws.path == "/xiaozhi/v1/?x=1");
  Url bare = parse_url("ws://host");
  CHECK(bare.valid && bare.port == 80 && bare.path == "/");
  Url query = parse_url("ws://host:81?a=b");
  CHECK(query.valid && query.port == 81 && query.path == "/?a=b");
  for (const char* bad : {"", "host:80/x", "ftp://host/", "ws://:80/", "ws://host:0/",
                          "ws://host:65536/", "ws://host:8x/", "ws://user@host/",
                          "ws://[::1]:80/", "ws://ho st/"}) {
    if (parse_url(bad).valid) CHECK_EQ(std::string(bad), std::string("refused"));
  }
}

TEST(xiaozhi_ota_answer_gives_the_websocket_address) {
  OtaAnswer answer = parse_ota_answer(
      R"({"server_time":{"timestamp":1764172800000,"timezone_offset":60},
          "firmware":{"version":"0.0.0","url":""},
          "websocket":{"url":"ws://192.168.1.50:8321/xiaozhi/v1/","token":"tok","version":3}})");
  CHECK(answer.ok);
  CHECK_EQ(answer.url, std::string("ws://192.168.1.50:8321/xiaozhi/v1/"));
  CHECK_EQ(answer.token, std::string("tok"));
  CHECK_EQ(answer.version, 3);
  CHECK_EQ(answer.server_time_ms, 1764172800000LL);
  OtaAnswer minimal = parse_ota_answer(R"({"websocket":{"url":"wss://x/y"}})");
  CHECK(minimal.ok && minimal.version == 1 && minimal.token.empty());
  CHECK(parse_ota_answer(R"({"websocket":{"url":"ws://x/","version":9}})").version == 1);
  OtaAnswer none = parse_ota_answer(R"({"mqtt":{"endpoint":"x"}})");
  CHECK(!none.ok && none.error.find("websocket") != std::string::npos);
  CHECK(!parse_ota_answer(R"({"websocket":{"url":"http://x/"}})").ok);
  CHECK(!parse_ota_answer(R"({"websocket":{}})").ok);
  CHECK(!parse_ota_answer("<html>").ok);
}

TEST(xiaozhi_ota_request_and_headers) {
  std::string body = ota_request_body("core2-desk", "0000-x", "1.2");
  JsonFields json;
  CHECK(json.parse(body));
  CHECK_EQ(json.string("mac_address"), std::string("core2-desk"));
  CHECK_EQ(json.string("uuid"), std::string("0000-x"));
  CHECK_EQ(json.string("application.version"), std::string("1.2"));
  CHECK_EQ(authorization_value("abc"), std::string("Bearer abc"));
  CHECK_EQ(authorization_value("Token abc"), std::string("Token abc"));
}

TEST(xiaozhi_client_id_is_a_stable_uuid_per_device) {
  std::string id = client_id_for("core2-desk");
  CHECK_EQ(id, client_id_for("core2-desk"));
  CHECK(id != client_id_for("core2-desk2"));
  CHECK_EQ(id.size(), size_t(36));
  CHECK(id[8] == '-' && id[13] == '-' && id[14] == '4' && id[18] == '-' && id[23] == '-');
  CHECK(id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b');
}

namespace {

std::string golden_file(const char* name) {
  std::ifstream file(std::string(LOBUG_GOLDEN_DIR) + "/" + name, std::ios::binary);
  if (!file) {
    mini::fail(__FILE__, __LINE__, std::string("missing golden file ") + name);
    return {};
  }
  return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

TEST(xiaozhi_messages_and_frames_match_the_golden_samples) {
  std::string expected = golden_file("xiaozhi_client.txt");
  std::string written = client_hello(3, AudioParams{}) + "\n" +
                        listen_message("s-1", ListenState::Start, ListenMode::Auto) + "\n" +
                        listen_message("s-1", ListenState::Stop, ListenMode::Auto) + "\n" +
                        abort_message("s-1") + "\n";
  CHECK_EQ(written, expected);
  const uint8_t opus[] = {0xF8, 0x01, 0x02};
  for (int version : {2, 3}) {
    std::string name = "xiaozhi_frame_v" + std::to_string(version) + ".bin";
    std::string golden = golden_file(name.c_str());
    std::vector<uint8_t> frame;
    CHECK(encode_audio_frame(version, opus, sizeof opus, 60, &frame));
    CHECK_EQ(std::string(frame.begin(), frame.end()), golden);
    AudioFrame read = decode_audio_frame(
        version, reinterpret_cast<const uint8_t*>(golden.data()), golden.size());
    CHECK(read.error == FrameError::None && read.size == 3 && read.payload[0] == 0xF8);
  }
}
