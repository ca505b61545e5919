/* What a process shows of itself, to prove libgpushare-preload.so inert where
 * CUDA is never used (electron/engine/enrol/preload-inert.test.ts runs each mode
 * with and without the library and compares):
 *   preload_inert report          this process (and a forked child): threads,
 *                                 open fds, environment, signal dispositions and
 *                                 mask, umask; stable text, no pids or inodes
 *   preload_inert forkfaults      the page faults a forked child has taken when it
 *                                 starts (what fork handlers wrote), the most of 3
 *   preload_inert cucall LIBCUDA  loads the driver by its path, calls its cuMemAlloc_v2
 *                                 as dlsym hands it out (the library's hook, which says
 *                                 so with GPUSHARE_PRELOAD_DEBUG=1), prints the result
 *   preload_inert trace --out FILE [--preload LIB] -- PROG ARGS…
 *                                 every system call PROG (and its children) makes,
 *                                 from ptrace, one "P call [path]" line each (P:
 *                                 the process, in order of creation); the
 *                                 loader's mapping of LIB (its open to its close) is
 *                                 left out, so only what the library itself does shows */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* pipe:[1234] and socket:[1234] differ run to run: their kind is what counts */
static void print_fd_target(const char *who, const char *name, int dirfd) {
  char link[64], target[512];
  snprintf(link, sizeof link, "/proc/self/fd/%s", name);
  if (atoi(name) == dirfd) return;
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return;
  target[n] = 0;
  char *bracket = strchr(target, '[');
  if (bracket && target[0] != '/') *bracket = 0;
  printf("%s fd %s %s\n", who, name, target);
}

static void report(const char *who) {
  int tasks = 0;
  DIR *d = opendir("/proc/self/task");
  for (struct dirent *e; d && (e = readdir(d));)
    if (e->d_name[0] != '.') tasks++;
  if (d) closedir(d);
  printf("%s threads %d\n", who, tasks);

  d = opendir("/proc/self/fd");
  char *names[1024];
  int count = 0;
  for (struct dirent *e; d && (e = readdir(d)) && count < 1024;)
    if (e->d_name[0] != '.') names[count++] = strdup(e->d_name);
  qsort(names, (size_t)count, sizeof *names, cmp_str);
  for (int i = 0; i < count; i++) print_fd_target(who, names[i], d ? dirfd(d) : -1), free(names[i]);
  if (d) closedir(d);

  int envc = 0;
  while (environ[envc]) envc++;
  char **env = calloc((size_t)envc + 1, sizeof *env);
  for (int i = 0; i < envc; i++) env[i] = environ[i];
  qsort(env, (size_t)envc, sizeof *env, cmp_str);
  for (int i = 0; i < envc; i++)
    if (strncmp(env[i], "LD_PRELOAD=", 11) != 0) printf("%s env %s\n", who, env[i]);
  free(env);

  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0) continue; /* glibc's own real-time signals */
    const char *h = sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignored" : "handled";
    if (sa.sa_handler != SIG_DFL) printf("%s signal %d %s flags %#x\n", who, sig, h, (unsigned)sa.sa_flags);
  }
  sigset_t mask;
  sigprocmask(SIG_SETMASK, NULL, &mask);
  for (int sig = 1; sig < NSIG; sig++)
    if (sigismember(&mask, sig) == 1) printf("%s blocked %d\n", who, sig);
  mode_t m = umask(022);
  umask(m);
  printf("%s umask %03o\n", who, (unsigned)m);
  fflush(stdout);
}

/* ---- trace ---- */

typedef struct {
  pid_t pid;
  int index; /* order of creation: pids differ run to run */
  int skip_fd; /* inside the loader's mapping of the library: until this fd is closed */
  int in_skip;
} traced_t;

static traced_t procs[256];
static int nprocs;

static traced_t *proc_of(pid_t pid) {
  for (int i = 0; i < nprocs; i++)
    if (procs[i].pid == pid) return &procs[i];
  if (nprocs == 256) return NULL;
  procs[nprocs] = (traced_t){pid, nprocs, -1, 0};
  return &procs[nprocs++];
}

static void read_string(pid_t pid, unsigned long long addr, char *out, size_t size) {
  struct iovec local = {out, size - 1}, remote = {(void *)(uintptr_t)addr, size - 1};
  ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  out[n > 0 ? n : 0] = 0;
  out[strnlen(out, size - 1)] = 0;
}

/* the path argument of a call that names a file, or NULL */
static int path_arg(long long nr) {
  switch (nr) {
#ifdef SYS_open
    case SYS_open: case SYS_access: case SYS_stat: case SYS_lstat: case SYS_readlink: case SYS_unlink: case SYS_mkdir:
      return 0;
#endif
    case SYS_openat: case SYS_faccessat: case SYS_newfstatat: case SYS_readlinkat: case SYS_unlinkat: case SYS_mkdirat:
#ifdef SYS_faccessat2
    case SYS_faccessat2:
#endif
    case SYS_statx:
      return 1;
    case SYS_execve:
      return 0;
    default:
      return -1;
  }
}

/* names for the calls the test reads (the rest print as numbers: they only need to match) */
static const char *call_name(long long nr, char *buf) {
  switch (nr) {
    case SYS_mprotect: return "mprotect";
    case SYS_getpid: return "getpid";
    case SYS_openat: return "openat";
    case SYS_close: return "close";
    case SYS_write: return "write";
    case SYS_clone: return "clone";
#ifdef SYS_clone3
    case SYS_clone3: return "clone3";
#endif
    case SYS_socket: return "socket";
    case SYS_connect: return "connect";
    case SYS_rt_sigaction: return "rt_sigaction";
    case SYS_execve: return "execve";
    case SYS_mmap: return "mmap";
    default: snprintf(buf, 24, "%lld", nr); return buf;
  }
}

static int trace(FILE *out, const char *lib, char **argv) {
  pid_t child = fork();
  if (child == 0) {
    if (lib) setenv("LD_PRELOAD", lib, 1);
    else unsetenv("LD_PRELOAD");
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    raise(SIGSTOP);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  waitpid(child, &status, 0);
  ptrace(PTRACE_SETOPTIONS, child, 0,
         PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE);
  proc_of(child);
  ptrace(PTRACE_SYSCALL, child, 0, 0);
  const char *libname = lib ? strrchr(lib, '/') : NULL;
  libname = libname ? libname + 1 : lib;
  int exit_code = 0, live = 1, started = 0;
  while (live > 0) {
    pid_t pid = waitpid(-1, &status, __WALL);
    if (pid < 0) break;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (pid == child) exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      live--;
      continue;
    }
    traced_t *t = proc_of(pid);
    int sig = 0;
    if (WSTOPSIG(status) == (SIGTRAP | 0x80) && t) {
      struct __ptrace_syscall_info info;
      if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) > 0) {
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
          long long nr = (long long)info.entry.nr;
          char path[512] = "";
          int arg = path_arg(nr);
          if (arg >= 0) read_string(pid, info.entry.args[arg], path, sizeof path);
          if (nr == SYS_execve) started = 1; /* from here on: the program, not our own stop */
          const char *base = strrchr(path, '/');
          base = base ? base + 1 : path;
          if (libname && nr == SYS_openat && !strcmp(base, libname)) t->in_skip = 1;
          else if (t->in_skip && nr == SYS_close && (int)info.entry.args[0] == t->skip_fd) t->in_skip = 2;
          else if (!t->in_skip && started) {
            char buf[24];
            fprintf(out, "%d %s%s%s\n", t->index, call_name(nr, buf), path[0] ? " " : "", path);
          }
        } else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
          if (t->in_skip == 1 && t->skip_fd < 0) t->skip_fd = (int)info.exit.rval;
          else if (t->in_skip == 2) t->in_skip = 0, t->skip_fd = -1;
        }
      }
    } else if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_FORK << 8)) || status >> 8 == (SIGTRAP | (PTRACE_EVENT_VFORK << 8)) ||
               status >> 8 == (SIGTRAP | (PTRACE_EVENT_CLONE << 8))) {
      unsigned long newpid;
      ptrace(PTRACE_GETEVENTMSG, pid, 0, &newpid);
      proc_of((pid_t)newpid);
      live++;
    } else if (WSTOPSIG(status) != SIGTRAP && WSTOPSIG(status) != SIGSTOP) {
      sig = WSTOPSIG(status);
    }
    ptrace(PTRACE_SYSCALL, pid, 0, sig);
  }
  fclose(out);
  return exit_code;
}

static int fork_faults(void) {
  long most = 0;
  for (int i = 0; i < 3; i++) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      struct rusage r;
      getrusage(RUSAGE_SELF, &r);
      ssize_t w = write(pipefd[1], &r.ru_minflt, sizeof r.ru_minflt);
      _exit(w == sizeof r.ru_minflt ? 0 : 1);
    }
    long faults = 0;
    if (read(pipefd[0], &faults, sizeof faults) != sizeof faults) return 1;
    waitpid(pid, NULL, 0);
    close(pipefd[0]), close(pipefd[1]);
    if (faults > most) most = faults;
  }
  printf("%ld\n", most);
  return 0;
}

static int cu_call(const char *libcuda) {
  typedef int (*alloc_fn)(unsigned long long *, size_t);
  if (!dlopen(libcuda, RTLD_NOW | RTLD_GLOBAL)) return 1;
  alloc_fn f = (alloc_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
  unsigned long long p = 0;
  printf("%s %d\n", f ? "cuMemAlloc_v2" : "none", f ? f(&p, 1) : -1);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "forkfaults")) return fork_faults();
  if (argc == 3 && !strcmp(argv[1], "cucall")) return cu_call(argv[2]);
  if (argc >= 2 && !strcmp(argv[1], "report")) {
    report("parent");
    pid_t pid = fork();
    if (pid == 0) {
      report("child");
      _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (argc >= 4 && !strcmp(argv[1], "trace")) {
    int i = 2;
    const char *lib = NULL;
    FILE *out = NULL;
    if (!strcmp(argv[i], "--out") && i + 1 < argc) out = fopen(argv[i + 1], "we"), i += 2;
    if (!out) return 2;
    if (!strcmp(argv[i], "--preload") && i + 1 < argc) lib = argv[i + 1], i += 2;
    if (i < argc && !strcmp(argv[i], "--")) i++;
    if (i >= argc) return 2;
    return trace(out, lib, argv + i);
  }
  fprintf(stderr, "usage: preload_inert report | trace --out FILE [--preload LIB] -- PROG ARGS...\n");
  return 2;
}
