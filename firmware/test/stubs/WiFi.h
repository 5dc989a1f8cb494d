// Arduino-ESP32 WiFi, host stub: the station calls firmware/src makes, and WiFiClient both as
// HTTPClient hands it out to read a response body and as a socket of its own to the fake
// world's server (a request written by the device itself, see fake_world.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "Arduino.h"

typedef enum { WIFI_MODE_NULL = 0, WIFI_MODE_STA, WIFI_MODE_AP, WIFI_MODE_APSTA } wifi_mode_t;
#define WIFI_STA WIFI_MODE_STA

typedef enum {
  WL_IDLE_STATUS = 0,
  WL_NO_SSID_AVAIL = 1,
  WL_CONNECTED = 3,
  WL_CONNECT_FAILED = 4,
  WL_CONNECTION_LOST = 5,
  WL_DISCONNECTED = 6,
} wl_status_t;

class IPAddress {
 public:
  String toString() const;
};

namespace fake {
struct Socket;
}

class WiFiClient {
 public:
  WiFiClient();
  virtual ~WiFiClient();
  WiFiClient(const WiFiClient&) = delete;
  WiFiClient& operator=(const WiFiClient&) = delete;
  int connect(const char* host, uint16_t port, int32_t timeout_ms);
  size_t write(const uint8_t* buf, size_t size);
  int setNoDelay(bool nodelay);
  void stop();
  virtual int available();
  virtual int read(uint8_t* buf, size_t size);
  virtual uint8_t connected();

 private:
  fake::Socket* socket_;
};

class WiFiClass {
 public:
  bool persistent(bool enabled);
  bool setAutoReconnect(bool autoReconnect);
  bool mode(wifi_mode_t mode);
  bool setSleep(bool enabled);
  bool disconnect(bool wifioff = false, bool eraseap = false);
  wl_status_t begin(const char* ssid, const char* passphrase = nullptr);
  wl_status_t status();
  IPAddress localIP();
};

extern WiFiClass WiFi;
