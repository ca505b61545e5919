// One shape for a failed system call, shared by the addon's non-NVML calls (peer.cc, signal.cc):
// a JS Error naming the call and errno ("…: EBADF (9): Bad file descriptor"), with call/errno/code set.
#pragma once

#include <napi.h>

#include <cstring>
#include <string>

namespace gpushare {

inline Napi::Error errnoError(Napi::Env env, const std::string &what, const char *call, int err) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char *name = strerrorname_np(err);
#else
  const char *name = nullptr;  // older glibc (Ubuntu 20.04): the number and the sentence still say it
#endif
  std::string code = name ? name : "errno " + std::to_string(err);
  Napi::Error error = Napi::Error::New(env, what + ": " + code + " (" + std::to_string(err) + "): " + std::strerror(err));
  error.Set("call", call);
  error.Set("errno", Napi::Number::New(env, err));
  error.Set("code", code);
  return error;
}

}  // namespace gpushare
