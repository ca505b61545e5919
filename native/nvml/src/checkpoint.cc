// The driver's process checkpointing (cuCheckpointProcess*, CUDA 12.8 / driver 570+),
// called by the engine on another process's pid. libcuda.so.1 (or GPUSHARE_CUDA_LIB)
// is dlopen'ed on first use with our own declarations (../include/cuda_abi.h);
// a driver without the calls is a sentence, never a crash. Lock, checkpoint, restore
// and unlock can take seconds on a real GPU (memory copies), so they run on worker
// threads and return Promises.
#include "checkpoint.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <string>

#include "../../include/cuda_abi.h"

namespace gpushare {
namespace {

struct CudaCheckpointLibrary {
  std::string path;
  void *handle = nullptr;
  bool initialized = false;  // cuInit succeeded: the driver may have threads, never dlclose
  std::string unsupported;   // empty when every call is there and cuInit worked
  cuGetErrorName_fn errorName = nullptr;
  cuGetErrorString_fn errorString = nullptr;
  cuCheckpointProcessGetState_fn getState = nullptr;
  cuCheckpointProcessGetRestoreThreadId_fn getRestoreThreadId = nullptr;  // optional
  cuCheckpointProcessLock_fn lock = nullptr;
  cuCheckpointProcessCheckpoint_fn checkpoint = nullptr;
  cuCheckpointProcessRestore_fn restore = nullptr;
  cuCheckpointProcessUnlock_fn unlock = nullptr;

  ~CudaCheckpointLibrary() {
    if (handle && !initialized) dlclose(handle);
  }
};

std::mutex g_mutex;
std::shared_ptr<CudaCheckpointLibrary> g_library;  // the last one opened; workers hold their own reference

const char *fallbackName(CUresult code) {
  switch (code) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_OPERATING_SYSTEM: return "CUDA_ERROR_OPERATING_SYSTEM";
    case CUDA_ERROR_ILLEGAL_STATE: return "CUDA_ERROR_ILLEGAL_STATE";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_NOT_PERMITTED: return "CUDA_ERROR_NOT_PERMITTED";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_TIMEOUT: return "CUDA_ERROR_TIMEOUT";
    default: return "CUDA_ERROR_UNKNOWN";
  }
}

std::string codeName(const CudaCheckpointLibrary &lib, CUresult code) {
  const char *name = nullptr;
  if (lib.errorName && lib.errorName(code, &name) == CUDA_SUCCESS && name && *name) return name;
  return fallbackName(code);
}

// "cuCheckpointProcessRestore failed for pid 4242: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
std::string describe(const CudaCheckpointLibrary &lib, const char *call, int pid, CUresult code) {
  std::string text = std::string(call) + " failed for pid " + std::to_string(pid) + ": " + codeName(lib, code) + " (" +
                     std::to_string(code) + ")";
  const char *detail = nullptr;
  if (lib.errorString && lib.errorString(code, &detail) == CUDA_SUCCESS && detail && *detail) text += std::string(": ") + detail;
  return text;
}

std::string requestedPath(const std::string &requested) {
  if (!requested.empty()) return requested;
  const char *env = std::getenv("GPUSHARE_CUDA_LIB");
  return env && *env ? env : "libcuda.so.1";
}

std::shared_ptr<CudaCheckpointLibrary> load(const std::string &path) {
  auto lib = std::make_shared<CudaCheckpointLibrary>();
  lib->path = path;
  dlerror();
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char *err = dlerror();
    lib->unsupported = "not supported by this driver: could not load " + path + " (" + (err ? err : "dlopen failed") +
                       "). Is the NVIDIA driver installed? Set GPUSHARE_CUDA_LIB to the path of libcuda.so.1 to use another copy.";
    return lib;
  }
  auto sym = [&](const char *name) { return dlsym(lib->handle, name); };
  lib->lock = reinterpret_cast<cuCheckpointProcessLock_fn>(sym("cuCheckpointProcessLock"));
  lib->checkpoint = reinterpret_cast<cuCheckpointProcessCheckpoint_fn>(sym("cuCheckpointProcessCheckpoint"));
  lib->restore = reinterpret_cast<cuCheckpointProcessRestore_fn>(sym("cuCheckpointProcessRestore"));
  lib->unlock = reinterpret_cast<cuCheckpointProcessUnlock_fn>(sym("cuCheckpointProcessUnlock"));
  lib->getState = reinterpret_cast<cuCheckpointProcessGetState_fn>(sym("cuCheckpointProcessGetState"));
  lib->getRestoreThreadId = reinterpret_cast<cuCheckpointProcessGetRestoreThreadId_fn>(sym("cuCheckpointProcessGetRestoreThreadId"));
  lib->errorName = reinterpret_cast<cuGetErrorName_fn>(sym("cuGetErrorName"));
  lib->errorString = reinterpret_cast<cuGetErrorString_fn>(sym("cuGetErrorString"));
  const std::pair<const char *, void *> required[] = {
      {"cuCheckpointProcessLock", reinterpret_cast<void *>(lib->lock)},
      {"cuCheckpointProcessCheckpoint", reinterpret_cast<void *>(lib->checkpoint)},
      {"cuCheckpointProcessRestore", reinterpret_cast<void *>(lib->restore)},
      {"cuCheckpointProcessUnlock", reinterpret_cast<void *>(lib->unlock)},
      {"cuCheckpointProcessGetState", reinterpret_cast<void *>(lib->getState)},
  };
  for (const auto &[name, fn] : required) {
    if (!fn) {
      lib->unsupported = "not supported by this driver: " + path + " does not export " + name + " (needs driver 570 or newer)";
      return lib;
    }
  }
  auto init = reinterpret_cast<cuInit_fn>(sym("cuInit"));
  if (!init) {
    lib->unsupported = "not supported by this driver: " + path + " does not export cuInit, so it is not a CUDA driver library";
    return lib;
  }
  CUresult rc = init(0);
  if (rc != CUDA_SUCCESS) {
    lib->unsupported = "not supported here: cuInit failed: " + codeName(*lib, rc) + " (" + std::to_string(rc) +
                       "). Is the NVIDIA kernel driver loaded?";
    return lib;
  }
  lib->initialized = true;
  return lib;
}

// The library for this path (argument, else GPUSHARE_CUDA_LIB, else libcuda.so.1), opened once.
std::shared_ptr<CudaCheckpointLibrary> library(const std::string &requested = "") {
  std::string path = requestedPath(requested);
  std::lock_guard<std::mutex> guard(g_mutex);
  if (!g_library || g_library->path != path) g_library = load(path);
  return g_library;
}

// A JS Error carrying {kind, call, code, codeName}, like the NVML ones.
Napi::Error cudaError(Napi::Env env, const std::string &message, const char *kind, const std::string &call, CUresult code,
                      const std::string &name) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("kind", kind);
  error.Set("call", call);
  error.Set("code", Napi::Number::New(env, code));
  error.Set("codeName", name);
  return error;
}

// The library checkpointSupported chose last (else the default one), if it has every call.
std::shared_ptr<CudaCheckpointLibrary> supportedLibrary(Napi::Env env, const char *call) {
  std::shared_ptr<CudaCheckpointLibrary> lib;
  {
    std::lock_guard<std::mutex> guard(g_mutex);
    lib = g_library;
  }
  if (!lib) lib = library();
  if (!lib->unsupported.empty())
    throw cudaError(env, lib->unsupported, "unsupported", call, CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED");
  return lib;
}

int pidArgument(const Napi::CallbackInfo &info) {
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "pid must be a number");
  double pid = info[0].As<Napi::Number>().DoubleValue();
  if (!(pid > 0 && pid <= 4194304 && pid == static_cast<int>(pid)))
    throw Napi::RangeError::New(info.Env(), "pid must be a positive integer");
  return static_cast<int>(pid);
}

enum class Action { Lock, Checkpoint, Restore, Unlock };

class CheckpointWorker : public Napi::AsyncWorker {
 public:
  CheckpointWorker(Napi::Env env, std::shared_ptr<CudaCheckpointLibrary> lib, Action action, int pid, unsigned timeoutMs)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), lib_(std::move(lib)), action_(action),
        pid_(pid), timeoutMs_(timeoutMs) {}

  Napi::Promise promise() const { return deferred_.Promise(); }

  void Execute() override {
    switch (action_) {
      case Action::Lock: {
        CUcheckpointLockArgs args{};
        args.timeoutMs = timeoutMs_;
        rc_ = lib_->lock(pid_, &args);
        break;
      }
      case Action::Checkpoint: {
        CUcheckpointCheckpointArgs args{};
        rc_ = lib_->checkpoint(pid_, &args);
        break;
      }
      case Action::Restore: {
        CUcheckpointRestoreArgs args{};  // no GPU pairs: the same GPUs
        rc_ = lib_->restore(pid_, &args);
        break;
      }
      case Action::Unlock: {
        CUcheckpointUnlockArgs args{};
        rc_ = lib_->unlock(pid_, &args);
        break;
      }
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (rc_ == CUDA_SUCCESS) {
      deferred_.Resolve(env.Undefined());
      return;
    }
    const char *call = callName();
    deferred_.Reject(cudaError(env, describe(*lib_, call, pid_, rc_), "call-failed", call, rc_, codeName(*lib_, rc_)).Value());
  }

 private:
  const char *callName() const {
    switch (action_) {
      case Action::Lock: return "cuCheckpointProcessLock";
      case Action::Checkpoint: return "cuCheckpointProcessCheckpoint";
      case Action::Restore: return "cuCheckpointProcessRestore";
      case Action::Unlock: return "cuCheckpointProcessUnlock";
    }
    return "cuCheckpointProcess";
  }

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<CudaCheckpointLibrary> lib_;
  Action action_;
  int pid_;
  unsigned timeoutMs_;
  CUresult rc_ = CUDA_SUCCESS;
};

Napi::Value start(const Napi::CallbackInfo &info, Action action, const char *call) {
  Napi::Env env = info.Env();
  int pid = pidArgument(info);
  unsigned timeoutMs = 0;
  if (action == Action::Lock && info.Length() > 1 && info[1].IsNumber()) {
    double t = info[1].As<Napi::Number>().DoubleValue();
    timeoutMs = t > 0 ? (t > 4294967295.0 ? 4294967295u : static_cast<unsigned>(t)) : 0;
  }
  auto *worker = new CheckpointWorker(env, supportedLibrary(env, call), action, pid, timeoutMs);
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

Napi::Value Supported(const Napi::CallbackInfo &info) {
  std::string path = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  auto lib = library(path);
  return lib->unsupported.empty() ? info.Env().Null() : Napi::String::New(info.Env(), lib->unsupported);
}

Napi::Value State(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int pid = pidArgument(info);
  auto lib = supportedLibrary(env, "cuCheckpointProcessGetState");
  CUprocessState state = CU_PROCESS_STATE_RUNNING;
  CUresult rc = lib->getState(pid, &state);
  if (rc != CUDA_SUCCESS)
    throw cudaError(env, describe(*lib, "cuCheckpointProcessGetState", pid, rc), "call-failed", "cuCheckpointProcessGetState", rc,
                    codeName(*lib, rc));
  static const char *const names[] = {"running", "locked", "checkpointed", "failed"};
  return Napi::String::New(env, state >= 0 && state <= 3 ? names[state] : "failed");
}

Napi::Value RestoreThreadId(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int pid = pidArgument(info);
  auto lib = supportedLibrary(env, "cuCheckpointProcessGetRestoreThreadId");
  if (!lib->getRestoreThreadId) return env.Null();
  int tid = 0;
  CUresult rc = lib->getRestoreThreadId(pid, &tid);
  if (rc != CUDA_SUCCESS)
    throw cudaError(env, describe(*lib, "cuCheckpointProcessGetRestoreThreadId", pid, rc), "call-failed",
                    "cuCheckpointProcessGetRestoreThreadId", rc, codeName(*lib, rc));
  return Napi::Number::New(env, tid);
}

}  // namespace

void registerCheckpoint(Napi::Env env, Napi::Object exports) {
  exports.Set("checkpointSupported", Napi::Function::New(env, Supported, "checkpointSupported"));
  exports.Set("checkpointState", Napi::Function::New(env, State, "checkpointState"));
  exports.Set("checkpointRestoreThreadId", Napi::Function::New(env, RestoreThreadId, "checkpointRestoreThreadId"));
  exports.Set("checkpointLock", Napi::Function::New(env, [](const Napi::CallbackInfo &info) {
                return start(info, Action::Lock, "cuCheckpointProcessLock");
              }, "checkpointLock"));
  exports.Set("checkpointCheckpoint", Napi::Function::New(env, [](const Napi::CallbackInfo &info) {
                return start(info, Action::Checkpoint, "cuCheckpointProcessCheckpoint");
              }, "checkpointCheckpoint"));
  exports.Set("checkpointRestore", Napi::Function::New(env, [](const Napi::CallbackInfo &info) {
                return start(info, Action::Restore, "cuCheckpointProcessRestore");
              }, "checkpointRestore"));
  exports.Set("checkpointUnlock", Napi::Function::New(env, [](const Napi::CallbackInfo &info) {
                return start(info, Action::Unlock, "cuCheckpointProcessUnlock");
              }, "checkpointUnlock"));
}

}  // namespace gpushare
