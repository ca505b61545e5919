/* Shared-state helpers: mapping, the robust lock, process reaping, the
 * execution ring and the readings derived from it. */
#define _GNU_SOURCE
#include "fg_state.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REAP_INTERVAL_NS 100000000ull      /* liveness of every slot */
#define FULL_REAP_INTERVAL_NS 500000000ull /* /proc start time of attached pids */
#define UTIL_WINDOW_NS 1000000000ull

uint64_t fg_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t fg_real_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000ull;
}

void fg_sleep_until_ns(uint64_t t) {
  struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

const char *fg_state_path(void) {
  const char *p = getenv("GPUSHARE_FAKEGPU_STATE");
  return (p && *p) ? p : NULL;
}

fg_state_t *fg_state_map(const char *path, char *err, size_t errlen) {
  if (!path) {
    snprintf(err, errlen, "no state file (set GPUSHARE_FAKEGPU_STATE)");
    return NULL;
  }
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || (size_t)sb.st_size != sizeof(fg_state_t)) {
    snprintf(err, errlen, "%s: not a fakegpu state file (size %lld, expected %zu)", path,
             (long long)sb.st_size, sizeof(fg_state_t));
    close(fd);
    return NULL;
  }
  void *m = mmap(NULL, sizeof(fg_state_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
    return NULL;
  }
  fg_state_t *st = m;
  if (st->magic != FG_MAGIC || st->layout_version != FG_LAYOUT_VERSION ||
      st->total_size != sizeof(fg_state_t) || st->gpu_count > FG_MAX_GPUS) {
    snprintf(err, errlen, "%s: bad magic or layout version", path);
    munmap(m, sizeof(fg_state_t));
    return NULL;
  }
  return st;
}

void fg_state_unmap(fg_state_t *st) {
  if (st) munmap(st, sizeof(fg_state_t));
}

static void init_robust(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
}

void fg_state_init_sync(fg_state_t *st) {
  init_robust(&st->lock);
  for (int i = 0; i < FG_MAX_PROCS; i++) init_robust(&st->procs[i].alive);
}

void fg_recount(fg_state_t *st) {
  for (int g = 0; g < FG_MAX_GPUS; g++) {
    st->gpus[g].proc_used = 0;
    for (int m = 0; m < FG_MAX_MIG; m++) st->gpus[g].mig[m].proc_used = 0;
  }
  for (int i = 0; i < FG_MAX_PROCS; i++) {
    fg_proc_t *p = &st->procs[i];
    if (p->state != FG_PROC_USED || p->gpu < 0 || p->gpu >= FG_MAX_GPUS) continue;
    st->gpus[p->gpu].proc_used += p->used_mem;
    if (p->mig >= 0 && p->mig < FG_MAX_MIG) st->gpus[p->gpu].mig[p->mig].proc_used += p->used_mem;
  }
}

void fg_lock(fg_state_t *st) {
  int r = pthread_mutex_lock(&st->lock);
  if (r == EOWNERDEAD) {
    pthread_mutex_consistent(&st->lock);
    fg_recount(st); /* the dead owner may have been mid-update */
  }
}

int fg_trylock(fg_state_t *st) {
  int r = pthread_mutex_trylock(&st->lock);
  if (r == EOWNERDEAD) {
    pthread_mutex_consistent(&st->lock);
    fg_recount(st);
    return 0;
  }
  return r;
}

void fg_unlock(fg_state_t *st) { pthread_mutex_unlock(&st->lock); }

int fg_proc_start_time(pid_t pid, uint64_t *start, char *state) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p) return -1;
  p += 2; /* field 3: state */
  if (state) *state = *p;
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p) return -1;
    p++;
  }
  *start = strtoull(p, NULL, 10);
  return 0;
}

void fg_proc_free_locked(fg_state_t *st, int slot) {
  fg_proc_t *p = &st->procs[slot];
  if (p->state != FG_PROC_USED) return;
  if (p->gpu >= 0 && p->gpu < FG_MAX_GPUS) {
    fg_gpu_t *g = &st->gpus[p->gpu];
    FG_SUB(&g->proc_used, p->used_mem);
    if (p->mig >= 0 && p->mig < FG_MAX_MIG) FG_SUB(&g->mig[p->mig].proc_used, p->used_mem);
  }
  p->used_mem = 0;
  p->parked_mem = 0; /* a parked process that dies takes its host copy with it */
  FG_STORE(&p->ckpt_state, FG_CKPT_RUNNING);
  FG_STORE(&p->busy, 0);
  FG_STORE(&p->state, FG_PROC_FREE);
}

void fg_reap(fg_state_t *st, int force) {
  uint64_t now = fg_now_ns();
  if (!force) {
    uint64_t last = FG_LOAD(&st->last_reap_ns);
    if (now - last < REAP_INTERVAL_NS) return;
    if (!__atomic_compare_exchange_n(&st->last_reap_ns, &last, now, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      return; /* someone else reaps now */
    if (fg_trylock(st) != 0) return; /* never block a reader on a stalled writer */
  } else {
    fg_lock(st);
    FG_STORE(&st->last_reap_ns, now);
  }
  int full = force || now - st->last_full_reap_ns >= FULL_REAP_INTERVAL_NS;
  if (full) st->last_full_reap_ns = now;
  uint32_t hwm = st->proc_hwm;
  for (uint32_t i = 0; i < hwm && i < FG_MAX_PROCS; i++) {
    fg_proc_t *p = &st->procs[i];
    if (p->state != FG_PROC_USED) continue;
    int dead = 0;
    if (p->kind == FG_KIND_LIFELINE) {
      /* The owner's lifeline thread holds `alive`; the kernel marks it
       * OWNER_DIED when that process exits, however it exits. */
      int r = pthread_mutex_trylock(&p->alive);
      if (r == EOWNERDEAD) {
        pthread_mutex_consistent(&p->alive);
        pthread_mutex_unlock(&p->alive);
        dead = 1;
      } else if (r == 0) {
        pthread_mutex_unlock(&p->alive);
        dead = 1;
      } else if (r == ENOTRECOVERABLE) {
        dead = 1;
      }
    } else {
      if (kill(p->pid, 0) != 0 && errno == ESRCH) {
        dead = 1;
      } else if (full) {
        uint64_t start;
        char state = 0;
        if (fg_proc_start_time(p->pid, &start, &state) != 0 || start != p->start_time ||
            state == 'Z' || state == 'X')
          dead = 1;
      }
    }
    if (dead) fg_proc_free_locked(st, (int)i);
  }
  fg_unlock(st);
}

uint64_t fg_engine_capacity_free(const fg_state_t *st, int gpu, int mig) {
  const fg_gpu_t *g = &st->gpus[gpu];
  if (mig >= 0) {
    uint64_t used = FG_LOAD(&g->mig[mig].proc_used);
    return used >= g->mig[mig].memory_total ? 0 : g->mig[mig].memory_total - used;
  }
  uint64_t used = g->memory_reserved + FG_LOAD(&g->proc_used);
  return used >= g->memory_total ? 0 : g->memory_total - used;
}

int fg_proc_copy(const fg_state_t *st, int slot, fg_proc_t *out) {
  const fg_proc_t *p = &st->procs[slot];
  if (FG_LOAD(&p->state) != FG_PROC_USED) return 0;
  out->state = FG_PROC_USED;
  out->kind = p->kind;
  out->pid = p->pid;
  out->gpu = p->gpu;
  out->mig = p->mig;
  out->type = p->type;
  out->start_time = p->start_time;
  out->used_mem = __atomic_load_n(&p->used_mem, __ATOMIC_RELAXED);
  out->ckpt_state = FG_LOAD(&p->ckpt_state);
  out->parked_mem = __atomic_load_n(&p->parked_mem, __ATOMIC_RELAXED);
  out->restore_tid = p->restore_tid;
  return FG_LOAD(&p->state) == FG_PROC_USED && out->pid > 0;
}

int fg_fault_lookup(const fg_state_t *st, const char *call, int device) {
  if (FG_LOAD(&st->fault_count) == 0) return 0;
  for (int i = 0; i < FG_MAX_FAULTS; i++) {
    const fg_fault_t *f = &st->faults[i];
    if (f->code == 0) continue;
    if (f->device != -1 && f->device != device) continue;
    if (strcmp(f->call, call) == 0) return f->code;
  }
  return 0;
}

int fg_fault_set(fg_state_t *st, const char *call, int device, int code) {
  int rc = 0;
  fg_lock(st);
  int slot = -1, free_slot = -1;
  for (int i = 0; i < FG_MAX_FAULTS; i++) {
    fg_fault_t *f = &st->faults[i];
    if (f->code == 0) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (f->device == device && strcmp(f->call, call) == 0) slot = i;
  }
  if (slot < 0 && code != 0) slot = free_slot;
  if (slot < 0) {
    rc = code == 0 ? 0 : -1;
  } else {
    fg_fault_t *f = &st->faults[slot];
    snprintf(f->call, sizeof f->call, "%s", call);
    f->device = device;
    f->code = code;
  }
  uint32_t n = 0;
  for (int i = 0; i < FG_MAX_FAULTS; i++) n += st->faults[i].code != 0;
  FG_STORE(&st->fault_count, n);
  fg_unlock(st);
  return rc;
}

void fg_ring_append(fg_state_t *st, int gpu, const fg_exec_rec_t *rec) {
  fg_ring_t *r = &st->rings[gpu];
  uint64_t idx = __atomic_fetch_add(&r->head, 1, __ATOMIC_ACQ_REL);
  fg_exec_rec_t *d = &r->recs[idx % FG_RING_SIZE];
  FG_STORE(&d->seq, 0);
  d->enqueue_ns = rec->enqueue_ns;
  d->start_ns = rec->start_ns;
  d->end_ns = rec->end_ns;
  d->pid = rec->pid;
  d->engine = rec->engine;
  FG_STORE(&d->seq, idx + 1);
}

void fg_ring_scan(const fg_state_t *st, int gpu, int engine, uint64_t from, uint64_t to,
                  fg_ring_visit_fn fn, void *ctx) {
  const fg_ring_t *r = &st->rings[gpu];
  uint64_t head = FG_LOAD(&r->head);
  uint64_t lo = head > FG_RING_SIZE ? head - FG_RING_SIZE : 0;
  int old_run = 0;
  for (uint64_t i = head; i > lo; i--) {
    const fg_exec_rec_t *s = &r->recs[(i - 1) % FG_RING_SIZE];
    if (FG_LOAD(&s->seq) != i) continue;
    fg_exec_rec_t rec = *s;
    if (FG_LOAD(&s->seq) != i) continue;
    if (rec.end_ns <= from) {
      /* appended in completion order across processes: a run of old records
       * means everything before is older still */
      if (++old_run >= 32) break;
      continue;
    }
    old_run = 0;
    if (engine >= 0 && rec.engine != engine) continue;
    if (rec.start_ns >= to) continue;
    fn(&rec, ctx);
  }
  /* kernels running now are not in the ring until they finish */
  const fg_gpu_t *g = &st->gpus[gpu];
  for (int e = 0; e < FG_MAX_ENGINES; e++) {
    if (engine >= 0 && e != engine) continue;
    const fg_engine_t *en = &g->engines[e];
    uint64_t turn = FG_LOAD(&en->turn);
    if ((turn >> 32) == 0) continue;
    if (FG_LOAD(&en->holder_ticket) != (uint32_t)turn) continue;
    fg_exec_rec_t rec = {0, 0, FG_LOAD(&en->holder_start_ns), FG_LOAD(&en->holder_end_ns),
                         FG_LOAD(&en->holder_pid), e};
    uint64_t now = fg_now_ns();
    if (rec.end_ns > now) rec.end_ns = now;
    if (rec.end_ns <= from || rec.start_ns >= to || rec.start_ns >= rec.end_ns) continue;
    fn(&rec, ctx);
  }
  /* and MPS clients' kernels running now on a shared MPS context (the whole GPU's or a slice's, cuda_mps.c) */
  uint64_t now = fg_now_ns();
  for (int i = 0; i < FG_MAX_MPS_CLIENTS; i++) {
    const fg_mps_client_t *c = &g->mps_clients[i];
    if (!FG_LOAD(&c->pid) || !FG_LOAD(&c->active) || (int64_t)(now - FG_LOAD(&c->heartbeat_ns)) > 50000000) continue;
    int on = (int)FG_LOAD(&c->engine);
    if (engine >= 0 && on != engine) continue;
    fg_exec_rec_t rec = {0, 0, FG_LOAD(&c->kernel_start_ns), now, FG_LOAD(&c->pid), on};
    if (rec.end_ns <= from || rec.start_ns >= to || rec.start_ns >= rec.end_ns) continue;
    fn(&rec, ctx);
  }
}

typedef struct {
  uint64_t from, to, busy;
} busy_ctx_t;

static void busy_visit(const fg_exec_rec_t *rec, void *vctx) {
  busy_ctx_t *c = vctx;
  uint64_t s = rec->start_ns > c->from ? rec->start_ns : c->from;
  uint64_t e = rec->end_ns < c->to ? rec->end_ns : c->to;
  if (e > s) c->busy += e - s;
}

uint64_t fg_busy_ns(const fg_state_t *st, int gpu, int engine, uint64_t from, uint64_t to) {
  busy_ctx_t c = {from, to, 0};
  fg_ring_scan(st, gpu, engine, from, to, busy_visit, &c);
  return c.busy > to - from ? to - from : c.busy;
}

unsigned fg_engine_util(const fg_state_t *st, int gpu, int engine) {
  uint64_t now = fg_now_ns();
  uint64_t busy = fg_busy_ns(st, gpu, engine, now - UTIL_WINDOW_NS, now);
  unsigned u = (unsigned)((busy * 100 + UTIL_WINDOW_NS / 2) / UTIL_WINDOW_NS);
  return u > 100 ? 100 : u;
}

unsigned fg_gpu_util(const fg_state_t *st, int gpu) {
  const fg_gpu_t *g = &st->gpus[gpu];
  if (!g->mig_current || g->mig_count == 0) return fg_engine_util(st, gpu, 0);
  /* MIG: SM-weighted mean of the instances' engines */
  uint64_t acc = 0;
  for (uint32_t m = 0; m < g->mig_count; m++)
    if (FG_LOAD(&g->mig[m].present) != FG_MIG_FREE)
      acc += (uint64_t)fg_engine_util(st, gpu, (int)m + 1) * g->mig[m].sm_count;
  return g->sm_count ? (unsigned)(acc / g->sm_count) : 0;
}

unsigned fg_mem_util(unsigned gpu_util) { return gpu_util * 60 / 100; }

unsigned fg_temperature(const fg_state_t *st, int gpu, unsigned util) {
  const fg_gpu_t *g = &st->gpus[gpu];
  return (g->pin_mask & FG_PIN_TEMP) ? g->pin_temp : 30 + util / 2;
}

unsigned fg_power_mw(const fg_state_t *st, int gpu, unsigned util) {
  const fg_gpu_t *g = &st->gpus[gpu];
  if (g->pin_mask & FG_PIN_POWER) return g->pin_power_mw;
  return (unsigned)((uint64_t)g->power_limit_mw * (100 + 8 * util) / 1000);
}

unsigned fg_sm_clock(const fg_state_t *st, int gpu, unsigned util) {
  const fg_gpu_t *g = &st->gpus[gpu];
  if (g->pin_mask & FG_PIN_SM_CLOCK) return g->pin_sm_clock;
  return util == 0 ? g->sm_clock_idle : g->sm_clock_max;
}

unsigned fg_mem_clock(const fg_state_t *st, int gpu) {
  const fg_gpu_t *g = &st->gpus[gpu];
  return (g->pin_mask & FG_PIN_MEM_CLOCK) ? g->pin_mem_clock : g->mem_clock;
}
