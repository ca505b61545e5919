// The NVIDIA management library opened with dlopen, its entry points, and
// the errors its calls produce.
#pragma once

#include <stdexcept>
#include <string>

#include "../../include/nvml_abi.h"

namespace gpushare {

// One pointer per entry point in nvml_abi.h; NULL where the library lacks it.
struct NvmlApi {
#define GPUSHARE_NVML_MEMBER(name, params) name##_fn name = nullptr;
  GPUSHARE_NVML_FUNCS(GPUSHARE_NVML_MEMBER)
#undef GPUSHARE_NVML_MEMBER
  nvmlErrorString_fn nvmlErrorString = nullptr;
};

// "NVML_ERROR_GPU_IS_LOST" for 15; "NVML_ERROR_UNKNOWN" for codes we do not know.
const char *nvmlCodeName(nvmlReturn_t code);

// An NVML call that failed where the caller cannot carry on (thrown to JS).
struct NvmlCallError : std::runtime_error {
  NvmlCallError(const char *call, nvmlReturn_t code, std::string message)
      : std::runtime_error(std::move(message)), call(call), code(code) {}
  const char *call;
  nvmlReturn_t code;
};

// The library could not be opened or is not NVML (kind: library-missing / library-invalid).
struct LibraryError : std::runtime_error {
  LibraryError(const char *kind, std::string message)
      : std::runtime_error(std::move(message)), kind(kind) {}
  const char *kind;
};

class NvmlLibrary {
 public:
  ~NvmlLibrary() { close(); }

  // dlopen + resolve + nvmlInit_v2. An empty path means GPUSHARE_NVML_LIB, else libnvidia-ml.so.1.
  void open(const std::string &path);
  // nvmlShutdown + dlclose; safe to call when closed.
  void close();
  bool isOpen() const { return handle_ != nullptr; }
  const std::string &path() const { return path_; }
  const NvmlApi &api() const { return api_; }

  // "nvmlDeviceGetTemperature failed on GPU 0: NVML_ERROR_NO_PERMISSION (4): Insufficient Permissions"
  std::string describeFailure(const char *call, nvmlReturn_t code, int device = -1) const;
  // Throws NvmlCallError unless code is NVML_SUCCESS.
  void check(const char *call, nvmlReturn_t code, int device = -1) const;
  // Throws NvmlCallError when the entry point is missing (a required call).
  template <typename Fn>
  Fn require(Fn fn, const char *call) const {
    if (!fn) throw NvmlCallError(call, NVML_ERROR_FUNCTION_NOT_FOUND, describeFailure(call, NVML_ERROR_FUNCTION_NOT_FOUND));
    return fn;
  }

 private:
  void *handle_ = nullptr;
  std::string path_;
  NvmlApi api_;
};

}  // namespace gpushare
