// What rarely changes about a device: identity, memory size, SMs, MIG layout.
#pragma once

#include "readings.h"

namespace gpushare {

struct MigDescription {
  unsigned index = 0;
  std::string uuid, name;
  std::optional<std::string> profileName;
  std::optional<unsigned> profileId;
  unsigned gpuInstanceId = 0, computeInstanceId = 0;
  unsigned long long memoryTotal = 0;
  std::optional<unsigned> smCount;
  std::optional<nvmlGpuInstancePlacement_t> placement;
  // Compute slices of its GPU instance's profile (3 for a 3g slice): its share of the GPU's compute.
  std::optional<unsigned> computeSlices;
};

struct DeviceDescription {
  unsigned index = 0;
  std::string uuid, name, pciBusId;
  unsigned long long memoryTotal = 0;
  std::optional<unsigned> smCount;
  std::optional<MigModeValue> migMode;
  std::vector<MigDescription> migDevices;
  // In MIG mode: the GPU's compute slices (its largest GPU-instance profile's, 7 on an A100 or H100).
  std::optional<unsigned> migComputeSlices;
  std::vector<FieldError> errors;
};

// Throws NvmlCallError when identity or memory cannot be read (a lost GPU included).
DeviceDescription describeDevice(const NvmlLibrary &lib, DeviceState &state, unsigned index);

// "3g.40gb" from "NVIDIA H100 80GB HBM3 MIG 3g.40gb"; empty when the name has no such token.
std::string profileFromMigName(const std::string &name);

}  // namespace gpushare
