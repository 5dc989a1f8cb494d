// The stubs' behaviour, against fake::world().
#include "fake_world.h"

#include <ArduinoJson.h>
#include <HTTPClient.h>
#include <M5Unified.h>
#include <Preferences.h>
#include <WebSocketsClient.h>
#include <WiFi.h>
#include <esp_heap_caps.h>
#include <opus.h>

#include "lobug/chunked.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace fake {

World& world() {
  static World the_world;
  return the_world;
}

void reset() { world() = World(); }

void press() { M5.BtnA.pressed_ = true; }

std::string Request::header(const std::string& name) const {
  for (const auto& pair : headers) {
    if (pair.first == name) return pair.second;
  }
  return "";
}

}  // namespace fake

// ---------------------------------------------------------------------------------- Arduino

uint32_t millis() { return fake::world().now_ms; }
void delay(uint32_t ms) { fake::world().now_ms += ms; }
uint32_t esp_random() { return 0x12345678u; }

bool String::equalsIgnoreCase(const String& other) const {
  if (text_.size() != other.text_.size()) return false;
  for (size_t i = 0; i < text_.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text_[i])) !=
        std::tolower(static_cast<unsigned char>(other.text_[i]))) {
      return false;
    }
  }
  return true;
}

HardwareSerial Serial;

size_t HardwareSerial::print(const char* text) {
  fake::world().serial_out += text;
  return std::strlen(text);
}

size_t HardwareSerial::println(const char* text) { return print(text) + print("\n"); }

size_t HardwareSerial::printf(const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  fake::world().serial_out += buffer;
  return n < 0 ? 0 : size_t(n);
}

int HardwareSerial::available() { return int(fake::world().serial_in.size()); }

int HardwareSerial::read() {
  std::string& in = fake::world().serial_in;
  if (in.empty()) return -1;
  int c = static_cast<unsigned char>(in[0]);
  in.erase(0, 1);
  return c;
}

void* heap_caps_malloc(size_t size, uint32_t caps) {
  (void)caps;
  return std::malloc(size);  // the device keeps its buffers for ever; so does the test
}

// ---------------------------------------------------------------------------------- Preferences

bool Preferences::begin(const char* name, bool readOnly, const char* partition_label) {
  (void)readOnly, (void)partition_label;
  name_ = name;
  return true;
}
void Preferences::end() { name_ = nullptr; }
bool Preferences::clear() {
  fake::world().preferences.clear();
  return true;
}
bool Preferences::remove(const char* key) { return fake::world().preferences.erase(key) > 0; }
bool Preferences::isKey(const char* key) { return fake::world().preferences.count(key) > 0; }
size_t Preferences::putString(const char* key, const char* value) {
  fake::world().preferences[key] = value;
  return std::strlen(value);
}
String Preferences::getString(const char* key, String defaultValue) {
  auto found = fake::world().preferences.find(key);
  return found == fake::world().preferences.end() ? defaultValue : String(found->second.c_str());
}

// ---------------------------------------------------------------------------------- WiFi

WiFiClass WiFi;

String IPAddress::toString() const { return "192.168.1.23"; }
bool WiFiClass::persistent(bool) { return true; }
bool WiFiClass::setAutoReconnect(bool) { return true; }
bool WiFiClass::mode(wifi_mode_t) { return true; }
bool WiFiClass::setSleep(bool) { return true; }
bool WiFiClass::disconnect(bool, bool) {
  fake::world().wifi_up = false;
  return true;
}
wl_status_t WiFiClass::begin(const char*, const char*) {
  fake::world().wifi_up = true;  // this WiFi always lets us in
  return WL_CONNECTED;
}
wl_status_t WiFiClass::status() { return fake::world().wifi_up ? WL_CONNECTED : WL_DISCONNECTED; }
IPAddress WiFiClass::localIP() { return IPAddress(); }

namespace {

// The response body of the fake server, handed out in small reads like a socket does.
class BodyClient : public WiFiClient {
 public:
  explicit BodyClient(std::string body) : body_(std::move(body)) {}
  int available() override { return int(std::min<size_t>(body_.size() - at_, 700)); }
  int read(uint8_t* buf, size_t size) override {
    size_t n = std::min(size, body_.size() - at_);
    std::memcpy(buf, body_.data() + at_, n);
    at_ += n;
    return int(n);
  }
  uint8_t connected() override { return at_ < body_.size(); }

 private:
  std::string body_;
  size_t at_ = 0;
};

// The wire bytes of a canned response: status line, headers, the empty line, the body.
std::string response_wire(const fake::Response& response) {
  std::string wire = "HTTP/1.1 " + std::to_string(response.status) + " Fake\r\n";
  for (const auto& header : response.headers) wire += header.first + ": " + header.second + "\r\n";
  if (response.headers.count("Transfer-Encoding") == 0) {
    wire += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  }
  return wire + "\r\n" + response.body;
}

class StringSink : public lobug::ByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  bool write(const uint8_t* data, size_t size) override {
    out_.append(reinterpret_cast<const char*>(data), size);
    return true;
  }

 private:
  std::string& out_;
};

}  // namespace

namespace fake {

// The fake server's end of a connection the device opened itself: it reads the request head,
// then the chunked body as it comes, and answers from the routes once the body has ended.
struct Socket {
  std::string head;
  bool head_done = false;
  Request request;
  StringSink body_sink{request.body};
  lobug::ChunkedDecoder body{body_sink};
  std::string reply;
  size_t reply_at = 0;
  bool answered = false;

  void receive(const uint8_t* data, size_t size);
  void parse_head();
  void answer();
};

void Socket::receive(const uint8_t* data, size_t size) {
  size_t used = 0;
  while (!head_done && used < size) {
    head += char(data[used++]);
    head_done = head.size() >= 4 && head.compare(head.size() - 4, 4, "\r\n\r\n") == 0;
    if (head_done) parse_head();
  }
  if (used == size || answered) return;
  request.wire_body.append(reinterpret_cast<const char*>(data + used), size - used);
  request.body_write_ms.push_back(world().now_ms);
  body.feed(data + used, size - used);
  if (body.complete()) answer();
}

void Socket::parse_head() {
  size_t line_end = head.find("\r\n");
  std::string line = head.substr(0, line_end);
  size_t space = line.find(' ');
  request.method = line.substr(0, space);
  request.path = line.substr(space + 1, line.find(' ', space + 1) - space - 1);
  for (size_t at = line_end + 2; at < head.size() - 2;) {
    size_t end = head.find("\r\n", at);
    std::string header = head.substr(at, end - at);
    size_t colon = header.find(": ");
    request.headers.emplace_back(header.substr(0, colon), header.substr(colon + 2));
    at = end + 2;
  }
}

void Socket::answer() {
  World& the_world = world();
  the_world.requests.push_back(request);
  the_world.now_ms += 20;  // a LAN round trip
  auto route = the_world.routes.find(request.path);
  reply = response_wire(route == the_world.routes.end() ? Response{404, {}, ""} : route->second);
  answered = true;
}

}  // namespace fake

WiFiClient::WiFiClient() : socket_(nullptr) {}
WiFiClient::~WiFiClient() { stop(); }

int WiFiClient::connect(const char*, uint16_t, int32_t) {
  if (!fake::world().wifi_up) return 0;
  stop();
  socket_ = new fake::Socket();
  return 1;
}

size_t WiFiClient::write(const uint8_t* buf, size_t size) {
  if (socket_ == nullptr || socket_->answered) return 0;
  socket_->receive(buf, size);
  return size;
}

int WiFiClient::setNoDelay(bool) { return 0; }

void WiFiClient::stop() {
  if (socket_ != nullptr && !socket_->answered) fake::world().abandoned.push_back(socket_->request);
  delete socket_;
  socket_ = nullptr;
}

int WiFiClient::available() {
  if (socket_ == nullptr) return 0;
  return int(std::min<size_t>(socket_->reply.size() - socket_->reply_at, 700));
}

int WiFiClient::read(uint8_t* buf, size_t size) {
  if (socket_ == nullptr) return 0;
  size_t n = std::min(size, socket_->reply.size() - socket_->reply_at);
  std::memcpy(buf, socket_->reply.data() + socket_->reply_at, n);
  socket_->reply_at += n;
  return int(n);
}

// Open until the whole reply has been read (the server closes: Connection: close).
uint8_t WiFiClient::connected() {
  return socket_ != nullptr && (!socket_->answered || socket_->reply_at < socket_->reply.size());
}

// ---------------------------------------------------------------------------------- HTTPClient

HTTPClient::HTTPClient() = default;
HTTPClient::~HTTPClient() { end(); }

bool HTTPClient::begin(String host, uint16_t port, String uri) {
  (void)host, (void)port;
  path_ = uri.c_str();
  return true;
}

void HTTPClient::end() {
  delete stream_;
  stream_ = nullptr;
}

void HTTPClient::setReuse(bool) {}
void HTTPClient::setConnectTimeout(int32_t) {}
void HTTPClient::setTimeout(uint16_t) {}
void HTTPClient::addHeader(const String& name, const String& value, bool, bool) {
  headers_.emplace_back(name.c_str(), value.c_str());
}
void HTTPClient::collectHeaders(const char*[], const size_t) {}

String HTTPClient::header(const char* name) {
  auto found = response_headers_.find(name);
  return found == response_headers_.end() ? String() : String(found->second.c_str());
}

int HTTPClient::GET() { return send("GET", nullptr, 0); }
int HTTPClient::POST(uint8_t* payload, size_t size) { return send("POST", payload, size); }
int HTTPClient::getSize() { return size_; }
WiFiClient* HTTPClient::getStreamPtr() { return stream_; }

int HTTPClient::send(const char* method, const uint8_t* payload, size_t size) {
  fake::World& world = fake::world();
  if (!world.wifi_up) return HTTPC_ERROR_NOT_CONNECTED;
  std::string body = payload ? std::string(reinterpret_cast<const char*>(payload), size) : "";
  world.requests.push_back({method, path_, headers_, body, "", {}});
  world.now_ms += 20;  // a LAN round trip
  auto route = world.routes.find(path_);
  fake::Response response = route == world.routes.end() ? fake::Response{404, {}, ""} : route->second;
  response_headers_ = response.headers;
  bool chunked = response.headers.count("Transfer-Encoding") > 0;
  size_ = chunked ? -1 : int(response.body.size());
  stream_ = new BodyClient(response.body);
  return response.status;
}

// ---------------------------------------------------------------------------------- M5Unified

m5::M5Unified M5;
const lgfx::GLCDfont lgfx::fonts::Font2{};

namespace m5 {

bool Button_Class::wasPressed() const {
  bool was = pressed_;
  const_cast<Button_Class*>(this)->pressed_ = false;  // M5.update() clears it on the device
  return was;
}

const touch_detail_t& Touch_Class::getDetail(size_t) const {
  static touch_detail_t none;
  return none;
}

size_t Display_Device::drawString(const char* string, int32_t, int32_t) {
  fake::world().drawn.push_back(string);
  return std::strlen(string);
}

bool Speaker_Class::begin() { return true; }
void Speaker_Class::end() {}
void Speaker_Class::setVolume(uint8_t) {}
namespace {

// Forgets the blocks that have finished playing by now.
std::vector<uint32_t>& speaker_queue() {
  fake::World& world = fake::world();
  auto& queue = world.speaker_queue_end_ms;
  while (!queue.empty() && queue.front() <= world.now_ms) queue.erase(queue.begin());
  return queue;
}

}  // namespace

size_t Speaker_Class::isPlaying(uint8_t) const {
  return fake::world().speaker_real_time ? std::min<size_t>(speaker_queue().size(), 2) : 0;
}
void Speaker_Class::stop() {
  ++fake::world().speaker_stops;
  fake::world().speaker_queue_end_ms.clear();
}
bool Speaker_Class::playRaw(const int16_t* raw_data, size_t array_len, uint32_t sample_rate,
                            bool, uint32_t, int, bool) {
  fake::World& world = fake::world();
  world.played_blocks.push_back(array_len);
  if (world.speaker_real_time) {
    auto& queue = speaker_queue();
    if (queue.size() >= 2) {  // M5Unified waits for a free slot
      world.now_ms = queue.front();
      queue.erase(queue.begin());
    }
    uint32_t start = queue.empty() ? world.now_ms : queue.back();
    queue.push_back(start + uint32_t(uint64_t(array_len) * 1000 / sample_rate));
  }
  world.played.insert(world.played.end(), raw_data, raw_data + array_len);
  world.played_rate = sample_rate;
  return true;
}

bool Mic_Class::begin() {
  fake::world().mic_samples = 0;
  return true;
}
void Mic_Class::end() {}

bool Mic_Class::record(int16_t* rec_data, size_t array_len, uint32_t sample_rate, bool) {
  fake::World& world = fake::world();
  for (size_t i = 0; i < array_len; ++i, ++world.mic_samples) {
    uint32_t ms = uint32_t(uint64_t(world.mic_samples) * 1000 / sample_rate);
    double phase = 2 * M_PI * 220.0 * world.mic_samples / sample_rate;
    rec_data[i] = int16_t(world.voice(ms) * std::sin(phase));
  }
  world.now_ms += uint32_t(array_len * 1000 / sample_rate);  // recording takes real time
  return true;
}

size_t Mic_Class::isRecording() const { return 0; }  // every queued frame is already filled

bool IMU_Class::getAccel(float*, float*, float*) { return false; }
bool IMU_Class::getGyro(float*, float*, float*) { return false; }

}  // namespace m5

// ---------------------------------------------------------------------------------- ArduinoJson

JsonVariant& JsonVariant::operator=(bool keep) {
  if (keep) doc_.kept.insert(key_);
  return *this;
}

const char* JsonVariant::operator|(const char* fallback) const {
  auto found = doc_.strings.find(key_);
  return found == doc_.strings.end() ? fallback : found->second.c_str();
}

namespace {

void skip_space(const std::string& in, size_t* at) {
  while (*at < in.size() && std::isspace(static_cast<unsigned char>(in[*at]))) ++*at;
}

bool read_string(const std::string& in, size_t* at, std::string* out) {
  if (*at >= in.size() || in[*at] != '"') return false;
  for (++*at; *at < in.size(); ++*at) {
    char c = in[*at];
    if (c == '"') {
      ++*at;
      return true;
    }
    if (c == '\\' && ++*at < in.size()) {
      char e = in[*at];
      c = e == 'n' ? '\n' : e == 't' ? '\t' : e;  // \uXXXX is not needed by the tests
    }
    out->push_back(c);
  }
  return false;
}

bool skip_value(const std::string& in, size_t* at) {
  skip_space(in, at);
  if (*at >= in.size()) return false;
  if (in[*at] == '"') {
    std::string ignored;
    return read_string(in, at, &ignored);
  }
  int depth = 0;
  for (; *at < in.size(); ++*at) {
    char c = in[*at];
    if (c == '"') {
      std::string ignored;
      if (!read_string(in, at, &ignored)) return false;
      --*at;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return true;
      if (--depth == 0) {
        ++*at;
        return true;
      }
    } else if (c == ',' && depth == 0) {
      return true;
    }
  }
  return depth == 0;
}

}  // namespace

DeserializationError deserializeJson(JsonDocument& doc, const std::string& input,
                                     DeserializationOption::Filter filter) {
  size_t at = 0;
  skip_space(input, &at);
  if (at >= input.size() || input[at++] != '{') return DeserializationError(true);
  while (true) {
    skip_space(input, &at);
    if (at < input.size() && input[at] == '}') return DeserializationError(false);
    std::string key, value;
    if (!read_string(input, &at, &key)) return DeserializationError(true);
    skip_space(input, &at);
    if (at >= input.size() || input[at++] != ':') return DeserializationError(true);
    skip_space(input, &at);
    bool wanted = filter.document().kept.count(key) > 0;
    if (wanted && at < input.size() && input[at] == '"') {
      if (!read_string(input, &at, &value)) return DeserializationError(true);
      doc.strings[key] = value;
    } else if (!skip_value(input, &at)) {
      return DeserializationError(true);
    }
    skip_space(input, &at);
    if (at < input.size() && input[at] == ',') ++at;
  }
}

// ---------------------------------------------------------------------------------- WebSockets

void WebSocketsClient::begin(const char* host, uint16_t port, const char* url, const char*) {
  fake::WsServer& server = fake::world().ws;
  server.host = host;
  server.port = port;
  server.path = url;
  begun_ = true;
  connected_ = false;
}

void WebSocketsClient::setExtraHeaders(const char* extraHeaders) {
  fake::world().ws.extra_headers = extraHeaders ? extraHeaders : "";
}

void WebSocketsClient::fire(WStype_t type, const std::string& payload) {
  std::string copy = payload;  // the library hands out a writable buffer
  if (event_) event_(type, reinterpret_cast<uint8_t*>(&copy[0]), copy.size());
}

void WebSocketsClient::loop() {
  fake::World& world = fake::world();
  fake::WsServer& server = world.ws;
  if (!begun_) return;
  if (!connected_) {
    if (!world.wifi_up || !server.accepts) return;
    connected_ = server.connected = true;
    ++server.connects;
    world.now_ms += 30;  // the handshake
    fire(WStype_CONNECTED, server.path);
    return;
  }
  if (server.drop || !server.connected) {
    server.drop = false;
    connected_ = server.connected = false;
    server.to_device.clear();
    fire(WStype_DISCONNECTED, "");
    return;
  }
  while (connected_ && !server.to_device.empty()) {
    fake::WsMessage message = server.to_device.front();
    server.to_device.pop_front();
    fire(message.binary ? WStype_BIN : WStype_TEXT, message.data);
  }
}

namespace {

bool deliver_to_server(bool connected, fake::WsMessage message) {
  fake::World& world = fake::world();
  if (!connected || !world.ws.connected) return false;
  world.ws.received.push_back(message);
  world.ws.received_ms.push_back(world.now_ms);
  if (world.ws.on_message) world.ws.on_message(message);
  return true;
}

}  // namespace

bool WebSocketsClient::sendTXT(const char* payload) {
  return deliver_to_server(connected_, {false, payload});
}

bool WebSocketsClient::sendBIN(const uint8_t* payload, size_t length) {
  return deliver_to_server(connected_, {true, std::string(reinterpret_cast<const char*>(payload), length)});
}

void WebSocketsClient::disconnect() {
  bool was = connected_;
  connected_ = false;
  begun_ = false;
  fake::world().ws.connected = false;
  if (was) fire(WStype_DISCONNECTED, "");
}

bool WebSocketsClient::isConnected() { return connected_; }

// ---------------------------------------------------------------------------------- libopus

struct OpusEncoder {
  int channels;
};
struct OpusDecoder {
  int channels;
};

OpusEncoder* opus_encoder_create(opus_int32 Fs, int channels, int, int* error) {
  bool ok = (Fs == 8000 || Fs == 12000 || Fs == 16000 || Fs == 24000 || Fs == 48000) &&
            (channels == 1 || channels == 2);
  *error = ok ? OPUS_OK : OPUS_BAD_ARG;
  return ok ? new OpusEncoder{channels} : nullptr;
}

int opus_encoder_ctl(OpusEncoder*, int, ...) { return OPUS_OK; }

opus_int32 opus_encode(OpusEncoder* st, const opus_int16* pcm, int frame_size, unsigned char* data,
                       opus_int32 max_data_bytes) {
  if (st == nullptr || frame_size <= 0) return OPUS_BAD_ARG;
  if (max_data_bytes < 5) return OPUS_BUFFER_TOO_SMALL;
  uint64_t sum = 0;
  for (int i = 0; i < frame_size; ++i) sum += uint64_t(std::abs(int(pcm[i])));
  uint16_t level = uint16_t(sum / uint64_t(frame_size));
  data[0] = 'L';
  data[1] = uint8_t(level & 0xFF);
  data[2] = uint8_t(level >> 8);
  data[3] = uint8_t(frame_size & 0xFF);
  data[4] = uint8_t(frame_size >> 8);
  return 5;
}

void opus_encoder_destroy(OpusEncoder* st) { delete st; }

OpusDecoder* opus_decoder_create(opus_int32 Fs, int channels, int* error) {
  bool ok = (Fs == 8000 || Fs == 12000 || Fs == 16000 || Fs == 24000 || Fs == 48000) &&
            (channels == 1 || channels == 2);
  *error = ok ? OPUS_OK : OPUS_BAD_ARG;
  return ok ? new OpusDecoder{channels} : nullptr;
}

int opus_decode(OpusDecoder* st, const unsigned char* data, opus_int32 len, opus_int16* pcm,
                int frame_size, int) {
  if (st == nullptr || data == nullptr || len < 1 || data[0] != 'P' || (len - 1) % 2 != 0) {
    return OPUS_INVALID_PACKET;
  }
  int samples = (len - 1) / 2;
  if (samples > frame_size) return OPUS_BUFFER_TOO_SMALL;
  std::memcpy(pcm, data + 1, size_t(samples) * 2);
  return samples;
}

void opus_decoder_destroy(OpusDecoder* st) { delete st; }
