/* Enrolment: a process gpushare did not start (no GPUSHARE_JOB_ID, no usable
 * GPUSHARE_GATE) asks the engine, at its first CUDA call, to make it a member
 * of a job. The engine knows the process by the socket's kernel credentials,
 * decides its job, and hands back that job's gate files as descriptors
 * (SCM_RIGHTS): the gate directory, the control file, our activity, and the
 * park file when auto-park is on. Nothing here runs at load time.
 *
 * Fail open, bounded: no engine, a refusal, or anything odd, and the process
 * runs on untouched after at most ENROL_BUDGET_NS in all, once; why is said
 * once on stderr with GPUSHARE_PRELOAD_DEBUG=1. The admin's kill switch
 * (GS_PRELOAD_OFF_FILE) present: nothing enrols. Its path is fixed: tests put a
 * file there inside a private mount namespace, so nothing a user sets can turn
 * it on or off for a process of someone else. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "enrol.h"

#define ENROL_BUDGET_NS 50000000ull /* 50 ms, once */
#define ENROL_BUDGET_MAX_MS 5000ull   /* GPUSHARE_ENROL_WAIT_MS: only this process waits longer (tests on busy machines) */
#define GS_PRELOAD_OFF_FILE "/etc/gpushare/preload-off"
#define GS_DAEMON_SOCKET "/run/gpushare/engine.sock"
#define ENROL_REQUEST "{\"kind\":\"enrol\"}\n"
#define ENROL_MAX_FDS 4

static gs_enrolment_t g_enrolment = {-1, -1, -1, -1, 0, 0, 0};
static pthread_once_t g_enrol_once = PTHREAD_ONCE_INIT;

/* The engine's sockets in the order the CLI asks them (electron/cli/engine-client.ts): GPUSHARE_SOCKET
 * alone; else the box daemon's; else the user's personal engine's. secure_getenv: a setuid program
 * never takes them from its caller's environment. */
static int socket_paths(char paths[2][sizeof(((struct sockaddr_un *)0)->sun_path)]) {
  const size_t max = sizeof(((struct sockaddr_un *)0)->sun_path);
  const char *only = secure_getenv("GPUSHARE_SOCKET");
  if (only && *only) return snprintf(paths[0], max, "%s", only) < (int)max ? 1 : 0;
  int n = 0;
  const char *daemon = secure_getenv("GPUSHARE_DAEMON_SOCKET");
  if (snprintf(paths[n], max, "%s", daemon && *daemon ? daemon : GS_DAEMON_SOCKET) < (int)max) n++;
  const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
  int len = xdg && *xdg ? snprintf(paths[n], max, "%s/gpushare/engine.sock", xdg)
                        : snprintf(paths[n], max, "/tmp/gpushare-%u/engine.sock", (unsigned)getuid());
  if (len > 0 && len < (int)max) n++;
  return n;
}

static int wait_for(int fd, short events, uint64_t deadline) {
  for (;;) {
    uint64_t now = gs_now_ns();
    if (now >= deadline) return 0;
    struct pollfd p = {fd, events, 0};
    int ms = (int)((deadline - now + 999999) / 1000000);
    int r = poll(&p, 1, ms);
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return 0;
  }
}

/* One connected socket to the first engine that accepts, or -1 (*why says what failed last). */
static int connect_engine(uint64_t deadline, const char **why) {
  char paths[2][sizeof(((struct sockaddr_un *)0)->sun_path)];
  int n = socket_paths(paths);
  *why = "no engine socket path";
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      *why = "no socket";
      return -1;
    }
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, paths[i], strlen(paths[i]) + 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
    if (errno == EAGAIN || errno == EINPROGRESS) { /* a full backlog: wait within the budget */
      int err = 0;
      socklen_t len = sizeof err;
      if (wait_for(fd, POLLOUT, deadline) && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) return fd;
    }
    *why = "no engine answers";
    close(fd);
  }
  return -1;
}

static long field_number(const char *reply, const char *name) {
  const char *p = strstr(reply, name);
  if (!p) return -1;
  p += strlen(name);
  char *end;
  long v = strtol(p, &end, 10);
  return end == p ? -1 : v;
}

/* The engine's reply: one JSON line and, with ok, the descriptors named by "fds" in order. */
static int receive(int fd, uint64_t deadline, char *reply, size_t cap, int *fds, int *nfds) {
  size_t got = 0;
  *nfds = 0;
  while (got + 1 < cap) {
    if (!wait_for(fd, POLLIN, deadline)) return -1;
    char control[CMSG_SPACE(sizeof(int) * ENROL_MAX_FDS)];
    struct iovec iov = {reply + got, cap - 1 - got};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int *in = (int *)CMSG_DATA(c);
      for (int k = 0; k < count; k++) {
        if (*nfds < ENROL_MAX_FDS) fds[(*nfds)++] = in[k];
        else close(in[k]);
      }
    }
    if (m.msg_flags & MSG_CTRUNC) return -1;
    got += (size_t)r;
    reply[got] = '\0';
    if (memchr(reply, '\n', got)) return 0;
  }
  return -1;
}

static void close_all(int *fds, int n) {
  for (int i = 0; i < n; i++) close(fds[i]);
}

/* The one line of why, with GPUSHARE_PRELOAD_DEBUG=1. */
static void not_enrolled(const char *why) { gs_log("not enrolled: %s; running unmanaged", why); }

/* The wait: 50 ms, or GPUSHARE_ENROL_WAIT_MS (up to 5 s), which delays only the process that sets it. */
static uint64_t budget_ns(void) {
  const char *s = secure_getenv("GPUSHARE_ENROL_WAIT_MS");
  char *end;
  unsigned long long ms = s && *s ? strtoull(s, &end, 10) : 0;
  if (!s || !*s || *end || ms == 0) return ENROL_BUDGET_NS;
  return (ms > ENROL_BUDGET_MAX_MS ? ENROL_BUDGET_MAX_MS : ms) * 1000000ull;
}

static void enrol(void) {
  uint64_t start = gs_now_ns(), deadline = start + budget_ns();
  if (access(GS_PRELOAD_OFF_FILE, F_OK) == 0) return not_enrolled("the administrator's kill switch " GS_PRELOAD_OFF_FILE " is present");
  const char *why;
  int fd = connect_engine(deadline, &why);
  if (fd < 0) return not_enrolled(why);
  char reply[1024];
  int fds[ENROL_MAX_FDS], nfds = 0;
  ssize_t w = send(fd, ENROL_REQUEST, sizeof ENROL_REQUEST - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  int rc = w == (ssize_t)(sizeof ENROL_REQUEST - 1) ? receive(fd, deadline, reply, sizeof reply, fds, &nfds) : -1;
  close(fd);
  if (rc != 0) {
    close_all(fds, nfds);
    return not_enrolled(w < 0 ? "the engine closed the connection" : "no answer from the engine in time");
  }
  if (!strstr(reply, "\"ok\":true")) {
    close_all(fds, nfds);
    const char *m = strstr(reply, "\"message\":\"");
    char said[400];
    snprintf(said, sizeof said, "the engine refused: %.*s", m ? (int)strcspn(m + 11, "\"") : 0, m ? m + 11 : "");
    return not_enrolled(said);
  }
  long slot = field_number(reply, "\"slot\":"), gen = field_number(reply, "\"generation\":");
  int park = strstr(reply, "\"park\":true") != NULL;
  if (slot < 0 || slot >= GATE_MAX_SLOTS || gen <= 0 || nfds != 3 + park) {
    close_all(fds, nfds);
    return not_enrolled("the engine's answer did not carry the job's gate files");
  }
  g_enrolment.dir_fd = fds[0];
  g_enrolment.control_fd = fds[1];
  g_enrolment.activity_fd = fds[2];
  g_enrolment.park_fd = park ? fds[3] : -1;
  g_enrolment.slot = (uint32_t)slot;
  g_enrolment.generation = (uint32_t)gen;
  g_enrolment.enrolled = 1;
  const char *job = strstr(reply, "\"job\":\"");
  gs_log("enrolled as %.*s (slot %ld) in %.1f ms", job ? (int)strcspn(job + 7, "\"") : 1, job ? job + 7 : "?", slot,
         (double)(gs_now_ns() - start) / 1e6);
}

gs_enrolment_t *gs_enrolment(void) {
  pthread_once(&g_enrol_once, enrol);
  return g_enrolment.enrolled ? &g_enrolment : NULL;
}

int gs_enrol_wanted(void) {
  const char *job = getenv("GPUSHARE_JOB_ID"); /* started by gpushare: a managed job's process, never enrolled */
  return !(job && *job);
}

int gs_enrolment_take_park_fd(void) {
  gs_enrolment_t *e = gs_enrol_wanted() ? gs_enrolment() : NULL;
  if (!e) return -1;
  return __atomic_exchange_n(&e->park_fd, -1, __ATOMIC_ACQ_REL);
}
