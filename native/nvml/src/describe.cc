#include "describe.h"

#include <cctype>

#include "sample.h"

namespace gpushare {

std::string profileFromMigName(const std::string &name) {
  size_t start = name.find_last_of(' ');
  std::string token = name.substr(start == std::string::npos ? 0 : start + 1);
  size_t g = token.find("g.");
  bool shaped = g != std::string::npos && g > 0 && std::isdigit(static_cast<unsigned char>(token[0])) &&
                token.size() > 2 && token.compare(token.size() - 2, 2, "gb") == 0;
  return shaped ? token : std::string();
}

namespace {

std::string stripMigPrefix(const char *name) {
  std::string text = name;
  return text.rfind("MIG ", 0) == 0 ? text.substr(4) : text;
}

template <typename Fn>
std::string readString(const NvmlLibrary &lib, const char *call, Fn fn, nvmlDevice_t device, unsigned size, int index) {
  lib.require(fn, call);
  std::string buffer(size, '\0');
  lib.check(call, fn(device, &buffer[0], size), index);
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return buffer;
}

unsigned long long readMemoryTotal(const NvmlLibrary &lib, nvmlDevice_t device, int index) {
  const NvmlApi &api = lib.api();
  if (api.nvmlDeviceGetMemoryInfo_v2) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    nvmlReturn_t rc = api.nvmlDeviceGetMemoryInfo_v2(device, &m);
    if (rc == NVML_SUCCESS) return m.total;
    if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND &&
        rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
      lib.check("nvmlDeviceGetMemoryInfo_v2", rc, index);
  }
  nvmlMemory_t m{};
  lib.check("nvmlDeviceGetMemoryInfo",
            lib.require(api.nvmlDeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo")(device, &m), index);
  return m.total;
}

std::optional<unsigned> readSmCount(FieldChecker &check, nvmlDevice_t device) {
  auto fn = check.lib().api().nvmlDeviceGetAttributes_v2;
  nvmlDeviceAttributes_t attributes{};
  if (!fn || !check.ok("nvmlDeviceGetAttributes_v2", fn(device, &attributes))) return std::nullopt;
  return attributes.multiprocessorCount;
}

struct ProfileFacts {
  std::string name;
  unsigned sliceCount = 0;
};

// GetGpuInstanceProfileInfoV takes a profile *index* (NVML_GPU_INSTANCE_PROFILE_*), not the
// profile id GpuInstanceGetInfo reports, so try the id first and then scan indexes for a match.
std::optional<ProfileFacts> profileFacts(FieldChecker &check, nvmlDevice_t parent, unsigned profileId) {
  auto fn = check.lib().api().nvmlDeviceGetGpuInstanceProfileInfoV;
  if (!fn) return std::nullopt;
  auto lookup = [&](unsigned profile) -> std::optional<ProfileFacts> {
    nvmlGpuInstanceProfileInfo_v2_t info{};
    info.version = nvmlGpuInstanceProfileInfo_v2;
    nvmlReturn_t rc = fn(parent, profile, &info);
    if (rc == NVML_ERROR_GPU_IS_LOST) check.ok("nvmlDeviceGetGpuInstanceProfileInfoV", rc);
    if (rc != NVML_SUCCESS || info.id != profileId) return std::nullopt;
    info.name[sizeof info.name - 1] = '\0';
    return ProfileFacts{stripMigPrefix(info.name), info.sliceCount};
  };
  if (auto facts = lookup(profileId)) return facts;
  for (unsigned profile = 0; profile < 32; ++profile) {
    if (profile == profileId) continue;
    if (auto facts = lookup(profile)) return facts;
  }
  return std::nullopt;
}

// The GPU's compute slices: the largest slice count of the GPU-instance profiles it offers.
std::optional<unsigned> gpuComputeSlices(const NvmlLibrary &lib, nvmlDevice_t parent) {
  auto fn = lib.api().nvmlDeviceGetGpuInstanceProfileInfoV;
  if (!fn) return std::nullopt;
  unsigned most = 0;
  for (unsigned profile = 0; profile < 32; ++profile) {
    nvmlGpuInstanceProfileInfo_v2_t info{};
    info.version = nvmlGpuInstanceProfileInfo_v2;
    if (fn(parent, profile, &info) == NVML_SUCCESS && info.sliceCount > most) most = info.sliceCount;
  }
  return most > 0 ? std::optional<unsigned>(most) : std::nullopt;
}

void describeMigDevice(const NvmlLibrary &lib, FieldChecker &check, nvmlDevice_t parent, unsigned i,
                       nvmlDevice_t mig, DeviceDescription &out) {
  const NvmlApi &api = lib.api();
  int index = check.device();
  MigDescription d;
  d.index = i;
  try {
    d.uuid = readString(lib, "nvmlDeviceGetUUID", api.nvmlDeviceGetUUID, mig, NVML_DEVICE_UUID_V2_BUFFER_SIZE, index);
    d.name = readString(lib, "nvmlDeviceGetName", api.nvmlDeviceGetName, mig, NVML_DEVICE_NAME_V2_BUFFER_SIZE, index);
    unsigned gi = 0, ci = 0;
    lib.check("nvmlDeviceGetGpuInstanceId",
              lib.require(api.nvmlDeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId")(mig, &gi), index);
    lib.check("nvmlDeviceGetComputeInstanceId",
              lib.require(api.nvmlDeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId")(mig, &ci), index);
    d.gpuInstanceId = gi;
    d.computeInstanceId = ci;
    d.memoryTotal = readMemoryTotal(lib, mig, index);
  } catch (const NvmlCallError &e) {
    if (e.code == NVML_ERROR_GPU_IS_LOST) throw;
    check.record(e.call, e.code);  // a MIG device we cannot identify is left out
    return;
  }
  d.smCount = readSmCount(check, mig);
  if (api.nvmlDeviceGetGpuInstanceById && api.nvmlGpuInstanceGetInfo) {
    nvmlGpuInstance_t instance = nullptr;
    nvmlGpuInstanceInfo_t info{};
    if (check.ok("nvmlDeviceGetGpuInstanceById", api.nvmlDeviceGetGpuInstanceById(parent, d.gpuInstanceId, &instance)) &&
        check.ok("nvmlGpuInstanceGetInfo", api.nvmlGpuInstanceGetInfo(instance, &info))) {
      d.profileId = info.profileId;
      d.placement = info.placement;
      if (auto facts = profileFacts(check, parent, info.profileId)) {
        d.profileName = facts->name;
        if (facts->sliceCount > 0) d.computeSlices = facts->sliceCount;
      }
    }
  }
  if (!d.profileName) {
    std::string parsed = profileFromMigName(d.name);
    if (!parsed.empty()) d.profileName = parsed;
  }
  out.migDevices.push_back(std::move(d));
}

void describeMigDevices(const NvmlLibrary &lib, FieldChecker &check, nvmlDevice_t parent, DeviceDescription &out) {
  const NvmlApi &api = lib.api();
  if (!api.nvmlDeviceGetMaxMigDeviceCount || !api.nvmlDeviceGetMigDeviceHandleByIndex) return;
  unsigned max = 0;
  if (!check.ok("nvmlDeviceGetMaxMigDeviceCount", api.nvmlDeviceGetMaxMigDeviceCount(parent, &max))) return;
  out.migComputeSlices = gpuComputeSlices(lib, parent);
  for (unsigned i = 0; i < max; ++i) {
    nvmlDevice_t mig = nullptr;
    nvmlReturn_t rc = api.nvmlDeviceGetMigDeviceHandleByIndex(parent, i, &mig);
    if (rc == NVML_ERROR_NOT_FOUND) continue;  // an empty slot
    if (!check.ok("nvmlDeviceGetMigDeviceHandleByIndex", rc)) continue;
    describeMigDevice(lib, check, parent, i, mig, out);
  }
}

}  // namespace

DeviceDescription describeDevice(const NvmlLibrary &lib, DeviceState &state, unsigned index) {
  const NvmlApi &api = lib.api();
  int i = static_cast<int>(index);
  DeviceDescription out;
  out.index = index;
  nvmlDevice_t device = deviceHandle(lib, state, index);
  out.uuid = readString(lib, "nvmlDeviceGetUUID", api.nvmlDeviceGetUUID, device, NVML_DEVICE_UUID_V2_BUFFER_SIZE, i);
  out.name = readString(lib, "nvmlDeviceGetName", api.nvmlDeviceGetName, device, NVML_DEVICE_NAME_V2_BUFFER_SIZE, i);
  nvmlPciInfo_t pci{};
  lib.check("nvmlDeviceGetPciInfo_v3", lib.require(api.nvmlDeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3")(device, &pci), i);
  pci.busId[sizeof pci.busId - 1] = '\0';
  out.pciBusId = pci.busId;
  out.memoryTotal = readMemoryTotal(lib, device, i);
  FieldChecker check(lib, i, out.errors);
  try {
    out.smCount = readSmCount(check, device);
    auto migMode = api.nvmlDeviceGetMigMode;
    unsigned current = 0, pending = 0;
    if (migMode && check.ok("nvmlDeviceGetMigMode", migMode(device, &current, &pending)))
      out.migMode = MigModeValue{current == NVML_DEVICE_MIG_ENABLE, pending == NVML_DEVICE_MIG_ENABLE};
    if (out.migMode && out.migMode->current) describeMigDevices(lib, check, device, out);
  } catch (const GpuLost &lost) {
    lib.check(lost.call, NVML_ERROR_GPU_IS_LOST, i);
  }
  return out;
}

}  // namespace gpushare
