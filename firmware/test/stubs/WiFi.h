// Arduino-ESP32 WiFi, host stub: the station calls firmware/src makes, and WiFiClient as
// HTTPClient hands it out to read a response body.
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

class WiFiClient {
 public:
  virtual ~WiFiClient() = default;
  virtual int available();
  virtual int read(uint8_t* buf, size_t size);
  virtual uint8_t connected();
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
