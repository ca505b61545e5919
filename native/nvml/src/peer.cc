// peerCredentials: getsockopt(SO_PEERCRED) on a connected unix socket's fd (the uid, gid and
// pid the kernel recorded at connect). groupsOf: getgrouplist(), so supplementary groups come
// from NSS (files, LDAP, sssd) as login would compute them, never from the client.
#include "peer.h"

#include "errno_error.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace gpushare {
namespace {

// A whole number in [0, max] from args[i], or a TypeError naming what was expected.
double wholeArg(const Napi::CallbackInfo &info, size_t i, double max, const char *what) {
  double v = info.Length() > i && info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue() : -1;
  if (!(v >= 0 && v <= max && v == std::floor(v)))
    throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a whole number from 0 to " +
                                               std::to_string(static_cast<long long>(max)));
  return v;
}

Napi::Value PeerCredentials(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int fd = static_cast<int>(wholeArg(info, 0, 2147483647.0, "peerCredentials(fd): fd"));
  // Other families answer SO_PEERCRED too (TCP: pid 0, uid and gid -1), which would name a user who is not there.
  int domain = 0;
  socklen_t domainLength = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &domainLength) != 0)
    throw errnoError(env, "getsockopt(SO_DOMAIN) failed on fd " + std::to_string(fd), "getsockopt", errno);
  if (domain != AF_UNIX)
    throw errnoError(env, "fd " + std::to_string(fd) + " is not a unix socket (family " + std::to_string(domain) +
                              "), so the kernel cannot say who is on the other end", "getsockopt", EAFNOSUPPORT);
  struct ucred cred {};
  socklen_t length = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0)
    throw errnoError(env, "getsockopt(SO_PEERCRED) failed on fd " + std::to_string(fd), "getsockopt", errno);
  if (length != sizeof cred)
    throw errnoError(env, "getsockopt(SO_PEERCRED) on fd " + std::to_string(fd) + " returned " + std::to_string(length) +
                              " bytes, not a struct ucred", "getsockopt", EINVAL);
  Napi::Object o = Napi::Object::New(env);
  o.Set("pid", Napi::Number::New(env, cred.pid));
  o.Set("uid", Napi::Number::New(env, cred.uid));
  o.Set("gid", Napi::Number::New(env, cred.gid));
  return o;
}

Napi::Value GroupsOf(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString() || info[0].As<Napi::String>().Utf8Value().empty())
    throw Napi::TypeError::New(env, "groupsOf(user, gid): user must be a non-empty user name");
  std::string user = info[0].As<Napi::String>().Utf8Value();
  if (user.find('\0') != std::string::npos)
    throw Napi::TypeError::New(env, "groupsOf(user, gid): user must not contain a NUL character");
  gid_t gid = static_cast<gid_t>(wholeArg(info, 1, 4294967294.0, "groupsOf(user, gid): gid"));
  std::vector<gid_t> groups(32);
  for (int attempt = 0;; ++attempt) {
    int count = static_cast<int>(groups.size());
    if (getgrouplist(user.c_str(), gid, groups.data(), &count) >= 0) {
      groups.resize(static_cast<size_t>(count));
      break;
    }
    // -1 with count set to the number needed: grow and ask again (NSS may add groups between calls).
    if (attempt >= 8 || count <= 0)
      throw errnoError(env, "getgrouplist(\"" + user + "\") kept asking for a larger buffer", "getgrouplist", ERANGE);
    groups.resize(std::max(static_cast<size_t>(count), groups.size() * 2));
  }
  Napi::Array list = Napi::Array::New(env, groups.size());
  for (size_t i = 0; i < groups.size(); ++i) list.Set(static_cast<uint32_t>(i), Napi::Number::New(env, groups[i]));
  return list;
}

// sendWithFds(fd, data, fds): one sendmsg of data with fds attached (SCM_RIGHTS), not blocking; the
// bytes sent. Node's net module cannot pass descriptors: the engine hands an enrolled process its
// job's gate files this way (electron/engine/server/enrol-answer.ts).
Napi::Value SendWithFds(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int fd = static_cast<int>(wholeArg(info, 0, 2147483647.0, "sendWithFds(fd, data, fds): fd"));
  if (info.Length() < 3 || !info[1].IsBuffer() || !info[2].IsArray())
    throw Napi::TypeError::New(env, "sendWithFds(fd, data, fds): data must be a Buffer and fds an array of descriptors");
  Napi::Buffer<char> data = info[1].As<Napi::Buffer<char>>();
  Napi::Array list = info[2].As<Napi::Array>();
  if (list.Length() > 16) throw Napi::TypeError::New(env, "sendWithFds: at most 16 descriptors");
  std::vector<int> fds;
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value v = list.Get(i);
    double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d <= 2147483647.0 && d == std::floor(d))) throw Napi::TypeError::New(env, "sendWithFds: each fd must be a whole number");
    fds.push_back(static_cast<int>(d));
  }
  struct iovec iov {};
  iov.iov_base = data.Data();
  iov.iov_len = data.Length();
  struct msghdr m {};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (fds.empty() ? 1 : fds.size())), 0);
  if (!fds.empty()) {
    m.msg_control = control.data();
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t sent;
  do sent = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent < 0) throw errnoError(env, "sendmsg(SCM_RIGHTS) failed on fd " + std::to_string(fd), "sendmsg", errno);
  return Napi::Number::New(env, static_cast<double>(sent));
}

}  // namespace

void registerPeer(Napi::Env env, Napi::Object exports) {
  exports.Set("peerCredentials", Napi::Function::New(env, PeerCredentials, "peerCredentials"));
  exports.Set("groupsOf", Napi::Function::New(env, GroupsOf, "groupsOf"));
  exports.Set("sendWithFds", Napi::Function::New(env, SendWithFds, "sendWithFds"));
}

}  // namespace gpushare
