#include "lobug/settings.h"

#include <cstdlib>

#include "lobug/xiaozhi.h"

namespace lobug {
namespace {

std::string_view trim(std::string_view text) {
  const char* space = " \t\r\n";
  size_t start = text.find_first_not_of(space);
  if (start == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(space);
  return text.substr(start, end - start + 1);
}

std::string mask(const std::string& secret) {
  return secret.empty() ? "(not set)" : "(set, " + std::to_string(secret.size()) + " chars)";
}

bool parse_port(std::string_view text, uint16_t* port) {
  if (text.empty() || text.size() > 5) return false;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value < 1 || value > 65535) return false;
  *port = static_cast<uint16_t>(value);
  return true;
}

bool valid_host(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-';
    if (!ok) return false;  // no scheme, port or path: those have their own settings
  }
  return true;
}

}  // namespace

const char* setting_name(SettingKey key) {
  switch (key) {
    case SettingKey::WifiSsid: return "wifi_ssid";
    case SettingKey::WifiPassword: return "wifi_password";
    case SettingKey::ServerHost: return "server_host";
    case SettingKey::ServerPort: return "server_port";
    case SettingKey::DeviceId: return "device_id";
    case SettingKey::Token: return "token";
    case SettingKey::OtaUrl: return "ota_url";
  }
  return "?";
}

bool parse_setting_name(std::string_view name, SettingKey* key) {
  for (SettingKey candidate : kAllSettingKeys) {
    if (name == setting_name(candidate)) {
      *key = candidate;
      return true;
    }
  }
  return false;
}

bool is_secret(SettingKey key) { return key == SettingKey::WifiPassword || key == SettingKey::Token; }

bool valid_device_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool apply_setting(DeviceSettings& s, SettingKey key, std::string_view value, std::string* error) {
  switch (key) {
    case SettingKey::WifiSsid:
      if (value.empty() || value.size() > 32) {
        *error = "wifi_ssid must be 1-32 characters";
        return false;
      }
      s.wifi_ssid = std::string(value);
      return true;
    case SettingKey::WifiPassword:
      if (value.size() > 63) {
        *error = "wifi_password must be at most 63 characters";
        return false;
      }
      s.wifi_password = std::string(value);
      return true;
    case SettingKey::ServerHost:
      if (!valid_host(value)) {
        *error = "server_host must be a host name or IP address (no http://, no port)";
        return false;
      }
      s.server_host = std::string(value);
      return true;
    case SettingKey::ServerPort:
      if (!parse_port(value, &s.server_port)) {
        *error = "server_port must be 1-65535";
        return false;
      }
      return true;
    case SettingKey::DeviceId:
      if (!value.empty() && !valid_device_id(value)) {
        *error = "device_id must be 1-64 of A-Z a-z 0-9 . _ : -";
        return false;
      }
      s.device_id = std::string(value);
      return true;
    case SettingKey::Token:
      // Bearer tokens are sent in a header: no spaces or control characters.
      for (char c : value) {
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7F) {
          *error = "token must not contain spaces or control characters";
          return false;
        }
      }
      s.token = std::string(value);
      return true;
    case SettingKey::OtaUrl:
      if (!value.empty() && (value.size() > 200 || xiaozhi::parse_url(value).scheme != "http" ||
                             !xiaozhi::parse_url(value).valid)) {
        *error = "ota_url must be an http:// URL, e.g. http://192.168.1.50:8321/xiaozhi/ota/";
        return false;
      }
      s.ota_url = std::string(value);
      return true;
  }
  return false;
}

std::string setting_value(const DeviceSettings& s, SettingKey key) {
  switch (key) {
    case SettingKey::WifiSsid: return s.wifi_ssid;
    case SettingKey::WifiPassword: return s.wifi_password;
    case SettingKey::ServerHost: return s.server_host;
    case SettingKey::ServerPort: return std::to_string(s.server_port);
    case SettingKey::DeviceId: return s.device_id;
    case SettingKey::Token: return s.token;
    case SettingKey::OtaUrl: return s.ota_url;
  }
  return {};
}

std::string missing_settings(const DeviceSettings& s) {
  if (s.wifi_ssid.empty()) return "wifi_ssid";
  if (s.server_host.empty() && s.ota_url.empty()) return "server_host";
  return {};
}

std::string describe_settings(const DeviceSettings& s) {
  std::string out;
  for (SettingKey key : kAllSettingKeys) {
    std::string value = setting_value(s, key);
    out += setting_name(key);
    out += " = ";
    out += is_secret(key) ? mask(value) : (value.empty() ? "(not set)" : value);
    out += "\n";
  }
  return out;
}

Command parse_command(std::string_view line) {
  Command command;
  std::string_view text = trim(line);
  if (text.empty()) return command;
  size_t space = text.find_first_of(" \t");
  std::string_view verb = text.substr(0, space);
  std::string_view rest = space == std::string_view::npos ? std::string_view{} : trim(text.substr(space));
  if (verb == "help" || verb == "?") command.kind = CommandKind::Help;
  else if (verb == "show") command.kind = CommandKind::Show;
  else if (verb == "status") command.kind = CommandKind::Status;
  else if (verb == "reset") command.kind = CommandKind::Reset;
  else if (verb == "set" || verb == "unset") {
    size_t name_end = rest.find_first_of(" \t");
    std::string_view name = rest.substr(0, name_end);
    std::string_view value =
        name_end == std::string_view::npos ? std::string_view{} : trim(rest.substr(name_end));
    if (!parse_setting_name(name, &command.key)) {
      command.kind = CommandKind::Invalid;
      command.error = name.empty() ? "which setting? try 'help'" : "unknown setting: " + std::string(name);
      return command;
    }
    command.kind = verb == "set" ? CommandKind::Set : CommandKind::Unset;
    command.value = std::string(value);
    if (command.kind == CommandKind::Set && value.empty()) {
      command.kind = CommandKind::Invalid;
      command.error = "set needs a value; use 'unset " + std::string(name) + "' to clear it";
    }
  } else {
    command.kind = CommandKind::Invalid;
    command.error = "unknown command: " + std::string(verb) + " (try 'help')";
  }
  return command;
}

const char* help_text() {
  return "Lo-Bug settings (stored in flash, override secrets.h):\n"
         "  show                      list settings (secrets masked)\n"
         "  status                    connection state and the latest sensor reading\n"
         "  set <name> <value>        names: wifi_ssid wifi_password server_host server_port\n"
         "                                   device_id token ota_url\n"
         "                          ota_url set: xiaozhi WebSocket mode (a -ws build)\n"
         "  unset <name>              back to the build-time default\n"
         "  reset                     forget every stored setting\n"
         "Changes apply at once; new WiFi settings reconnect, no reboot needed.\n";
}

}  // namespace lobug
