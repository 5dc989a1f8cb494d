#include "lobug/backoff.h"

namespace lobug {

uint32_t Backoff::nominal_delay() const {
  uint64_t delay = config_.initial_ms;
  for (uint32_t i = 0; i < attempts_ && delay < config_.max_ms; ++i) delay *= config_.factor;
  return static_cast<uint32_t>(delay < config_.max_ms ? delay : config_.max_ms);
}

uint32_t Backoff::next_delay(uint32_t random) {
  uint64_t nominal = nominal_delay();
  ++attempts_;
  uint64_t spread = nominal * config_.jitter_percent / 100;
  if (spread == 0) return static_cast<uint32_t>(nominal);
  // random maps onto [nominal - spread, nominal + spread].
  uint64_t offset = random % (2 * spread + 1);
  return static_cast<uint32_t>(nominal - spread + offset);
}

}  // namespace lobug
