// Signalling one process as the kernel names it (pid and start time), through a pidfd, so a
// pid that another process took between the check and the signal never gets the root daemon's signal.
#pragma once

#include <napi.h>

namespace gpushare {

// Adds signalIfSame(pid, startTicks, signal, group) to exports. Needs no NVML.
void registerSignal(Napi::Env env, Napi::Object exports);

}  // namespace gpushare
