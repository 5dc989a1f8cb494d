#include "hal_imu.h"

#include <M5Unified.h>

#include "config.h"

namespace hal {

bool imu_begin() { return M5.Imu.isEnabled(); }

bool imu_read(lobug::ImuSample* sample, uint32_t now_ms) {
  if (!M5.Imu.isEnabled() || !M5.Imu.update()) return false;
  float ax, ay, az, gx, gy, gz;
  M5.Imu.getAccel(&ax, &ay, &az);  // g
  M5.Imu.getGyro(&gx, &gy, &gz);   // degrees per second
  sample->accel_g = {LOBUG_IMU_SIGN_X * ax, LOBUG_IMU_SIGN_Y * ay, LOBUG_IMU_SIGN_Z * az};
  sample->gyro_dps = {LOBUG_IMU_SIGN_X * gx, LOBUG_IMU_SIGN_Y * gy, LOBUG_IMU_SIGN_Z * gz};
  sample->t_ms = now_ms;
  return true;
}

}  // namespace hal
