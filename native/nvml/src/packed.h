// The packed form of samples: one Float64Array the JS side decodes into DeviceSample
// objects, because building ~1000 objects per tick through N-API costs ~1 ms and JS does it in µs.
// Mirrored by decodeSamples() in electron/engine/gpu/nvml-addon.ts: change both together.
#pragma once

#include <cstddef>
#include <vector>

#include "readings.h"

namespace gpushare {

constexpr double kPackedLayoutVersion = 1;
// [version, deviceCount] then per device: kDeviceFields, then the three lists. NaN is null.
enum PackedDeviceField : unsigned {
  P_INDEX, P_LOST, P_MEM_TOTAL, P_MEM_USED, P_MEM_FREE, P_MEM_RESERVED, P_UTIL_GPU, P_UTIL_MEM,
  P_TEMPERATURE, P_POWER, P_POWER_LIMIT, P_SM_CLOCK, P_MEM_CLOCK, P_COMPUTE_MODE, P_MIG_CURRENT,
  P_MIG_PENDING, P_PROCESS_SOURCE, P_PROCESS_COUNT, P_UTIL_COUNT, P_MIG_COUNT, P_ERROR_COUNT,
  kDeviceFields
};
constexpr unsigned kProcessFields = 5;  // pid, kind, usedMemory, gpuInstanceId, computeInstanceId
constexpr unsigned kUtilFields = 4;     // pid, smUtil, memUtil, timestampUs
constexpr unsigned kMigFields = 4;      // gpuInstanceId, computeInstanceId, memoryUsed, memoryTotal

// Doubles needed for these readings.
size_t packedSize(const std::vector<const DeviceReading *> &readings);
// Writes them at out (which has packedSize() room).
void packReadings(const std::vector<const DeviceReading *> &readings, double *out);

}  // namespace gpushare
