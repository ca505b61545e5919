/* gpushare-spawn: how the root daemon starts a managed job as its user. The daemon runs it with a fixed
 * clean environment (PATH only) and sends the job on fd 3; nothing of the user's is in this process's own
 * environment, so the dynamic loader and libc, running as root here, read nothing a user set. It drops the
 * supplementary groups, the gid and the uid, checks that root cannot be had back, and only then, as the
 * user, enters the working directory and execs the program with the user's environment (same pid).
 *
 * Request on fd 3, read to its end: NUL-terminated fields
 *   "gpushare-spawn 1", uid, gid, groups ("init" with the account's name next, or "clear" and ""),
 *   cwd, executable, argc, argv..., envc, env...
 * Status on fd 4 (close-on-exec): nothing when the exec succeeds; else "<stage>\0<strerror>\0" with stage
 * one of request, groups, gid, uid, verify, cwd, exec, and exit 127. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REQUEST_FD 3
#define STATUS_FD 4
#define MAGIC "gpushare-spawn 1"
/* Linux's own bound on what an exec carries is far below this; a request past it is refused whole. */
#define REQUEST_MAX (64u << 20)
#define COUNT_MAX 1000000L

static void fail(const char *stage, const char *detail) {
  char line[1024];
  int n = snprintf(line, sizeof line, "%s%c%s%c", stage, '\0', detail, '\0');
  if (n > (int)sizeof line) n = sizeof line;
  if (write(STATUS_FD, line, (size_t)n) < 0) { /* the daemon is gone: nothing to tell */ }
  dprintf(STDERR_FILENO, "gpushare-spawn: %s: %s\n", stage, detail);
  _exit(127);
}

static void fail_errno(const char *stage) {
  fail(stage, strerror(errno));
}

static char *read_request(size_t *size) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) fail("request", "out of memory");
  for (;;) {
    if (len == cap) {
      if (cap >= REQUEST_MAX) fail("request", "larger than 64 MiB");
      cap *= 2;
      char *grown = realloc(buf, cap);
      if (!grown) fail("request", "out of memory");
      buf = grown;
    }
    ssize_t got = read(REQUEST_FD, buf + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_errno("request");
    if (got == 0) break;
    len += (size_t)got;
  }
  close(REQUEST_FD);
  *size = len;
  return buf;
}

/* The next NUL-terminated field, or a refusal when the request ends first. */
static const char *field(const char *buf, size_t size, size_t *at) {
  if (*at >= size) fail("request", "it ends early");
  const char *start = buf + *at;
  const char *end = memchr(start, '\0', size - *at);
  if (!end) fail("request", "a field is not terminated");
  *at = (size_t)(end - buf) + 1;
  return start;
}

static long number(const char *text, long max) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || end == text || *end || value < 0 || value > max) fail("request", "a number is out of range");
  return value;
}

/* Nothing of the daemon's but stdio and the status pipe reaches the job. */
static void close_others_on_exec(void) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, STATUS_FD + 1, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 1 << 20) max = 1 << 20;
  for (int fd = STATUS_FD + 1; fd < max; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int has_capabilities(void) {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capget, &header, data) != 0) return 1; /* cannot tell: treat as still privileged */
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
    if (data[i].effective || data[i].permitted) return 1;
  return 0;
}

int main(void) {
  if (fcntl(STATUS_FD, F_SETFD, FD_CLOEXEC) != 0 || fcntl(REQUEST_FD, F_GETFD) < 0) {
    dprintf(STDERR_FILENO, "gpushare-spawn: the gpushare daemon runs this to start a job as its user; it is not for use by hand.\n");
    return 2;
  }
  close_others_on_exec();
  size_t size, at = 0;
  char *buf = read_request(&size);
  if (strcmp(field(buf, size, &at), MAGIC) != 0) fail("request", "not a gpushare-spawn 1 request");
  uid_t uid = (uid_t)number(field(buf, size, &at), (long)UINT_MAX - 1);
  gid_t gid = (gid_t)number(field(buf, size, &at), (long)UINT_MAX - 1);
  const char *groups = field(buf, size, &at);
  const char *name = field(buf, size, &at);
  const char *cwd = field(buf, size, &at);
  const char *executable = field(buf, size, &at);
  long argc = number(field(buf, size, &at), COUNT_MAX);
  if (argc < 1) fail("request", "no argv[0]");
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  if (!argv) fail("request", "out of memory");
  for (long i = 0; i < argc; i++) argv[i] = (char *)field(buf, size, &at);
  long envc = number(field(buf, size, &at), COUNT_MAX);
  char **envp = calloc((size_t)envc + 1, sizeof *envp);
  if (!envp) fail("request", "out of memory");
  for (long i = 0; i < envc; i++) {
    envp[i] = (char *)field(buf, size, &at);
    if (!strchr(envp[i], '=')) fail("request", "an environment entry has no '='");
  }
  if (at != size) fail("request", "it has bytes past its end");
  if (uid == 0) fail("request", "it asks for uid 0: a root job is started by the engine itself");
  if (cwd[0] != '/' || executable[0] != '/') fail("request", "the working directory and the program must be absolute paths");

  /* groups, then gid, then uid: once the uid is dropped nothing else can be */
  if (strcmp(groups, "init") == 0) {
    if (!*name || initgroups(name, gid) != 0) fail_errno("groups");
  } else if (strcmp(groups, "clear") == 0) {
    if (setgroups(0, NULL) != 0) fail_errno("groups");
  } else {
    fail("request", "groups must be init or clear");
  }
  if (setresgid(gid, gid, gid) != 0) fail_errno("gid");
  if (setresuid(uid, uid, uid) != 0) fail_errno("uid");

  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0) fail_errno("verify");
  if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid) fail("verify", "the ids are not the user's after dropping");
  if (setuid(0) == 0 || seteuid(0) == 0) fail("verify", "root could be regained");
  if (has_capabilities()) fail("verify", "capabilities are still held");

  /* as the user from here on: the kernel decides what they may enter and run, at this moment */
  if (chdir(cwd) != 0) fail_errno("cwd");
  execve(executable, argv, envp);
  fail_errno("exec");
  return 127;
}
