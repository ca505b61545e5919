/* The launch gate, job side: the protocol of native/include/gate_abi.h.
 * Fast path: atomics on the mappings and a vDSO clock read, no system call.
 * The gate's files: gate_files.c. The job's process table and used bytes: gate_procs.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "enrol.h"
#include "gate_internal.h"

#define ENGINE_CHECK_EVERY_NS 20000000ull /* slow path: engine liveness at most every 20 ms */
#define DEAD_CHECK_AFTER_NS 100000000ull  /* a blocker this long gets its pid checked */
#define MAX_SLEEP_NS 1000000ull
#define LEARNED_MAX_SLEEP_NS 200000ull /* learned windows end at a sync: a waiter looks again soon after */
#define LEARNED_PAST_UNTIL_NS 1000ull /* learned waits sleep with a small timer slack: looking again 1 µs after the hold or fit age is enough */
#define MAX_SYNC_BATCH 256u

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

GS_HIDDEN gs_gate_map_t gs_g;
#define g gs_g
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_attached, g_detached;
static uint64_t g_engine_checked_ns;
static int g_engine_gone;
static int32_t g_dead_pid[GATE_MAX_SLOTS]; /* blockers found dead: ignored while that pid is the slot's */
/* step 3: lower slots that held this process GATE_HOLD_MAX_NS in all (per generation) are not waited for */
static uint64_t g_given_up;
static uint32_t g_given_up_gen[GATE_MAX_SLOTS];
static uint64_t g_held_ns[GATE_MAX_SLOTS];
static uint32_t g_held_gen[GATE_MAX_SLOTS];
static uint64_t g_stream_key;              /* the one stream launched on since the last covering sync */
static int g_streams_mixed;
static uint32_t g_sync_batch = 1, g_since_sync;
static uint64_t g_batch_t0, g_batch_waited0;
static uint64_t g_waited_ns; /* this process's time held by the gate (the activity's sums are the job's) */
static GS_TLS char t_stream_marker; /* its address names this thread's per-thread default stream */

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static int g_env_attached;

static void attached(void) {
  gate_activity_t *me = g.me;
  STORE(&me->attached_pid, gs_self_pid());
  gs_proc(me); /* our entry in the job's process table */
  STORE(&g_attached, 1);
  gs_log("gated: slot %u, generation %u, priority %u, gpu %u, domain %u", g.index, g.generation,
         LOAD(&g.my->priority), LOAD(&g.my->gpu), LOAD(&g.my->domain));
}

/* a managed job's process attaches by its environment */
static void attach_env(void) {
  if (!gs_gate_files_attach()) return;
  g_env_attached = 1;
  attached();
}

static void attach(void) {
  pthread_once(&g_env_once, attach_env);
  if (g_env_attached) return;
  /* any other process (or one whose environment names a gate that is not its own) asks the engine,
   * which decides its job: enrol.c */
  gs_enrolment_t *e = NULL;
  if (!gs_enrol_wanted() || !(e = gs_enrolment())) return;
  int ok = gs_gate_files_attach_fds(e->dir_fd, e->control_fd, e->activity_fd, e->slot, e->generation);
  e->control_fd = e->activity_fd = -1;
  if (ok) attached();
}

/* Set by calls that are not the CUDA driver's (NVML: a monitor such as nvidia-smi): they see the job
 * of a process that has one, but never make a process enrol. */
GS_HIDDEN GS_TLS int gs_no_enrol;

/* Our activity, or NULL: not gated, or the engine released the slot (then for good). */
gate_activity_t *gs_gate_me(void) {
  if (GS_UNLIKELY(gs_no_enrol)) pthread_once(&g_env_once, attach_env);
  else pthread_once(&g_once, attach);
  if (GS_UNLIKELY(!LOAD(&g_attached) || LOAD(&g_detached))) return NULL;
  gate_slot_t *my = g.my;
  if (GS_UNLIKELY(LOAD(&my->generation) != g.generation || LOAD(&my->state) != GATE_SLOT_IN_USE)) {
    if (!__atomic_exchange_n(&g_detached, 1, __ATOMIC_ACQ_REL)) gs_log("gate slot %u was released: not gated", g.index);
    return NULL;
  }
  return g.me;
}

#define gate_me gs_gate_me

/* ---- the job's quota (its used bytes: gate_procs.c) ---- */

int gs_gate_quota(uint64_t *quota) {
  if (!gate_me()) return 0;
  gate_slot_t *my = g.my;
  for (int tries = 0; tries < 1000; tries++) { /* seqlock: the engine pwrite()s the quota */
    uint32_t s1 = LOAD(&my->config_seq);
    if (s1 & 1) {
      sched_yield();
      continue;
    }
    uint64_t q = LOAD(&my->quota_bytes);
    if (LOAD(&my->config_seq) == s1) {
      *quota = q;
      return 1;
    }
  }
  return 0;
}

/* ---- activity ---- */

static uint64_t hdr_ns(const uint64_t *field, uint64_t fallback) {
  uint64_t v = LOAD(field);
  return v ? v : fallback;
}

/* 1 if slot i is ACTIVE (gate_abi.h); *until = when its window ends, 0 if unknown. */
static int slot_active(uint32_t i, uint64_t now, uint64_t *until) {
  if (LOAD(&g.slots[i].state) != GATE_SLOT_IN_USE) return 0;
  if (GS_UNLIKELY(LOAD(&g.slots[i].unconfirmed))) return 0; /* claims the driver never confirmed (gate_abi.h) */
  gate_activity_t *s = gs_activity(i);
  int32_t dead = LOAD(&g_dead_pid[i]);
  if (GS_UNLIKELY(dead) && dead == LOAD(&s->attached_pid)) return 0;
  *until = 0;
  if (LOAD_SC(&s->in_launch)) return 1;
  uint64_t last = LOAD(&s->last_launch_ns);
  if (!last) return 0;
  uint64_t window = hdr_ns(&g.hdr->active_window_ns, GATE_DEFAULT_ACTIVE_WINDOW_NS);
  if (LOAD(&g.hdr->window_policy) == GATE_WINDOW_LEARNED) { /* held from its last launch or going idle, as long as it learned */
    uint64_t idle = LOAD(&s->idle_since_ns), hold = LOAD(&s->hold_ns);
    if (idle > last && idle <= now) last = idle;
    if (hold && hold < window) window = hold;
  }
  uint64_t age = now > last ? now - last : 0;
  if (age < window) {
    *until = last + window;
    return 1;
  }
  return LOAD(&s->launches) != LOAD(&s->synced_launches) &&
         age < hdr_ns(&g.hdr->outstanding_max_ns, GATE_DEFAULT_OUTSTANDING_MAX_NS);
}

/* `mask` without the slots whose blocker this process found dead. */
static uint64_t without_dead(uint64_t mask) {
  for (uint64_t m = mask; m;) {
    uint32_t i = (uint32_t)__builtin_ctzll(m);
    m &= m - 1;
    int32_t dead = LOAD(&g_dead_pid[i]);
    if (GS_UNLIKELY(dead) && dead == LOAD(&gs_activity(i)->attached_pid)) mask &= ~(1ull << i);
  }
  return mask;
}

/* The first ACTIVE slot among `mask`, or -1. */
static int first_active(uint64_t mask, uint64_t now, uint64_t *until) {
  while (mask) {
    int i = __builtin_ctzll(mask);
    mask &= mask - 1;
    if (slot_active((uint32_t)i, now, until)) return i;
  }
  return -1;
}

static uint64_t stable_u64(const uint64_t *p) { /* the engine's pwrite() of 8 bytes may tear */
  uint64_t a = LOAD(p), b;
  for (int i = 0; i < 4 && (b = LOAD(p)) != a; i++) a = b;
  return a;
}

/* Slow path only: has the engine gone away? (then everything runs: fail open) */
static int engine_gone(uint64_t now) {
  uint64_t checked = LOAD(&g_engine_checked_ns);
  if (checked && now - checked < ENGINE_CHECK_EVERY_NS) return LOAD(&g_engine_gone);
  STORE(&g_engine_checked_ns, now);
  gate_header_t *h = g.hdr;
  int gone = 0;
  uint64_t hb = stable_u64(&h->heartbeat_ns);
  pid_t pid = LOAD(&h->engine_pid);
  if (LOAD(&h->state) != GATE_ENGINE_RUNNING) gone = 1;
  else if (now > hb && now - hb > hdr_ns(&h->engine_gone_ns, GATE_DEFAULT_ENGINE_GONE_NS)) gone = 1;
  else if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) gone = 1;
  if (__atomic_exchange_n(&g_engine_gone, gone, __ATOMIC_ACQ_REL) != gone)
    gs_log(gone ? "engine gone: running ungated (fail open)" : "engine back: gated again");
  return gone;
}

/* A blocker is dead when the process that launched last is gone and no other process of its job lives. */
static void check_dead(uint32_t i) {
  gate_activity_t *s = gs_activity(i);
  int32_t pid = LOAD(&s->attached_pid);
  if (!gs_pid_gone(pid)) return;
  for (unsigned k = 0; k < GATE_MAX_PROCS; k++) {
    int32_t sibling = LOAD(&s->procs[k].pid);
    if (sibling > 0 && sibling != pid && !gs_pid_gone(sibling)) return;
  }
  STORE(&g_dead_pid[i], pid);
  gs_log("slot %u: pid %d and its siblings are gone, not waiting for it", i, (int)pid);
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

/* Slots given up by this process that now hold another job (a new generation) are waited for again. */
static uint64_t given_up_now(uint64_t mask) {
  for (uint64_t m = mask; m;) {
    uint32_t i = (uint32_t)__builtin_ctzll(m);
    m &= m - 1;
    if (LOAD(&g.slots[i].generation) != LOAD(&g_given_up_gen[i])) {
      __atomic_fetch_and(&g_given_up, ~(1ull << i), __ATOMIC_ACQ_REL);
      mask &= ~(1ull << i);
    }
  }
  return mask;
}

/* Slot i of generation gen has held us GATE_HOLD_MAX_NS in all: tell the engine, wait for it no more. */
static void give_up(gate_activity_t *me, uint32_t i, uint32_t gen) {
  STORE(&g_given_up_gen[i], gen);
  if (__atomic_fetch_or(&g_given_up, 1ull << i, __ATOMIC_ACQ_REL) & (1ull << i)) return; /* another thread did */
  STORE(&me->stuck_gen[i], gen);
  ADD(&me->stuck_waits, 1);
  gs_log("slot %u held us mid-launch for 1 s in all: not waiting for it any more", i);
}

/* Waits while lower slot i is mid-launch: until it is done, gone, out of the domain, marked stuck
 * by the engine, or has held this process GATE_HOLD_MAX_NS in all. */
static void wait_for_lower(gate_activity_t *me, uint32_t domain, uint32_t i, gate_activity_t *s) {
  uint64_t bit = 1ull << i;
  uint32_t gen = LOAD(&g.slots[i].generation);
  if (LOAD(&g_held_gen[i]) != gen) {
    STORE(&g_held_gen[i], gen);
    STORE(&g_held_ns[i], 0);
  }
  uint64_t held = LOAD(&g_held_ns[i]);
  uint64_t start = gs_now_ns(), now = start, next_dead_check = start + DEAD_CHECK_AFTER_NS;
  for (unsigned spins = 0; LOAD_SC(&s->in_launch); spins++) {
    if (spins < 256) {
      CPU_RELAX();
      continue;
    }
    now = gs_now_ns();
    if (held + (now - start) >= GATE_HOLD_MAX_NS) {
      give_up(me, i, gen);
      break;
    }
    if (now > next_dead_check) { /* mid-launch only in processes that are gone: nothing to wait for */
      next_dead_check = now + DEAD_CHECK_AFTER_NS;
      if (!gs_live_in_launch(s)) break;
    }
    /* read again: the engine takes a stopped job out of the domain, or marks a stuck or unconfirmed one */
    if (!(gs_members_between(domain, 0, GATE_PRIORITIES) & bit) || (gs_stuck_in(domain) & bit) || LOAD(&g.slots[i].unconfirmed)) break;
    sched_yield();
  }
  now = gs_now_ns();
  gs_trace('H', start, now);
  ADD(&g_held_ns[i], now - start);
  ADD(&me->held_ns, now - start);
}

/* Step 3: wait until no lower member of our domains is between its check and its enqueue. */
static void handshake(gate_activity_t *me, uint32_t domain, uint32_t prio) {
  uint64_t lower = gs_members_between(domain, prio + 1, GATE_PRIORITIES);
  lower &= ~(1ull << g.index);
  if (GS_LIKELY(!lower)) return;
  lower &= ~gs_stuck_in(domain);
  uint64_t given_up = LOAD(&g_given_up);
  if (GS_UNLIKELY(given_up)) lower &= ~given_up_now(given_up);
  while (lower) {
    uint32_t i = (uint32_t)__builtin_ctzll(lower);
    lower &= lower - 1;
    gate_activity_t *s = gs_activity(i);
    if (GS_LIKELY(!LOAD_SC(&s->in_launch)) || LOAD(&g.slots[i].unconfirmed)) continue;
    wait_for_lower(me, domain, i, s);
  }
}

void gs_gate_enter(gs_launch_t *l) {
  l->slot = NULL;
  l->fail_open = 0;
  gate_activity_t *me = gate_me();
  if (!me) return;
  if (GS_UNLIKELY(LOAD(&gs_capturing_streams))) return; /* recorded into a graph, not run: no wait, and a sync would invalidate it */
  gate_proc_t *p = gs_proc(me);
  l->slot = me;
  l->proc = p;
  uint64_t blocked_since = 0, next_dead_check = 0;
  unsigned round = 0;
  uint32_t prio, domain;
  for (;;) {
    /* read every iteration: a drag to High, or a move, applies to a thread already waiting */
    prio = LOAD(&g.my->priority);
    domain = LOAD(&g.my->domain);
    if (prio >= GATE_PRIORITIES) prio = GATE_PRIORITY_BEST_EFFORT;
    if (domain >= GATE_MAX_DOMAINS) domain = 0;
    int paused = 0, blocker = -1, fit = 0;
    uint64_t now = 0, until = 0;
    /* does our kernel fit an idle higher job's gap? Asked before step 1: while we hold in_launch, higher jobs wait at step 3 */
    if (GS_UNLIKELY(gs_learned_kernel_ns()) && !LOAD(&g.my->paused)) {
      uint64_t higher = gs_members_between(domain, 0, prio) & ~(1ull << g.index);
      if (higher) fit = (blocker = gs_learned_unfit(without_dead(higher), now = gs_now_ns(), &until)) >= 0;
    }
    if (blocker < 0) {
      ADD(&p->in_launch, 1);      /* our share first: a reclaim may take one too many, never too few */
      ADD_SC(&me->in_launch, 1);  /* step 1: publish "launching" (a full fence) */
      paused = LOAD(&g.my->paused) != 0;
      if (GS_LIKELY(!paused)) {
        uint64_t higher = gs_members_between(domain, 0, prio) & ~(1ull << g.index);
        if (GS_LIKELY(!higher)) break;
        now = gs_now_ns();
        blocker = first_active(higher, now, &until); /* step 2 */
        if (blocker < 0) break;
      }
      SUB_SC(&me->in_launch, 1);
      SUB(&p->in_launch, 1);
    }
    /* slow path: paused, or a higher job is active */
    if (!gate_me()) { /* released while we waited: run ungated */
      l->slot = NULL;
      return;
    }
    if (!now) now = gs_now_ns();
    if (engine_gone(now)) {
      l->fail_open = 1;
      ADD(&me->fail_open_count, 1);
      ADD(&p->in_launch, 1);
      ADD_SC(&me->in_launch, 1);
      break;
    }
    if (!blocked_since) blocked_since = now, next_dead_check = now + DEAD_CHECK_AFTER_NS;
    if (blocker >= 0 && now > next_dead_check) {
      next_dead_check = now + DEAD_CHECK_AFTER_NS;
      check_dead((uint32_t)blocker);
    }
    int learned = LOAD(&g.hdr->window_policy) == GATE_WINDOW_LEARNED;
    uint64_t ns = 50000ull << (round < 5 ? round++ : 5);
    if (until > now) ns = until - now + (learned ? LEARNED_PAST_UNTIL_NS : 20000);
    uint64_t max_sleep = learned ? LEARNED_MAX_SLEEP_NS : MAX_SLEEP_NS;
    if (ns > max_sleep) ns = max_sleep;
    int woken = 0; /* a higher job's launched work holds us: its going idle wakes us (learned windows) */
    if (learned && blocker >= 0 && !fit && !until) woken = gs_learned_wait_idle((uint32_t)blocker, ns);
    else if (learned) gs_learned_sleep(ns);
    else sleep_ns(ns);
    uint64_t after = gs_now_ns();
    ADD(paused ? &me->paused_ns : &me->gated_ns, after - now);
    gs_trace(paused ? 'P' : fit ? 'F' : until ? 'W' : woken ? 'a' : 'A', now, after); /* paused, fit rule, window, launched work (woken by its end) */
    ADD(&g_waited_ns, after - now);
  }
  l->prio = prio;
  l->domain = domain;
  handshake(me, domain, prio); /* step 3 */
}

static uint64_t stream_key(CUstream s, int ptsz) {
  if (s == CU_STREAM_PER_THREAD || (s == NULL && ptsz)) return (uint64_t)(uintptr_t)&t_stream_marker;
  if (s == NULL || s == CU_STREAM_LEGACY) return 1;
  return (uint64_t)(uintptr_t)s;
}

static void note_stream(CUstream s, int ptsz) {
  uint64_t k = stream_key(s, ptsz), cur = LOAD(&g_stream_key);
  if (GS_LIKELY(cur == k)) return;
  if (cur == 0 && __atomic_compare_exchange_n(&g_stream_key, &cur, k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  STORE(&g_streams_mixed, 1);
}

uint64_t gs_gate_sync_begin(void) {
  gate_activity_t *me = gate_me();
  return me ? LOAD(&gs_proc(me)->launches) : 0;
}

void gs_gate_sync_end(uint64_t snapshot, int full, CUstream stream, int ptsz) {
  gate_activity_t *me = gate_me();
  if (!me) return;
  if (!full) {
    uint64_t k = LOAD(&g_stream_key);
    if (LOAD(&g_streams_mixed) || (k != 0 && k != stream_key(stream, ptsz))) return; /* other streams may still run */
  }
  gate_proc_t *p = gs_proc(me);
  gs_proc_synced(me, p, snapshot); /* our launches only: a sibling's may still be queued */
  if (LOAD(&me->synced_launches) == LOAD(&me->launches)) {
    STORE(&me->idle_since_ns, gs_now_ns());
    gs_learned_went_idle(me);
  }
  if (LOAD(&p->launches) == snapshot) {
    STORE(&g_stream_key, 0);
    STORE(&g_streams_mixed, 0);
  }
}

/* Lower jobs keep about be_sync_window_ns of work queued: the batch between
 * synchronisations doubles while a batch takes under half the window and
 * halves when it takes longer than the window. */
static void short_sync(gate_activity_t *me, gate_proc_t *p, CUstream stream, int ptsz, uint64_t launched_at) {
  uint32_t since = ADD(&g_since_sync, 1);
  if (since == 1) {
    STORE(&g_batch_t0, launched_at);
    STORE(&g_batch_waited0, LOAD(&g_waited_ns));
  }
  if (since < LOAD(&g_sync_batch)) return;
  STORE(&g_since_sync, 0);
  uint64_t snapshot = LOAD(&p->launches);
  CUresult rc = CUDA_ERROR_NOT_INITIALIZED;
  int full = 1;
  cuCtxSynchronize_fn ctx_sync = REAL(cuCtxSynchronize);
  uint64_t sync_t0 = gs_now_ns();
  gs_depth++;
  if (ctx_sync) rc = ctx_sync();
  if (rc != CUDA_SUCCESS) { /* no current context in this thread: the launch's stream then */
    full = 0;
    if (ptsz) {
      cuStreamSynchronize_ptsz_fn f = REAL(cuStreamSynchronize_ptsz);
      rc = f ? f(stream) : rc;
    } else {
      cuStreamSynchronize_fn f = REAL(cuStreamSynchronize);
      rc = f ? f(stream) : rc;
    }
  }
  gs_depth--;
  gs_trace('S', sync_t0, gs_now_ns());
  if (rc != CUDA_SUCCESS) return;
  gs_gate_sync_end(snapshot, full, stream, ptsz);
  uint64_t took = gs_now_ns() - LOAD(&g_batch_t0);
  uint64_t waited = LOAD(&g_waited_ns) - LOAD(&g_batch_waited0); /* held at the gate, not on the GPU */
  if (took > waited) gs_learn_kernel(me, (took - waited) / since);
  uint64_t window = hdr_ns(&g.hdr->be_sync_window_ns, GATE_DEFAULT_BE_SYNC_WINDOW_NS);
  uint32_t batch = LOAD(&g_sync_batch);
  if (took < window / 2 && batch < MAX_SYNC_BATCH) STORE(&g_sync_batch, batch * 2);
  else if (took > window && batch > 1) STORE(&g_sync_batch, batch / 2);
}

void gs_gate_leave(gs_launch_t *l, CUresult rc, CUstream stream, int ptsz) {
  gate_activity_t *me = l->slot;
  if (!me) return;
  gate_proc_t *p = l->proc;
  uint64_t now = gs_now_ns();
  int32_t self = gs_self_pid();
  if (l->prio < GATE_PRIORITY_BEST_EFFORT && LOAD(&g.hdr->window_policy) == GATE_WINDOW_LEARNED) {
    uint64_t idle = LOAD(&me->idle_since_ns); /* idle since then, launching now: a gap to learn from */
    if (idle > LOAD(&me->last_launch_ns) && now > idle) gs_learn_gap(me, now - idle);
  }
  STORE(&me->last_launch_ns, now); /* step 5: visible before in_launch drops */
  if (GS_UNLIKELY(LOAD(&me->attached_pid) != self)) STORE(&me->attached_pid, self); /* who to check for liveness */
  if (rc == CUDA_SUCCESS) {
    ADD(&me->launches, 1); /* the slot's sum first: our share never exceeds what we added */
    ADD(&p->launches, 1);
    note_stream(stream, ptsz);
  }
  SUB_SC(&me->in_launch, 1);
  SUB(&p->in_launch, 1);
  if (rc != CUDA_SUCCESS || l->fail_open) return;
  if (l->prio == GATE_PRIORITY_BEST_EFFORT ||
      (l->prio == GATE_PRIORITY_NORMAL && gs_members_between(l->domain, GATE_PRIORITY_HIGH, GATE_PRIORITY_HIGH + 1)))
    short_sync(me, p, stream, ptsz, now);
}
