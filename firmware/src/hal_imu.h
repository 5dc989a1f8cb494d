// The IMU through M5Unified, mapped onto lobug/imu.h's axes.
#pragma once

#include "lobug/imu.h"

namespace hal {

bool imu_begin();
// One reading, or false when there is no IMU or no new data.
bool imu_read(lobug::ImuSample* sample, uint32_t now_ms);

}  // namespace hal
