// signalIfSame: pidfd_open(pid) first, then /proc/PID/stat's start time: read after the pidfd is open,
// a match means the pidfd holds that very process (it cannot have been reused before the open, or the
// start time would differ), and pidfd_send_signal reaches it and nothing else, whatever happens to the pid.
#include "signal.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "errno_error.h"

// Headers older than Linux 5.3 lack them; the numbers are the same on every architecture but alpha.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2)  // Linux 6.9: the group whose id is the pidfd's pid
#endif

namespace gpushare {
namespace {

enum class Stat { Same, Other, Gone };

// Field 22 of /proc/PID/stat against the expected start time; comm (field 2) may hold spaces and ')'.
Stat compareStartTime(pid_t pid, unsigned long long expected) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Stat::Gone;
  char buffer[1024];
  ssize_t n;
  do n = read(fd, buffer, sizeof buffer - 1);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0) return Stat::Gone;
  buffer[n] = '\0';
  char *p = strrchr(buffer, ')');
  if (!p) return Stat::Gone;
  p += 2;  // past ") ": field 3 (state)
  for (int field = 3; field < 22 && p; ++field) {
    p = strchr(p, ' ');
    if (p) ++p;
  }
  if (!p) return Stat::Gone;
  char *end = nullptr;
  unsigned long long ticks = strtoull(p, &end, 10);
  if (end == p) return Stat::Gone;
  return ticks == expected ? Stat::Same : Stat::Other;
}

double wholeArg(const Napi::CallbackInfo &info, size_t i, double min, double max, const char *what) {
  double v = info.Length() > i && info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue() : NAN;
  if (!(v >= min && v <= max && v == std::floor(v)))
    throw Napi::TypeError::New(info.Env(), std::string("signalIfSame(pid, startTicks, signal, group): ") + what +
                                               " must be a whole number from " + std::to_string(static_cast<long long>(min)) +
                                               " to " + std::to_string(static_cast<long long>(max)));
  return v;
}

// signalIfSame(pid, startTicks, signal, group?) → 'sent' | 'gone' | 'other'; else an Error with code (ENOSYS:
// no pidfds here; EINVAL with group: the kernel cannot signal a group through one; EPERM: not allowed).
Napi::Value SignalIfSame(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  pid_t pid = static_cast<pid_t>(wholeArg(info, 0, 1, 4194304, "pid"));
  auto startTicks = static_cast<unsigned long long>(wholeArg(info, 1, 0, 9007199254740991.0, "startTicks"));
  int signal = static_cast<int>(wholeArg(info, 2, 0, 64, "signal"));
  bool group = info.Length() > 3 && info[3].ToBoolean().Value();
  std::string who = (group ? "process group " : "pid ") + std::to_string(pid);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    if (errno == ESRCH) return Napi::String::New(env, "gone");
    // EINVAL (ENOENT since Linux 6.x): the pid is a thread's id now, not a process's: the process meant is gone, nothing is sent
    if (errno == EINVAL || errno == ENOENT) return Napi::String::New(env, "other");
    throw errnoError(env, "pidfd_open(" + std::to_string(pid) + ") failed", "pidfd_open", errno);
  }
  Stat stat = compareStartTime(pid, startTicks);
  if (stat != Stat::Same) {
    close(pidfd);
    return Napi::String::New(env, stat == Stat::Other ? "other" : "gone");
  }
  long sent = syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, group ? PIDFD_SIGNAL_PROCESS_GROUP : 0U);
  int err = errno;
  close(pidfd);
  if (sent == 0) return Napi::String::New(env, "sent");
  if (err == ESRCH) return Napi::String::New(env, "gone");  // it exited after the check: nobody else got the signal
  throw errnoError(env, "pidfd_send_signal(" + who + ", " + std::to_string(signal) + ") failed", "pidfd_send_signal", err);
}

}  // namespace

void registerSignal(Napi::Env env, Napi::Object exports) {
  exports.Set("signalIfSame", Napi::Function::New(env, SignalIfSame, "signalIfSame"));
}

}  // namespace gpushare
