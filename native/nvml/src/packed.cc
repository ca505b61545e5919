#include "packed.h"

#include <cmath>

namespace gpushare {

namespace {

constexpr double kNull = NAN;

template <typename T>
double orNull(const std::optional<T> &v) {
  return v ? static_cast<double>(*v) : kNull;
}

double idOrNull(unsigned id) { return id == NVML_INSTANCE_ID_NONE ? kNull : id; }

}  // namespace

size_t packedSize(const std::vector<const DeviceReading *> &readings) {
  size_t size = 2;
  for (const DeviceReading *r : readings) {
    size += kDeviceFields + r->processes.size() * kProcessFields + r->processUtilization.size() * kUtilFields +
            r->migDevices.size() * kMigFields;
  }
  return size;
}

void packReadings(const std::vector<const DeviceReading *> &readings, double *out) {
  *out++ = kPackedLayoutVersion;
  *out++ = static_cast<double>(readings.size());
  for (const DeviceReading *r : readings) {
    double *d = out;
    d[P_INDEX] = r->index;
    d[P_LOST] = r->lost ? 1 : 0;
    d[P_MEM_TOTAL] = r->memory ? static_cast<double>(r->memory->total) : kNull;
    d[P_MEM_USED] = r->memory ? static_cast<double>(r->memory->used) : kNull;
    d[P_MEM_FREE] = r->memory ? static_cast<double>(r->memory->free) : kNull;
    d[P_MEM_RESERVED] = r->memory ? orNull(r->memory->reserved) : kNull;
    d[P_UTIL_GPU] = r->utilization ? r->utilization->gpu : kNull;
    d[P_UTIL_MEM] = r->utilization ? r->utilization->memory : kNull;
    d[P_TEMPERATURE] = orNull(r->temperatureC);
    d[P_POWER] = orNull(r->powerMilliwatts);
    d[P_POWER_LIMIT] = orNull(r->powerLimitMilliwatts);
    d[P_SM_CLOCK] = orNull(r->smClockMHz);
    d[P_MEM_CLOCK] = orNull(r->memClockMHz);
    d[P_COMPUTE_MODE] = r->computeMode && *r->computeMode <= NVML_COMPUTEMODE_EXCLUSIVE_PROCESS ? *r->computeMode : kNull;
    d[P_MIG_CURRENT] = r->migMode ? (r->migMode->current ? 1 : 0) : kNull;
    d[P_MIG_PENDING] = r->migMode ? (r->migMode->pending ? 1 : 0) : kNull;
    d[P_PROCESS_SOURCE] = r->processSource == ProcessCall::None ? kNull : static_cast<double>(r->processSource);
    d[P_PROCESS_COUNT] = static_cast<double>(r->processes.size());
    d[P_UTIL_COUNT] = static_cast<double>(r->processUtilization.size());
    d[P_MIG_COUNT] = static_cast<double>(r->migDevices.size());
    d[P_ERROR_COUNT] = static_cast<double>(r->errors.size());
    out += kDeviceFields;
    for (const ProcessRecord &p : r->processes) {
      out[0] = p.pid;
      out[1] = static_cast<double>(p.kind);
      out[2] = p.usedMemory == kValueNotAvailable ? kNull : static_cast<double>(p.usedMemory);
      out[3] = idOrNull(p.gpuInstanceId);
      out[4] = idOrNull(p.computeInstanceId);
      out += kProcessFields;
    }
    for (const ProcessUtil &u : r->processUtilization) {
      out[0] = u.pid;
      out[1] = u.smUtil;
      out[2] = u.memUtil;
      out[3] = static_cast<double>(u.timestampUs);
      out += kUtilFields;
    }
    for (const MigMemory &m : r->migDevices) {
      out[0] = m.gpuInstanceId;
      out[1] = m.computeInstanceId;
      out[2] = orNull(m.used);
      out[3] = orNull(m.total);
      out += kMigFields;
    }
  }
}

}  // namespace gpushare
