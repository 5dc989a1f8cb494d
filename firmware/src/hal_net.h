// WiFi and HTTP: the only code that touches WiFi.h and HTTPClient. Every call has a timeout
// and reports failure as a lobug::NetError or an HTTP status; none of them reboots or blocks
// forever.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "lobug/bytes.h"
#include "lobug/http_head.h"
#include "lobug/settings.h"
#include "lobug/status.h"

class HTTPClient;
class WiFiClient;

namespace hal {

void wifi_start(const lobug::DeviceSettings& settings);  // (re)starts association; returns at once
bool wifi_connected();
std::string wifi_address();

struct HttpResult {
  int status = 0;                        // HTTP status, 0 when there was no response
  lobug::NetError error = lobug::NetError::None;
  std::string error_code;                // "error" of the server's JSON error body, if any

  lobug::Problem problem() const { return lobug::classify_result(status, error); }
};

// A response whose headers have arrived and whose body is still to be read.
class ReplyBody {
 public:
  virtual ~ReplyBody() = default;
  virtual std::string header(const char* name) = 0;
  // Reads the body into `sink`. Gives up when no byte arrives for idle_ms or the whole body
  // takes longer than total_ms. `on_wait` runs whenever the socket has nothing to read.
  virtual HttpResult read_body(lobug::ByteSink& sink, uint32_t idle_ms, uint32_t total_ms,
                               const std::function<void()>& on_wait = nullptr) = 0;
};

// One request and its response. The body is streamed to a ByteSink as it arrives (with
// chunked transfer undone), so nothing larger than a read buffer is held here.
class HttpExchange : public ReplyBody {
 public:
  HttpExchange(const lobug::DeviceSettings& settings, const char* path, uint32_t timeout_ms);
  ~HttpExchange();
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  void add_header(const char* name, const std::string& value);
  HttpResult get();
  HttpResult post(const char* content_type, const uint8_t* body, size_t size);
  std::string header(const char* name) override;
  HttpResult read_body(lobug::ByteSink& sink, uint32_t idle_ms, uint32_t total_ms,
                       const std::function<void()>& on_wait = nullptr) override;
  // True when a chunked body ended with its terminating chunk (a complete stream).
  bool body_complete() const { return body_complete_; }

 private:
  HttpResult finish_request(int code);

  std::unique_ptr<HTTPClient> http_;
  bool began_ = false;
  bool body_complete_ = false;
};

// A POST whose body is sent while it is being made (the recording, as it is recorded), with
// chunked transfer on a socket of its own: HTTPClient can only send a body it already has.
class LiveUpload : public ReplyBody {
 public:
  LiveUpload();
  ~LiveUpload() override;
  LiveUpload(const LiveUpload&) = delete;
  LiveUpload& operator=(const LiveUpload&) = delete;

  // Connects and sends the request head; false when that failed (see result()).
  bool begin(const lobug::DeviceSettings& settings, const char* path, const char* content_type);
  // Sends one piece of the body as one chunk; false once the connection has failed.
  bool send(const uint8_t* data, size_t size);
  // Ends the body (the zero-size chunk) and waits up to timeout_ms for the response's status
  // line and headers; `on_wait` runs while nothing has arrived.
  HttpResult finish(uint32_t timeout_ms, const std::function<void()>& on_wait = nullptr);
  // Closes the connection without ending the body: the server drops the upload.
  void abandon();
  bool open() const { return open_; }
  // What went wrong while connecting or sending, if anything did.
  HttpResult result() const { return failure_; }

  std::string header(const char* name) override;
  HttpResult read_body(lobug::ByteSink& sink, uint32_t idle_ms, uint32_t total_ms,
                       const std::function<void()>& on_wait = nullptr) override;

 private:
  bool write_all(const std::string& bytes);

  std::unique_ptr<WiFiClient> client_;
  lobug::ResponseHead head_;
  HttpResult failure_;
  bool open_ = false;
};

HttpResult get_health(const lobug::DeviceSettings& settings);
HttpResult post_json(const lobug::DeviceSettings& settings, const char* path,
                     const std::string& json, uint32_t timeout_ms);
// GET /chat/turns/{turn}: the reply text of a streamed turn (known once its audio has ended).
HttpResult get_turn_response(const lobug::DeviceSettings& settings, const std::string& turn,
                             std::string* response);

// POST <ota_url> (the xiaozhi OTA request): the device's description in, the answer's text out
// (up to 8 KB). `client_id` goes in the Client-Id header, the device id in Device-Id.
HttpResult post_ota(const lobug::DeviceSettings& settings, const std::string& client_id,
                    const std::string& body, std::string* answer);

}  // namespace hal
