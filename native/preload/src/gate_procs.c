/* The job's processes in its gate slot: each process keeps its own share of
 * the slot's sums (in_launch, launches, synced launches, used bytes), so a
 * process that exits gives back only its own, and one that died without its
 * destructor (SIGKILL) is given back by a sibling. Also this process's count
 * of capturing streams (the gate lets their launches pass). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate_internal.h"

static gate_proc_t g_local;      /* stands in for our entry when the slot's table is full: sums only */
static gate_proc_t *g_proc;      /* our entry, valid while g_proc_pid is us */
static int32_t g_proc_pid;
static int32_t g_pid;
static pthread_mutex_t g_claim_lock = PTHREAD_MUTEX_INITIALIZER;
GS_HIDDEN uint32_t gs_capturing_streams;

/* A forked child (a data-loader worker, say) is a new process of the job: it claims its own entry. */
static void after_fork_child(void) {
  pthread_mutex_init(&g_claim_lock, NULL);
  STORE(&gs_capturing_streams, 0); /* captures belong to the parent's streams */
  STORE(&g_pid, 0); /* asked of the kernel when first needed */
}

/* Registered at the first use, not at load: a process that never uses CUDA forks as if we were not there. */
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static void watch_forks(void) { pthread_atfork(NULL, NULL, after_fork_child); }

int32_t gs_self_pid(void) {
  int32_t pid = LOAD(&g_pid);
  if (GS_UNLIKELY(!pid)) {
    pthread_once(&g_fork_once, watch_forks);
    STORE(&g_pid, pid = (int32_t)getpid());
  }
  return pid;
}

/* Gone: no such process, or a zombie nobody reaped yet (it holds no GPU memory). */
int gs_pid_gone(int32_t pid) {
  if (pid <= 0) return 0;
  if (kill(pid, 0) != 0) return errno == ESRCH;
  char path[40], buf[256];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *paren = strrchr(buf, ')'); /* the command may contain spaces and parentheses */
  return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static void sub_clamped64(uint64_t *p, uint64_t v) {
  uint64_t cur = LOAD(p);
  while (v && !CAS(p, &cur, cur > v ? cur - v : 0)) {
  }
}

static void sub_clamped32(uint32_t *p, uint32_t v) {
  uint32_t cur = LOAD(p);
  while (v && !CAS(p, &cur, cur > v ? cur - v : 0)) {
  }
}

void gs_proc_synced(gate_activity_t *me, gate_proc_t *p, uint64_t snapshot) {
  uint64_t synced = LOAD(&p->synced_launches);
  while (synced < snapshot && !CAS(&p->synced_launches, &synced, snapshot)) {
  }
  if (synced < snapshot) ADD(&me->synced_launches, snapshot - synced);
}

/* A process's share leaves the slot's sums: its bytes, its outstanding launches, its in_launch. */
static void give_back(gate_activity_t *me, gate_proc_t *e) {
  sub_clamped64(&me->used_bytes, __atomic_exchange_n(&e->used_bytes, 0, __ATOMIC_ACQ_REL));
  gs_proc_synced(me, e, LOAD(&e->launches));
  uint32_t mid = __atomic_exchange_n(&e->in_launch, 0, __ATOMIC_ACQ_REL);
  if (mid) sub_clamped32(&me->in_launch, mid);
  STORE(&e->capturing, 0);
}

/* Entry e held `pid`; whoever wins the CAS to RECLAIMING gives it back and frees it. */
static int free_entry(gate_activity_t *me, gate_proc_t *e, int32_t pid) {
  if (!__atomic_compare_exchange_n(&e->pid, &pid, GATE_PROC_RECLAIMING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
  give_back(me, e);
  STORE(&e->launches, 0);
  STORE(&e->synced_launches, 0);
  STORE(&e->pid, 0);
  return 1;
}

unsigned gs_reclaim_gone(gate_activity_t *me) {
  unsigned n = 0;
  int32_t self = gs_self_pid();
  for (unsigned i = 0; i < GATE_MAX_PROCS; i++) {
    gate_proc_t *e = &me->procs[i];
    int32_t pid = LOAD(&e->pid);
    if (pid <= 0) continue;
    /* our own pid in an entry that is not ours: the image before an exec(), whose memory is gone */
    int stale = pid == self && !(LOAD(&g_proc_pid) == self && g_proc == e);
    if (!stale && (pid == self || !gs_pid_gone(pid))) continue;
    if (free_entry(me, e, pid)) {
      n++;
      ADD(&me->reclaimed_count, 1);
      gs_log("process %d of the job is gone: its share given back", (int)pid);
    }
  }
  return n;
}

static gate_proc_t *claim(gate_activity_t *me) {
  pthread_mutex_lock(&g_claim_lock);
  int32_t self = gs_self_pid();
  if (LOAD(&g_proc_pid) == self) {
    pthread_mutex_unlock(&g_claim_lock);
    return g_proc;
  }
  gs_reclaim_gone(me);
  memset(&g_local, 0, sizeof g_local);
  gate_proc_t *p = &g_local;
  for (unsigned i = 0; i < GATE_MAX_PROCS; i++) {
    int32_t free_pid = 0;
    if (__atomic_compare_exchange_n(&me->procs[i].pid, &free_pid, self, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      p = &me->procs[i];
      break;
    }
  }
  if (p == &g_local) {
    ADD(&me->untracked_count, 1);
    gs_log("the job's process table is full: this process counts in the sums only");
  }
  ADD(&me->attach_count, 1);
  g_proc = p;
  STORE(&g_proc_pid, self);
  pthread_mutex_unlock(&g_claim_lock);
  return p;
}

gate_proc_t *gs_proc(gate_activity_t *me) {
  int32_t pid = LOAD(&g_pid);
  if (GS_LIKELY(pid && LOAD(&g_proc_pid) == pid && g_proc)) return g_proc;
  return claim(me);
}

uint32_t gs_live_in_launch(gate_activity_t *s) {
  uint32_t total = LOAD_SC(&s->in_launch), tracked = 0, live = 0;
  for (unsigned i = 0; i < GATE_MAX_PROCS; i++) {
    gate_proc_t *e = &s->procs[i];
    uint32_t mid = LOAD(&e->in_launch);
    if (!mid) continue;
    tracked += mid;
    if (!gs_pid_gone(LOAD(&e->pid))) live += mid;
  }
  return live + (total > tracked ? total - tracked : 0);
}

/* ---- stream capture: counted per process, published in its entry ---- */

int gs_capturing(void) { return LOAD(&gs_capturing_streams) != 0; }

void gs_capture_begin(void) {
  pthread_once(&g_fork_once, watch_forks);
  ADD(&gs_capturing_streams, 1);
  gate_activity_t *me = gs_gate_me();
  if (me) ADD(&gs_proc(me)->capturing, 1);
}

void gs_capture_end(void) {
  uint32_t cur = LOAD(&gs_capturing_streams);
  while (cur && !CAS(&gs_capturing_streams, &cur, cur - 1)) {
  }
  if (!cur) return;
  gate_activity_t *me = gs_gate_me();
  if (me) SUB(&gs_proc(me)->capturing, 1);
}

/* ---- used bytes: the job's quota, by compare-and-swap on the slot's sum ---- */

int gs_gate_reserve(uint64_t bytes, uint64_t limit) {
  gate_activity_t *me = gs_gate_me();
  if (!me) return -1;
  gate_proc_t *p = gs_proc(me);
  for (int attempt = 0;; attempt++) {
    uint64_t cur = LOAD(&me->used_bytes);
    for (;;) {
      if ((limit != GATE_NO_QUOTA && (cur > limit || bytes > limit - cur)) || cur > UINT64_MAX - bytes) break;
      if (CAS(&me->used_bytes, &cur, cur + bytes)) {
        ADD(&p->used_bytes, bytes);
        return 1;
      }
    }
    /* over: unless a dead sibling still holds bytes, the refusal stands */
    if (attempt > 0 || gs_reclaim_gone(me) == 0) break;
  }
  ADD(&me->oom_count, 1);
  return 0;
}

void gs_gate_unreserve(uint64_t bytes) {
  gate_activity_t *me = gs_gate_me();
  if (!me || !bytes) return;
  gate_proc_t *p = gs_proc(me);
  sub_clamped64(&p->used_bytes, bytes);
  sub_clamped64(&me->used_bytes, bytes);
}

int gs_gate_used(uint64_t *used) {
  gate_activity_t *me = gs_gate_me();
  if (!me) return 0;
  *used = LOAD(&me->used_bytes);
  return 1;
}

/* Our queued work and our memory die with us: our share leaves the job's sums, nobody else's. */
__attribute__((destructor)) static void procs_fini(void) {
  if (!LOAD(&g_proc_pid)) return; /* never claimed an entry: a process that never used CUDA exits untouched */
  int32_t self = gs_self_pid();
  if (LOAD(&g_proc_pid) != self || !g_proc) return;
  gate_activity_t *me = gs_gate_me();
  if (!me) return;
  if (g_proc == &g_local) {
    give_back(me, &g_local);
    return;
  }
  free_entry(me, g_proc, self);
  STORE(&g_proc_pid, 0);
}
