#include <string>

#include "lobug/settings.h"
#include "lobug/wire.h"
#include "runner.h"

using namespace lobug;

TEST(settings_parse_commands) {
  Command c = parse_command("  set wifi_ssid My Home Network \r\n");
  CHECK_EQ(c.kind, CommandKind::Set);
  CHECK_EQ(c.key, SettingKey::WifiSsid);
  CHECK_EQ(c.value, std::string("My Home Network"));
  CHECK_EQ(parse_command("show").kind, CommandKind::Show);
  CHECK_EQ(parse_command("help").kind, CommandKind::Help);
  CHECK_EQ(parse_command("status").kind, CommandKind::Status);
  CHECK_EQ(parse_command("reset").kind, CommandKind::Reset);
  CHECK_EQ(parse_command("").kind, CommandKind::Empty);
  c = parse_command("unset token");
  CHECK_EQ(c.kind, CommandKind::Unset);
  CHECK_EQ(c.key, SettingKey::Token);
}

TEST(settings_bad_commands_say_why) {
  Command c = parse_command("set colour blue");
  CHECK_EQ(c.kind, CommandKind::Invalid);
  CHECK_EQ(c.error, std::string("unknown setting: colour"));
  c = parse_command("set token");
  CHECK_EQ(c.kind, CommandKind::Invalid);
  CHECK(c.error.find("unset token") != std::string::npos);
  CHECK_EQ(parse_command("set").kind, CommandKind::Invalid);
  CHECK_EQ(parse_command("reboot now").kind, CommandKind::Invalid);
}

TEST(settings_values_are_checked) {
  DeviceSettings s;
  std::string error;
  CHECK(apply_setting(s, SettingKey::ServerPort, "8321", &error));
  CHECK_EQ(s.server_port, uint16_t{8321});
  CHECK(!apply_setting(s, SettingKey::ServerPort, "0", &error));
  CHECK(!apply_setting(s, SettingKey::ServerPort, "65536", &error));
  CHECK(!apply_setting(s, SettingKey::ServerPort, "80a", &error));
  CHECK_EQ(s.server_port, uint16_t{8321});
  CHECK(apply_setting(s, SettingKey::ServerHost, "192.168.1.50", &error));
  CHECK(apply_setting(s, SettingKey::ServerHost, "lobug.local", &error));
  CHECK(!apply_setting(s, SettingKey::ServerHost, "http://lobug.local", &error));
  CHECK(!apply_setting(s, SettingKey::ServerHost, "lobug.local:8321", &error));
  CHECK(apply_setting(s, SettingKey::DeviceId, "core2-kitchen", &error));
  CHECK(!apply_setting(s, SettingKey::DeviceId, "kitchen/1", &error));
  CHECK(!apply_setting(s, SettingKey::DeviceId, std::string(65, 'a'), &error));
  CHECK(apply_setting(s, SettingKey::Token, "tok-123_ABC", &error));
  CHECK(!apply_setting(s, SettingKey::Token, "two words", &error));
  CHECK(!apply_setting(s, SettingKey::WifiSsid, std::string(33, 'x'), &error));
  CHECK(!apply_setting(s, SettingKey::WifiPassword, std::string(64, 'x'), &error));
  CHECK_EQ(s.device_id, std::string("core2-kitchen"));
}

TEST(settings_description_never_shows_secrets) {
  DeviceSettings s;
  s.wifi_ssid = "home";
  s.wifi_password = "hunter2hunter2";
  s.token = "secret-token";
  std::string text = describe_settings(s);
  CHECK(text.find("hunter2") == std::string::npos);
  CHECK(text.find("secret-token") == std::string::npos);
  CHECK(text.find("wifi_password = (set, 14 chars)") != std::string::npos);
  CHECK(text.find("wifi_ssid = home") != std::string::npos);
  CHECK(text.find("server_host = (not set)") != std::string::npos);
}

TEST(settings_setting_names_fit_in_nvs_keys) {
  for (SettingKey key : kAllSettingKeys) {
    CHECK(std::string(setting_name(key)).size() <= 15);
    SettingKey parsed;
    CHECK(parse_setting_name(setting_name(key), &parsed));
    CHECK_EQ(parsed, key);
  }
}

TEST(settings_missing_says_what_blocks_the_device) {
  DeviceSettings s;
  CHECK_EQ(missing_settings(s), std::string("wifi_ssid"));
  s.wifi_ssid = "home";
  CHECK_EQ(missing_settings(s), std::string("server_host"));
  s.server_host = "10.0.0.2";
  CHECK_EQ(missing_settings(s), std::string(""));
}

TEST(settings_device_headers) {
  auto headers = device_headers("tok-1", "core2");
  CHECK_EQ(headers.size(), size_t{2});
  CHECK_EQ(headers[0].first, std::string("Authorization"));
  CHECK_EQ(headers[0].second, std::string("Bearer tok-1"));
  CHECK_EQ(headers[1].first, std::string("X-Device-Id"));
  CHECK_EQ(headers[1].second, std::string("core2"));
  CHECK(device_headers("", "").empty());  // an old-style, unauthenticated device
}

TEST(settings_ota_url_selects_the_websocket_mode) {
  DeviceSettings s;
  std::string error;
  CHECK(apply_setting(s, SettingKey::OtaUrl, "http://192.168.1.50:8321/xiaozhi/ota/", &error));
  CHECK_EQ(s.ota_url, std::string("http://192.168.1.50:8321/xiaozhi/ota/"));
  CHECK(!apply_setting(s, SettingKey::OtaUrl, "https://api.example/xiaozhi/ota/", &error));
  CHECK(error.find("http://") != std::string::npos);
  CHECK(!apply_setting(s, SettingKey::OtaUrl, "ws://host/xiaozhi/v1/", &error));
  CHECK(!apply_setting(s, SettingKey::OtaUrl, "192.168.1.50/xiaozhi/ota/", &error));
  CHECK_EQ(s.ota_url, std::string("http://192.168.1.50:8321/xiaozhi/ota/"));
  CHECK(apply_setting(s, SettingKey::OtaUrl, "", &error));  // unset: the HTTP contract again
  CHECK(s.ota_url.empty());
  // With an OTA address the server comes from it: server_host is not needed.
  s.wifi_ssid = "home";
  s.ota_url = "http://10.0.0.2:8321/xiaozhi/ota/";
  CHECK_EQ(missing_settings(s), std::string(""));
  Command c = parse_command("set ota_url http://10.0.0.2:8321/xiaozhi/ota/");
  CHECK(c.kind == CommandKind::Set && c.key == SettingKey::OtaUrl);
  CHECK(describe_settings(s).find("ota_url = http://10.0.0.2:8321/xiaozhi/ota/") !=
        std::string::npos);
}
