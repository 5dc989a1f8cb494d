#include "lobug/imu.h"

#include <cmath>
#include <cstdio>

namespace lobug {
namespace {

constexpr float kVerticalCos = 0.82f;  // cos(35 degrees)
constexpr float kMinGravity = 0.6f;    // outside 0.6..1.4 g the reading is not just gravity
constexpr float kMaxGravity = 1.4f;
constexpr float kSmoothing = 0.1f;     // orientation follows gravity, not the hand's jitter

bool within(uint32_t now, uint32_t then, uint32_t window) { return now - then <= window; }

// Appends `"name":value` with the comma a previous field needs.
void append_field(std::string& out, const char* name, const char* value) {
  out += out.size() > 1 ? ",\"" : "\"";
  out += name;
  out += "\":";
  out += value;
}

void append_number(std::string& out, const char* name, float value) {
  if (!std::isfinite(value)) return;
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%.3f", static_cast<double>(value));
  append_field(out, name, buffer);
}

void append_flag(std::string& out, const char* name, bool value) {
  append_field(out, name, value ? "true" : "false");
}

}  // namespace

float magnitude(const Vec3& v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

const char* orientation_name(Orientation orientation) {
  switch (orientation) {
    case Orientation::FaceUp: return "face_up";
    case Orientation::FaceDown: return "face_down";
    case Orientation::Upright: return "upright";
    case Orientation::UpsideDown: return "upside_down";
    case Orientation::LeftSide: return "left_side";
    case Orientation::RightSide: return "right_side";
    case Orientation::Tilted: return "tilted";
    case Orientation::Unknown: return "unknown";
  }
  return "unknown";
}

Orientation classify_orientation(const Vec3& a) {
  float g = magnitude(a);
  if (!(g >= kMinGravity && g <= kMaxGravity)) return Orientation::Unknown;
  float limit = kVerticalCos * g;
  if (a.z >= limit) return Orientation::FaceUp;
  if (a.z <= -limit) return Orientation::FaceDown;
  if (a.y >= limit) return Orientation::Upright;
  if (a.y <= -limit) return Orientation::UpsideDown;
  // +X up means the right edge is up: the device lies on its left side.
  if (a.x >= limit) return Orientation::LeftSide;
  if (a.x <= -limit) return Orientation::RightSide;
  return Orientation::Tilted;
}

MotionTracker::MotionTracker(const MotionConfig& config) : config_(config) {}

void MotionTracker::add(const ImuSample& s) {
  float deviation = std::fabs(magnitude(s.accel_g) - 1.0f);
  gyro_[next_] = magnitude(s.gyro_dps);
  deviation_[next_] = deviation;
  next_ = (next_ + 1) % kWindow;
  if (count_ < kWindow) ++count_;

  if (!has_sample_) {
    smoothed_ = s.accel_g;
  } else {
    smoothed_.x += (s.accel_g.x - smoothed_.x) * kSmoothing;
    smoothed_.y += (s.accel_g.y - smoothed_.y) * kSmoothing;
    smoothed_.z += (s.accel_g.z - smoothed_.z) * kSmoothing;
    Vec3 change{s.accel_g.x - last_.accel_g.x, s.accel_g.y - last_.accel_g.y,
                s.accel_g.z - last_.accel_g.z};
    track_tap(magnitude(change), s.t_ms);
  }
  Orientation now = classify_orientation(smoothed_);
  if (now != Orientation::Unknown) orientation_ = now;
  track_shake(deviation, s.t_ms);
  settle_tap(s.t_ms);
  last_ = s;
  has_sample_ = true;
}

bool MotionTracker::moving() const {
  if (count_ == 0) return false;
  float gyro = 0, deviation = 0;
  for (size_t i = 0; i < count_; ++i) {
    gyro += gyro_[i];
    deviation += deviation_[i];
  }
  float n = static_cast<float>(count_);
  return gyro / n > config_.moving_gyro_dps || deviation / n > config_.moving_accel_g;
}

void MotionTracker::track_shake(float deviation, uint32_t t_ms) {
  bool above = deviation > config_.shake_g;
  if (above && !above_shake_) {
    if (peak_count_ == kMaxPeaks) {
      for (size_t i = 1; i < kMaxPeaks; ++i) peaks_[i - 1] = peaks_[i];
      --peak_count_;
    }
    peaks_[peak_count_++] = t_ms;
    if (shaking_now(t_ms)) shake_latched_ = true;
  }
  above_shake_ = above;
}

bool MotionTracker::shaking_now(uint32_t now_ms) const {
  size_t recent = 0;
  for (size_t i = 0; i < peak_count_; ++i) {
    if (within(now_ms, peaks_[i], config_.shake_window_ms)) ++recent;
  }
  return recent >= config_.shake_peaks;
}

// A knock is a short burst of sharp changes with quiet on both sides; a shake or a carried
// device produces long bursts, and those are never taps.
void MotionTracker::track_tap(float jerk, uint32_t t_ms) {
  if (jerk < config_.tap_jerk_g) return;
  if (!spike_open_) {
    spike_open_ = true;
    spike_first_ms_ = t_ms;
    spike_had_quiet_before_ =
        !had_cluster_ || !within(t_ms, last_cluster_end_ms_, config_.tap_quiet_ms);
  }
  spike_last_ms_ = t_ms;
}

void MotionTracker::settle_tap(uint32_t now_ms) {
  if (!spike_open_ || within(now_ms, spike_last_ms_, config_.tap_quiet_ms)) return;
  bool short_burst = spike_last_ms_ - spike_first_ms_ <= config_.tap_max_ms;
  if (short_burst && spike_had_quiet_before_ && !shaking_now(spike_last_ms_)) tap_latched_ = true;
  spike_open_ = false;
  had_cluster_ = true;
  last_cluster_end_ms_ = spike_last_ms_;
}

SensorReport MotionTracker::report(uint32_t now_ms) const {
  SensorReport r;
  r.orientation = orientation_;
  r.is_moving = moving();
  r.is_shaking = shake_latched_ || shaking_now(now_ms);
  r.tap_detected = tap_latched_;
  r.accel_g = last_.accel_g;
  r.gyro_dps = last_.gyro_dps;
  return r;
}

SensorReport MotionTracker::take_report(uint32_t now_ms) {
  SensorReport r = report(now_ms);
  shake_latched_ = false;
  tap_latched_ = false;
  return r;
}

std::string sensors_json(const SensorReport& r) {
  std::string out = "{";
  if (r.orientation != Orientation::Unknown) {
    std::string quoted = std::string("\"") + orientation_name(r.orientation) + "\"";
    append_field(out, "orientation", quoted.c_str());
  }
  append_flag(out, "is_moving", r.is_moving);
  append_flag(out, "is_shaking", r.is_shaking);
  append_flag(out, "tap_detected", r.tap_detected);
  append_number(out, "accel_x", r.accel_g.x);
  append_number(out, "accel_y", r.accel_g.y);
  append_number(out, "accel_z", r.accel_g.z);
  append_number(out, "gyro_x", r.gyro_dps.x);
  append_number(out, "gyro_y", r.gyro_dps.y);
  append_number(out, "gyro_z", r.gyro_dps.z);
  out += "}";
  return out;
}

}  // namespace lobug
