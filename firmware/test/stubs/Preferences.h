// Arduino-ESP32 Preferences (NVS), host stub: one in-memory namespace map.
#pragma once

#include <cstddef>

#include "Arduino.h"

class Preferences {
 public:
  bool begin(const char* name, bool readOnly = false, const char* partition_label = nullptr);
  void end();
  bool clear();
  bool remove(const char* key);
  bool isKey(const char* key);
  size_t putString(const char* key, const char* value);
  String getString(const char* key, String defaultValue = String());

 private:
  const char* name_ = nullptr;
};
