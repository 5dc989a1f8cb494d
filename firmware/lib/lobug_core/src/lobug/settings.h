// The device's settings (WiFi, server, identity) and the serial commands that change them at
// runtime, so credentials never have to be compiled in. Values set over serial are stored in
// NVS by the device code and win over the build-time defaults from secrets.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lobug {

struct DeviceSettings {
  std::string wifi_ssid;
  std::string wifi_password;
  std::string server_host;
  uint16_t server_port = 8321;
  std::string device_id;
  std::string token;
  // Set: the xiaozhi WebSocket mode (a -ws build), whose OTA answer gives the WebSocket address.
  // Empty: the HTTP device contract, as before.
  std::string ota_url;
};

enum class SettingKey { WifiSsid, WifiPassword, ServerHost, ServerPort, DeviceId, Token, OtaUrl };

constexpr SettingKey kAllSettingKeys[] = {SettingKey::WifiSsid,   SettingKey::WifiPassword,
                                          SettingKey::ServerHost, SettingKey::ServerPort,
                                          SettingKey::DeviceId,   SettingKey::Token,
                                          SettingKey::OtaUrl};

// The name used over serial and as the NVS key (NVS keys are at most 15 characters).
const char* setting_name(SettingKey key);
bool parse_setting_name(std::string_view name, SettingKey* key);
bool is_secret(SettingKey key);

// Same rule as the server's X-Device-Id check: 1-64 of A-Z a-z 0-9 . _ : -
bool valid_device_id(std::string_view id);

// Sets one value after checking it; on failure returns false and says why in *error.
bool apply_setting(DeviceSettings& settings, SettingKey key, std::string_view value,
                   std::string* error);
std::string setting_value(const DeviceSettings& settings, SettingKey key);

// What stops the device from working with these settings, or "" when nothing does.
std::string missing_settings(const DeviceSettings& settings);

// One line per setting, secrets masked: never echo a password or token back over serial.
std::string describe_settings(const DeviceSettings& settings);

enum class CommandKind { Empty, Help, Show, Status, Set, Unset, Reset, Invalid };

struct Command {
  CommandKind kind = CommandKind::Empty;
  SettingKey key = SettingKey::WifiSsid;
  std::string value;
  std::string error;  // for Invalid
};

// "help" | "show" | "status" | "set <name> <value...>" | "unset <name>" | "reset"
// The value is the rest of the line (a WiFi name may contain spaces), without the line end.
Command parse_command(std::string_view line);

const char* help_text();

}  // namespace lobug
