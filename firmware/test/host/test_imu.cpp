#include <cmath>
#include <limits>
#include <string>

#include "lobug/imu.h"
#include "runner.h"

using namespace lobug;

namespace {

constexpr uint32_t kStepMs = 10;  // 100 Hz

ImuSample at_rest(uint32_t t, Vec3 gravity = {0, 0, 1}) {
  ImuSample s;
  s.accel_g = gravity;
  s.t_ms = t;
  return s;
}

// Feeds `count` samples from `make(t)` starting at *t, advancing it.
template <typename Make>
void feed(MotionTracker& tracker, uint32_t* t, int count, Make make) {
  for (int i = 0; i < count; ++i, *t += kStepMs) tracker.add(make(*t));
}

}  // namespace

TEST(imu_orientation_from_gravity) {
  CHECK_EQ(classify_orientation({0, 0, 1}), Orientation::FaceUp);
  CHECK_EQ(classify_orientation({0.1f, -0.2f, -0.97f}), Orientation::FaceDown);
  CHECK_EQ(classify_orientation({0, 1, 0}), Orientation::Upright);
  CHECK_EQ(classify_orientation({0, -0.98f, 0.1f}), Orientation::UpsideDown);
  CHECK_EQ(classify_orientation({1, 0, 0}), Orientation::LeftSide);
  CHECK_EQ(classify_orientation({-1, 0, 0}), Orientation::RightSide);
  CHECK_EQ(classify_orientation({0, 0.7f, 0.7f}), Orientation::Tilted);  // 45 degrees
  CHECK_EQ(classify_orientation({0, 0, 2.5f}), Orientation::Unknown);    // not just gravity
  CHECK_EQ(classify_orientation({0, 0, 0.1f}), Orientation::Unknown);    // falling
  float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_EQ(classify_orientation({nan, 0, 1}), Orientation::Unknown);
  CHECK_EQ(std::string(orientation_name(Orientation::FaceUp)), std::string("face_up"));
  CHECK_EQ(std::string(orientation_name(Orientation::UpsideDown)), std::string("upside_down"));
}

TEST(imu_still_device_reports_its_orientation_and_nothing_else) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now, {0, 0.99f, 0.05f}); });
  SensorReport report = tracker.take_report(t);
  CHECK_EQ(report.orientation, Orientation::Upright);
  CHECK(!report.is_moving);
  CHECK(!report.is_shaking);
  CHECK(!report.tap_detected);
}

TEST(imu_orientation_ignores_a_brief_jolt) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now); });
  feed(tracker, &t, 3, [](uint32_t now) { return at_rest(now, {0, 1, 0}); });
  CHECK_EQ(tracker.orientation(), Orientation::FaceUp);
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now, {0, 1, 0}); });
  CHECK_EQ(tracker.orientation(), Orientation::Upright);
}

TEST(imu_rotation_is_moving) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 60, [](uint32_t now) {
    ImuSample s = at_rest(now);
    s.gyro_dps = {0, 45, 10};
    return s;
  });
  CHECK(tracker.moving());
  SensorReport report = tracker.take_report(t);
  CHECK(report.is_moving);
  CHECK(!report.is_shaking);
  CHECK(!report.tap_detected);
  feed(tracker, &t, 60, [](uint32_t now) { return at_rest(now); });
  CHECK(!tracker.moving());
}

TEST(imu_shaking_is_latched_until_reported) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 50, [](uint32_t now) { return at_rest(now); });
  feed(tracker, &t, 100, [](uint32_t now) {  // 5 Hz, +-1.5 g along x
    ImuSample s = at_rest(now);
    s.accel_g.x = 1.5f * std::sin(2.0f * 3.14159f * 5.0f * static_cast<float>(now) / 1000.0f);
    s.gyro_dps = {120, 40, 0};
    return s;
  });
  feed(tracker, &t, 300, [](uint32_t now) { return at_rest(now); });  // 3 s later
  SensorReport report = tracker.take_report(t);
  CHECK(report.is_shaking);
  CHECK(!report.tap_detected);  // a shake is never a tap
  CHECK(!report.is_moving);     // it has stopped by now
  CHECK(!tracker.take_report(t).is_shaking);  // reported once
}

TEST(imu_a_single_knock_is_a_tap) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now); });
  tracker.add(at_rest(t, {0.1f, 0.2f, 1.9f}));  // the knock: one sharp sample
  t += kStepMs;
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now); });
  CHECK(tracker.report(t).tap_detected);  // looking does not consume the event
  SensorReport report = tracker.take_report(t);
  CHECK(report.tap_detected);
  CHECK(!report.is_shaking);
  CHECK(!tracker.take_report(t).tap_detected);
}

TEST(imu_a_tap_is_not_reported_before_the_quiet_after_it) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now); });
  tracker.add(at_rest(t, {0, 0, 1.9f}));
  t += kStepMs;
  feed(tracker, &t, 5, [](uint32_t now) { return at_rest(now); });
  CHECK(!tracker.take_report(t).tap_detected);  // might still become a shake
  feed(tracker, &t, 50, [](uint32_t now) { return at_rest(now); });
  CHECK(tracker.take_report(t).tap_detected);
}

TEST(imu_rough_handling_is_not_a_tap) {
  MotionTracker tracker;
  uint32_t t = 1000;
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now); });
  feed(tracker, &t, 30, [](uint32_t now) {  // 300 ms of jolts: carried, dropped, fumbled
    return at_rest(now, {0, 0, (now / kStepMs) % 2 == 0 ? 1.8f : 0.6f});
  });
  feed(tracker, &t, 100, [](uint32_t now) { return at_rest(now); });
  CHECK(!tracker.take_report(t).tap_detected);
}

TEST(imu_sensors_json_uses_the_contract_fields) {
  SensorReport report;
  report.orientation = Orientation::FaceUp;
  report.is_moving = true;
  report.tap_detected = true;
  report.accel_g = {0.0123f, -0.5f, 0.9876f};
  report.gyro_dps = {1.5f, -2.25f, 0};
  CHECK_EQ(sensors_json(report),
           std::string(R"({"orientation":"face_up","is_moving":true,"is_shaking":false,)"
                       R"("tap_detected":true,"accel_x":0.012,"accel_y":-0.500,)"
                       R"("accel_z":0.988,"gyro_x":1.500,"gyro_y":-2.250,"gyro_z":0.000})"));
}

TEST(imu_sensors_json_leaves_out_what_is_unknown) {
  SensorReport report;
  report.accel_g = {std::numeric_limits<float>::quiet_NaN(), 0, 1};
  report.gyro_dps = {std::numeric_limits<float>::infinity(), 0, 0};
  CHECK_EQ(sensors_json(report),
           std::string(R"({"is_moving":false,"is_shaking":false,"tap_detected":false,)"
                       R"("accel_y":0.000,"accel_z":1.000,"gyro_y":0.000,"gyro_z":0.000})"));
}
