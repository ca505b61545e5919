/* Fake libcuda.so.1: cuCheckpointProcess*, called by another process (the
 * gpushare engine) on a target pid. The state lives in the target's shared
 * process slots: Lock holds back the target's new kernels and copies and waits
 * for those in flight; Checkpoint moves its device memory, accounting and
 * bytes (cuda_contents.c), to "host"; Restore moves both back onto the same
 * GPU if they fit; Unlock lets it run. The target's own executor, allocations
 * and copies wait while it is not RUNNING. */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cuda_internal.h"

#define WAIT_SLICE_NS 100000000ull /* re-check at least this often: a missed wake costs no more */
#define DRAIN_POLL_NS 1000000ull

static void futex_wait(uint32_t *addr, uint32_t val, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake_all(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0); }

/* ---------------- the target's side ---------------- */

void ckpt_wait_running(int slot) {
  if (slot < 0) return;
  fg_proc_t *p = &g_st->procs[slot];
  for (;;) {
    uint32_t s = __atomic_load_n(&p->ckpt_state, __ATOMIC_SEQ_CST);
    if (s == FG_CKPT_RUNNING || FG_LOAD(&p->state) != FG_PROC_USED) return;
    futex_wait(&p->ckpt_state, s, WAIT_SLICE_NS);
  }
}

int ckpt_running(int slot) { return slot < 0 || FG_LOAD(&g_st->procs[slot].ckpt_state) == FG_CKPT_RUNNING; }

/* busy counts the device operations in flight (the executor's kernel, copies of other threads). */
void ckpt_kernel_begin(devctx_t *d) {
  if (d->slot < 0) return;
  fg_proc_t *p = &g_st->procs[d->slot];
  for (;;) {
    /* busy before state, the locker sets state before reading busy: one of us sees the other */
    __atomic_add_fetch(&p->busy, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->ckpt_state, __ATOMIC_SEQ_CST) == FG_CKPT_RUNNING) return;
    __atomic_sub_fetch(&p->busy, 1, __ATOMIC_SEQ_CST);
    ckpt_wait_running(d->slot);
  }
}

void ckpt_kernel_end(devctx_t *d) {
  if (d->slot >= 0) __atomic_sub_fetch(&g_st->procs[d->slot].busy, 1, __ATOMIC_SEQ_CST);
}

/* ---------------- the caller's side ---------------- */

#define NEED_STATE()                                      \
  do {                                                    \
    if (!g_init_done) return CUDA_ERROR_NOT_INITIALIZED;  \
    if (!g_st) return g_init_rc;                          \
  } while (0)

/* The live CUDA slots of pid (attached pids have no libcuda: not CUDA processes). */
static int slots_of(fg_state_t *st, int pid, int *out) {
  int n = 0;
  uint32_t hwm = FG_LOAD(&st->proc_hwm);
  for (uint32_t i = 0; i < hwm && i < FG_MAX_PROCS; i++) {
    fg_proc_t *p = &st->procs[i];
    if (p->state == FG_PROC_USED && p->kind == FG_KIND_LIFELINE && p->pid == pid) out[n++] = (int)i;
  }
  return n;
}

static int all_in(fg_state_t *st, const int *slots, int n, uint32_t want) {
  for (int i = 0; i < n; i++)
    if (st->procs[slots[i]].ckpt_state != want) return 0;
  return 1;
}

static void set_all(fg_state_t *st, const int *slots, int n, uint32_t to) {
  for (int i = 0; i < n; i++) {
    __atomic_store_n(&st->procs[slots[i]].ckpt_state, to, __ATOMIC_SEQ_CST);
    futex_wake_all(&st->procs[slots[i]].ckpt_state);
  }
}

static int zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

API cuCheckpointProcessGetState(int pid, CUprocessState *state) {
  NEED_STATE();
  if (pid <= 0 || !state) return CUDA_ERROR_INVALID_VALUE;
  fg_state_t *st = g_st;
  int slots[FG_MAX_PROCS];
  fg_reap(st, 0);
  fg_lock(st);
  int n = slots_of(st, pid, slots);
  uint32_t s = n ? st->procs[slots[0]].ckpt_state : 0;
  fg_unlock(st);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *state = s == FG_CKPT_LOCKING ? CU_PROCESS_STATE_RUNNING : (CUprocessState)s;
  return CUDA_SUCCESS;
}

API cuCheckpointProcessGetRestoreThreadId(int pid, int *tid) {
  NEED_STATE();
  if (pid <= 0 || !tid) return CUDA_ERROR_INVALID_VALUE;
  fg_state_t *st = g_st;
  int slots[FG_MAX_PROCS];
  fg_lock(st);
  int n = slots_of(st, pid, slots);
  if (n) *tid = st->procs[slots[0]].restore_tid;
  fg_unlock(st);
  return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args) {
  NEED_STATE();
  if (pid <= 0 || (args && (args->reserved0 || !zero(args->reserved1, sizeof args->reserved1))))
    return CUDA_ERROR_INVALID_VALUE;
  fg_state_t *st = g_st;
  int slots[FG_MAX_PROCS];
  fg_reap(st, 1);
  fg_lock(st);
  int n = slots_of(st, pid, slots);
  CUresult rc = !n ? CUDA_ERROR_INVALID_VALUE : !all_in(st, slots, n, FG_CKPT_RUNNING) ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS) set_all(st, slots, n, FG_CKPT_LOCKING); /* no new kernel starts from here on */
  uint64_t start[FG_MAX_PROCS];
  for (int i = 0; i < n; i++) start[i] = st->procs[slots[i]].start_time;
  fg_unlock(st);
  if (rc != CUDA_SUCCESS) return rc;

  /* the kernel in flight completes, as the real lock synchronizes outstanding work */
  uint64_t deadline = args && args->timeoutMs ? fg_now_ns() + args->timeoutMs * 1000000ull : 0;
  for (;;) {
    int busy = 0;
    for (int i = 0; i < n; i++) busy |= __atomic_load_n(&st->procs[slots[i]].busy, __ATOMIC_SEQ_CST) != 0;
    if (!busy) break;
    if (deadline && fg_now_ns() >= deadline) {
      rc = CUDA_ERROR_NOT_READY; /* timed out: left RUNNING, as documented */
      break;
    }
    fg_sleep_until_ns(fg_now_ns() + DRAIN_POLL_NS);
  }
  fg_lock(st);
  int m = 0;
  for (int i = 0; i < n; i++) { /* the target may have exited meanwhile */
    fg_proc_t *p = &st->procs[slots[i]];
    if (p->state == FG_PROC_USED && p->pid == pid && p->start_time == start[i] && p->ckpt_state == FG_CKPT_LOCKING)
      slots[m++] = slots[i];
  }
  if (!m && rc == CUDA_SUCCESS) rc = CUDA_ERROR_INVALID_VALUE;
  set_all(st, slots, m, rc == CUDA_SUCCESS ? FG_CKPT_LOCKED : FG_CKPT_RUNNING);
  fg_unlock(st);
  return rc;
}

/* The bytes of every slot of pid, under the state lock (no second caller moves them meanwhile;
 * the target, locked, touches none): all move, or none (a failed slot's earlier ones go back). */
static int move_all(int pid, const int *slots, int n, int to_host) {
  for (int i = 0; i < n; i++)
    if (contents_move(pid, slots[i], to_host) != 0) {
      while (i-- > 0) contents_move(pid, slots[i], !to_host);
      return -1;
    }
  return 0;
}

API cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args) {
  NEED_STATE();
  if (pid <= 0 || (args && !zero(args, sizeof *args))) return CUDA_ERROR_INVALID_VALUE;
  fg_state_t *st = g_st;
  int slots[FG_MAX_PROCS];
  fg_lock(st);
  int n = slots_of(st, pid, slots);
  CUresult rc = !n ? CUDA_ERROR_INVALID_VALUE : !all_in(st, slots, n, FG_CKPT_LOCKED) ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS && move_all(pid, slots, n, 1) != 0) rc = CUDA_ERROR_OPERATING_SYSTEM; /* still LOCKED */
  for (int i = 0; rc == CUDA_SUCCESS && i < n; i++) {
    fg_proc_t *p = &st->procs[slots[i]];
    fg_gpu_t *g = &st->gpus[p->gpu];
    FG_SUB(&g->proc_used, p->used_mem);
    if (p->mig >= 0) FG_SUB(&g->mig[p->mig].proc_used, p->used_mem);
    p->parked_mem += p->used_mem;
    p->used_mem = 0;
  }
  if (rc == CUDA_SUCCESS) set_all(st, slots, n, FG_CKPT_CHECKPOINTED);
  fg_unlock(st);
  return rc;
}

/* Under the lock: every slot's parked bytes fit on its own GPU (or MIG instance) again. */
static int restore_fits(fg_state_t *st, const int *slots, int n) {
  for (int i = 0; i < n; i++) {
    const fg_proc_t *p = &st->procs[slots[i]];
    uint64_t need = 0;
    for (int j = 0; j < n; j++) { /* slots sharing an engine need room together */
      const fg_proc_t *q = &st->procs[slots[j]];
      if (q->gpu == p->gpu && (q->mig == p->mig || p->mig < 0)) need += q->parked_mem;
    }
    if (need > fg_engine_capacity_free(st, p->gpu, p->mig)) return 0;
  }
  return 1;
}

API cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args) {
  NEED_STATE();
  if (pid <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (args && (args->gpuPairs || args->gpuPairsCount)) return CUDA_ERROR_NOT_SUPPORTED; /* no remapping: same GPU only */
  if (args && (!zero(args->reserved, sizeof args->reserved) || args->reserved1)) return CUDA_ERROR_INVALID_VALUE;
  fg_state_t *st = g_st;
  int slots[FG_MAX_PROCS];
  CUresult rc = CUDA_SUCCESS;
  for (int attempt = 0; attempt < 2; attempt++) {
    fg_lock(st);
    int n = slots_of(st, pid, slots);
    rc = !n ? CUDA_ERROR_INVALID_VALUE : !all_in(st, slots, n, FG_CKPT_CHECKPOINTED) ? CUDA_ERROR_ILLEGAL_STATE
         : !restore_fits(st, slots, n)                                                ? CUDA_ERROR_OUT_OF_MEMORY
         : move_all(pid, slots, n, 0) != 0                                            ? CUDA_ERROR_OPERATING_SYSTEM
                                                                                      : CUDA_SUCCESS;
    for (int i = 0; rc == CUDA_SUCCESS && i < n; i++) {
      fg_proc_t *p = &st->procs[slots[i]];
      fg_gpu_t *g = &st->gpus[p->gpu];
      FG_ADD(&g->proc_used, p->parked_mem);
      if (p->mig >= 0) FG_ADD(&g->mig[p->mig].proc_used, p->parked_mem);
      p->used_mem += p->parked_mem;
      p->parked_mem = 0;
    }
    if (rc == CUDA_SUCCESS) set_all(st, slots, n, FG_CKPT_LOCKED); /* restored processes stay locked until Unlock */
    fg_unlock(st);
    if (rc != CUDA_ERROR_OUT_OF_MEMORY || attempt) break;
    fg_reap(st, 1); /* memory of processes that died since the last reap is free */
  }
  return rc; /* out of memory (or its bytes could not move): still CHECKPOINTED, nothing changed */
}

API cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args) {
  NEED_STATE();
  if (pid <= 0 || (args && !zero(args, sizeof *args))) return CUDA_ERROR_INVALID_VALUE;
  fg_state_t *st = g_st;
  int slots[FG_MAX_PROCS];
  fg_lock(st);
  int n = slots_of(st, pid, slots);
  CUresult rc = !n ? CUDA_ERROR_INVALID_VALUE : !all_in(st, slots, n, FG_CKPT_LOCKED) ? CUDA_ERROR_ILLEGAL_STATE : CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS) set_all(st, slots, n, FG_CKPT_RUNNING);
  fg_unlock(st);
  return rc;
}

void ckpt_gate(devctx_t *d) {
  if (d && d->slot >= 0) ckpt_wait_running(d->slot);
}
