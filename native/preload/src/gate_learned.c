/* The learned window (header.window_policy == GATE_WINDOW_LEARNED), job side: what a higher job
 * learns from its idle gaps (hold_ns, gap_hist), what a lower job learns of its own kernels
 * (kernel_ns), and whether a lower job's next kernel fits before a higher job's next launch. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gate_internal.h"

#define GAP_MIN_SAMPLES 8u /* until then the active window holds lower jobs: two high jobs at half the rate each took 1/4 s to learn 16 */
#define FIT_MIN_SAMPLES 16u
#define GAP_DECAY_AT 256u /* counts halve here: the window follows a job whose pattern changes */
#define FIT_STEP_NS 5000ull        /* where a held kernel next fits, looked up this finely ... */
#define FIT_LOOKAHEAD_NS 200000ull /* ... this far ahead (the waiter's longest sleep) */
#define KERNEL_RISE_SHIFT 4 /* a longer kernel moves the estimate up by 1/16 of the difference per sample */
#define WAIT_SLACK_NS 1000ul /* a waiter's timer slack (Linux's default, 50 µs, made a 20 µs sleep ~70 µs with the GPU idle) */

static pthread_mutex_t g_gap_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_gap_count[GATE_GAP_BUCKETS], g_gap_total;
static uint64_t g_kernel_ns;

/* Bucket b holds gaps of [2^(b+10), 2^(b+11)) ns; the first and last also what falls below and above. */
static int gap_bucket(uint64_t gap) {
  int b = 63 - __builtin_clzll(gap | 1) - 10;
  return b < 0 ? 0 : b >= (int)GATE_GAP_BUCKETS ? (int)GATE_GAP_BUCKETS - 1 : b;
}

/* A bucket is part of the pattern when it holds at least 1/32 of the gaps (and two). */
static int gap_common(uint32_t b) { return g_gap_count[b] >= 2 && g_gap_count[b] * 32u >= g_gap_total; }

/* The hold: gaps inside a request (the framework's own work between a sync and its next kernel) form
 * the lowest cluster of gap lengths; when an empty octave parts it from the gaps between requests,
 * lower jobs are held twice its upper edge; when the gaps form one continuum (Poisson arrivals, one
 * kernel per request) there is no such cluster: only the shortest common gaps are covered, and lower
 * jobs use the rest, as far as their kernels fit (gs_learned_unfit). */
void gs_learn_gap(gate_activity_t *me, uint64_t gap) {
  if (pthread_mutex_trylock(&g_gap_mu) != 0) return; /* another thread learns: this sample is not needed */
  g_gap_count[gap_bucket(gap)]++;
  if (++g_gap_total >= GAP_DECAY_AT) {
    g_gap_total = 0;
    for (uint32_t b = 0; b < GATE_GAP_BUCKETS; b++) g_gap_total += (g_gap_count[b] /= 2);
  }
  for (uint32_t b = 0; b < GATE_GAP_BUCKETS; b++) STORE(&me->gap_hist[b], g_gap_count[b]);
  ADD(&me->gap_samples, 1);
  if (g_gap_total >= GAP_MIN_SAMPLES) {
    uint32_t b0 = 0, b1, above = 0, cluster = 0;
    while (b0 < GATE_GAP_BUCKETS && !gap_common(b0)) b0++;
    if (b0 < GATE_GAP_BUCKETS) {
      for (b1 = b0; b1 + 1 < GATE_GAP_BUCKETS && gap_common(b1 + 1); b1++) {}
      for (uint32_t b = b0; b <= b1; b++) cluster += g_gap_count[b];
      for (uint32_t b = b1 + 1; b < GATE_GAP_BUCKETS; b++) above |= gap_common(b);
      uint64_t hold = above && cluster * 4u >= g_gap_total ? 2ull << (b1 + 11) : 1ull << (b0 + 11);
      STORE(&me->hold_ns, hold);
    }
  }
  pthread_mutex_unlock(&g_gap_mu);
}

/* One synchronised batch took ns_per_kernel of GPU time per kernel. The estimate follows shorter
 * batches at once and longer ones slowly: a batch that also waited behind a higher job's kernel
 * reads long, and one such wait should not make every later launch wait for a longer gap. */
void gs_learn_kernel(gate_activity_t *me, uint64_t ns_per_kernel) {
  uint64_t est = LOAD(&g_kernel_ns);
  if (!ns_per_kernel) return;
  if (!est || ns_per_kernel < est) est = ns_per_kernel;
  else est += (ns_per_kernel - est) >> KERNEL_RISE_SHIFT;
  STORE(&g_kernel_ns, est);
  STORE(&me->kernel_ns, est);
}

uint64_t gs_learned_kernel_ns(void) { return LOAD(&g_kernel_ns); }

/* Gaps of the histogram longer than x ns, each octave's spread evenly over it. */
static double gaps_longer(const uint32_t *hist, double x) {
  double n = 0;
  for (uint32_t b = 0; b < GATE_GAP_BUCKETS; b++) {
    double c = hist[b];
    if (c == 0) continue;
    double lo = b ? (double)(1ull << (b + 10)) : 0, hi = (double)(1ull << (b + 11));
    if (x < lo) n += c;
    else if (x < hi) n += c * (hi - x) / (hi - lo);
  }
  return n;
}

/* 1 when a kernel started at idle age `age` would likely not end before the next launch. */
static int unfit_at(const uint32_t *hist, double age, double kernel) {
  double lasted = gaps_longer(hist, age);
  return lasted > 0 && lasted > 2 * gaps_longer(hist, age + kernel);
}

/* The age, up to FIT_LOOKAHEAD_NS past `age`, from which the kernel fits again (as the gap ages,
 * the quick relaunches fall behind it), or 0 if not within that: the waiter sleeps until then, not
 * a whole backoff step past it. */
static uint64_t fit_again(const uint32_t *hist, uint64_t age, uint64_t kernel) {
  for (uint64_t a = age + FIT_STEP_NS; a <= age + FIT_LOOKAHEAD_NS; a += FIT_STEP_NS)
    if (!unfit_at(hist, (double)a, (double)kernel)) return a;
  return 0;
}

/* 1 when higher slot s, idle (not ACTIVE), would likely launch again before our kernel ends;
 * *fits_at = when the kernel fits (0: not soon). */
static int kernel_unfit(gate_activity_t *s, uint64_t now, uint64_t kernel, uint64_t *fits_at) {
  uint32_t samples = 0, hist[GATE_GAP_BUCKETS];
  for (uint32_t b = 0; b < GATE_GAP_BUCKETS; b++) samples += hist[b] = LOAD(&s->gap_hist[b]);
  if (samples < FIT_MIN_SAMPLES) return 0; /* too little learned: the window alone decides */
  uint64_t last = LOAD(&s->last_launch_ns), idle = LOAD(&s->idle_since_ns);
  if (idle > last) last = idle;
  if (!last || last > now) return 0;
  if (!unfit_at(hist, (double)(now - last), (double)kernel)) return 0;
  uint64_t at = fit_again(hist, now - last, kernel);
  *fits_at = at ? last + at : 0;
  return 1;
}

/* The first slot among `higher` (none of them ACTIVE) whose next launch our next kernel would
 * likely not finish before, or -1; -1 too until this process has learned its kernel duration.
 * *fits_at: when the kernel fits that slot's gap, if soon, else 0. */
int gs_learned_unfit(uint64_t higher, uint64_t now, uint64_t *fits_at) {
  uint64_t kernel = LOAD(&g_kernel_ns);
  *fits_at = 0;
  if (!kernel || LOAD(&gs_g.hdr->window_policy) != GATE_WINDOW_LEARNED) return -1;
  while (higher) {
    int i = __builtin_ctzll(higher);
    higher &= higher - 1;
    if (LOAD(&gs_g.slots[i].state) == GATE_SLOT_IN_USE && !LOAD(&gs_g.slots[i].unconfirmed) && kernel_unfit(gs_activity((uint32_t)i), now, kernel, fits_at)) return i;
  }
  return -1;
}

/* The low half of a job's idle_since_ns (little-endian, as the whole layout): it changes whenever a
 * synchronise finds all the job's work complete, so lower jobs waiting for that work sleep on it as a
 * futex (the activity files are shared mappings: the key is the file's page, whoever maps it). */
static uint32_t *idle_word(gate_activity_t *s) { return (uint32_t *)(void *)&s->idle_since_ns; }

/* We just went idle (idle_since_ns stored): wake the lower members of our domain that wait for our work,
 * instead of letting them find out at their next look (up to a whole sleep late, GPU idle meanwhile).
 * One system call per idle transition, none while no lower job shares the domain. */
void gs_learned_went_idle(gate_activity_t *me) {
  if (LOAD(&gs_g.hdr->window_policy) != GATE_WINDOW_LEARNED) return;
  uint32_t prio = LOAD(&gs_g.my->priority), domain = LOAD(&gs_g.my->domain);
  if (domain >= GATE_MAX_DOMAINS) return;
  uint64_t lower = prio + 1 < GATE_PRIORITIES ? gs_members_between(domain, prio + 1, GATE_PRIORITIES) : 0;
  if (lower & ~(1ull << gs_g.index)) syscall(SYS_futex, idle_word(me), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Waits up to ns for higher slot i, active through launched work it has not yet seen complete, to go
 * idle. 1 when its going idle ended the wait (woken, or found already), 0 on the timeout. */
int gs_learned_wait_idle(uint32_t i, uint64_t ns) {
  gate_activity_t *s = gs_activity(i);
  uint32_t seen = LOAD_SC(idle_word(s)); /* before the check below: a store after it changes the word, and the wait returns */
  if (LOAD_SC(&s->launches) == LOAD_SC(&s->synced_launches) && !LOAD_SC(&s->in_launch)) return 1;
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (slack > 0) prctl(PR_SET_TIMERSLACK, WAIT_SLACK_NS, 0, 0, 0);
  long rc = syscall(SYS_futex, idle_word(s), FUTEX_WAIT, seen, &ts, NULL, 0);
  int err = rc ? errno : 0;
  if (err && err != EAGAIN && err != ETIMEDOUT && err != EINTR) nanosleep(&ts, NULL); /* no futex on that page: sleep, never spin */
  if (slack > 0) prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
  return rc == 0 || err == EAGAIN; /* woken, or it went idle before we slept */
}

/* The learned window's waits are short (a hold of tens of µs, a fit a few µs away): sleep them with a
 * small timer slack, the thread's own restored after. */
void gs_learned_sleep(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (slack > 0) prctl(PR_SET_TIMERSLACK, WAIT_SLACK_NS, 0, 0, 0);
  nanosleep(&ts, NULL);
  if (slack > 0) prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
}
