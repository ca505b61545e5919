/* Fake libcuda.so.1: init, devices, contexts, errors and cuGetProcAddress.
 * Memory is in cuda_mem.c, kernels in cuda_exec.c. Entry points are exported
 * and also reachable through cuGetProcAddress from ONE table (cuda_abi.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
fg_state_t *g_st;
CUresult g_init_rc = CUDA_ERROR_NOT_INITIALIZED;
int g_init_done;
devctx_t g_dev[MAX_VIS];
int g_nvis;
__thread CUcontext t_cur;
static unsigned g_proc_type = FG_TYPE_COMPUTE;

/* ---------------- lifeline: owns this process's slots ---------------- */

enum { LL_NONE, LL_REGISTER, LL_RELEASE };
static pthread_mutex_t ll_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ll_cv = PTHREAD_COND_INITIALIZER;
static struct {
  int op, gpu, mig, slot, result, done;
} ll_req;
static pthread_once_t ll_once = PTHREAD_ONCE_INIT;

void block_signals(void) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static int ll_register(int gpu, int mig) {
  fg_state_t *st = g_st;
  uint64_t start = 0;
  fg_proc_start_time(getpid(), &start, NULL);
  fg_lock(st);
  int slot = -1;
  for (int i = 0; i < FG_MAX_PROCS; i++)
    if (st->procs[i].state == FG_PROC_FREE) {
      slot = i;
      break;
    }
  if (slot >= 0) {
    fg_proc_t *p = &st->procs[slot];
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&p->alive, &a);
    pthread_mutexattr_destroy(&a);
    pthread_mutex_lock(&p->alive); /* held until this process dies or releases */
    p->kind = FG_KIND_LIFELINE;
    p->pid = getpid();
    p->gpu = gpu;
    p->mig = mig;
    p->type = g_proc_type;
    for (int i = 0; i < g_nvis; i++)
      if (g_dev[i].gpu == gpu && g_dev[i].mig == mig && g_dev[i].mps_share) p->type = FG_TYPE_MPS;
    p->start_time = start;
    p->used_mem = 0;
    p->restore_tid = (int32_t)gettid();
    FG_STORE(&p->state, FG_PROC_USED);
    if ((uint32_t)slot >= st->proc_hwm) FG_STORE(&st->proc_hwm, (uint32_t)slot + 1);
  }
  fg_unlock(st);
  return slot;
}

static void ll_release(int slot) {
  fg_state_t *st = g_st;
  fg_lock(st);
  fg_proc_t *p = &st->procs[slot];
  if (p->state == FG_PROC_USED && p->pid == getpid()) {
    pthread_mutex_unlock(&p->alive);
    fg_proc_free_locked(st, slot);
  }
  fg_unlock(st);
}

static void *ll_main(void *arg) {
  (void)arg;
  block_signals();
  pthread_mutex_lock(&ll_mu);
  for (;;) {
    while (ll_req.op == LL_NONE) pthread_cond_wait(&ll_cv, &ll_mu);
    if (ll_req.op == LL_REGISTER) ll_req.result = ll_register(ll_req.gpu, ll_req.mig);
    else ll_release(ll_req.slot);
    ll_req.op = LL_NONE;
    ll_req.done = 1;
    pthread_cond_broadcast(&ll_cv);
  }
  return NULL;
}

static void ll_start(void) {
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, 64 * 1024);
  pthread_create(&t, &a, ll_main, NULL);
  pthread_attr_destroy(&a);
}

/* Runs op on the lifeline thread (the owner of every `alive` mutex). */
static int ll_call(int op, int gpu, int mig, int slot) {
  pthread_once(&ll_once, ll_start);
  pthread_mutex_lock(&ll_mu);
  while (ll_req.op != LL_NONE) pthread_cond_wait(&ll_cv, &ll_mu);
  ll_req.op = op;
  ll_req.gpu = gpu;
  ll_req.mig = mig;
  ll_req.slot = slot;
  ll_req.done = 0;
  pthread_cond_broadcast(&ll_cv);
  while (!ll_req.done) pthread_cond_wait(&ll_cv, &ll_mu);
  int r = ll_req.result;
  ll_req.done = 0;
  pthread_cond_broadcast(&ll_cv);
  pthread_mutex_unlock(&ll_mu);
  return r;
}

/* ---------------- init and devices ---------------- */

static void add_vis(int gpu, int mig) {
  for (int i = 0; i < g_nvis; i++)
    if (g_dev[i].gpu == gpu && g_dev[i].mig == mig) return;
  devctx_t *d = &g_dev[g_nvis];
  d->vis = g_nvis;
  d->gpu = gpu;
  d->mig = mig;
  d->engine = mig + 1;
  d->slot = -1;
  g_nvis++;
}

static void add_whole(const fg_state_t *st, int gpu) {
  const fg_gpu_t *g = &st->gpus[gpu];
  if (g->mig_current) {
    for (uint32_t m = 0; m < g->mig_count; m++) /* a MIG-enabled GPU shows its first instance */
      if (fg_mig_visible(g, m)) {
        add_vis(gpu, (int)m);
        break;
      }
  } else {
    add_vis(gpu, -1);
  }
}

static void parse_visible(const fg_state_t *st) {
  const char *env = getenv("CUDA_VISIBLE_DEVICES");
  if (!env) {
    for (uint32_t i = 0; i < st->gpu_count; i++) add_whole(st, (int)i);
    return;
  }
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", env);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*tok)) tok++;
    char *e = tok + strlen(tok);
    while (e > tok && isspace((unsigned char)e[-1])) *--e = 0;
    int found = 0;
    if (*tok && strspn(tok, "0123456789") == strlen(tok)) {
      long idx = strtol(tok, NULL, 10);
      if (idx >= 0 && idx < (long)st->gpu_count) add_whole(st, (int)idx), found = 1;
    } else if (!strncmp(tok, "GPU-", 4)) {
      for (uint32_t i = 0; i < st->gpu_count && !found; i++)
        if (!strncmp(st->gpus[i].uuid, tok, strlen(tok))) add_whole(st, (int)i), found = 1;
    } else if (!strncmp(tok, "MIG-", 4)) {
      for (uint32_t i = 0; i < st->gpu_count && !found; i++)
        for (uint32_t m = 0; m < st->gpus[i].mig_count && !found; m++)
          if (st->gpus[i].mig_current && fg_mig_visible(&st->gpus[i], m) && !strcmp(st->gpus[i].mig[m].uuid, tok))
            add_vis((int)i, (int)m), found = 1;
    }
    if (!found) break; /* like the real driver: enumeration stops at the first invalid entry */
  }
}

API cuInit(unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (!g_init_done) {
    char err[256];
    fg_state_t *st = fg_state_map(fg_state_path(), err, sizeof err);
    if (!st) {
      g_init_rc = CUDA_ERROR_NO_DEVICE;
    } else {
      parse_visible(st);
      for (int i = 0; i < g_nvis; i++) {
        devctx_t *d = &g_dev[i];
        pthread_mutex_init(&d->mu, NULL);
        pthread_cond_init(&d->cv_work, NULL);
        pthread_cond_init(&d->cv_done, NULL);
        d->null_stream.magic = MAGIC_STREAM;
        d->null_stream.dc = d;
      }
      const char *t = getenv("GPUSHARE_FAKEGPU_PROCESS_TYPE");
      if (t && !strcmp(t, "graphics")) g_proc_type = FG_TYPE_GRAPHICS;
      else if (t && !strcmp(t, "mps")) g_proc_type = FG_TYPE_MPS;
      g_st = st;
      g_init_rc = g_nvis ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
    }
    g_init_done = 1;
  }
  CUresult rc = g_init_rc;
  pthread_mutex_unlock(&g_mu);
  return rc;
}

devctx_t *dev_of(CUdevice dev) { return (dev >= 0 && dev < g_nvis) ? &g_dev[dev] : NULL; }
int dev_lost(const devctx_t *d) { return FG_LOAD(&g_st->gpus[d->gpu].lost) != 0; }

devctx_t *cur_dc(void) {
  CUcontext c = t_cur;
  return (c && c->magic == MAGIC_CTX) ? c->dc : NULL;
}

API cuDriverGetVersion(int *driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  if (g_st) {
    *driverVersion = g_st->cuda_version;
    return CUDA_SUCCESS;
  }
  char err[256];
  fg_state_t *st = fg_state_map(fg_state_path(), err, sizeof err);
  *driverVersion = st ? st->cuda_version : 12040;
  fg_state_unmap(st);
  return CUDA_SUCCESS;
}

API cuDeviceGetCount(int *count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  NEED_INIT();
  *count = g_nvis;
  return CUDA_SUCCESS;
}

API cuDeviceGet(CUdevice *device, int ordinal) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  NEED_INIT();
  if (ordinal < 0 || ordinal >= g_nvis) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

API cuDeviceGetName(char *name, int len, CUdevice dev) {
  NEED_DEV(d, dev);
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  const fg_gpu_t *g = &g_st->gpus[d->gpu];
  snprintf(name, (size_t)len, "%s", d->mig >= 0 ? g->mig[d->mig].name : g->name);
  return CUDA_SUCCESS;
}

API cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) {
  NEED_DEV(d, dev);
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  const fg_gpu_t *g = &g_st->gpus[d->gpu];
  const char *s = (d->mig >= 0 ? g->mig[d->mig].uuid : g->uuid) + 4;
  int n = 0;
  for (; *s && n < 16; s++) {
    if (*s == '-') continue;
    unsigned v;
    if (sscanf(s, "%2x", &v) != 1) break;
    uuid->bytes[n++] = (char)v;
    s++;
  }
  return CUDA_SUCCESS;
}

API cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid(uuid, dev); }

uint64_t dev_total(const devctx_t *d) {
  const fg_gpu_t *g = &g_st->gpus[d->gpu];
  return d->mig >= 0 ? g->mig[d->mig].memory_total : g->memory_total;
}

API cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  NEED_DEV(d, dev);
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  *bytes = dev_total(d);
  return CUDA_SUCCESS;
}

API cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  NEED_DEV(d, dev);
  if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  const fg_gpu_t *g = &g_st->gpus[d->gpu];
  int v = 0;
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = (int)g->sm_clock_max * 1000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = (int)(d->mig >= 0 ? g->mig[d->mig].sm_count : g->sm_count); break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: v = (int)FG_LOAD(&g->compute_mode); break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = (int)g->pci_bus; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = (int)g->pci_device; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: v = (int)g->pci_domain; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = (int)g->mem_clock * 1000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = g->cc_major >= 9 ? 52428800 : 41943040; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = (int)g->cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = (int)g->cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
    default: v = 0; break;
  }
  *pi = v;
  return CUDA_SUCCESS;
}

/* ---------------- contexts ---------------- */

/* A context on d exists: make sure the process is registered there. */
CUresult dc_ref(devctx_t *d) {
  if (d->slot < 0) {
    mps_setup(d);
    int slot = ll_call(LL_REGISTER, d->gpu, d->mig, -1);
    if (slot < 0) return CUDA_ERROR_OUT_OF_MEMORY; /* process table full */
    d->slot = slot;
  }
  d->refs++;
  return CUDA_SUCCESS;
}


/* Last context on d gone: its memory is freed and the process leaves the list. */
static void dc_unref(devctx_t *d) {
  if (--d->refs > 0) return;
  dc_sync(d);
  mem_release_device(d);
  if (d->slot >= 0) ll_call(LL_RELEASE, 0, 0, d->slot);
  d->slot = -1;
}

/* The primary context of d is destroyed (last release or reset): its work
 * finishes, its allocations are freed, and the device's when no context is left. g_mu held. */
static void primary_gone(devctx_t *d) {
  dc_sync(d);
  mem_release_ctx(d->primary);
  dc_unref(d);
}

API cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  NEED_DEV(d, dev);
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  CUresult rc = CUDA_SUCCESS;
  if (!d->primary) {
    d->primary = calloc(1, sizeof *d->primary);
    d->primary->magic = MAGIC_CTX;
    d->primary->dc = d;
    d->primary->is_primary = 1;
  }
  if (d->primary_refs == 0) rc = dc_ref(d);
  if (rc == CUDA_SUCCESS) {
    d->primary_refs++;
    *pctx = d->primary;
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

API cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  NEED_INIT();
  devctx_t *d = dev_of(dev);
  if (!d) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&g_mu);
  CUresult rc = CUDA_SUCCESS;
  if (d->primary_refs == 0) rc = CUDA_ERROR_INVALID_CONTEXT;
  else if (--d->primary_refs == 0) primary_gone(d);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

API cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

/* Destroys the primary context now, whoever still retains it: its allocations go. */
API cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  NEED_INIT();
  devctx_t *d = dev_of(dev);
  if (!d) return CUDA_ERROR_INVALID_DEVICE;
  ckpt_gate(d);
  pthread_mutex_lock(&g_mu);
  if (d->primary_refs > 0) {
    d->primary_refs = 0;
    primary_gone(d);
  }
  pthread_mutex_unlock(&g_mu);
  return CUDA_SUCCESS;
}

API cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }

API cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
  (void)flags;
  NEED_DEV(d, dev);
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  CUresult rc = dc_ref(d);
  pthread_mutex_unlock(&g_mu);
  if (rc != CUDA_SUCCESS) return rc;
  CUcontext c = calloc(1, sizeof *c);
  c->magic = MAGIC_CTX;
  c->dc = d;
  t_cur = c;
  *pctx = c;
  return CUDA_SUCCESS;
}

API cuCtxDestroy_v2(CUcontext ctx) {
  NEED_INIT();
  if (!ctx || ctx->magic != MAGIC_CTX || ctx->is_primary) return CUDA_ERROR_INVALID_CONTEXT;
  devctx_t *d = ctx->dc;
  ckpt_gate(d);
  if (t_cur == ctx) t_cur = NULL;
  ctx->magic = 0;
  pthread_mutex_lock(&g_mu);
  dc_sync(d);
  mem_release_ctx(ctx); /* the context's allocations go with it, as in the driver */
  dc_unref(d);
  pthread_mutex_unlock(&g_mu);
  free(ctx);
  return CUDA_SUCCESS;
}

API cuCtxSetCurrent(CUcontext ctx) {
  NEED_INIT();
  if (ctx && ctx->magic != MAGIC_CTX) return CUDA_ERROR_INVALID_CONTEXT;
  t_cur = ctx;
  return CUDA_SUCCESS;
}

API cuCtxGetCurrent(CUcontext *pctx) {
  NEED_INIT();
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  *pctx = t_cur;
  return CUDA_SUCCESS;
}

/* ---------------- errors ---------------- */

static const struct {
  CUresult code;
  const char *name, *text;
} ERRORS[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "context already in use"},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread"},
    {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT", "timeout occurred"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

API cuGetErrorName(CUresult error, const char **pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++)
    if (ERRORS[i].code == error) {
      *pStr = ERRORS[i].name;
      return CUDA_SUCCESS;
    }
  *pStr = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

API cuGetErrorString(CUresult error, const char **pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++)
    if (ERRORS[i].code == error) {
      *pStr = ERRORS[i].text;
      return CUDA_SUCCESS;
    }
  *pStr = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

/* ---------------- cuGetProcAddress: the one table ---------------- */

typedef struct {
  const char *base;
  void *fn;
  int version;
  int ptsz;
} proc_row_t;

#define PROC_ROW(base, sym, ver, ptsz) {#base, (void *)sym, ver, ptsz},
static const proc_row_t PROCS[] = {GPUSHARE_CUDA_PROCS(PROC_ROW)};
#undef PROC_ROW

static CUresult get_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status) {
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const proc_row_t *best = NULL;
  int any = 0, best_score = -1;
  for (size_t i = 0; i < sizeof PROCS / sizeof PROCS[0]; i++) {
    const proc_row_t *r = &PROCS[i];
    if (strcmp(r->base, symbol)) continue;
    any = 1;
    if (r->version > cudaVersion || (r->ptsz && !want_ptsz)) continue;
    int score = r->version + (r->ptsz ? 1000000 : 0);
    if (score > best_score) best = r, best_score = score;
  }
  *pfn = best ? best->fn : NULL;
  if (status)
    *status = best ? CU_GET_PROC_ADDRESS_SUCCESS
                   : any ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

API cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
  return get_proc(symbol, pfn, cudaVersion, flags, NULL);
}

API cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *symbolStatus) {
  return get_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}
