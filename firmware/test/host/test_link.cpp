#include "lobug/backoff.h"
#include "lobug/link.h"
#include "runner.h"

using namespace lobug;

TEST(backoff_doubles_up_to_the_cap) {
  Backoff backoff(BackoffConfig{1000, 8000, 2, 0});
  CHECK_EQ(backoff.next_delay(0), 1000u);
  CHECK_EQ(backoff.next_delay(0), 2000u);
  CHECK_EQ(backoff.next_delay(0), 4000u);
  CHECK_EQ(backoff.next_delay(0), 8000u);
  CHECK_EQ(backoff.next_delay(0), 8000u);
  for (int i = 0; i < 100; ++i) backoff.next_delay(0);  // no overflow after many attempts
  CHECK_EQ(backoff.next_delay(0), 8000u);
  backoff.reset();
  CHECK_EQ(backoff.next_delay(0), 1000u);
}

TEST(backoff_jitter_stays_within_its_band) {
  Backoff backoff(BackoffConfig{1000, 30000, 2, 20});
  mini::Random random(11);
  uint32_t low = 1u << 31, high = 0;
  for (int i = 0; i < 1000; ++i) {
    backoff.reset();
    uint32_t delay = backoff.next_delay(random.next());
    low = delay < low ? delay : low;
    high = delay > high ? delay : high;
  }
  CHECK(low >= 800 && low < 850);
  CHECK(high <= 1200 && high > 1150);
}

TEST(backoff_time_comparisons_survive_millis_wrapping) {
  uint32_t before_wrap = 0xFFFFFF00u;
  uint32_t after_wrap = 0x00000100u;
  CHECK_EQ(elapsed_ms(after_wrap, before_wrap), 0x200u);
  CHECK(reached(after_wrap, before_wrap + 0x100));
  CHECK(!reached(before_wrap, before_wrap + 0x100));
  CHECK(reached(before_wrap + 0x100, before_wrap + 0x100));
}

namespace {

LinkConfig test_link() {
  LinkConfig c;
  c.wifi_timeout_ms = 10000;
  c.wifi_backoff = BackoffConfig{2000, 60000, 2, 0};
  c.health_backoff = BackoffConfig{1000, 30000, 2, 0};
  return c;
}

}  // namespace

TEST(link_boots_wifi_then_health_then_ready) {
  Link link(test_link());
  CHECK_EQ(link.tick(0, false, 0), LinkCommand::StartWifi);
  CHECK_EQ(link.state(), LinkState::WifiConnecting);
  CHECK_EQ(link.tick(500, false, 0), LinkCommand::None);
  CHECK_EQ(link.tick(3000, true, 0), LinkCommand::CheckHealth);
  CHECK_EQ(link.state(), LinkState::ServerChecking);
  CHECK_EQ(link.tick(3010, true, 0), LinkCommand::None);  // the check is in flight
  link.on_health(3100, true, 0);
  CHECK(link.ready());
  CHECK_EQ(link.tick(4000, true, 0), LinkCommand::None);
}

TEST(link_retries_wifi_with_backoff_after_a_timeout) {
  Link link(test_link());
  CHECK_EQ(link.tick(0, false, 0), LinkCommand::StartWifi);
  CHECK_EQ(link.tick(10000, false, 0), LinkCommand::None);  // timed out: wait 2 s
  CHECK_EQ(link.state(), LinkState::WifiWaiting);
  CHECK_EQ(link.tick(11999, false, 0), LinkCommand::None);
  CHECK_EQ(link.tick(12000, false, 0), LinkCommand::StartWifi);
  CHECK_EQ(link.tick(22000, false, 0), LinkCommand::None);  // timed out again: wait 4 s
  CHECK_EQ(link.tick(25999, false, 0), LinkCommand::None);
  CHECK_EQ(link.tick(26000, false, 0), LinkCommand::StartWifi);
  CHECK_EQ(link.wifi_attempts(), 2u);
}

TEST(link_polls_health_with_backoff_until_the_server_answers) {
  Link link(test_link());
  link.tick(0, false, 0);
  CHECK_EQ(link.tick(100, true, 0), LinkCommand::CheckHealth);
  link.on_health(200, false, 0);  // next in 1 s
  CHECK_EQ(link.tick(1199, true, 0), LinkCommand::None);
  CHECK_EQ(link.tick(1200, true, 0), LinkCommand::CheckHealth);
  link.on_health(1300, false, 0);  // next in 2 s
  CHECK_EQ(link.tick(3299, true, 0), LinkCommand::None);
  CHECK_EQ(link.tick(3300, true, 0), LinkCommand::CheckHealth);
  link.on_health(3400, true, 0);
  CHECK(link.ready());
}

TEST(link_recovers_from_lost_wifi_and_a_vanished_server) {
  Link link(test_link());
  link.tick(0, false, 0);
  link.tick(100, true, 0);
  link.on_health(200, true, 0);
  CHECK(link.ready());
  CHECK_EQ(link.tick(5000, false, 0), LinkCommand::StartWifi);  // WiFi dropped
  CHECK_EQ(link.tick(6000, true, 0), LinkCommand::CheckHealth);
  link.on_health(6100, true, 0);
  CHECK(link.ready());
  link.on_server_unreachable(7000);  // a request found nobody there
  CHECK_EQ(link.state(), LinkState::ServerChecking);
  CHECK_EQ(link.tick(7000, true, 0), LinkCommand::CheckHealth);
  link.on_health(7100, true, 0);
  CHECK(link.ready());
}

TEST(link_restart_after_new_settings) {
  Link link(test_link());
  link.tick(0, false, 0);
  link.tick(100, true, 0);
  link.on_health(200, true, 0);
  link.restart();
  CHECK_EQ(link.tick(300, true, 0), LinkCommand::StartWifi);
}

TEST(link_works_across_millis_wrapping) {
  Link link(test_link());
  uint32_t start = 0xFFFFF000u;
  CHECK_EQ(link.tick(start, false, 0), LinkCommand::StartWifi);
  CHECK_EQ(link.tick(start + 9999, false, 0), LinkCommand::None);
  CHECK_EQ(link.state(), LinkState::WifiConnecting);
  CHECK_EQ(link.tick(start + 10000, false, 0), LinkCommand::None);  // after the wrap
  CHECK_EQ(link.state(), LinkState::WifiWaiting);
  CHECK_EQ(link.tick(start + 12000, false, 0), LinkCommand::StartWifi);
}

TEST(link_recheck_after_a_new_server_address) {
  Link link(test_link());
  link.tick(0, false, 0);
  link.tick(100, true, 0);
  link.on_health(200, false, 0);
  CHECK_EQ(link.health_attempts(), 1u);
  link.on_health(200, false, 0);  // a stray report with no check in flight changes nothing
  CHECK_EQ(link.health_attempts(), 1u);
  link.recheck_server(300);  // the backoff starts over for the new address
  CHECK_EQ(link.tick(300, true, 0), LinkCommand::CheckHealth);
  link.on_health(400, true, 0);
  link.recheck_server(500);
  CHECK_EQ(link.state(), LinkState::ServerChecking);
  CHECK_EQ(link.tick(500, true, 0), LinkCommand::CheckHealth);
  Link fresh(test_link());
  fresh.recheck_server(0);  // nothing to re-check before WiFi is up
  CHECK_EQ(fresh.state(), LinkState::WifiWaiting);
}
