// The device's connection to the server: WiFi, then /health, then ready; and back down the
// same path when something fails, with backoff, never a reboot. The device loop asks tick()
// what to do and reports results; this class does no I/O, so the whole boot and recovery
// sequence is tested on the host with a fake clock.
#pragma once

#include <cstdint>

#include "lobug/backoff.h"

namespace lobug {

struct LinkConfig {
  uint32_t wifi_timeout_ms = 15000;  // one association attempt
  BackoffConfig wifi_backoff{2000, 60000, 2, 20};
  BackoffConfig health_backoff{1000, 30000, 2, 20};
};

enum class LinkState { WifiConnecting, WifiWaiting, ServerChecking, Ready };
enum class LinkCommand { None, StartWifi, CheckHealth };

class Link {
 public:
  explicit Link(const LinkConfig& config = LinkConfig{});

  // What to do now. StartWifi: (re)start association; CheckHealth: GET /health and report it.
  LinkCommand tick(uint32_t now, bool wifi_up, uint32_t random);
  void on_health(uint32_t now, bool ok, uint32_t random);
  // A request failed at the network level (no answer at all): is the server still there?
  void on_server_unreachable(uint32_t now);
  // New WiFi settings were provisioned: start over.
  void restart();
  // A new server address was provisioned: check it now (WiFi stays up).
  void recheck_server(uint32_t now);

  LinkState state() const { return state_; }
  bool ready() const { return state_ == LinkState::Ready; }
  uint32_t wifi_attempts() const { return wifi_backoff_.attempts(); }
  uint32_t health_attempts() const { return health_backoff_.attempts(); }
  uint32_t next_action_ms() const { return next_ms_; }

 private:
  LinkCommand tick_wifi_connecting(uint32_t now, bool wifi_up, uint32_t random);
  LinkCommand start_wifi(uint32_t now);

  LinkConfig config_;
  Backoff wifi_backoff_;
  Backoff health_backoff_;
  LinkState state_ = LinkState::WifiWaiting;
  uint32_t next_ms_ = 0;        // when the next attempt or check is due
  uint32_t attempt_started_ms_ = 0;
  bool check_in_flight_ = false;
  bool first_tick_ = true;
};

const char* link_state_name(LinkState state);

}  // namespace lobug
