// The device in the xiaozhi WebSocket mode (LOBUG_WEBSOCKET builds with ota_url set): the OTA
// request, then one long-lived WebSocket session (lobug::xiaozhi::Session) that streams the
// mic as Opus while the person speaks, until the server's endpointing ends the turn, and
// plays the Opus reply as it arrives. A touch while it speaks interrupts it (abort) and
// listens at once. The HTTP contract's code in main.cpp is not used in this mode.
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "lobug/settings.h"
#include "lobug/status.h"

namespace ws_voice {

bool allocate();  // the mic ring, the speaker blocks and the codecs; false without memory
// The OTA request: true when its answer gave a WebSocket address (the session then connects
// to it). `problem` says why not.
bool check_ota(const lobug::DeviceSettings& settings, std::string* problem);
// One pass while the link is ready: the socket, the mic, the speaker, the touch.
void loop(uint32_t now, bool pressed);
void disconnect();  // the link went down, or the settings changed
lobug::AppState app_state();
uint16_t level();  // the mic's while listening, the speaker's while speaking (the mouth)
std::string describe();  // for `status` over serial

}  // namespace ws_voice
