// What the IMU says about the device: how it lies, whether it moves, is shaken or was tapped.
//
// Axis convention (the device code maps the sensor to it; see firmware/README.md): +X toward
// the right edge of the screen, +Y toward its top edge, +Z out of the screen. Accelerometer
// values are in g and read +1 on the axis pointing up when the device is at rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lobug {

struct Vec3 {
  float x = 0, y = 0, z = 0;
};

float magnitude(const Vec3& v);

enum class Orientation { FaceUp, FaceDown, Upright, UpsideDown, LeftSide, RightSide, Tilted,
                         Unknown };

// "face_up", "face_down", "upright", "upside_down", "left_side", "right_side", "tilted".
const char* orientation_name(Orientation orientation);

// From gravity alone: the axis within ~35 degrees of vertical, else tilted; Unknown while the
// reading is far from 1 g (falling, thrown, shaken), when gravity cannot be told apart.
Orientation classify_orientation(const Vec3& accel_g);

struct ImuSample {
  Vec3 accel_g;
  Vec3 gyro_dps;
  uint32_t t_ms = 0;
};

struct MotionConfig {
  float moving_gyro_dps = 20.0f;  // mean rotation over the window that counts as moving
  float moving_accel_g = 0.08f;   // mean deviation of |a| from 1 g that counts as moving
  float shake_g = 0.7f;           // |a| this far from 1 g is a shake peak
  uint8_t shake_peaks = 3;        // peaks within shake_window_ms make a shake
  uint32_t shake_window_ms = 1000;
  float tap_jerk_g = 0.5f;        // change of acceleration between two samples that is a knock
  uint32_t tap_max_ms = 60;       // a knock's spikes all fall within this
  uint32_t tap_quiet_ms = 250;    // ...with nothing else this long before and after
};

// What is posted to /context/sensors every few seconds.
struct SensorReport {
  Orientation orientation = Orientation::Unknown;
  bool is_moving = false;
  bool is_shaking = false;
  bool tap_detected = false;
  Vec3 accel_g;
  Vec3 gyro_dps;
};

// Fed every IMU sample (about 100 Hz). Moving is a state judged over the last half second;
// shakes and taps are events latched until the next report, so none falls between posts.
class MotionTracker {
 public:
  explicit MotionTracker(const MotionConfig& config = MotionConfig{});

  void add(const ImuSample& sample);
  bool moving() const;
  bool shaking_now(uint32_t now_ms) const;
  Orientation orientation() const { return orientation_; }
  // The report for this moment, without touching the latches (for a status display).
  SensorReport report(uint32_t now_ms) const;
  // The report to post: clears the latched shake and tap.
  SensorReport take_report(uint32_t now_ms);

 private:
  static constexpr size_t kWindow = 50;  // half a second at 100 Hz
  static constexpr size_t kMaxPeaks = 8;

  void track_shake(float deviation, uint32_t t_ms);
  void track_tap(float jerk, uint32_t t_ms);
  void settle_tap(uint32_t now_ms);

  MotionConfig config_;
  float gyro_[kWindow] = {};
  float deviation_[kWindow] = {};
  size_t count_ = 0;
  size_t next_ = 0;
  Vec3 smoothed_;
  bool has_sample_ = false;
  ImuSample last_;
  Orientation orientation_ = Orientation::Unknown;
  bool above_shake_ = false;
  uint32_t peaks_[kMaxPeaks] = {};
  size_t peak_count_ = 0;
  bool shake_latched_ = false;
  bool tap_latched_ = false;
  bool spike_open_ = false;     // a cluster of spikes that may still turn out to be a tap
  uint32_t spike_first_ms_ = 0;
  uint32_t spike_last_ms_ = 0;
  bool had_cluster_ = false;      // a tap needs quiet before it, too
  uint32_t last_cluster_end_ms_ = 0;
  bool spike_had_quiet_before_ = true;
};

// The /context/sensors body, with the contract's field names. Fixed formatting (three
// decimals, no spaces) so the firmware and scripts/device_sim.py produce identical bytes;
// an unknown orientation or a value that is not finite is left out (every field is optional,
// and the server rejects NaN).
std::string sensors_json(const SensorReport& report);

}  // namespace lobug
