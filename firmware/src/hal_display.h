// The face and the text around it, drawn with M5GFX (M5.Display). Redraws only what changed.
#pragma once

#include <cstdint>
#include <string>

#include "lobug/status.h"

namespace hal {

void display_begin();
// Draws `face`; `level` (0..32767) opens the mouth while speaking and fills the meter while
// listening. Cheap to call every loop: it redraws only on a change.
void show_face(lobug::Face face, uint16_t level, uint32_t now_ms);
void show_status(const std::string& line);       // one line at the bottom
void show_text(const std::string& utf8_text);    // the reply (or an error), wrapped
void clear_text();

}  // namespace hal
