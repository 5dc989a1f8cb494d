#include "hal_display.h"

#include <M5Unified.h>

#include <algorithm>

#include "lobug/text.h"

namespace hal {
namespace {

// Layout for the 320x240 screens of both boards.
constexpr int kFaceTop = 0;
constexpr int kFaceHeight = 140;
constexpr int kTextTop = 142;
constexpr int kTextLineHeight = 16;
constexpr size_t kTextLines = 5;
constexpr size_t kTextColumns = 39;  // Font2 is 8 px wide
constexpr int kStatusTop = 224;
constexpr uint32_t kBlinkEveryMs = 4000;
constexpr uint32_t kBlinkMs = 150;

struct Drawn {
  lobug::Face face = lobug::Face::Error;
  int mouth = -1;
  bool blink = false;
  int dots = -1;
  bool valid = false;
} drawn;

uint16_t face_color(lobug::Face face) {
  switch (face) {
    case lobug::Face::Error: return M5.Display.color565(255, 80, 80);
    case lobug::Face::Listening: return M5.Display.color565(120, 220, 255);
    case lobug::Face::Happy: return M5.Display.color565(255, 220, 90);
    default: return TFT_WHITE;
  }
}

void draw_eyes(lobug::Face face, bool blink, uint16_t color) {
  const int y = 60, left = 110, right = 210;
  for (int x : {left, right}) {
    if (face == lobug::Face::Error) {  // X eyes
      M5.Display.drawWideLine(x - 14, y - 14, x + 14, y + 14, 6, color);
      M5.Display.drawWideLine(x - 14, y + 14, x + 14, y - 14, 6, color);
    } else if (face == lobug::Face::Happy || blink) {  // closed: ^ ^ when happy, - - blinking
      int lift = face == lobug::Face::Happy ? 10 : 0;
      M5.Display.drawWideLine(x - 16, y + lift, x, y - lift, 6, color);
      M5.Display.drawWideLine(x, y - lift, x + 16, y + lift, 6, color);
    } else {
      int radius = face == lobug::Face::Listening ? 22 : 18;
      M5.Display.fillCircle(x, y, radius, color);
      int look_up = face == lobug::Face::Thinking ? -8 : 0;  // thinking: eyes roll up
      M5.Display.fillCircle(x + (look_up ? 6 : 0), y + look_up, radius / 3, TFT_BLACK);
    }
  }
}

void draw_mouth(lobug::Face face, int open, uint16_t color) {
  const int x = 160, y = 112;
  M5.Display.fillRect(x - 50, y - 25, 100, 50, TFT_BLACK);
  if (face == lobug::Face::Happy) {
    M5.Display.fillArc(x, y - 16, 26, 32, 20, 160, color);  // a smile
  } else if (face == lobug::Face::Speaking || face == lobug::Face::Listening) {
    M5.Display.fillRoundRect(x - 24, y - open / 2, 48, open < 4 ? 4 : open, 4, color);
  } else {
    M5.Display.fillRoundRect(x - 20, y - 2, 40, 5, 2, color);
  }
}

void draw_thinking_dots(int dots, uint16_t color) {
  M5.Display.fillRect(240, 100, 70, 24, TFT_BLACK);
  for (int i = 0; i < dots; ++i) M5.Display.fillCircle(252 + i * 18, 112, 5, color);
}

}  // namespace

void display_begin() {
  // M5.begin() has already chosen the board's landscape rotation.
  M5.Display.fillScreen(TFT_BLACK);
  M5.Display.setFont(&fonts::Font2);
  M5.Display.setTextColor(TFT_WHITE, TFT_BLACK);
}

void show_face(lobug::Face face, uint16_t level, uint32_t now_ms) {
  bool blink = face == lobug::Face::Idle && now_ms % kBlinkEveryMs < kBlinkMs;
  int mouth = (face == lobug::Face::Speaking || face == lobug::Face::Listening)
                  ? std::min<int>(40, level / 120)
                  : 0;
  int dots = face == lobug::Face::Thinking ? int(now_ms / 400 % 4) : 0;
  uint16_t color = face_color(face);
  M5.Display.startWrite();
  if (!drawn.valid || drawn.face != face || drawn.blink != blink) {
    M5.Display.fillRect(0, kFaceTop, M5.Display.width(), kFaceHeight, TFT_BLACK);
    draw_eyes(face, blink, color);
    drawn.mouth = -1;
    drawn.dots = -1;
  }
  if (drawn.mouth != mouth) draw_mouth(face, mouth, color);
  if (drawn.dots != dots) draw_thinking_dots(dots, color);
  M5.Display.endWrite();
  drawn = Drawn{face, mouth, blink, dots, true};
}

void show_status(const std::string& line) {
  static std::string shown;
  if (line == shown) return;  // called every loop while connecting: draw only changes
  shown = line;
  M5.Display.fillRect(0, kStatusTop, M5.Display.width(), 16, TFT_BLACK);
  M5.Display.setTextColor(TFT_DARKGREY, TFT_BLACK);
  M5.Display.drawString(lobug::to_display_ascii(line).substr(0, kTextColumns).c_str(), 4,
                        kStatusTop);
}

void show_text(const std::string& utf8_text) {
  clear_text();
  M5.Display.setTextColor(TFT_WHITE, TFT_BLACK);
  auto lines = lobug::wrap_text(lobug::to_display_ascii(utf8_text), kTextColumns, kTextLines);
  for (size_t i = 0; i < lines.size(); ++i) {
    M5.Display.drawString(lines[i].c_str(), 4, kTextTop + int(i) * kTextLineHeight);
  }
}

void clear_text() {
  M5.Display.fillRect(0, kTextTop, M5.Display.width(), int(kTextLines) * kTextLineHeight,
                      TFT_BLACK);
}

}  // namespace hal
