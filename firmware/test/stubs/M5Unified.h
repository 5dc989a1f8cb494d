// M5Unified (with M5GFX's display), host stub: the members of `M5` that firmware/src uses,
// with the signatures M5Unified and LovyanGFX document.
#pragma once

#include <cstddef>
#include <cstdint>

#include "Arduino.h"

static constexpr int TFT_BLACK = 0x0000;
static constexpr int TFT_DARKGREY = 0x7BEF;
static constexpr int TFT_WHITE = 0xFFFF;

namespace lgfx {
struct IFont {};
struct GLCDfont : IFont {};
namespace fonts {
extern const GLCDfont Font2;
}  // namespace fonts
}  // namespace lgfx
namespace fonts = lgfx::fonts;

namespace m5 {

class Button_Class {
 public:
  bool wasPressed() const;
  bool pressed_ = false;  // the fake world's: set by fake::press()
};

struct touch_detail_t {
  bool wasPressed() const { return false; }
};

class Touch_Class {
 public:
  uint8_t getCount() const { return 0; }
  const touch_detail_t& getDetail(size_t index = 0) const;
};

class Display_Device {
 public:
  static constexpr uint16_t color565(uint8_t r, uint8_t g, uint8_t b) {
    return static_cast<uint16_t>((r >> 3) << 11 | (g >> 2) << 5 | b >> 3);
  }
  void startWrite() {}
  void endWrite() {}
  int32_t width() const { return 320; }
  void setFont(const lgfx::IFont* font) { (void)font; }
  void setTextColor(int color, int background) { (void)color, (void)background; }
  void fillScreen(int color) { (void)color; }
  void fillRect(int32_t x, int32_t y, int32_t w, int32_t h, int color) {
    (void)x, (void)y, (void)w, (void)h, (void)color;
  }
  void fillCircle(int32_t x, int32_t y, int32_t r, int color) { (void)x, (void)y, (void)r, (void)color; }
  void fillRoundRect(int32_t x, int32_t y, int32_t w, int32_t h, int32_t r, int color) {
    (void)x, (void)y, (void)w, (void)h, (void)r, (void)color;
  }
  void fillArc(int32_t x, int32_t y, int32_t r0, int32_t r1, float angle0, float angle1,
               int color) {
    (void)x, (void)y, (void)r0, (void)r1, (void)angle0, (void)angle1, (void)color;
  }
  void drawWideLine(float x0, float y0, float x1, float y1, float r, int color) {
    (void)x0, (void)y0, (void)x1, (void)y1, (void)r, (void)color;
  }
  size_t drawString(const char* string, int32_t x, int32_t y);
};

class Speaker_Class {
 public:
  bool begin();
  void end();
  void setVolume(uint8_t master_volume);
  size_t isPlaying(uint8_t channel) const;
  void stop();
  bool playRaw(const int16_t* raw_data, size_t array_len, uint32_t sample_rate = 44100,
               bool stereo = false, uint32_t repeat = 1, int channel = -1,
               bool stop_current_sound = false);
};

class Mic_Class {
 public:
  bool begin();
  void end();
  bool record(int16_t* rec_data, size_t array_len, uint32_t sample_rate, bool stereo = false);
  size_t isRecording() const;
};

enum imu_spec_t { sensor_mask_none = 0, sensor_mask_accel = 1, sensor_mask_gyro = 2 };

class IMU_Class {
 public:
  bool isEnabled() const { return false; }
  imu_spec_t update() { return sensor_mask_none; }
  bool getAccel(float* ax, float* ay, float* az);
  bool getGyro(float* gx, float* gy, float* gz);
};

class M5Unified {
 public:
  struct config_t {};
  config_t config() const { return {}; }
  void begin(const config_t& cfg) { (void)cfg; }
  void update() {}

  Button_Class BtnA, BtnB, BtnC;
  Touch_Class Touch;
  Display_Device Display;
  Speaker_Class Speaker;
  Mic_Class Mic;
  IMU_Class Imu;
};

}  // namespace m5

extern m5::M5Unified M5;
