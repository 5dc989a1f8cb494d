#include "lobug/link.h"

namespace lobug {

Link::Link(const LinkConfig& config)
    : config_(config), wifi_backoff_(config.wifi_backoff), health_backoff_(config.health_backoff) {}

void Link::restart() {
  state_ = LinkState::WifiWaiting;
  wifi_backoff_.reset();
  health_backoff_.reset();
  check_in_flight_ = false;
  first_tick_ = true;
}

LinkCommand Link::start_wifi(uint32_t now) {
  state_ = LinkState::WifiConnecting;
  attempt_started_ms_ = now;
  return LinkCommand::StartWifi;
}

LinkCommand Link::tick(uint32_t now, bool wifi_up, uint32_t random) {
  if (first_tick_) {
    first_tick_ = false;
    next_ms_ = now;
  }
  if (!wifi_up && (state_ == LinkState::ServerChecking || state_ == LinkState::Ready)) {
    // Lost the network: a fresh association, right away.
    health_backoff_.reset();
    check_in_flight_ = false;
    return start_wifi(now);
  }
  switch (state_) {
    case LinkState::WifiWaiting:
      return reached(now, next_ms_) ? start_wifi(now) : LinkCommand::None;
    case LinkState::WifiConnecting:
      return tick_wifi_connecting(now, wifi_up, random);
    case LinkState::ServerChecking:
      if (check_in_flight_ || !reached(now, next_ms_)) return LinkCommand::None;
      check_in_flight_ = true;
      return LinkCommand::CheckHealth;
    case LinkState::Ready:
      return LinkCommand::None;
  }
  return LinkCommand::None;
}

LinkCommand Link::tick_wifi_connecting(uint32_t now, bool wifi_up, uint32_t random) {
  if (wifi_up) {
    wifi_backoff_.reset();
    state_ = LinkState::ServerChecking;
    next_ms_ = now;
    check_in_flight_ = true;
    return LinkCommand::CheckHealth;
  }
  if (elapsed_ms(now, attempt_started_ms_) >= config_.wifi_timeout_ms) {
    state_ = LinkState::WifiWaiting;
    next_ms_ = now + wifi_backoff_.next_delay(random);
  }
  return LinkCommand::None;
}

void Link::on_health(uint32_t now, bool ok, uint32_t random) {
  if (state_ != LinkState::ServerChecking || !check_in_flight_) return;
  check_in_flight_ = false;
  if (ok) {
    health_backoff_.reset();
    state_ = LinkState::Ready;
  } else {
    next_ms_ = now + health_backoff_.next_delay(random);
  }
}

void Link::on_server_unreachable(uint32_t now) {
  if (state_ != LinkState::Ready) return;
  state_ = LinkState::ServerChecking;
  check_in_flight_ = false;
  next_ms_ = now;
}

void Link::recheck_server(uint32_t now) {
  if (state_ != LinkState::Ready && state_ != LinkState::ServerChecking) return;
  health_backoff_.reset();
  state_ = LinkState::ServerChecking;
  check_in_flight_ = false;
  next_ms_ = now;
}

const char* link_state_name(LinkState state) {
  switch (state) {
    case LinkState::WifiConnecting: return "connecting to WiFi";
    case LinkState::WifiWaiting: return "WiFi retry";
    case LinkState::ServerChecking: return "waiting for server";
    case LinkState::Ready: return "ready";
  }
  return "?";
}

}  // namespace lobug
