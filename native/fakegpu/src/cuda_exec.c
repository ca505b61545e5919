/* Fake libcuda.so.1: modules, streams and kernels. A launch queues the
 * kernel; one executor thread per process and device runs the queue on the
 * device's shared engine (cuda_engine.c) and records each kernel. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_engine.h"
#include "cuda_internal.h"

static __thread struct CUstream_st *t_pts[MAX_VIS]; /* per-thread default streams */

/* ---------------- modules ---------------- */

API cuModuleLoadData(CUmodule *module, const void *image) {
  NEED_CTX(d);
  (void)d;
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  CUmodule m = calloc(1, sizeof *m);
  m->magic = MAGIC_MOD;
  *module = m;
  return CUDA_SUCCESS;
}

API cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
  NEED_INIT();
  if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
  if (!hmod || hmod->magic != MAGIC_MOD) return CUDA_ERROR_INVALID_HANDLE;
  CUfunction f = calloc(1, sizeof *f);
  f->magic = MAGIC_FUNC;
  snprintf(f->name, sizeof f->name, "%s", name);
  *hfunc = f;
  return CUDA_SUCCESS;
}

/* ---------------- execution ---------------- */

static void run_kernel(devctx_t *d, const job_t *j) {
  fg_state_t *st = g_st;
  fg_engine_t *e = &st->gpus[d->gpu].engines[d->engine];
  ckpt_kernel_begin(d); /* a locked (parked) process starts no kernel */
  if (d->mps_share) { /* MPS clients overlap on the shared MPS context instead of taking turns */
    uint64_t start, end;
    mps_run_kernel(d, j->enq_ns, j->dur_ns, &start, &end);
    fg_exec_rec_t rec = {0, j->enq_ns, start, end, (int32_t)getpid(), d->engine};
    fg_ring_append(st, d->gpu, &rec);
    ckpt_kernel_end(d);
    return;
  }
  uint32_t ticket;
  uint64_t start = fg_engine_acquire(e, j->dur_ns, &ticket);
  uint64_t planned = start + j->dur_ns;
  fg_sleep_until_ns(planned);
  uint64_t end = fg_now_ns();
  if (!fg_engine_release(e, ticket) && end > planned) end = planned; /* taken over: it ended as planned */
  fg_exec_rec_t rec = {0, j->enq_ns, start, end, (int32_t)getpid(), d->engine};
  fg_ring_append(st, d->gpu, &rec);
  ckpt_kernel_end(d);
}

static void *executor_main(void *arg) {
  devctx_t *d = arg;
  block_signals();
  for (;;) {
    pthread_mutex_lock(&d->mu);
    while (d->qlen == 0) pthread_cond_wait(&d->cv_work, &d->mu);
    job_t j = d->q[d->qhead];
    pthread_mutex_unlock(&d->mu);
    run_kernel(d, &j);
    pthread_mutex_lock(&d->mu);
    d->qhead = (d->qhead + 1) % d->qcap;
    d->qlen--;
    j.s->done++;
    d->done_total++;
    pthread_cond_broadcast(&d->cv_done);
    pthread_mutex_unlock(&d->mu);
  }
  return NULL;
}

/* caller holds d->mu */
static int enqueue(devctx_t *d, struct CUstream_st *s, uint64_t dur_ns) {
  while (s->enq - s->done >= STREAM_QUEUE_MAX) pthread_cond_wait(&d->cv_done, &d->mu); /* bounded, as the driver's push buffer */
  if (d->qlen == d->qcap) {
    size_t ncap = d->qcap ? d->qcap * 2 : 256;
    job_t *nq = malloc(ncap * sizeof *nq);
    if (!nq) return -1;
    for (size_t i = 0; i < d->qlen; i++) nq[i] = d->q[(d->qhead + i) % d->qcap];
    free(d->q);
    d->q = nq;
    d->qcap = ncap;
    d->qhead = 0;
  }
  d->q[(d->qhead + d->qlen) % d->qcap] = (job_t){s, dur_ns, fg_now_ns()};
  d->qlen++;
  s->enq++;
  d->enq_total++;
  if (!d->executor_started) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    if (pthread_create(&t, &a, executor_main, d) != 0) {
      pthread_attr_destroy(&a);
      d->qlen--;
      s->enq--;
      d->enq_total--;
      return -1;
    }
    pthread_attr_destroy(&a);
    d->executor_started = 1;
  }
  pthread_cond_signal(&d->cv_work);
  return 0;
}

static struct CUstream_st *per_thread_stream(devctx_t *d) {
  if (!t_pts[d->vis]) {
    struct CUstream_st *s = calloc(1, sizeof *s);
    s->magic = MAGIC_STREAM;
    s->dc = d;
    t_pts[d->vis] = s;
  }
  return t_pts[d->vis];
}

/* Resolves a launch/sync stream argument; ptsz: NULL means per-thread. */
struct CUstream_st *stream_resolve(CUstream s, int ptsz, CUresult *rc) {
  *rc = CUDA_SUCCESS;
  if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
    devctx_t *d = cur_dc();
    if (!d) {
      *rc = CUDA_ERROR_INVALID_CONTEXT;
      return NULL;
    }
    if (s == CU_STREAM_PER_THREAD || (s == NULL && ptsz)) return per_thread_stream(d);
    return &d->null_stream;
  }
  if (s->magic != MAGIC_STREAM) {
    *rc = CUDA_ERROR_INVALID_HANDLE;
    return NULL;
  }
  return s;
}

static CUresult launch(CUfunction f, CUstream hStream, void **kernelParams, int ptsz) {
  NEED_INIT();
  if (!f || f->magic != MAGIC_FUNC) return CUDA_ERROR_INVALID_HANDLE;
  CUresult rc;
  struct CUstream_st *s = stream_resolve(hStream, ptsz, &rc);
  if (!s) return rc;
  devctx_t *d = s->dc;
  if (dev_lost(d)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (d->mps_share && mps_terminated(d)) return CUDA_ERROR_LAUNCH_FAILED; /* terminate_client ended its work */
  /* convention: the kernel's duration in µs is *(unsigned long long *)kernelParams[0] */
  unsigned long long us = (kernelParams && kernelParams[0]) ? *(const unsigned long long *)kernelParams[0] : 0;
  if (cap_open()) { /* a capturing stream records the kernel into its graph instead of running it */
    int recorded = 0;
    rc = cap_kernel(s, us * 1000ull, &recorded);
    if (recorded || rc != CUDA_SUCCESS) return rc;
  }
  return exec_enqueue(s, us * 1000ull);
}

CUresult exec_enqueue(struct CUstream_st *s, uint64_t dur_ns) {
  devctx_t *d = s->dc;
  ckpt_gate(d); /* a locked process's launch blocks until it is unlocked */
  pthread_mutex_lock(&d->mu);
  int r = enqueue(d, s, dur_ns);
  pthread_mutex_unlock(&d->mu);
  return r == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

#define LAUNCH_ARGS                                                                                            \
  CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, \
      unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream
#define UNUSED_DIMS                                                                                        \
  (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ, \
      (void)sharedMemBytes

API cuLaunchKernel(LAUNCH_ARGS, void **kernelParams, void **extra) {
  UNUSED_DIMS, (void)extra;
  return launch(f, hStream, kernelParams, 0);
}
API cuLaunchKernel_ptsz(LAUNCH_ARGS, void **kernelParams, void **extra) {
  UNUSED_DIMS, (void)extra;
  return launch(f, hStream, kernelParams, 1);
}
API cuLaunchCooperativeKernel(LAUNCH_ARGS, void **kernelParams) {
  UNUSED_DIMS;
  return launch(f, hStream, kernelParams, 0);
}
API cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **kernelParams) {
  UNUSED_DIMS;
  return launch(f, hStream, kernelParams, 1);
}
API cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
  (void)extra;
  if (!config) return CUDA_ERROR_INVALID_VALUE;
  return launch(f, config->hStream, kernelParams, 0);
}
API cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
  (void)extra;
  if (!config) return CUDA_ERROR_INVALID_VALUE;
  return launch(f, config->hStream, kernelParams, 1);
}

void dc_sync(devctx_t *d) {
  pthread_mutex_lock(&d->mu);
  uint64_t target = d->enq_total;
  while (d->done_total < target) pthread_cond_wait(&d->cv_done, &d->mu);
  pthread_mutex_unlock(&d->mu);
}

static void stream_sync(struct CUstream_st *s) {
  devctx_t *d = s->dc;
  pthread_mutex_lock(&d->mu);
  uint64_t target = s->enq;
  while (s->done < target) pthread_cond_wait(&d->cv_done, &d->mu);
  pthread_mutex_unlock(&d->mu);
}

API cuCtxSynchronize(void) {
  NEED_CTX(d);
  if (cap_open()) {
    CUresult rc = cap_ctx_sync(d); /* fails and invalidates while the context captures */
    if (rc != CUDA_SUCCESS) return rc;
  }
  ckpt_gate(d);
  dc_sync(d);
  return CUDA_SUCCESS;
}

API cuStreamCreate(CUstream *phStream, unsigned int Flags) {
  (void)Flags;
  NEED_CTX(d);
  if (!phStream) return CUDA_ERROR_INVALID_VALUE;
  ckpt_gate(d);
  struct CUstream_st *s = calloc(1, sizeof *s);
  s->magic = MAGIC_STREAM;
  s->dc = d;
  *phStream = s;
  return CUDA_SUCCESS;
}

API cuStreamDestroy_v2(CUstream hStream) {
  NEED_INIT();
  if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD || hStream->magic != MAGIC_STREAM)
    return CUDA_ERROR_INVALID_HANDLE;
  ckpt_gate(hStream->dc);
  if (cap_open()) cap_drop(hStream);
  stream_sync(hStream); /* its queued kernels still run; then it can go */
  hStream->magic = 0;
  free(hStream);
  return CUDA_SUCCESS;
}

static CUresult sync_stream_arg(CUstream hStream, int ptsz) {
  NEED_INIT();
  CUresult rc;
  struct CUstream_st *s = stream_resolve(hStream, ptsz, &rc);
  if (!s) return rc;
  if (dev_lost(s->dc)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (cap_open()) {
    rc = cap_stream_sync(s); /* fails and invalidates on a capturing stream */
    if (rc != CUDA_SUCCESS) return rc;
  }
  ckpt_gate(s->dc);
  if (s == &s->dc->null_stream) dc_sync(s->dc); /* the legacy stream waits for all */
  else stream_sync(s);
  return CUDA_SUCCESS;
}

API cuStreamSynchronize(CUstream hStream) { return sync_stream_arg(hStream, 0); }
API cuStreamSynchronize_ptsz(CUstream hStream) { return sync_stream_arg(hStream, 1); }
