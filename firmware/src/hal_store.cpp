#include "hal_store.h"

#include <Arduino.h>
#include <Preferences.h>

#include "config.h"

namespace hal {
namespace {

constexpr const char* kNamespace = "lobug";
constexpr size_t kMaxLine = 200;

lobug::DeviceSettings build_defaults() {
  lobug::DeviceSettings s;
  s.wifi_ssid = LOBUG_WIFI_SSID;
  s.wifi_password = LOBUG_WIFI_PASSWORD;
  s.server_host = LOBUG_SERVER_HOST;
  s.server_port = LOBUG_SERVER_PORT;
  s.device_id = LOBUG_DEVICE_ID;
  s.token = LOBUG_DEVICE_TOKEN;
  s.ota_url = LOBUG_OTA_URL;
  return s;
}

}  // namespace

lobug::DeviceSettings load_settings() {
  lobug::DeviceSettings settings = build_defaults();
  Preferences prefs;
  if (!prefs.begin(kNamespace, true)) return settings;  // nothing stored yet
  for (lobug::SettingKey key : lobug::kAllSettingKeys) {
    const char* name = lobug::setting_name(key);
    if (!prefs.isKey(name)) continue;
    std::string value = prefs.getString(name, "").c_str();
    std::string error;
    if (!lobug::apply_setting(settings, key, value, &error)) {
      Serial.printf("stored %s ignored: %s\n", name, error.c_str());
    }
  }
  prefs.end();
  return settings;
}

bool save_setting(lobug::SettingKey key, const std::string& value) {
  Preferences prefs;
  if (!prefs.begin(kNamespace, false)) return false;
  bool saved = prefs.putString(lobug::setting_name(key), value.c_str()) == value.size();
  prefs.end();
  return saved;
}

void forget_setting(lobug::SettingKey key) {
  Preferences prefs;
  if (!prefs.begin(kNamespace, false)) return;
  prefs.remove(lobug::setting_name(key));
  prefs.end();
}

void forget_all_settings() {
  Preferences prefs;
  if (!prefs.begin(kNamespace, false)) return;
  prefs.clear();
  prefs.end();
}

bool read_serial_line(std::string* line) {
  static std::string pending;
  while (Serial.available() > 0) {
    char c = static_cast<char>(Serial.read());
    if (c == '\n' || c == '\r') {
      if (pending.empty()) continue;
      *line = pending;
      pending.clear();
      return true;
    }
    if (pending.size() < kMaxLine) pending += c;
  }
  return false;
}

}  // namespace hal
