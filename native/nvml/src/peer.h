// Who is on the other end of a unix socket, from the kernel (SO_PEERCRED), and a user's
// groups from the system's account databases (NSS): the box daemon trusts nothing a client says.
#pragma once

#include <napi.h>

namespace gpushare {

// Adds peerCredentials(fd) and groupsOf(user, gid) to exports. Neither needs NVML.
void registerPeer(Napi::Env env, Napi::Object exports);

}  // namespace gpushare
