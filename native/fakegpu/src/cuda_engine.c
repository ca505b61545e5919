/* Fair, crash-tolerant engine lock. turn = claimed << 32 | serving ticket.
 * Waiters sleep on the low half (a futex in the shared mapping) and repair
 * the lock themselves when its owner cannot: a ticket whose turn came but was
 * not claimed within CLAIM_TIMEOUT is skipped (its owner died or is stopped;
 * it re-queues if it ever wakes); a holder past its kernel's end by
 * OVERRUN_GRACE, or whose pid is gone, loses the engine. */
#define _GNU_SOURCE
#include "cuda_engine.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the futex word is the low half of fg_engine_t.turn"
#endif

#define CLAIM_TIMEOUT_NS 200000000ull
#define OVERRUN_GRACE_NS 50000000ull
#define STALL_TIMEOUT_NS 1000000000ull
#define POLL_NS 20000000ull
#define PID_CHECK_NS 100000000ull

static void futex_wait(uint32_t *addr, uint32_t val, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake_all(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0); }

static int advance(fg_engine_t *e, uint64_t seen, uint32_t serving) {
  uint64_t next = (uint64_t)(uint32_t)(serving + 1);
  int ok = __atomic_compare_exchange_n(&e->turn, &seen, next, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  if (ok) futex_wake_all((uint32_t *)&e->turn);
  return ok;
}

uint64_t fg_engine_acquire(fg_engine_t *e, uint64_t dur_ns, uint32_t *ticket) {
  uint32_t t = __atomic_fetch_add(&e->next_ticket, 1, __ATOMIC_ACQ_REL);
  uint64_t seen = ~0ull, seen_at = 0, last_pid_check = 0;
  for (;;) {
    uint64_t turn = FG_LOAD(&e->turn);
    uint32_t serving = (uint32_t)turn;
    int claimed = (turn >> 32) != 0;
    uint64_t now = fg_now_ns();
    if (serving == t && !claimed) {
      uint64_t exp = turn;
      if (__atomic_compare_exchange_n(&e->turn, &exp, (1ull << 32) | t, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        FG_STORE(&e->holder_pid, (int32_t)getpid());
        FG_STORE(&e->holder_start_ns, now);
        FG_STORE(&e->holder_end_ns, now + dur_ns);
        FG_STORE(&e->holder_ticket, t);
        *ticket = t;
        return now;
      }
      continue;
    }
    if ((int32_t)(serving - t) > 0) { /* skipped while we were not looking */
      t = __atomic_fetch_add(&e->next_ticket, 1, __ATOMIC_ACQ_REL);
      seen = ~0ull;
      continue;
    }
    if (turn != seen) {
      seen = turn;
      seen_at = now;
    } else if (!claimed) {
      if (now - seen_at > CLAIM_TIMEOUT_NS && advance(e, turn, serving)) continue;
    } else if (FG_LOAD(&e->holder_ticket) == serving) {
      uint64_t end = FG_LOAD(&e->holder_end_ns);
      if (now > end + OVERRUN_GRACE_NS && advance(e, turn, serving)) continue;
      if (now - last_pid_check > PID_CHECK_NS) {
        last_pid_check = now;
        pid_t pid = FG_LOAD(&e->holder_pid);
        if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH && advance(e, turn, serving)) continue;
      }
    } else if (now - seen_at > STALL_TIMEOUT_NS && advance(e, turn, serving)) {
      continue;
    }
    futex_wait((uint32_t *)&e->turn, serving, POLL_NS);
  }
}

int fg_engine_release(fg_engine_t *e, uint32_t ticket) {
  uint64_t exp = (1ull << 32) | ticket;
  int ok = __atomic_compare_exchange_n(&e->turn, &exp, (uint64_t)(uint32_t)(ticket + 1), 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
  futex_wake_all((uint32_t *)&e->turn);
  return ok;
}
