/* Fake libcuda.so.1: MPS clients. A process is an MPS client of a GPU when the
 * simulated MPS control daemon serves that GPU (`fakegpu mps start`) and the
 * process's CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) is the daemon's;
 * in a MIG slice, when that slice's own daemon runs (`fakegpu mps --gi GI start`,
 * as nvidia-cuda-mps-control -d with CUDA_VISIBLE_DEVICES=MIG-<uuid>).
 * Its kernels run on the daemon's shared MPS context: they overlap with the other
 * clients' kernels of that daemon instead of taking turns on the engine (the
 * slice's engine in a MIG slice; clients of other slices never count). The model (README):
 * a kernel's nominal duration is its time on its share of the SMs
 * (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE); while the shares of the clients with a
 * kernel running add up to S > 100, every one progresses at 100/S of its rate.
 * CUDA_MPS_CLIENT_PRIORITY=1 (below normal) clients get only the SMs the normal
 * ones leave, taken back from them within one step (MPS prefers the normal
 * clients' waiting thread blocks; it does not preempt running ones). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

#define MPS_STEP_NS 1000000ull       /* re-read the active shares every 1 ms */
#define MPS_BELOW_STEP_NS 100000ull  /* a below-normal client every 0.1 ms: the thread-block granularity of giving SMs back */
#define MPS_STALE_NS 50000000ull     /* a client silent for 50 ms (stopped, dead) does not count */
#define MPS_RECLAIM_NS 1000000000ull /* a dead client's table entry is taken after 1 s */
#define DEFAULT_PIPE_DIR "/tmp/nvidia-mps"

static unsigned parse_share(void) {
  const char *v = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  if (!v || !*v) return 100;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x > 0)) return 100; /* not a percentage: the whole GPU, as without the variable */
  if (x > 100) x = 100;
  unsigned s = (unsigned)(x + 0.5);
  return s ? s : 1;
}

/* CUDA_MPS_CLIENT_PRIORITY: 1 below normal; absent, 0 or anything else normal (the levels MPS offers are 0 and 1). */
static unsigned parse_priority(void) {
  const char *v = getenv("CUDA_MPS_CLIENT_PRIORITY");
  return v && !strcmp(v, "1") ? 1u : 0u;
}

/* CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=20G,1=512MB": the limit for visible device `vis`, 0 if none. */
static uint64_t parse_mem_limit(int vis) {
  const char *v = getenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
  if (!v || !*v) return 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", v);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*tok)) tok++;
    char *eq = strchr(tok, '=');
    if (!eq || !isdigit((unsigned char)*tok)) continue;
    *eq = 0;
    if (atoi(tok) != vis) continue;
    char *end;
    double x = strtod(eq + 1, &end);
    uint64_t mul = 1;
    switch (toupper((unsigned char)*end)) {
      case 'K': mul = 1ull << 10; end++; break;
      case 'M': mul = 1ull << 20; end++; break;
      case 'G': mul = 1ull << 30; end++; break;
      case 'T': mul = 1ull << 40; end++; break;
      default: break;
    }
    if (*end == 'i') end++;
    if (toupper((unsigned char)*end) == 'B') end++;
    if (*end || !(x > 0)) continue;
    return (uint64_t)(x * (double)mul);
  }
  return 0;
}

static int same_dir(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  while (la > 1 && a[la - 1] == '/') la--;
  while (lb > 1 && b[lb - 1] == '/') lb--;
  return la == lb && !strncmp(a, b, la);
}

void mps_setup(devctx_t *d) {
  d->mps_share = 0;
  d->mps_mem_limit = 0;
  const fg_gpu_t *g = &g_st->gpus[d->gpu];
  /* the daemon this device's clients would join: its MIG instance's, or the whole GPU's */
  const fg_mps_daemon_t *slice = d->mig >= 0 && d->mig < FG_MAX_MIG ? &g->mig_mps[d->mig] : NULL;
  if (!FG_LOAD(slice ? &slice->running : &g->mps_running)) return;
  const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
  if (!pipe || !*pipe) pipe = DEFAULT_PIPE_DIR;
  char daemon_dir[sizeof g->mps_pipe_dir];
  memcpy(daemon_dir, slice ? slice->pipe_dir : g->mps_pipe_dir, sizeof daemon_dir);
  daemon_dir[sizeof daemon_dir - 1] = 0;
  if (!same_dir(pipe, daemon_dir[0] ? daemon_dir : DEFAULT_PIPE_DIR)) return;
  d->mps_share = parse_share();
  d->mps_priority = parse_priority();
  d->mps_mem_limit = parse_mem_limit(d->vis);
}

int mps_terminated(const devctx_t *d) {
  const fg_gpu_t *g = &g_st->gpus[d->gpu];
  int32_t me = (int32_t)getpid();
  for (int i = 0; i < FG_MAX_MPS_TERMINATED; i++)
    if (FG_LOAD(&g->mps_terminated[i]) == me) return 1;
  return 0;
}

static int fresh(const fg_mps_client_t *c, uint64_t now) {
  return (int64_t)(now - FG_LOAD(&c->heartbeat_ns)) < (int64_t)MPS_STALE_NS;
}

/* This process's entry in the GPU's client table (claimed on first use); NULL if the table is full. */
static fg_mps_client_t *claim(fg_gpu_t *g, int32_t me, int engine, uint64_t now) {
  for (int i = 0; i < FG_MAX_MPS_CLIENTS; i++)
    if (FG_LOAD(&g->mps_clients[i].pid) == me) return &g->mps_clients[i];
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < FG_MAX_MPS_CLIENTS; i++) {
      fg_mps_client_t *c = &g->mps_clients[i];
      int32_t old = FG_LOAD(&c->pid);
      if (pass == 0 && old != 0) continue;
      if (pass == 1 && ((int64_t)(now - FG_LOAD(&c->heartbeat_ns)) < (int64_t)MPS_RECLAIM_NS ||
                        kill(old, 0) == 0 || errno != ESRCH))
        continue; /* only entries of clients that are gone */
      if (__atomic_compare_exchange_n(&c->pid, &old, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        FG_STORE(&c->active, 0u);
        FG_STORE(&c->engine, (uint32_t)engine);
        return c;
      }
    }
  }
  return NULL;
}

/* Who runs a kernel now on one daemon's context (engine: 0 GPU, 1 + m slice m): the normal clients' shares, and the
 * below-normal clients' shares and the SMs they still hold (what they took at their last step). */
typedef struct {
  unsigned normal, below, below_held;
} mps_load_t;

static mps_load_t active_load(const fg_gpu_t *g, int engine, uint64_t now) {
  mps_load_t load = {0, 0, 0};
  for (int i = 0; i < FG_MAX_MPS_CLIENTS; i++) {
    const fg_mps_client_t *c = &g->mps_clients[i];
    if (!FG_LOAD(&c->pid) || !FG_LOAD(&c->active) || FG_LOAD(&c->engine) != (uint32_t)engine || !fresh(c, now)) continue;
    if (FG_LOAD(&c->priority)) {
      load.below += FG_LOAD(&c->share);
      load.below_held += FG_LOAD(&c->held);
    } else {
      load.normal += FG_LOAD(&c->share);
    }
  }
  return load;
}

/* A client's rate (of its nominal speed) under this load. Normal clients share the SMs as without priorities, less
 * what below-normal blocks still hold; below-normal clients share what the normal ones leave. */
static double mps_rate(unsigned priority, mps_load_t load) {
  if (!priority) {
    unsigned busy = load.normal + load.below_held;
    return busy > 100 ? 100.0 / busy : 1.0;
  }
  unsigned left = load.normal >= 100 ? 0 : 100 - load.normal;
  return load.below > left ? (double)left / load.below : 1.0;
}

void mps_run_kernel(devctx_t *d, uint64_t enq_ns, uint64_t dur_ns, uint64_t *start, uint64_t *end) {
  fg_gpu_t *g = &g_st->gpus[d->gpu];
  uint64_t t = fg_now_ns();
  /* queued behind this context's previous kernel: it starts where that one ended, as on a GPU, not when this thread woke */
  if (enq_ns <= d->mps_last_end_ns && d->mps_last_end_ns < t) t = d->mps_last_end_ns;
  *start = t;
  fg_mps_client_t *c = claim(g, (int32_t)getpid(), d->engine, t);
  if (c) {
    FG_STORE(&c->engine, (uint32_t)d->engine);
    FG_STORE(&c->share, d->mps_share);
    FG_STORE(&c->priority, d->mps_priority);
    FG_STORE(&c->held, d->mps_priority ? 0u : d->mps_share); /* a below-normal one takes SMs at its first step */
    FG_STORE(&c->kernel_start_ns, t);
    FG_STORE(&c->heartbeat_ns, t);
    FG_STORE(&c->active, 1u);
  }
  mps_load_t alone = {d->mps_priority ? 0 : d->mps_share, d->mps_priority ? d->mps_share : 0, 0};
  mps_load_t load = c ? active_load(g, d->engine, t) : alone;
  double rate = mps_rate(d->mps_priority, load);
  double left = (double)dur_ns; /* nominal ns still to run */
  while (left > 0 && !mps_terminated(d)) {
    if (c) FG_STORE(&c->held, (uint32_t)(d->mps_share * rate + 0.5));
    /* below-normal blocks come and go at the finer step: they and the normal kernels they hold back look again sooner */
    uint64_t quantum = d->mps_priority || load.below_held ? MPS_BELOW_STEP_NS : MPS_STEP_NS;
    double wall = rate > 0 ? left / rate : (double)quantum; /* no SMs left to it: look again in a step */
    uint64_t step = wall < (double)quantum ? (uint64_t)wall + 1 : quantum;
    fg_sleep_until_ns(t + step);
    uint64_t now = fg_now_ns();
    load = c ? active_load(g, d->engine, now) : alone;
    double next = mps_rate(d->mps_priority, load);
    /* a step counts at the lower of its two ends' rates: a late wake-up is no progress made while others ran */
    double r = next < rate ? next : rate;
    if (r > 0 && (double)(now - t) * r >= left) { /* done within the step: it ended when its work did, not at the wake-up */
      t += (uint64_t)(left / r + 0.5);
      left = 0;
      break;
    }
    left -= (double)(now - t) * r;
    rate = next;
    t = now;
    if (c) FG_STORE(&c->heartbeat_ns, t);
  }
  d->mps_last_end_ns = t;
  if (c) {
    FG_STORE(&c->held, 0u);
    FG_STORE(&c->active, 0u);
  }
  *end = t;
}
