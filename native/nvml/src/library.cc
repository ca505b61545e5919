#include "library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace gpushare {

const char *nvmlCodeName(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS: return "NVML_SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
    case NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
    case 22: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26: return "NVML_ERROR_DEPRECATED";
    case 27: return "NVML_ERROR_NOT_READY";
    case 28: return "NVML_ERROR_GPU_NOT_FOUND";
    case 29: return "NVML_ERROR_INVALID_STATE";
    default: return "NVML_ERROR_UNKNOWN";
  }
}

void NvmlLibrary::open(const std::string &requested) {
  if (handle_) return;  // already open: re-use it
  std::string path = requested;
  if (path.empty()) {
    const char *env = std::getenv("GPUSHARE_NVML_LIB");
    path = env && *env ? env : "libnvidia-ml.so.1";
  }
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    std::string why = err ? err : "dlopen failed";
    if (why.find(path) == std::string::npos) why = path + ": " + why;
    throw LibraryError("library-missing",
                       "Could not load the NVIDIA management library (" + why +
                           "). Is the NVIDIA driver installed? Set GPUSHARE_NVML_LIB to the path of "
                           "libnvidia-ml.so.1 to use another copy.");
  }
  NvmlApi api;
#define GPUSHARE_NVML_RESOLVE(name, params) api.name = reinterpret_cast<name##_fn>(dlsym(handle, #name));
  GPUSHARE_NVML_FUNCS(GPUSHARE_NVML_RESOLVE)
#undef GPUSHARE_NVML_RESOLVE
  api.nvmlErrorString = reinterpret_cast<nvmlErrorString_fn>(dlsym(handle, "nvmlErrorString"));
  if (!api.nvmlInit_v2) {
    dlclose(handle);
    throw LibraryError("library-invalid", path + " does not export nvmlInit_v2, so it is not a usable NVIDIA "
                                          "management library. Set GPUSHARE_NVML_LIB to the path of libnvidia-ml.so.1.");
  }
  api_ = api;
  path_ = path;
  nvmlReturn_t rc = api.nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    std::string message = describeFailure("nvmlInit_v2", rc) + ". Is the NVIDIA kernel driver loaded?";
    api_ = NvmlApi();
    dlclose(handle);
    throw NvmlCallError("nvmlInit_v2", rc, message);
  }
  handle_ = handle;
}

void NvmlLibrary::close() {
  if (!handle_) return;
  if (api_.nvmlShutdown) api_.nvmlShutdown();
  dlclose(handle_);
  handle_ = nullptr;
  api_ = NvmlApi();
}

std::string NvmlLibrary::describeFailure(const char *call, nvmlReturn_t code, int device) const {
  std::string text = call;
  text += " failed";
  if (device >= 0) text += " on GPU " + std::to_string(device);
  text += ": ";
  text += nvmlCodeName(code);
  text += " (" + std::to_string(code) + ")";
  // nvmlErrorString is valid only while the library is loaded, which is true whenever we call it.
  const char *detail = api_.nvmlErrorString ? api_.nvmlErrorString(code) : nullptr;
  if (detail && *detail) text += std::string(": ") + detail;
  return text;
}

void NvmlLibrary::check(const char *call, nvmlReturn_t code, int device) const {
  if (code != NVML_SUCCESS) throw NvmlCallError(call, code, describeFailure(call, code, device));
}

}  // namespace gpushare
