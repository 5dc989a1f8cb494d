#include "hal_net.h"

#include <Arduino.h>
#include <ArduinoJson.h>
#include <HTTPClient.h>
#include <WiFi.h>

#include <cstdlib>

#include "config.h"
#include "lobug/backoff.h"
#include "lobug/chunked.h"
#include "lobug/wire.h"
#include "lobug/xiaozhi.h"

namespace hal {
namespace {

constexpr size_t kReadChunk = 1024;
constexpr size_t kMaxErrorBody = 1024;
const char* kCollectedHeaders[] = {"Transfer-Encoding", "Content-Type",
                                   lobug::kHeaderAction, lobug::kHeaderTranscription,
                                   lobug::kHeaderTurn};

lobug::NetError net_error_for(int code) {
  switch (code) {
    case HTTPC_ERROR_CONNECTION_REFUSED:
    case HTTPC_ERROR_NOT_CONNECTED:
    case HTTPC_ERROR_SEND_HEADER_FAILED:
      return lobug::NetError::Connect;
    case HTTPC_ERROR_READ_TIMEOUT:
      return lobug::NetError::Timeout;
    default:
      return lobug::NetError::Broken;  // connection lost, not HTTP, payload not sent
  }
}

// Collects a small body (an error message, a turn summary) into a string.
class StringSink : public lobug::ByteSink {
 public:
  explicit StringSink(size_t limit) : limit_(limit) {}
  bool write(const uint8_t* data, size_t size) override {
    size_t room = limit_ - text.size();
    text.append(reinterpret_cast<const char*>(data), size < room ? size : room);
    return true;
  }
  std::string text;

 private:
  size_t limit_;
};

// Passes bytes on, counting them, so a Content-Length body can end without a closed socket.
class CountingSink : public lobug::ByteSink {
 public:
  explicit CountingSink(lobug::ByteSink& out) : out_(out) {}
  bool write(const uint8_t* data, size_t size) override {
    count += size;
    return out_.write(data, size);
  }
  size_t count = 0;

 private:
  lobug::ByteSink& out_;
};

// How a response body ends: with the zero-size chunk, after `declared` bytes, or (declared -1)
// when the server closes the connection.
struct BodyFraming {
  bool chunked;
  int declared;
};

struct ReadLimits {
  uint32_t idle_ms;
  uint32_t total_ms;
  const std::function<void()>& on_wait;
};

bool equals_ignore_case(const std::string& a, const char* b) {
  return String(a.c_str()).equalsIgnoreCase(String(b));
}

HttpResult read_socket_body(WiFiClient& stream, BodyFraming framing, lobug::ByteSink& sink,
                            const ReadLimits& limits, bool* complete) {
  HttpResult result{200, lobug::NetError::None, ""};
  lobug::ChunkedDecoder dechunk(sink);
  CountingSink counted(sink);
  uint8_t buffer[kReadChunk];
  uint32_t started = millis(), last_data = started;
  *complete = false;
  while (true) {
    if (framing.chunked ? dechunk.complete()
                        : framing.declared >= 0 && counted.count >= size_t(framing.declared)) {
      *complete = true;
      break;
    }
    int available = stream.available();
    if (available > 0) {
      int n = stream.read(buffer, available < int(kReadChunk) ? available : int(kReadChunk));
      if (n <= 0) continue;
      bool ok = framing.chunked ? dechunk.feed(buffer, size_t(n)) : counted.write(buffer, size_t(n));
      if (!ok) return {200, lobug::NetError::Broken, ""};
      last_data = millis();
      continue;
    }
    if (!stream.connected()) {
      *complete = !framing.chunked && framing.declared < 0;  // close-delimited: the close ends it
      if (framing.chunked || (framing.declared >= 0 && counted.count < size_t(framing.declared))) {
        result.error = lobug::NetError::Broken;  // cut off mid-body
      }
      break;
    }
    uint32_t now = millis();
    if (lobug::elapsed_ms(now, last_data) > limits.idle_ms ||
        lobug::elapsed_ms(now, started) > limits.total_ms) {
      result.error = lobug::NetError::Timeout;
      break;
    }
    if (limits.on_wait) limits.on_wait();
    delay(2);
  }
  return result;
}

// {"error": "<code>", "detail": ...}: only the code is kept (an ArduinoJson filter drops the
// rest while parsing, so a long validation detail costs no memory).
void read_error_code(ReplyBody& reply, HttpResult* result) {
  StringSink body(kMaxErrorBody);
  reply.read_body(body, LOBUG_CONNECT_TIMEOUT_MS, LOBUG_CONNECT_TIMEOUT_MS);
  JsonDocument filter;
  filter["error"] = true;
  JsonDocument doc;
  if (deserializeJson(doc, body.text, DeserializationOption::Filter(filter))) return;
  result->error_code = doc["error"] | "";
}

}  // namespace

void wifi_start(const lobug::DeviceSettings& settings) {
  WiFi.persistent(false);     // credentials live in our NVS namespace, not the WiFi driver's
  WiFi.setAutoReconnect(false);  // lobug::Link decides when to retry, with backoff
  WiFi.mode(WIFI_STA);
  WiFi.setSleep(false);       // modem sleep adds hundreds of ms to every request
  WiFi.disconnect();
  WiFi.begin(settings.wifi_ssid.c_str(), settings.wifi_password.c_str());
}

bool wifi_connected() { return WiFi.status() == WL_CONNECTED; }

std::string wifi_address() { return WiFi.localIP().toString().c_str(); }

HttpExchange::HttpExchange(const lobug::DeviceSettings& settings, const char* path,
                           uint32_t timeout_ms)
    : http_(new HTTPClient()) {
  http_->setReuse(false);  // one request per connection: the body always ends with the socket
  http_->setConnectTimeout(LOBUG_CONNECT_TIMEOUT_MS);
  http_->setTimeout(static_cast<uint16_t>(timeout_ms > 65535 ? 65535 : timeout_ms));
  began_ = http_->begin(settings.server_host.c_str(), settings.server_port, path);
  for (const lobug::Header& header : lobug::device_headers(settings.token, settings.device_id)) {
    http_->addHeader(header.first.c_str(), header.second.c_str());
  }
  http_->collectHeaders(kCollectedHeaders, sizeof kCollectedHeaders / sizeof *kCollectedHeaders);
}

HttpExchange::~HttpExchange() { http_->end(); }

void HttpExchange::add_header(const char* name, const std::string& value) {
  http_->addHeader(name, value.c_str());
}

HttpResult HttpExchange::get() {
  if (!wifi_connected()) return {0, lobug::NetError::NoWifi, ""};
  if (!began_) return {0, lobug::NetError::Connect, ""};
  return finish_request(http_->GET());
}

HttpResult HttpExchange::post(const char* content_type, const uint8_t* body, size_t size) {
  if (!wifi_connected()) return {0, lobug::NetError::NoWifi, ""};
  if (!began_) return {0, lobug::NetError::Connect, ""};
  http_->addHeader("Content-Type", content_type);
  // HTTPClient takes a non-const pointer but only reads from it.
  return finish_request(http_->POST(const_cast<uint8_t*>(body), size));
}

HttpResult HttpExchange::finish_request(int code) {
  HttpResult result;
  if (code < 0) {
    result.error = net_error_for(code);
    return result;
  }
  result.status = code;
  if (code != 200) read_error_code(*this, &result);
  return result;
}

std::string HttpExchange::header(const char* name) { return http_->header(name).c_str(); }

HttpResult HttpExchange::read_body(lobug::ByteSink& sink, uint32_t idle_ms, uint32_t total_ms,
                                   const std::function<void()>& on_wait) {
  WiFiClient* stream = http_->getStreamPtr();
  if (stream == nullptr) return {200, lobug::NetError::Broken, ""};
  BodyFraming framing{http_->header("Transfer-Encoding").equalsIgnoreCase("chunked"),
                      http_->getSize()};
  return read_socket_body(*stream, framing, sink, {idle_ms, total_ms, on_wait}, &body_complete_);
}

LiveUpload::LiveUpload() : client_(new WiFiClient()) {}

LiveUpload::~LiveUpload() { client_->stop(); }

bool LiveUpload::begin(const lobug::DeviceSettings& settings, const char* path,
                       const char* content_type) {
  if (!wifi_connected()) {
    failure_ = {0, lobug::NetError::NoWifi, ""};
    return false;
  }
  if (!client_->connect(settings.server_host.c_str(), settings.server_port,
                        LOBUG_CONNECT_TIMEOUT_MS)) {
    failure_ = {0, lobug::NetError::Connect, ""};
    return false;
  }
  client_->setNoDelay(true);  // each chunk leaves at once: the server listens as it arrives
  open_ = true;
  return write_all(lobug::chunked_post_head(
      settings.server_host, settings.server_port, path, content_type,
      lobug::device_headers(settings.token, settings.device_id)));
}

bool LiveUpload::send(const uint8_t* data, size_t size) {
  return open_ && write_all(lobug::encode_chunk(data, size));
}

bool LiveUpload::write_all(const std::string& bytes) {
  if (client_->write(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) ==
      bytes.size()) {
    return true;
  }
  failure_ = {0, lobug::NetError::Broken, ""};
  abandon();
  return false;
}

HttpResult LiveUpload::finish(uint32_t timeout_ms, const std::function<void()>& on_wait) {
  if (!open_ || !write_all(lobug::kLastChunk)) return failure_;
  uint32_t started = millis();
  uint8_t byte = 0;
  while (!head_.complete() && !head_.failed()) {
    if (client_->available() > 0 && client_->read(&byte, 1) == 1) {
      head_.feed(&byte, 1);  // byte by byte: what follows the head is the body's
    } else if (!client_->connected()) {
      return {0, lobug::NetError::Broken, ""};
    } else if (lobug::elapsed_ms(millis(), started) > timeout_ms) {
      return {0, lobug::NetError::Timeout, ""};
    } else {
      if (on_wait) on_wait();
      delay(2);
    }
  }
  if (head_.failed()) return {0, lobug::NetError::Broken, ""};
  HttpResult result{head_.status(), lobug::NetError::None, ""};
  if (result.status != 200) read_error_code(*this, &result);
  return result;
}

void LiveUpload::abandon() {
  client_->stop();
  open_ = false;
}

std::string LiveUpload::header(const char* name) { return head_.header(name); }

HttpResult LiveUpload::read_body(lobug::ByteSink& sink, uint32_t idle_ms, uint32_t total_ms,
                                 const std::function<void()>& on_wait) {
  std::string length = head_.header("Content-Length");
  BodyFraming framing{equals_ignore_case(head_.header("Transfer-Encoding"), "chunked"),
                      length.empty() ? -1 : std::atoi(length.c_str())};
  bool complete = false;  // a reply cut short is reported as Broken; nothing else asks
  return read_socket_body(*client_, framing, sink, {idle_ms, total_ms, on_wait}, &complete);
}

HttpResult get_health(const lobug::DeviceSettings& settings) {
  HttpExchange exchange(settings, lobug::kPathHealth, LOBUG_HEALTH_TIMEOUT_MS);
  return exchange.get();  // the contract: only the status code matters
}

HttpResult post_json(const lobug::DeviceSettings& settings, const char* path,
                     const std::string& json, uint32_t timeout_ms) {
  HttpExchange exchange(settings, path, timeout_ms);
  return exchange.post("application/json", reinterpret_cast<const uint8_t*>(json.data()),
                       json.size());
}

HttpResult get_turn_response(const lobug::DeviceSettings& settings, const std::string& turn,
                             std::string* response) {
  std::string path = std::string(lobug::kPathChatTurns) + turn;
  HttpExchange exchange(settings, path.c_str(), LOBUG_HTTP_TIMEOUT_MS);
  HttpResult result = exchange.get();
  if (result.status != 200 || result.error != lobug::NetError::None) return result;
  StringSink body(8 * 1024);
  result = exchange.read_body(body, LOBUG_HTTP_TIMEOUT_MS, LOBUG_HTTP_TIMEOUT_MS);
  JsonDocument filter;
  filter["response"] = true;
  JsonDocument doc;
  if (deserializeJson(doc, body.text, DeserializationOption::Filter(filter))) {
    result.error = lobug::NetError::Broken;
    return result;
  }
  *response = doc["response"] | "";
  return result;
}

HttpResult post_ota(const lobug::DeviceSettings& settings, const std::string& client_id,
                    const std::string& body, std::string* answer) {
  lobug::xiaozhi::Url url = lobug::xiaozhi::parse_url(settings.ota_url);
  if (!url.valid || url.scheme != "http") return {0, lobug::NetError::Connect, "bad ota_url"};
  lobug::DeviceSettings at_ota = settings;  // the OTA address may name another host or port
  at_ota.server_host = url.host;
  at_ota.server_port = url.port;
  HttpExchange exchange(at_ota, url.path.c_str(), LOBUG_HEALTH_TIMEOUT_MS);
  exchange.add_header("Device-Id", settings.device_id);
  exchange.add_header("Client-Id", client_id);
  HttpResult result = exchange.post("application/json",
                                    reinterpret_cast<const uint8_t*>(body.data()), body.size());
  if (result.status != 200 || result.error != lobug::NetError::None) return result;
  StringSink text(8 * 1024);
  result = exchange.read_body(text, LOBUG_HEALTH_TIMEOUT_MS, LOBUG_HTTP_TIMEOUT_MS);
  *answer = text.text;
  return result;
}

}  // namespace hal
