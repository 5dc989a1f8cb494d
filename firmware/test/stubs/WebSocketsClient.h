// arduinoWebSockets (links2004/WebSockets 2.x) client, host stub: the calls firmware/src makes,
// with the library's documented signatures, against the fake world's WebSocket server
// (fake::World::ws). Events are delivered from loop(), as the library does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "Arduino.h"

typedef enum {
  WStype_ERROR,
  WStype_DISCONNECTED,
  WStype_CONNECTED,
  WStype_TEXT,
  WStype_BIN,
  WStype_FRAGMENT_TEXT_START,
  WStype_FRAGMENT_BIN_START,
  WStype_FRAGMENT,
  WStype_FRAGMENT_FIN,
  WStype_PING,
  WStype_PONG,
} WStype_t;

class WebSocketsClient {
 public:
  typedef std::function<void(WStype_t type, uint8_t* payload, size_t length)> WebSocketClientEvent;

  void begin(const char* host, uint16_t port, const char* url = "/", const char* protocol = "arduino");
  void onEvent(WebSocketClientEvent cbEvent) { event_ = cbEvent; }
  void setExtraHeaders(const char* extraHeaders = nullptr);
  void setReconnectInterval(unsigned long time) { (void)time; }
  void enableHeartbeat(uint32_t pingInterval, uint32_t pongTimeout, uint8_t disconnectTimeoutCount) {
    (void)pingInterval, (void)pongTimeout, (void)disconnectTimeoutCount;
  }
  void loop();
  bool sendTXT(const char* payload);
  bool sendBIN(const uint8_t* payload, size_t length);
  void disconnect();
  bool isConnected();

 private:
  void fire(WStype_t type, const std::string& payload);

  WebSocketClientEvent event_;
  bool begun_ = false;
  bool connected_ = false;
};
