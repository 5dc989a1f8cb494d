// The xiaozhi WebSocket through arduinoWebSockets: the socket a lobug::xiaozhi::Session acts
// through. Only built with LOBUG_WEBSOCKET. Events arrive from poll(), on the loop's task.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "lobug/xiaozhi_session.h"

class WebSocketsClient;

namespace hal {

class WsLink : public lobug::xiaozhi::SessionLink {
 public:
  WsLink();
  ~WsLink() override;

  // Where open() connects, and the handshake's headers (Authorization, Protocol-Version,
  // Device-Id, Client-Id). False for a wss:// address: this firmware has no TLS for it yet.
  bool configure(const lobug::xiaozhi::Url& url, const std::string& authorization, int version,
                 const std::string& device_id, const std::string& client_id);
  void poll();  // runs the socket; the callbacks below fire from here

  bool open() override;
  bool send_text(const std::string& text) override;
  bool send_binary(const uint8_t* data, size_t size) override;
  void close() override;

  std::function<void()> on_connected;
  std::function<void()> on_closed;
  std::function<void(const char* text, size_t size)> on_text;
  std::function<void(const uint8_t* data, size_t size)> on_binary;

 private:
  std::unique_ptr<WebSocketsClient> client_;
  lobug::xiaozhi::Url url_;
  std::string headers_;
  bool open_ = false;  // between open() and close() or the socket closing
};

}  // namespace hal
