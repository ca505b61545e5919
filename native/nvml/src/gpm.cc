#include "gpm.h"

#include <map>

namespace gpushare {

namespace {

bool gpmSupported(FieldChecker &check, DeviceState &state, nvmlDevice_t device) {
  const NvmlApi &api = check.lib().api();
  if (state.gpmSupported) return *state.gpmSupported;
  if (!api.nvmlGpmQueryDeviceSupport || !api.nvmlGpmSampleAlloc || !api.nvmlGpmSampleFree ||
      !api.nvmlGpmMigSampleGet || !api.nvmlGpmMetricsGet) {
    state.gpmSupported = false;  // a driver before GPM (R520)
    return false;
  }
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  nvmlReturn_t rc = api.nvmlGpmQueryDeviceSupport(device, &support);
  // asked once per device: a failure other than NOT_SUPPORTED is recorded once, then GPM stays off
  state.gpmSupported = check.ok("nvmlGpmQueryDeviceSupport", rc) && support.isSupportedDevice != 0;
  return *state.gpmSupported;
}

}  // namespace

void readMigActivity(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &reading) {
  if (reading.migDevices.empty() || !gpmSupported(check, state, device)) return;
  const NvmlApi &api = check.lib().api();
  std::map<unsigned, nvmlGpmSample_t> taken;
  for (MigMemory &slice : reading.migDevices) {
    auto known = taken.find(slice.gpuInstanceId);
    if (known == taken.end()) {
      nvmlGpmSample_t sample = nullptr;
      if (!check.ok("nvmlGpmSampleAlloc", api.nvmlGpmSampleAlloc(&sample))) continue;
      if (!check.ok("nvmlGpmMigSampleGet", api.nvmlGpmMigSampleGet(device, slice.gpuInstanceId, sample))) {
        api.nvmlGpmSampleFree(sample);
        continue;
      }
      known = taken.emplace(slice.gpuInstanceId, sample).first;
    }
    auto previous = state.gpmPrevious.find(slice.gpuInstanceId);
    if (previous == state.gpmPrevious.end()) continue;
    nvmlGpmMetricsGet_t get{};
    get.version = NVML_GPM_METRICS_GET_VERSION;
    get.numMetrics = 2;
    get.sample1 = previous->second;
    get.sample2 = known->second;
    get.metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
    get.metrics[1].metricId = NVML_GPM_METRIC_SM_OCCUPANCY;
    if (!check.ok("nvmlGpmMetricsGet", api.nvmlGpmMetricsGet(&get))) continue;
    if (get.metrics[0].nvmlReturn == NVML_SUCCESS) slice.smUtil = get.metrics[0].value;
    if (get.metrics[1].nvmlReturn == NVML_SUCCESS) slice.smOccupancy = get.metrics[1].value;
  }
  // this call's samples are the next call's "before"; slices gone since are dropped
  releaseGpmSamples(check.lib(), state);
  state.gpmPrevious = std::move(taken);
}

void releaseGpmSamples(const NvmlLibrary &lib, DeviceState &state) {
  if (lib.isOpen() && lib.api().nvmlGpmSampleFree)
    for (auto &kept : state.gpmPrevious) lib.api().nvmlGpmSampleFree(kept.second);
  state.gpmPrevious.clear();
}

}  // namespace gpushare
