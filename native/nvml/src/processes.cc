#include "processes.h"

#include <algorithm>
#include <cstring>

namespace gpushare {

namespace {

constexpr unsigned kInitialRecords = 64;
constexpr unsigned kDetailRecordSize = sizeof(nvmlProcessDetail_v1_t);  // 32
constexpr unsigned kInfoV2RecordSize = sizeof(nvmlProcessInfo_v2_t);    // 24
constexpr unsigned kInfoV1RecordSize = sizeof(nvmlProcessInfo_v1_t);    // 16
constexpr unsigned kPidMax = 4194304;  // PID_MAX_LIMIT on 64-bit Linux
constexpr unsigned kMaxInstanceId = 64;  // MIG GPU/compute instance ids are small

static_assert(kDetailRecordSize == 32 && kInfoV2RecordSize == 24 && kInfoV1RecordSize == 16, "NVML record layout");

const char *const kCallNames[3][4] = {
    {"nvmlDeviceGetRunningProcessDetailList", "nvmlDeviceGetComputeRunningProcesses_v3",
     "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"},
    {"nvmlDeviceGetRunningProcessDetailList", "nvmlDeviceGetGraphicsRunningProcesses_v3",
     "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses"},
    {"nvmlDeviceGetRunningProcessDetailList", "nvmlDeviceGetMPSComputeRunningProcesses_v3",
     "nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses"},
};

// The answers that mean "this entry point is not the one to use here": try the next older one.
bool meansTryOlder(nvmlReturn_t rc) {
  return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
         rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

template <typename T>
T readAt(const unsigned char *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

void growProcessBuffer(DeviceState &state, unsigned records) {
  state.processCapacity = records;
  state.processBuffer.assign(static_cast<size_t>(records) * kDetailRecordSize, 0);
}

// One call of one entry point into state.processBuffer (which always has room for
// 32-byte records, whatever the call claims to write); *count gets the records written.
nvmlReturn_t callOnce(const NvmlApi &api, ProcessCall call, ProcessKind kind, nvmlDevice_t device,
                      DeviceState &state, unsigned *count) {
  unsigned char *buffer = state.processBuffer.data();
  *count = state.processCapacity;
  using Info2 = nvmlProcessInfo_v2_t;
  using Info1 = nvmlProcessInfo_v1_t;
  auto *v2 = reinterpret_cast<Info2 *>(buffer);
  auto *v1 = reinterpret_cast<Info1 *>(buffer);
  switch (call) {
    case ProcessCall::DetailList: {
      if (!api.nvmlDeviceGetRunningProcessDetailList) return NVML_ERROR_FUNCTION_NOT_FOUND;
      nvmlProcessDetailList_v1_t list;
      list.version = nvmlProcessDetailList_v1;
      list.mode = static_cast<unsigned>(kind);
      list.numProcArrayEntries = state.processCapacity;
      list.procArray = reinterpret_cast<nvmlProcessDetail_v1_t *>(buffer);
      nvmlReturn_t rc = api.nvmlDeviceGetRunningProcessDetailList(device, &list);
      *count = list.numProcArrayEntries;
      return rc;
    }
    case ProcessCall::V3: {
      auto fn = kind == ProcessKind::Compute    ? api.nvmlDeviceGetComputeRunningProcesses_v3
                : kind == ProcessKind::Graphics ? api.nvmlDeviceGetGraphicsRunningProcesses_v3
                                                : api.nvmlDeviceGetMPSComputeRunningProcesses_v3;
      return fn ? fn(device, count, v2) : NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    case ProcessCall::V2: {
      auto fn = kind == ProcessKind::Compute    ? api.nvmlDeviceGetComputeRunningProcesses_v2
                : kind == ProcessKind::Graphics ? api.nvmlDeviceGetGraphicsRunningProcesses_v2
                                                : api.nvmlDeviceGetMPSComputeRunningProcesses_v2;
      return fn ? fn(device, count, v2) : NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    case ProcessCall::V1: {
      auto fn = kind == ProcessKind::Compute    ? api.nvmlDeviceGetComputeRunningProcesses
                : kind == ProcessKind::Graphics ? api.nvmlDeviceGetGraphicsRunningProcesses
                                                : api.nvmlDeviceGetMPSComputeRunningProcesses;
      return fn ? fn(device, count, v1) : NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    default:
      return NVML_ERROR_FUNCTION_NOT_FOUND;
  }
}

// Calls, growing the buffer to the count the driver asks for while processes keep appearing.
nvmlReturn_t callGrowing(const NvmlApi &api, ProcessCall call, ProcessKind kind, nvmlDevice_t device,
                         DeviceState &state, unsigned *count) {
  if (state.processCapacity == 0) growProcessBuffer(state, kInitialRecords);
  nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 5 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    rc = callOnce(api, call, kind, device, state, count);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      unsigned wanted = std::max(*count, state.processCapacity * 2);
      growProcessBuffer(state, wanted + wanted / 4 + 16);
    }
  }
  return rc;
}

bool plausibleId(unsigned id) { return id == NVML_INSTANCE_ID_NONE || id < kMaxInstanceId; }

unsigned implausibleRecords(const unsigned char *buffer, unsigned count, unsigned stride) {
  unsigned bad = 0;
  for (unsigned i = 0; i < count; ++i) {
    const unsigned char *r = buffer + static_cast<size_t>(i) * stride;
    unsigned pid = readAt<unsigned>(r);
    unsigned long long memory = readAt<unsigned long long>(r + 8);
    bool ok = pid != 0 && pid <= kPidMax && plausibleId(readAt<unsigned>(r + 16)) &&
              plausibleId(readAt<unsigned>(r + 20)) && (memory == kValueNotAvailable || memory < (1ull << 50));
    bad += ok ? 0 : 1;
  }
  return bad;
}

// _v3 stride (R535 may write 32-byte records): a 24-byte parse of 32-byte data reads record k>=1's pid from
// record k-1's usedGpuCcProtectedMemory (0) and its ids from usedGpuMemory; the stride with fewer implausible records wins, ties keep 24.
unsigned v3Stride(DeviceState &state, ProcessKind kind, unsigned count) {
  unsigned k = static_cast<unsigned>(kind);
  if (count < 2) return state.v3Stride[k] ? state.v3Stride[k] : kInfoV2RecordSize;  // one record parses the same either way
  const unsigned char *buffer = state.processBuffer.data();
  bool keep = state.v3Stride[k] != 0 && state.v3StrideCount[k] == count &&
              implausibleRecords(buffer, count, state.v3Stride[k]) == 0;  // re-check when counts change or data looks wrong
  if (!keep) {
    unsigned bad24 = implausibleRecords(buffer, count, kInfoV2RecordSize);
    unsigned bad32 = implausibleRecords(buffer, count, kDetailRecordSize);
    state.v3Stride[k] = bad32 < bad24 ? kDetailRecordSize : kInfoV2RecordSize;
    state.v3StrideCount[k] = count;
  }
  return state.v3Stride[k];
}

void appendRecords(const unsigned char *buffer, unsigned count, unsigned stride, bool hasIds, ProcessKind kind,
                   std::vector<ProcessRecord> &out) {
  for (unsigned i = 0; i < count; ++i) {
    const unsigned char *r = buffer + static_cast<size_t>(i) * stride;
    out.push_back({readAt<unsigned>(r), kind, readAt<unsigned long long>(r + 8),
                   hasIds ? readAt<unsigned>(r + 16) : NVML_INSTANCE_ID_NONE,
                   hasIds ? readAt<unsigned>(r + 20) : NVML_INSTANCE_ID_NONE});
  }
}

// Reads one kind's list, starting from the call that worked last time; returns the call used or None.
ProcessCall readKind(FieldChecker &check, DeviceState &state, nvmlDevice_t device, ProcessKind kind,
                     std::vector<ProcessRecord> &out) {
  const NvmlApi &api = check.lib().api();
  unsigned k = static_cast<unsigned>(kind);
  for (unsigned c = static_cast<unsigned>(state.processCall[k]); c < static_cast<unsigned>(ProcessCall::None); ++c) {
    ProcessCall call = static_cast<ProcessCall>(c);
    unsigned count = 0;
    nvmlReturn_t rc = callGrowing(api, call, kind, device, state, &count);
    if (meansTryOlder(rc)) continue;
    state.processCall[k] = call;
    const char *name = kCallNames[k][c];
    if (!check.ok(name, rc)) return ProcessCall::None;
    count = std::min(count, state.processCapacity);
    const unsigned char *buffer = state.processBuffer.data();
    switch (call) {
      case ProcessCall::DetailList: appendRecords(buffer, count, kDetailRecordSize, true, kind, out); break;
      case ProcessCall::V3: appendRecords(buffer, count, v3Stride(state, kind, count), true, kind, out); break;
      case ProcessCall::V2: appendRecords(buffer, count, kInfoV2RecordSize, true, kind, out); break;
      default: appendRecords(buffer, count, kInfoV1RecordSize, false, kind, out); break;
    }
    return call;
  }
  state.processCall[k] = ProcessCall::DetailList;  // nothing answered: start from the newest again next time
  return ProcessCall::None;
}

}  // namespace

const char *processCallName(ProcessKind kind, ProcessCall call) {
  return call == ProcessCall::None ? nullptr : kCallNames[static_cast<unsigned>(kind)][static_cast<unsigned>(call)];
}

bool readProcesses(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &reading) {
  reading.processes.clear();
  reading.processSource = readKind(check, state, device, ProcessKind::Compute, reading.processes);
  bool graphics = readKind(check, state, device, ProcessKind::Graphics, reading.processes) != ProcessCall::None;
  bool mps = readKind(check, state, device, ProcessKind::Mps, reading.processes) != ProcessCall::None;
  return reading.processSource != ProcessCall::None || graphics || mps;
}

namespace {

nvmlReturn_t callUtilInfo(const NvmlApi &api, DeviceState &state, nvmlDevice_t device, unsigned *count) {
  if (!api.nvmlDeviceGetProcessesUtilizationInfo) return NVML_ERROR_FUNCTION_NOT_FOUND;
  nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 5 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    nvmlProcessesUtilizationInfo_v1_t info;
    info.version = nvmlProcessesUtilizationInfo_v1;
    info.processSamplesCount = static_cast<unsigned>(state.utilInfoBuffer.size());
    info.lastSeenTimeStamp = state.lastUtilTimestamp;
    info.procUtilArray = state.utilInfoBuffer.empty() ? nullptr : state.utilInfoBuffer.data();
    rc = api.nvmlDeviceGetProcessesUtilizationInfo(device, &info);
    *count = info.processSamplesCount;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      size_t wanted = std::max<size_t>(info.processSamplesCount, state.utilInfoBuffer.size() * 2);
      state.utilInfoBuffer.resize(wanted + wanted / 4 + 16);
    }
  }
  return rc;
}

nvmlReturn_t callUtilLegacy(const NvmlApi &api, DeviceState &state, nvmlDevice_t device, unsigned *count) {
  if (!api.nvmlDeviceGetProcessUtilization) return NVML_ERROR_FUNCTION_NOT_FOUND;
  nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 5 && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    *count = static_cast<unsigned>(state.utilSampleBuffer.size());
    rc = api.nvmlDeviceGetProcessUtilization(
        device, state.utilSampleBuffer.empty() ? nullptr : state.utilSampleBuffer.data(), count,
        state.lastUtilTimestamp);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      size_t wanted = std::max<size_t>(*count, state.utilSampleBuffer.size() * 2);
      state.utilSampleBuffer.resize(wanted + wanted / 4 + 16);
    }
  }
  return rc;
}

void addSample(std::vector<ProcessUtil> &out, unsigned pid, unsigned sm, unsigned mem, unsigned long long ts) {
  out.push_back({pid, std::min(sm, 100u), std::min(mem, 100u), ts});
}

// Keeps the newest sample per pid and, when the process list is known, only pids on the device.
void tidySamples(DeviceState &state, DeviceReading &reading, bool processesKnown) {
  auto &samples = reading.processUtilization;
  std::sort(samples.begin(), samples.end(), [](const ProcessUtil &a, const ProcessUtil &b) {
    return a.pid != b.pid ? a.pid < b.pid : a.timestampUs > b.timestampUs;
  });
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const ProcessUtil &a, const ProcessUtil &b) { return a.pid == b.pid; }),
                samples.end());
  if (!processesKnown) return;
  auto &pids = state.pidScratch;
  pids.clear();
  for (const ProcessRecord &p : reading.processes) pids.push_back(p.pid);
  std::sort(pids.begin(), pids.end());
  samples.erase(std::remove_if(samples.begin(), samples.end(),
                               [&](const ProcessUtil &s) { return !std::binary_search(pids.begin(), pids.end(), s.pid); }),
                samples.end());
}

}  // namespace

void readProcessUtilization(FieldChecker &check, DeviceState &state, nvmlDevice_t device, DeviceReading &reading,
                            bool processesKnown) {
  const NvmlApi &api = check.lib().api();
  auto &out = reading.processUtilization;
  out.clear();
  if (state.utilInfoBuffer.empty()) state.utilInfoBuffer.resize(kInitialRecords);  // skip the count-only first call
  if (state.utilSampleBuffer.empty()) state.utilSampleBuffer.resize(kInitialRecords);
  for (unsigned c = static_cast<unsigned>(state.utilCall); c <= static_cast<unsigned>(UtilCall::Legacy); ++c) {
    bool info = c == static_cast<unsigned>(UtilCall::Info);
    unsigned count = 0;
    nvmlReturn_t rc = info ? callUtilInfo(api, state, device, &count) : callUtilLegacy(api, state, device, &count);
    if (meansTryOlder(rc)) continue;  // NOT_SUPPORTED from both (e.g. MIG) leaves []
    state.utilCall = static_cast<UtilCall>(c);
    if (rc == NVML_ERROR_NOT_FOUND) return;  // no samples newer than lastUtilTimestamp
    if (!check.ok(info ? "nvmlDeviceGetProcessesUtilizationInfo" : "nvmlDeviceGetProcessUtilization", rc)) return;
    unsigned long long newest = state.lastUtilTimestamp;
    if (info) {
      count = std::min<unsigned>(count, static_cast<unsigned>(state.utilInfoBuffer.size()));
      for (unsigned i = 0; i < count; ++i) {
        const auto &s = state.utilInfoBuffer[i];
        addSample(out, s.pid, s.smUtil, s.memUtil, s.timeStamp);
        newest = std::max(newest, s.timeStamp);
      }
    } else {
      count = std::min<unsigned>(count, static_cast<unsigned>(state.utilSampleBuffer.size()));
      for (unsigned i = 0; i < count; ++i) {
        const auto &s = state.utilSampleBuffer[i];
        addSample(out, s.pid, s.smUtil, s.memUtil, s.timeStamp);
        newest = std::max(newest, s.timeStamp);
      }
    }
    state.lastUtilTimestamp = newest;
    tidySamples(state, reading, processesKnown);
    return;
  }
}

}  // namespace gpushare
