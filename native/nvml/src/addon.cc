// N-API glue over NvmlLibrary, describe and sample; electron/engine/gpu/nvml-addon.ts turns
// it into the NvmlBinding surface. One addon instance (one NVML session) per JS environment.
#include <napi.h>

#include "checkpoint.h"
#include "describe.h"
#include "gpm.h"
#include "packed.h"
#include "peer.h"
#include "sample.h"
#include "signal.h"

namespace gpushare {
namespace {

Napi::Value number(Napi::Env env, double v) { return Napi::Number::New(env, v); }

template <typename T>
Napi::Value orNull(Napi::Env env, const std::optional<T> &v) {
  return v ? number(env, static_cast<double>(*v)) : env.Null();
}

Napi::Value migModeValue(Napi::Env env, const std::optional<MigModeValue> &mode) {
  if (!mode) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("current", mode->current);
  o.Set("pending", mode->pending);
  return o;
}

Napi::Array errorList(Napi::Env env, const std::vector<FieldError> &errors) {
  Napi::Array list = Napi::Array::New(env, errors.size());
  for (size_t i = 0; i < errors.size(); ++i) {
    Napi::Object e = Napi::Object::New(env);
    e.Set("call", errors[i].call);
    e.Set("code", number(env, errors[i].code));
    e.Set("name", nvmlCodeName(errors[i].code));
    e.Set("message", errors[i].message);
    list.Set(static_cast<uint32_t>(i), e);
  }
  return list;
}

Napi::Object describeObject(Napi::Env env, const DeviceDescription &d) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("index", number(env, d.index));
  o.Set("uuid", d.uuid);
  o.Set("name", d.name);
  o.Set("pciBusId", d.pciBusId);
  o.Set("memoryTotal", number(env, static_cast<double>(d.memoryTotal)));
  o.Set("smCount", orNull(env, d.smCount));
  o.Set("migMode", migModeValue(env, d.migMode));
  Napi::Array migs = Napi::Array::New(env, d.migDevices.size());
  for (size_t i = 0; i < d.migDevices.size(); ++i) {
    const MigDescription &m = d.migDevices[i];
    Napi::Object mo = Napi::Object::New(env);
    mo.Set("index", number(env, m.index));
    mo.Set("uuid", m.uuid);
    mo.Set("name", m.name);
    mo.Set("profileName", m.profileName ? Napi::String::New(env, *m.profileName) : env.Null());
    mo.Set("profileId", orNull(env, m.profileId));
    mo.Set("gpuInstanceId", number(env, m.gpuInstanceId));
    mo.Set("computeInstanceId", number(env, m.computeInstanceId));
    mo.Set("memoryTotal", number(env, static_cast<double>(m.memoryTotal)));
    mo.Set("smCount", orNull(env, m.smCount));
    mo.Set("computeSlices", orNull(env, m.computeSlices));
    if (m.placement) {
      Napi::Object p = Napi::Object::New(env);
      p.Set("start", number(env, m.placement->start));
      p.Set("size", number(env, m.placement->size));
      mo.Set("placement", p);
    } else {
      mo.Set("placement", env.Null());
    }
    migs.Set(static_cast<uint32_t>(i), mo);
  }
  o.Set("migDevices", migs);
  o.Set("migComputeSlices", orNull(env, d.migComputeSlices));
  o.Set("errors", errorList(env, d.errors));
  return o;
}

// A JS Error carrying {call, code, codeName} (and kind) for the TS side to turn into NvmlError.
Napi::Error jsError(Napi::Env env, const std::string &message, const char *kind, const char *call, int code) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("kind", kind);
  error.Set("call", call);
  error.Set("code", number(env, code));
  error.Set("codeName", nvmlCodeName(code));
  return error;
}

class NvmlAddon : public Napi::Addon<NvmlAddon> {
 public:
  NvmlAddon(Napi::Env env, Napi::Object exports) {
    // The TS decoder checks these against its own copy, so a stale build fails loudly.
    Napi::Object layout = Napi::Object::New(env);
    layout.Set("version", kPackedLayoutVersion);
    layout.Set("deviceFields", static_cast<double>(kDeviceFields));
    layout.Set("processFields", static_cast<double>(kProcessFields));
    layout.Set("utilFields", static_cast<double>(kUtilFields));
    layout.Set("migFields", static_cast<double>(kMigFields));
    exports.Set("packedLayout", layout);
    DefineAddon(exports, {
                             InstanceMethod("open", &NvmlAddon::Open),
                             InstanceMethod("close", &NvmlAddon::Close),
                             InstanceMethod("isOpen", &NvmlAddon::IsOpen),
                             InstanceMethod("system", &NvmlAddon::System),
                             InstanceMethod("deviceCount", &NvmlAddon::DeviceCount),
                             InstanceMethod("describeDevice", &NvmlAddon::DescribeDevice),
                             InstanceMethod("samplePacked", &NvmlAddon::SamplePacked),
                             InstanceMethod("sampleErrors", &NvmlAddon::SampleErrors),
                             InstanceMethod("migActivity", &NvmlAddon::MigActivity),
                         });
    registerCheckpoint(env, exports);  // libcuda's cuCheckpointProcess*, separate from the NVML session
    registerPeer(env, exports);        // SO_PEERCRED and getgrouplist, for the box daemon's socket: no NVML needed
    registerSignal(env, exports);      // pidfd signals to one process (pid and start time): no NVML needed
  }

 private:
  // Runs body, turning our C++ errors into JS errors the TS side recognises.
  template <typename Body>
  Napi::Value guarded(Napi::Env env, Body body) {
    try {
      return body();
    } catch (const NvmlCallError &e) {
      throw jsError(env, e.what(), "call-failed", e.call, e.code);
    } catch (const LibraryError &e) {
      throw jsError(env, e.what(), e.kind, "dlopen", NVML_ERROR_LIBRARY_NOT_FOUND);
    } catch (const std::bad_alloc &) {
      throw jsError(env, "Out of memory while reading the GPUs", "call-failed", "malloc", NVML_ERROR_MEMORY);
    }
  }

  void requireOpen() const {
    if (!library_.isOpen())
      throw NvmlCallError("nvmlInit_v2", NVML_ERROR_UNINITIALIZED,
                          "The NVIDIA management library is not open: call open() first (NVML_ERROR_UNINITIALIZED (1))");
  }

  unsigned indexArg(const Napi::CallbackInfo &info) const {
    double v = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
    if (!(v >= 0 && v < 4294967296.0 && v == static_cast<double>(static_cast<uint32_t>(v))))
      throw NvmlCallError("nvmlDeviceGetHandleByIndex_v2", NVML_ERROR_INVALID_ARGUMENT,
                          "A GPU index must be a whole number >= 0 (NVML_ERROR_INVALID_ARGUMENT (2))");
    return static_cast<unsigned>(v);
  }

  // A GPU index argument that names a device the driver has (devices_ is sized by the driver's count).
  unsigned existingIndex(const Napi::CallbackInfo &info) {
    unsigned index = indexArg(info);
    unsigned count = deviceCount();
    if (index >= count)
      throw NvmlCallError("nvmlDeviceGetHandleByIndex_v2", NVML_ERROR_INVALID_ARGUMENT,
                          "There is no GPU " + std::to_string(index) + " (the driver reports " + std::to_string(count) +
                              "): NVML_ERROR_INVALID_ARGUMENT (2)");
    return index;
  }

  unsigned deviceCount() {
    requireOpen();
    unsigned count = 0;
    auto fn = library_.require(library_.api().nvmlDeviceGetCount_v2, "nvmlDeviceGetCount_v2");
    library_.check("nvmlDeviceGetCount_v2", fn(&count));
    if (devices_.size() < count) devices_.resize(count);
    return count;
  }

  Napi::Value systemObject(Napi::Env env) {
    requireOpen();
    const NvmlApi &api = library_.api();
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {0};
    char nvml[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {0};
    library_.check("nvmlSystemGetDriverVersion",
                   library_.require(api.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion")(driver, sizeof driver));
    library_.check("nvmlSystemGetNVMLVersion",
                   library_.require(api.nvmlSystemGetNVMLVersion, "nvmlSystemGetNVMLVersion")(nvml, sizeof nvml));
    driver[sizeof driver - 1] = nvml[sizeof nvml - 1] = '\0';
    int cuda = 0;
    bool hasCuda = api.nvmlSystemGetCudaDriverVersion_v2 && api.nvmlSystemGetCudaDriverVersion_v2(&cuda) == NVML_SUCCESS;
    Napi::Object o = Napi::Object::New(env);
    o.Set("driverVersion", driver);
    o.Set("nvmlVersion", nvml);
    o.Set("cudaDriverVersion", hasCuda ? number(env, cuda) : env.Null());
    o.Set("libraryPath", library_.path());
    return o;
  }

  Napi::Value Open(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() -> Napi::Value {
      std::string path = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
      if (!library_.isOpen()) {
        devices_.clear();
        library_.open(path);
      }
      return systemObject(info.Env());
    });
  }

  Napi::Value Close(const Napi::CallbackInfo &info) {
    for (DeviceState &device : devices_) releaseGpmSamples(library_, device);  // while the library is open
    library_.close();
    devices_.clear();
    return info.Env().Undefined();
  }

  Napi::Value IsOpen(const Napi::CallbackInfo &info) { return Napi::Boolean::New(info.Env(), library_.isOpen()); }

  Napi::Value System(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() { return systemObject(info.Env()); });
  }

  Napi::Value DeviceCount(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() { return number(info.Env(), deviceCount()); });
  }

  Napi::Value DescribeDevice(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() -> Napi::Value {
      unsigned index = existingIndex(info);
      DeviceDescription d = describeDevice(library_, devices_[index], index);
      return describeObject(info.Env(), d);
    });
  }

  // samplePacked(index?) samples one GPU, or all when index is undefined, into the packed
  // buffer (re-used between calls, so the hot path allocates nothing) and returns it.
  Napi::Value SamplePacked(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() -> Napi::Value {
      packing_.clear();
      if (info.Length() > 0 && !info[0].IsUndefined()) {
        unsigned index = existingIndex(info);
        sampleDevice(library_, devices_[index], index);
        packing_.push_back(&devices_[index].reading);
      } else {
        unsigned count = deviceCount();
        for (unsigned i = 0; i < count; ++i) {
          sampleDevice(library_, devices_[i], i);
          packing_.push_back(&devices_[i].reading);
        }
      }
      Napi::ArrayBuffer buffer = packedBuffer(info.Env(), packedSize(packing_));
      packReadings(packing_, static_cast<double *>(buffer.Data()));
      return buffer;
    });
  }

  // The errors of device index in the last samplePacked (read only when its error count is > 0).
  Napi::Value SampleErrors(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() -> Napi::Value {
      unsigned index = indexArg(info);
      if (index >= devices_.size()) return Napi::Array::New(info.Env());
      return errorList(info.Env(), devices_[index].reading.errors);
    });
  }

  // The GPM SM readings of device index's MIG slices in the last samplePacked: [{gpuInstanceId, smUtil,
  // smOccupancy}], only slices with a reading. Apart from the packed layout, so an older decoder still loads.
  Napi::Value MigActivity(const Napi::CallbackInfo &info) {
    return guarded(info.Env(), [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      unsigned index = indexArg(info);
      Napi::Array out = Napi::Array::New(env);
      if (index >= devices_.size()) return out;
      uint32_t n = 0;
      for (const MigMemory &m : devices_[index].reading.migDevices) {
        if (!m.smUtil && !m.smOccupancy) continue;
        Napi::Object o = Napi::Object::New(env);
        o.Set("gpuInstanceId", number(env, m.gpuInstanceId));
        o.Set("computeInstanceId", number(env, m.computeInstanceId));
        o.Set("smUtil", m.smUtil ? Napi::Value(Napi::Number::New(env, *m.smUtil)) : env.Null());
        o.Set("smOccupancy", m.smOccupancy ? Napi::Value(Napi::Number::New(env, *m.smOccupancy)) : env.Null());
        out.Set(n++, o);
      }
      return out;
    });
  }

  Napi::ArrayBuffer packedBuffer(Napi::Env env, size_t doubles) {
    size_t bytes = doubles * sizeof(double);
    if (!packed_.IsEmpty()) {
      Napi::ArrayBuffer current = packed_.Value();
      if (current.Data() && current.ByteLength() >= bytes) return current;  // NULL once detached by JS
    }
    Napi::ArrayBuffer fresh = Napi::ArrayBuffer::New(env, (doubles + doubles / 2 + 512) * sizeof(double));
    packed_ = Napi::Persistent(fresh);
    return fresh;
  }

  NvmlLibrary library_;
  std::vector<DeviceState> devices_;
  std::vector<const DeviceReading *> packing_;
  Napi::Reference<Napi::ArrayBuffer> packed_;
};

}  // namespace
}  // namespace gpushare

using gpushare::NvmlAddon;
NODE_API_ADDON(NvmlAddon)
