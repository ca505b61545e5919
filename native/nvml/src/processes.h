// The processes on a device (compute, graphics, MPS) and their SM/memory use.
#pragma once

#include "readings.h"

namespace gpushare {

// "nvmlDeviceGetComputeRunningProcesses_v3" for (Compute, V3); null for None.
const char *processCallName(ProcessKind kind, ProcessCall call);

// Fills reading.processes and reading.processSource; false when no list could be read.
bool readProcesses(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &reading);

// Fills reading.processUtilization with samples newer than the last call; when
// processesKnown, samples of pids that are no longer on the device are dropped.
void readProcessUtilization(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &reading,
                            bool processesKnown);

}  // namespace gpushare
