/* fakejob hostile: a managed job that attacks the launch gate (gate_abi.h)
 * through everything it can open or map, for the tests that show it changes
 * no other job's behaviour. It reports every attempt as a JSON line:
 *   {"event":"attempt","file":F,"what":W,"ok":B,"errno":E}
 * then scribbles on what it could map (its own activity: mid-launch for ever,
 * launched just now, no bytes used, every slot reported stuck), keeps that up,
 * and truncates its own activity file after --truncate-after S (SIGUSR1:
 * now). It never calls the GPU. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/gate_abi.h"
#include "fakejob_hostile.h"

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *errno_name(int err) {
  switch (err) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case EROFS: return "EROFS";
    default: return "other";
  }
}

/* The call's result, then errno: C leaves the order of a call's arguments open. */
#define ATTEMPT(emit, file, what, ok_expr)          \
  do {                                              \
    int ok_ = (ok_expr);                            \
    attempt((emit), (file), (what), ok_, errno);    \
  } while (0)

static void attempt(fakejob_emit_fn emit, const char *file, const char *what, int ok, int err) {
  emit("{\"event\":\"attempt\",\"file\":\"%s\",\"what\":\"%s\",\"ok\":%s,\"errno\":\"%s\"}", file, what,
       ok ? "true" : "false", ok ? "" : errno_name(err));
}

/* Whatever a writable control file lets a job do: every slot high, unpaused, unlimited, a member everywhere. */
static void scribble_control(char *map, uint32_t own) {
  gate_slot_t *slots = (gate_slot_t *)(map + GATE_SLOT_OFFSET);
  for (uint32_t i = 0; i < GATE_MAX_SLOTS; i++) {
    slots[i].priority = i == own ? GATE_PRIORITY_HIGH : GATE_PRIORITY_BEST_EFFORT;
    slots[i].paused = i != own;
    slots[i].quota_bytes = i == own ? GATE_NO_QUOTA : 0;
  }
  gate_domain_t *domains = (gate_domain_t *)(map + GATE_DOMAIN_OFFSET);
  for (uint32_t d = 0; d < GATE_MAX_DOMAINS; d++) {
    domains[d].members[0] = 1ull << own;
    domains[d].stuck = ~(1ull << own);
  }
}

/* Another job's activity, if it could be written: stuck mid-launch, its bytes forgotten. */
static void scribble_other(char *map) {
  gate_activity_t *a = (gate_activity_t *)map;
  a->in_launch = 1;
  a->used_bytes = 0;
  a->last_launch_ns = UINT64_MAX;
}

/* Our own: every slot named stuck at its current generation, claims of activity, no bytes used. */
static void scribble_own(gate_activity_t *a, const char *control, unsigned in_launch) {
  const gate_slot_t *slots = control ? (const gate_slot_t *)(control + GATE_SLOT_OFFSET) : NULL;
  for (uint32_t i = 0; i < GATE_MAX_SLOTS; i++) a->stuck_gen[i] = slots ? slots[i].generation : 1;
  for (uint32_t k = 0; k < GATE_MAX_PROCS; k++) a->procs[k].pid = 1; /* init: "our" process */
  a->in_launch = in_launch;
  a->launches = 1000000000000ull;
  a->synced_launches = 0;
  a->used_bytes = 0;
  a->last_launch_ns = mono_ns();
}

int fakejob_hostile(const fakejob_hostile_opts_t *o, fakejob_emit_fn emit, volatile sig_atomic_t *stop, volatile sig_atomic_t *advance) {
  DIR *d = opendir(o->gate);
  if (!d) {
    emit("{\"event\":\"error\",\"call\":\"opendir\",\"code\":-1,\"name\":\"%s\"}", errno_name(errno));
    return 1;
  }
  char own_name[32];
  snprintf(own_name, sizeof own_name, GATE_ACTIVITY_PREFIX "%u", o->slot);
  char *control = NULL;
  gate_activity_t *own = NULL;
  int own_fd = -1, writable = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    int dfd = dirfd(d);
    int fd = openat(dfd, e->d_name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    ATTEMPT(emit, e->d_name, "open-rdwr", fd >= 0);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      char *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ATTEMPT(emit, e->d_name, "map-write", map != MAP_FAILED);
      if (map != MAP_FAILED) {
        writable++;
        if (!strcmp(e->d_name, own_name)) {
          own = (gate_activity_t *)map;
          own_fd = fd;
          continue;
        }
        if (!strcmp(e->d_name, GATE_CONTROL_FILE)) scribble_control(map, o->slot);
        else scribble_other(map);
      }
      close(fd);
      continue;
    }
    if (fd >= 0) close(fd);
    fd = openat(dfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
      if (fd >= 0) close(fd);
      continue;
    }
    char *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ATTEMPT(emit, e->d_name, "map-write", map != MAP_FAILED);
    if (map != MAP_FAILED) scribble_other(map); /* never reached while the gate's modes hold */
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      int rc = mprotect(map, (size_t)st.st_size, PROT_READ | PROT_WRITE);
      ATTEMPT(emit, e->d_name, "mprotect-write", rc == 0);
      if (!strcmp(e->d_name, GATE_CONTROL_FILE)) control = map;
      else munmap(map, (size_t)st.st_size);
    }
    ATTEMPT(emit, e->d_name, "truncate", ftruncate(fd, 0) == 0);
    ATTEMPT(emit, e->d_name, "chmod", fchmod(fd, 0666) == 0);
    close(fd);
  }
  int fd = openat(dirfd(d), "hostile", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  ATTEMPT(emit, "hostile", "create", fd >= 0);
  if (fd >= 0) close(fd);
  ATTEMPT(emit, GATE_CONTROL_FILE, "unlink", unlinkat(dirfd(d), GATE_CONTROL_FILE, 0) == 0);
  closedir(d);
  if (own) scribble_own(own, control, o->in_launch);
  emit("{\"event\":\"hostile\",\"writable\":%d,\"own\":%s,\"inLaunch\":%u}", writable, own ? "true" : "false", o->in_launch);
  uint64_t start = mono_ns(), truncate_at = o->truncate_after_s < 0 ? UINT64_MAX : start + (uint64_t)(o->truncate_after_s * 1e9);
  while (!*stop && (o->duration_s <= 0 || mono_ns() - start < (uint64_t)(o->duration_s * 1e9))) {
    if (own && (mono_ns() >= truncate_at || *advance)) {
      *advance = 0;
      munmap(own, GATE_ACTIVITY_SIZE); /* our own reads would fault too */
      own = NULL;
      int rc = ftruncate(own_fd, 0);
      ATTEMPT(emit, own_name, "truncate", rc == 0);
      emit("{\"event\":\"truncated\",\"ok\":%s}", rc == 0 ? "true" : "false");
    }
    if (own) {
      __atomic_store_n(&own->in_launch, o->in_launch, __ATOMIC_SEQ_CST);
      __atomic_store_n(&own->last_launch_ns, mono_ns(), __ATOMIC_RELEASE);
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return 0;
}
