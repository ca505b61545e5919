/* Shared by gate.c (the launch protocol), gate_files.c (the gate's files in
 * this process) and gate_procs.c (the job's process table, used bytes,
 * synchronised launches). */
#ifndef GS_GATE_INTERNAL_H
#define GS_GATE_INTERNAL_H

#include "preload.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define SUB(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define ADD_SC(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define SUB_SC(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_SEQ_CST)
#define CAS(p, expected, desired) \
  __atomic_compare_exchange_n((p), (expected), (desired), 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

typedef struct {
  gate_header_t *hdr;     /* the control file, read-only */
  gate_domain_t *domains; /* read-only */
  gate_slot_t *slots;     /* engine halves, read-only */
  gate_slot_t *my;        /* our slot's engine half */
  gate_slot_domains_t *my_also; /* our slot's other domains (a job on several GPUs) */
  gate_activity_t *me;    /* our activity, read-write */
  char *acts;             /* slot i's activity page at acts + i * act_stride */
  size_t act_stride;
  uint32_t index, generation;
} gs_gate_map_t;
extern GS_HIDDEN gs_gate_map_t gs_g;
/* per slot: the generation whose activity file is mapped at its page (0: none yet) */
extern GS_HIDDEN uint32_t gs_act_gen[GATE_MAX_SLOTS];

/* gate_files.c: maps the control file and our activity (GPUSHARE_GATE*), installs the
 * SIGBUS guard. 1: attached (gs_g filled). */
GS_HIDDEN int gs_gate_files_attach(void);
/* The same from the descriptors the engine handed over at enrolment (enrol.c): the activity and control
 * descriptors are consumed; the directory's is kept (other slots' activities are opened under it). */
GS_HIDDEN int gs_gate_files_attach_fds(int dir_fd, int control_fd, int activity_fd, uint32_t index, uint32_t generation);
/* Maps slot i's activity file for generation gen (read-only), or leaves zeros. */
GS_HIDDEN gate_activity_t *gs_activity_map(uint32_t i, uint32_t gen);

/* Slot i's activity for its current generation: zeros while none can be mapped
 * (or its owner truncated it). Fast path: two loads. */
static inline gate_activity_t *gs_activity(uint32_t i) {
  uint32_t gen = LOAD(&gs_g.slots[i].generation);
  if (GS_LIKELY(LOAD(&gs_act_gen[i]) == gen)) return (gate_activity_t *)(gs_g.acts + i * gs_g.act_stride);
  return gs_activity_map(i, gen);
}

/* Members at priorities [from, to) of `domain` and of our slot's other domains (a job on several GPUs). */
static inline uint64_t gs_members_between(uint32_t domain, uint32_t from, uint32_t to) {
  uint64_t m = 0;
  for (uint32_t p = from; p < to; p++) m |= LOAD(&gs_g.domains[domain].members[p]);
  for (uint32_t w = 0; w < 2; w++) {
    for (uint64_t x = LOAD(&gs_g.my_also->also[w]); x; x &= x - 1) {
      uint32_t d = w * 64 + (uint32_t)__builtin_ctzll(x);
      if (d >= GATE_MAX_DOMAINS) break;
      for (uint32_t p = from; p < to; p++) m |= LOAD(&gs_g.domains[d].members[p]);
    }
  }
  return m;
}

/* The stuck masks of `domain` and of our slot's other domains. */
static inline uint64_t gs_stuck_in(uint32_t domain) {
  uint64_t m = LOAD(&gs_g.domains[domain].stuck);
  for (uint32_t w = 0; w < 2; w++)
    for (uint64_t x = LOAD(&gs_g.my_also->also[w]); x; x &= x - 1) {
      uint32_t d = w * 64 + (uint32_t)__builtin_ctzll(x);
      if (d < GATE_MAX_DOMAINS) m |= LOAD(&gs_g.domains[d].stuck);
    }
  return m;
}

/* gate.c: our activity, or NULL (not gated, or released). */
GS_HIDDEN gate_activity_t *gs_gate_me(void);

/* gate_procs.c */
extern GS_HIDDEN uint32_t gs_capturing_streams; /* streams of this process capturing now */
GS_HIDDEN int32_t gs_self_pid(void); /* this process, kept current across fork */
/* This process's entry in our activity's table, claimed on first use (a private
 * stand-in when the table is full). Only while gs_gate_me() is not NULL. */
GS_HIDDEN gate_proc_t *gs_proc(gate_activity_t *me);
GS_HIDDEN int gs_pid_gone(int32_t pid);
/* Processes of our job whose pid is gone: their share given back. Returns how many. */
GS_HIDDEN unsigned gs_reclaim_gone(gate_activity_t *me);
/* `launches` of this process at `snapshot` are complete: count them as synced. */
GS_HIDDEN void gs_proc_synced(gate_activity_t *me, gate_proc_t *p, uint64_t snapshot);
/* Sum of in_launch over the live processes of activity s, plus what untracked ones hold. */
GS_HIDDEN uint32_t gs_live_in_launch(gate_activity_t *s);

/* gate_learned.c: the learned window (GATE_WINDOW_LEARNED) */
GS_HIDDEN void gs_learn_gap(gate_activity_t *me, uint64_t gap);         /* a higher job: idle for gap ns, then launched */
GS_HIDDEN void gs_learn_kernel(gate_activity_t *me, uint64_t ns_per_kernel); /* a lower job: a synchronised batch */
GS_HIDDEN uint64_t gs_learned_kernel_ns(void); /* this process's, 0 until learned */
/* The first of `higher` (not ACTIVE) whose next launch our next kernel would likely not finish before, or -1;
 * *fits_at: when the kernel fits its gap, if within the waiter's longest sleep, else 0. */
GS_HIDDEN int gs_learned_unfit(uint64_t higher, uint64_t now, uint64_t *fits_at);
GS_HIDDEN void gs_learned_went_idle(gate_activity_t *me); /* a synchronise found all our work complete: wake lower waiters */
/* Up to ns for higher slot i's launched work to be seen complete: 1 when that ended the wait, 0 on the timeout. */
GS_HIDDEN int gs_learned_wait_idle(uint32_t i, uint64_t ns);
GS_HIDDEN void gs_learned_sleep(uint64_t ns); /* a waiter's sleep without the timer slack: it ends when asked */

/* gate_trace.c: with GPUSHARE_GATE_TRACE=DIR, a span of this process's timeline (kind: a letter) */
GS_HIDDEN void gs_trace(char kind, uint64_t t0, uint64_t t1);

#endif
