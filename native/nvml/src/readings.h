// Plain C++ results of describing and sampling a device, plus the per-device
// state kept between samples. The N-API glue turns these into JS objects.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "library.h"

namespace gpushare {

constexpr unsigned long long kValueNotAvailable = 0xFFFFFFFFFFFFFFFFull;  // NVML_VALUE_NOT_AVAILABLE

struct FieldError {
  const char *call;
  nvmlReturn_t code;
  std::string message;
};

// Thrown inside one device's sample when NVML says the GPU is lost.
struct GpuLost {
  const char *call;
};

// Collects field failures for one device: NOT_SUPPORTED empties the field silently,
// GPU_IS_LOST aborts the device, anything else empties the field and is recorded.
class FieldChecker {
 public:
  FieldChecker(const NvmlLibrary &lib, int device, std::vector<FieldError> &errors)
      : lib_(lib), device_(device), errors_(errors) {}
  bool ok(const char *call, nvmlReturn_t rc) {
    if (rc == NVML_SUCCESS) return true;
    if (rc == NVML_ERROR_GPU_IS_LOST) throw GpuLost{call};
    if (rc != NVML_ERROR_NOT_SUPPORTED) record(call, rc);
    return false;
  }
  void record(const char *call, nvmlReturn_t rc) { errors_.push_back({call, rc, lib_.describeFailure(call, rc, device_)}); }
  const NvmlLibrary &lib() const { return lib_; }
  int device() const { return device_; }

 private:
  const NvmlLibrary &lib_;
  int device_;
  std::vector<FieldError> &errors_;
};

enum class ProcessKind : uint8_t { Compute = 0, Graphics = 1, Mps = 2 };

struct ProcessRecord {
  unsigned pid;
  ProcessKind kind;
  unsigned long long usedMemory;  // kValueNotAvailable → null
  unsigned gpuInstanceId;         // NVML_INSTANCE_ID_NONE → null
  unsigned computeInstanceId;
};

struct ProcessUtil {
  unsigned pid;
  unsigned smUtil;
  unsigned memUtil;
  unsigned long long timestampUs;
};

struct MigMemory {
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
  std::optional<unsigned long long> used;
  std::optional<unsigned long long> total;
  // GPM between this sample and the previous one (0-100); empty before Hopper or on the first sample
  std::optional<double> smUtil;
  std::optional<double> smOccupancy;
};

struct MigModeValue {
  bool current;
  bool pending;
};

struct MemoryValue {
  unsigned long long total, used, free;
  std::optional<unsigned long long> reserved;
};

// Which process-list call a device answered last time, newest first.
enum class ProcessCall : uint8_t { DetailList = 0, V3 = 1, V2 = 2, V1 = 3, None = 4 };
enum class UtilCall : uint8_t { Info = 0, Legacy = 1 };

struct DeviceReading {
  unsigned index = 0;
  bool lost = false;
  std::optional<MemoryValue> memory;
  std::optional<nvmlUtilization_t> utilization;
  std::optional<unsigned> temperatureC, powerMilliwatts, powerLimitMilliwatts, smClockMHz, memClockMHz, computeMode;
  std::optional<MigModeValue> migMode;
  std::vector<ProcessRecord> processes;
  std::vector<ProcessUtil> processUtilization;
  std::vector<MigMemory> migDevices;
  ProcessCall processSource = ProcessCall::None;  // the call that listed compute processes
  std::vector<FieldError> errors;

  void reset(unsigned deviceIndex);
};


// Per-device state reused between samples so the hot path does not allocate.
struct DeviceState {
  nvmlDevice_t handle = nullptr;
  ProcessCall processCall[3] = {ProcessCall::DetailList, ProcessCall::DetailList, ProcessCall::DetailList};
  unsigned v3Stride[3] = {0, 0, 0};       // 0 = undecided, else 24 or 32
  unsigned v3StrideCount[3] = {0, 0, 0};  // record count the stride was decided at
  std::vector<unsigned char> processBuffer;  // room for processCapacity 32-byte records
  unsigned processCapacity = 0;
  UtilCall utilCall = UtilCall::Info;
  unsigned long long lastUtilTimestamp = 0;
  std::vector<nvmlProcessUtilizationInfo_v1_t> utilInfoBuffer;
  std::vector<nvmlProcessUtilizationSample_t> utilSampleBuffer;
  std::vector<unsigned> pidScratch;  // sorted pids of the last process list
  std::optional<bool> gpmSupported;  // asked once: nvmlGpmQueryDeviceSupport
  std::map<unsigned, nvmlGpmSample_t> gpmPrevious;  // per GPU instance id: the last GPM sample (gpm.cc frees them)
  DeviceReading reading;
};

}  // namespace gpushare
