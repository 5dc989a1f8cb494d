// Arduino-ESP32 core, host stub: time, Serial and String as firmware/src uses them.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

// `unsigned long` is 32 bits on the ESP32: uint32_t here keeps its wrap-around.
uint32_t millis();
void delay(uint32_t ms);
uint32_t esp_random();  // esp_system.h, which Arduino.h includes on the ESP32
// Arduino-ESP32 2.x: the loop task's stack size, set once at file scope.
#define SET_LOOP_TASK_STACK_SIZE(sz) \
  size_t getArduinoLoopTaskStackSize() { return sz; }

class String {
 public:
  String() = default;
  String(const char* text) : text_(text ? text : "") {}  // NOLINT: implicit, as in Arduino
  const char* c_str() const { return text_.c_str(); }
  unsigned int length() const { return static_cast<unsigned int>(text_.size()); }
  bool equalsIgnoreCase(const String& other) const;
  bool operator==(const String& other) const { return text_ == other.text_; }

 private:
  std::string text_;
};

class HardwareSerial {
 public:
  size_t print(const char* text);
  size_t println(const char* text);
  size_t printf(const char* format, ...) __attribute__((format(printf, 2, 3)));
  int available();
  int read();
};

extern HardwareSerial Serial;
