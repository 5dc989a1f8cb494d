#include "config.h"

#if LOBUG_WEBSOCKET
#include "hal_ws.h"

#include <WebSocketsClient.h>

namespace hal {

WsLink::WsLink() : client_(new WebSocketsClient()) {}

WsLink::~WsLink() { close(); }

bool WsLink::configure(const lobug::xiaozhi::Url& url, const std::string& authorization,
                       int version, const std::string& device_id, const std::string& client_id) {
  if (!url.valid || url.scheme != "ws") return false;
  url_ = url;
  headers_.clear();
  if (!authorization.empty()) headers_ += "Authorization: " + authorization + "\r\n";
  headers_ += "Protocol-Version: " + std::to_string(version) + "\r\n";
  headers_ += "Device-Id: " + device_id + "\r\n";
  headers_ += "Client-Id: " + client_id;  // the library ends the last line itself
  client_->onEvent([this](WStype_t type, uint8_t* payload, size_t length) {
    if (!open_) return;  // closing: the session already knows
    switch (type) {
      case WStype_CONNECTED:
        if (on_connected) on_connected();
        break;
      case WStype_DISCONNECTED:
        open_ = false;  // the session decides when to reconnect, not the library
        if (on_closed) on_closed();
        break;
      case WStype_TEXT:
        if (on_text) on_text(reinterpret_cast<const char*>(payload), length);
        break;
      case WStype_BIN:
        if (on_binary) on_binary(payload, length);
        break;
      default:  // fragments (the server sends whole messages), pings, errors
        break;
    }
  });
  return true;
}

bool WsLink::open() {
  if (!url_.valid) return false;
  open_ = true;
  client_->setExtraHeaders(headers_.c_str());
  client_->setReconnectInterval(3600000);  // lobug::xiaozhi::Session reconnects, with backoff
  client_->enableHeartbeat(15000, 5000, 2);  // a dead link is noticed within ~25 s
  client_->begin(url_.host.c_str(), url_.port, url_.path.c_str(), "");
  return true;
}

void WsLink::poll() {
  if (open_) client_->loop();
}

bool WsLink::send_text(const std::string& text) {
  return open_ && client_->sendTXT(text.c_str());
}

bool WsLink::send_binary(const uint8_t* data, size_t size) {
  return open_ && client_->sendBIN(data, size);
}

void WsLink::close() {
  if (!open_) return;
  open_ = false;
  client_->disconnect();
}

}  // namespace hal
#endif  // LOBUG_WEBSOCKET
