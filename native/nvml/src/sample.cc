#include "sample.h"

#include "gpm.h"
#include "processes.h"

namespace gpushare {

void DeviceReading::reset(unsigned deviceIndex) {
  index = deviceIndex;
  lost = false;
  memory.reset();
  utilization.reset();
  temperatureC.reset();
  powerMilliwatts.reset();
  powerLimitMilliwatts.reset();
  smClockMHz.reset();
  memClockMHz.reset();
  computeMode.reset();
  migMode.reset();
  processes.clear();
  processUtilization.clear();
  migDevices.clear();
  processSource = ProcessCall::None;
  errors.clear();
}

nvmlDevice_t deviceHandle(const NvmlLibrary &lib, DeviceState &state, unsigned index) {
  if (state.handle) return state.handle;
  auto getHandle = lib.require(lib.api().nvmlDeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
  nvmlDevice_t handle = nullptr;
  lib.check("nvmlDeviceGetHandleByIndex_v2", getHandle(index, &handle), static_cast<int>(index));
  state.handle = handle;
  return handle;
}

namespace {

// _v2 (with reserved) where the driver has it, else the original call.
std::optional<MemoryValue> readMemory(FieldChecker &check, nvmlDevice_t device) {
  const NvmlApi &api = check.lib().api();
  if (api.nvmlDeviceGetMemoryInfo_v2) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    nvmlReturn_t rc = api.nvmlDeviceGetMemoryInfo_v2(device, &m);
    if (rc == NVML_SUCCESS) return MemoryValue{m.total, m.used, m.free, m.reserved};
    if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND &&
        rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
      check.ok("nvmlDeviceGetMemoryInfo_v2", rc);
      return std::nullopt;
    }
  }
  if (!api.nvmlDeviceGetMemoryInfo) return std::nullopt;
  nvmlMemory_t m{};
  if (!check.ok("nvmlDeviceGetMemoryInfo", api.nvmlDeviceGetMemoryInfo(device, &m))) return std::nullopt;
  return MemoryValue{m.total, m.used, m.free, std::nullopt};
}

// Calls fn(device, args..., &value) when present; null on NOT_SUPPORTED or failure.
template <typename Fn, typename... Args>
std::optional<unsigned> readUnsigned(FieldChecker &check, const char *call, Fn fn, nvmlDevice_t device, Args... args) {
  if (!fn) return std::nullopt;
  unsigned value = 0;
  if (!check.ok(call, fn(device, args..., &value))) return std::nullopt;
  return value;
}

std::optional<MigModeValue> readMigMode(FieldChecker &check, nvmlDevice_t device) {
  auto fn = check.lib().api().nvmlDeviceGetMigMode;
  unsigned current = 0, pending = 0;
  if (!fn || !check.ok("nvmlDeviceGetMigMode", fn(device, &current, &pending))) return std::nullopt;
  return MigModeValue{current == NVML_DEVICE_MIG_ENABLE, pending == NVML_DEVICE_MIG_ENABLE};
}

// Re-enumerates the MIG devices each sample: layouts change under us (MIG executor) and it is cheap.
void readMigMemory(FieldChecker &check, nvmlDevice_t device, DeviceReading &reading) {
  const NvmlApi &api = check.lib().api();
  if (!api.nvmlDeviceGetMaxMigDeviceCount || !api.nvmlDeviceGetMigDeviceHandleByIndex) return;
  unsigned max = 0;
  if (!check.ok("nvmlDeviceGetMaxMigDeviceCount", api.nvmlDeviceGetMaxMigDeviceCount(device, &max))) return;
  for (unsigned i = 0; i < max; ++i) {
    nvmlDevice_t mig = nullptr;
    nvmlReturn_t rc = api.nvmlDeviceGetMigDeviceHandleByIndex(device, i, &mig);
    if (rc == NVML_ERROR_NOT_FOUND) continue;  // an empty slot
    if (!check.ok("nvmlDeviceGetMigDeviceHandleByIndex", rc)) continue;
    auto gi = readUnsigned(check, "nvmlDeviceGetGpuInstanceId", api.nvmlDeviceGetGpuInstanceId, mig);
    auto ci = readUnsigned(check, "nvmlDeviceGetComputeInstanceId", api.nvmlDeviceGetComputeInstanceId, mig);
    if (!gi || !ci) continue;
    auto memory = readMemory(check, mig);
    MigMemory entry{*gi, *ci, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    if (memory) {
      entry.used = memory->used;
      entry.total = memory->total;
    }
    reading.migDevices.push_back(entry);
  }
}

void readFields(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &r) {
  const NvmlApi &api = check.lib().api();
  r.memory = readMemory(check, device);
  if (api.nvmlDeviceGetUtilizationRates) {
    nvmlUtilization_t u{};
    if (check.ok("nvmlDeviceGetUtilizationRates", api.nvmlDeviceGetUtilizationRates(device, &u))) r.utilization = u;
  }
  r.temperatureC = readUnsigned(check, "nvmlDeviceGetTemperature", api.nvmlDeviceGetTemperature, device,
                                static_cast<unsigned>(NVML_TEMPERATURE_GPU));
  r.powerMilliwatts = readUnsigned(check, "nvmlDeviceGetPowerUsage", api.nvmlDeviceGetPowerUsage, device);
  r.powerLimitMilliwatts =
      readUnsigned(check, "nvmlDeviceGetEnforcedPowerLimit", api.nvmlDeviceGetEnforcedPowerLimit, device);
  r.smClockMHz = readUnsigned(check, "nvmlDeviceGetClockInfo", api.nvmlDeviceGetClockInfo, device,
                              static_cast<unsigned>(NVML_CLOCK_SM));
  r.memClockMHz = readUnsigned(check, "nvmlDeviceGetClockInfo", api.nvmlDeviceGetClockInfo, device,
                               static_cast<unsigned>(NVML_CLOCK_MEM));
  r.computeMode = readUnsigned(check, "nvmlDeviceGetComputeMode", api.nvmlDeviceGetComputeMode, device);
  r.migMode = readMigMode(check, device);
  bool processesKnown = readProcesses(check, state, device, r);
  readProcessUtilization(check, state, device, r, processesKnown);
  if (r.migMode && r.migMode->current) {
    readMigMemory(check, device, r);
    readMigActivity(check, state, device, r);
  } else if (!state.gpmPrevious.empty()) {
    releaseGpmSamples(check.lib(), state);  // MIG mode went off
  }
}

}  // namespace

void sampleDevice(const NvmlLibrary &lib, DeviceState &state, unsigned index) {
  DeviceReading &r = state.reading;
  r.reset(index);
  FieldChecker check(lib, static_cast<int>(index), r.errors);
  try {
    nvmlDevice_t device = nullptr;
    try {
      device = deviceHandle(lib, state, index);
    } catch (const NvmlCallError &e) {
      if (e.code == NVML_ERROR_GPU_IS_LOST) throw GpuLost{e.call};
      check.record(e.call, e.code);
      return;
    }
    readFields(check, state, device, r);
  } catch (const GpuLost &lost) {
    r.reset(index);
    r.lost = true;
    check.record(lost.call, NVML_ERROR_GPU_IS_LOST);
  }
}

}  // namespace gpushare
