/* The gate's files in this process (gate_abi.h): the engine's control file
 * mapped read-only, our activity read-write, other slots' activities read-only
 * as they become members of our domain, and the SIGBUS guard that keeps an
 * owner truncating its activity file from crashing the jobs that map it.
 *
 * Every activity page lives at a fixed place (one page per slot, reserved as
 * zeros at attach): a new generation's file replaces the old page with
 * MAP_FIXED, so a thread reading the old one never touches unmapped memory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate_internal.h"

GS_HIDDEN uint32_t gs_act_gen[GATE_MAX_SLOTS];
static char g_dir[4096];
static int g_dir_fd = -1; /* enrolled: the gate directory's descriptor, from the engine */
static pthread_mutex_t g_map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction g_prev_bus;

static uint64_t env_u64(const char *name, uint64_t fallback) {
  const char *s = secure_getenv(name);
  if (!s || !*s) return fallback;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  return *end ? fallback : (uint64_t)v;
}

static uint64_t stable_u64(const uint64_t *p) { /* the engine's pwrite() of 8 bytes may tear */
  uint64_t a = LOAD(p), b;
  for (int i = 0; i < 4 && (b = LOAD(p)) != a; i++) a = b;
  return a;
}

static char *page_of(uint32_t i) { return gs_g.acts + (size_t)i * gs_g.act_stride; }

/* A page of zeros in place of slot i's activity (read-write for our own: our writes then go nowhere). */
static int zero_page(uint32_t i) {
  int prot = i == gs_g.index ? PROT_READ | PROT_WRITE : PROT_READ;
  return mmap(page_of(i), gs_g.act_stride, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ? -1 : 0;
}

/* Slot i's activity file if it is the one the engine made for this generation (its inode); else closed, -1. */
static int checked_activity(int fd, uint32_t i) {
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != stable_u64(&gs_g.slots[i].activity_ino) ||
      st.st_size < (off_t)GATE_ACTIVITY_SIZE) {
    close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

/* Opens slot i's activity file: under the gate directory the engine handed over (enrolled), else by the gate's path. */
static int open_activity(uint32_t i, int flags) {
  char path[sizeof g_dir + 32];
  if (g_dir_fd >= 0) {
    snprintf(path, sizeof path, GATE_ACTIVITY_PREFIX "%u", i);
    return checked_activity(openat(g_dir_fd, path, flags | O_CLOEXEC | O_NOFOLLOW), i);
  }
  snprintf(path, sizeof path, "%s/" GATE_ACTIVITY_PREFIX "%u", g_dir, i);
  return checked_activity(open(path, flags | O_CLOEXEC | O_NOFOLLOW), i);
}

/* ---- the SIGBUS guard ---- */

static void chain_bus(int sig, siginfo_t *si, void *ctx) {
  struct sigaction prev = g_prev_bus;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, si, ctx);
    return;
  }
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  if (prev.sa_handler == SIG_IGN && si && si->si_code <= 0) return; /* sent, and ignored before us */
  /* the default action: a fault re-executes and kills as it would have; a sent signal is raised again */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGBUS, &dfl, NULL);
  if (!si || si->si_code <= 0) raise(SIGBUS);
}

/* A read past the end of a truncated activity file: that page reads as zeros from now on. */
static void on_sigbus(int sig, siginfo_t *si, void *ctx) {
  char *addr = si ? (char *)si->si_addr : NULL;
  char *base = gs_g.acts;
  if (si && si->si_code > 0 && base && addr >= base && addr < base + (size_t)GATE_MAX_SLOTS * gs_g.act_stride) {
    int saved = errno;
    uint32_t i = (uint32_t)((size_t)(addr - base) / gs_g.act_stride);
    if (zero_page(i) == 0) {
      if (i != gs_g.index && gs_g.me) ADD(&gs_g.me->truncated_count, 1);
      errno = saved;
      return; /* the load (or atomic) runs again, on zeros */
    }
    errno = saved;
  }
  chain_bus(sig, si, ctx);
}

static void install_guard(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGBUS, &sa, &g_prev_bus) != 0) gs_log("cannot guard the gate's mappings against SIGBUS: %s", strerror(errno));
}

/* ---- attach ---- */

static void after_fork_child(void) { pthread_mutex_init(&g_map_lock, NULL); }

/* Maps the control file (cfd) and our activity (afd, or opened by name when -1) for slot `index`;
 * gen 0: GPUSHARE_GATE_GEN, else the slot's own. `what` names the gate in the log. */
static int attach_from(int cfd, uint64_t index, uint64_t gen, int afd, const char *what) {
  struct stat st;
  void *map = MAP_FAILED;
  if (fstat(cfd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)GATE_CONTROL_SIZE)
    map = mmap(NULL, GATE_CONTROL_SIZE, PROT_READ, MAP_SHARED, cfd, 0);
  if (map == MAP_FAILED) {
    gs_log("gate %s is not a gate control file: not gated", what);
    if (afd >= 0) close(afd);
    return 0;
  }
  gate_header_t *h = map;
  gate_slot_t *slots = (gate_slot_t *)((char *)map + GATE_SLOT_OFFSET);
  gate_slot_t *my = &slots[index];
  if (!gen) gen = env_u64("GPUSHARE_GATE_GEN", LOAD(&my->generation));
  if (LOAD(&h->magic) != GATE_MAGIC || LOAD(&h->version) != GATE_VERSION || LOAD(&h->max_slots) != GATE_MAX_SLOTS ||
      LOAD(&my->state) != GATE_SLOT_IN_USE || LOAD(&my->generation) != gen || !gen) {
    gs_log("gate %s slot %u is not ours (or not a gate of this version): not gated", what, (unsigned)index);
    munmap(map, GATE_CONTROL_SIZE);
    if (afd >= 0) close(afd);
    return 0;
  }
  long page = sysconf(_SC_PAGESIZE);
  size_t stride = page > (long)GATE_ACTIVITY_SIZE ? (size_t)page : GATE_ACTIVITY_SIZE;
  char *acts = mmap(NULL, stride * GATE_MAX_SLOTS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (acts == MAP_FAILED) {
    munmap(map, GATE_CONTROL_SIZE);
    if (afd >= 0) close(afd);
    return 0;
  }
  gs_g.hdr = h;
  gs_g.domains = (gate_domain_t *)((char *)map + GATE_DOMAIN_OFFSET);
  gs_g.slots = slots;
  gs_g.my = my;
  gs_g.my_also = (gate_slot_domains_t *)((char *)map + GATE_SLOT_DOMAINS_OFFSET) + index;
  gs_g.acts = acts;
  gs_g.act_stride = stride;
  gs_g.index = (uint32_t)index;
  gs_g.generation = (uint32_t)gen;
  install_guard(); /* before the first foreign page can be mapped */
  afd = afd >= 0 ? checked_activity(afd, (uint32_t)index) : open_activity((uint32_t)index, O_RDWR);
  void *mine = afd < 0 ? MAP_FAILED : mmap(page_of((uint32_t)index), stride, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, afd, 0);
  int why = errno;
  if (afd >= 0) close(afd);
  if (mine == MAP_FAILED) {
    gs_log("cannot map our gate activity (slot %u): %s: not gated", (unsigned)index, strerror(why));
    sigaction(SIGBUS, &g_prev_bus, NULL);
    munmap(acts, stride * GATE_MAX_SLOTS);
    munmap(map, GATE_CONTROL_SIZE);
    memset(&gs_g, 0, sizeof gs_g);
    return 0;
  }
  gs_g.me = mine;
  STORE(&gs_act_gen[index], (uint32_t)gen);
  pthread_atfork(NULL, NULL, after_fork_child);
  return 1;
}

int gs_gate_files_attach(void) {
  const char *dir = secure_getenv("GPUSHARE_GATE");
  uint64_t index = env_u64("GPUSHARE_GATE_SLOT", UINT64_MAX);
  if (!dir || !*dir) return 0;
  if (index >= GATE_MAX_SLOTS) {
    gs_log("GPUSHARE_GATE_SLOT missing or out of range: not gated");
    return 0;
  }
  if (strlen(dir) >= sizeof g_dir - 16) {
    gs_log("gate directory path too long: not gated");
    return 0;
  }
  strcpy(g_dir, dir);
  char path[sizeof g_dir + 16];
  snprintf(path, sizeof path, "%s/" GATE_CONTROL_FILE, g_dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    gs_log("cannot open gate %s: %s: not gated", path, strerror(errno));
    return 0;
  }
  int attached = attach_from(fd, index, 0, -1, path);
  close(fd);
  return attached;
}

int gs_gate_files_attach_fds(int dir_fd, int control_fd, int activity_fd, uint32_t index, uint32_t generation) {
  if (index >= GATE_MAX_SLOTS || !generation) {
    close(control_fd);
    close(activity_fd);
    return 0;
  }
  g_dir_fd = dir_fd;
  int attached = attach_from(control_fd, index, generation, activity_fd, "(enrolled)");
  close(control_fd);
  if (!attached) g_dir_fd = -1;
  return attached;
}

/* ---- other slots' activity, mapped as they are needed ---- */

gate_activity_t *gs_activity_map(uint32_t i, uint32_t gen) {
  pthread_mutex_lock(&g_map_lock);
  if (LOAD(&gs_act_gen[i]) != gen) {
    int fd = gen && i != gs_g.index ? open_activity(i, O_RDONLY) : -1;
    int why = errno;
    void *p = fd < 0 ? MAP_FAILED : mmap(page_of(i), gs_g.act_stride, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
    if (fd >= 0) close(fd);
    if (p == MAP_FAILED) {
      zero_page(i); /* not the previous generation's page: that job is gone */
      if (gen && i != gs_g.index) gs_log("slot %u: cannot map its activity (%s): it reads as idle", i, strerror(why));
    }
    /* a newer generation since is mapped at its next use (the inode check refused a file ahead of gen) */
    STORE(&gs_act_gen[i], gen);
  }
  pthread_mutex_unlock(&g_map_lock);
  return (gate_activity_t *)page_of(i);
}
