// SM activity per MIG slice through GPM (nvmlGpmMigSampleGet, Hopper and later): the only NVML reading
// of a slice's SMs, since per-process utilization answers NOT_SUPPORTED in MIG mode.
#pragma once

#include "readings.h"

namespace gpushare {

// Fills smUtil / smOccupancy of reading.migDevices from the difference between this sample of each
// GPU instance and the one kept from the previous call; the first call per slice only takes a sample.
void readMigActivity(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &reading);

// Frees the kept samples (before nvmlShutdown, or when a GPU's slices go away).
void releaseGpmSamples(const NvmlLibrary &lib, DeviceState &state);

}  // namespace gpushare
