// Settings: the build-time defaults (config.h / secrets.h) overlaid with what was set over
// serial, which is kept in NVS (Preferences) so it survives a reboot and a reflash.
#pragma once

#include <string>

#include "lobug/settings.h"

namespace hal {

lobug::DeviceSettings load_settings();
bool save_setting(lobug::SettingKey key, const std::string& value);
void forget_setting(lobug::SettingKey key);
void forget_all_settings();

// Collects characters from Serial; returns true and fills *line at each line end.
bool read_serial_line(std::string* line);

}  // namespace hal
