// Retry timing. millis() wraps after 49.7 days; every comparison here survives the wrap.
#pragma once

#include <cstdint>

namespace lobug {

inline uint32_t elapsed_ms(uint32_t now, uint32_t since) { return now - since; }

// True once `now` has reached `deadline`, across a wrap (for spans under 24 days).
inline bool reached(uint32_t now, uint32_t deadline) {
  return static_cast<int32_t>(now - deadline) >= 0;
}

struct BackoffConfig {
  uint32_t initial_ms = 1000;
  uint32_t max_ms = 30000;
  uint32_t factor = 2;
  uint32_t jitter_percent = 20;  // spread retries so several devices do not retry in step
};

class Backoff {
 public:
  explicit Backoff(const BackoffConfig& config = BackoffConfig{}) : config_(config) {}

  // The wait before the next attempt. `random` is any 32-bit random value (esp_random() on the
  // device, fixed in tests); the result lies within +-jitter_percent of the nominal delay.
  uint32_t next_delay(uint32_t random);
  void reset() { attempts_ = 0; }
  uint32_t attempts() const { return attempts_; }
  uint32_t nominal_delay() const;  // before jitter, for the current attempt

 private:
  BackoffConfig config_;
  uint32_t attempts_ = 0;
};

}  // namespace lobug
