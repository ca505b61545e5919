// Parking: the driver's cuCheckpointProcess* calls, looked up in libcuda.so.1
// with dlopen/dlsym (never linked), exposed to JS as checkpoint* functions.
#pragma once

#include <napi.h>

namespace gpushare {

// Adds checkpointSupported, checkpointState, checkpointRestoreThreadId (sync) and
// checkpointLock/Checkpoint/Restore/Unlock (Promises, run off the JS thread) to exports.
void registerCheckpoint(Napi::Env env, Napi::Object exports);

}  // namespace gpushare
