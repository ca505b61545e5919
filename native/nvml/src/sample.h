// One reading of one GPU: the hot path behind sampleDevice/sampleAll.
#pragma once

#include "readings.h"

namespace gpushare {

// The device handle for index, cached in state; throws NvmlCallError on failure.
nvmlDevice_t deviceHandle(const NvmlLibrary &lib, DeviceState &state, unsigned index);

// Fills state.reading; never throws for a per-device problem (a lost GPU sets reading.lost).
void sampleDevice(const NvmlLibrary &lib, DeviceState &state, unsigned index);

}  // namespace gpushare
