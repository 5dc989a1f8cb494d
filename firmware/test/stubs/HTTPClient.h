// Arduino-ESP32 HTTPClient, host stub: requests go to the fake world's server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Arduino.h"
#include "WiFi.h"

#define HTTPC_ERROR_CONNECTION_REFUSED (-1)
#define HTTPC_ERROR_SEND_HEADER_FAILED (-2)
#define HTTPC_ERROR_SEND_PAYLOAD_FAILED (-3)
#define HTTPC_ERROR_NOT_CONNECTED (-4)
#define HTTPC_ERROR_CONNECTION_LOST (-5)
#define HTTPC_ERROR_NO_STREAM (-6)
#define HTTPC_ERROR_NO_HTTP_SERVER (-7)
#define HTTPC_ERROR_TOO_LESS_RAM (-8)
#define HTTPC_ERROR_ENCODING (-9)
#define HTTPC_ERROR_STREAM_WRITE (-10)
#define HTTPC_ERROR_READ_TIMEOUT (-11)

class HTTPClient {
 public:
  HTTPClient();
  ~HTTPClient();
  bool begin(String host, uint16_t port, String uri = "/");
  void end();
  void setReuse(bool reuse);
  void setConnectTimeout(int32_t connectTimeout);
  void setTimeout(uint16_t timeout);
  void addHeader(const String& name, const String& value, bool first = false,
                 bool replace = true);
  void collectHeaders(const char* headerKeys[], const size_t headerKeysCount);
  String header(const char* name);
  int GET();
  int POST(uint8_t* payload, size_t size);
  int getSize();
  WiFiClient* getStreamPtr();

 private:
  int send(const char* method, const uint8_t* payload, size_t size);

  std::string path_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::map<std::string, std::string> response_headers_;
  int size_ = -1;
  WiFiClient* stream_ = nullptr;
};
