/* fakejob: a GPU "framework" in miniature. It dlopen()s libcuda.so.1 and
 * resolves its entry points by dlsym or through cuGetProcAddress_v2 (as the
 * CUDA runtime does), allocates memory and launches kernels whose duration
 * (µs) is passed as *(unsigned long long *)kernelParams[0]. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cuda_abi.h"
#include "fakejob_hostile.h"
#include "fakejob_memory.h"
#include "fg_scenario.h"

#define REQUEST_VERSION 12040

static struct {
  cuInit_fn cuInit;
  cuDeviceGet_fn cuDeviceGet;
  cuDeviceGetName_fn cuDeviceGetName;
  cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
  cuCtxSetCurrent_fn cuCtxSetCurrent;
  cuCtxSynchronize_fn cuCtxSynchronize;
  cuMemGetInfo_v2_fn cuMemGetInfo_v2;
  cuMemAlloc_v2_fn cuMemAlloc_v2;
  cuMemAllocPitch_v2_fn cuMemAllocPitch_v2;
  cuMemAllocManaged_fn cuMemAllocManaged;
  cuMemAllocAsync_fn cuMemAllocAsync;
  cuMemPoolCreate_fn cuMemPoolCreate;
  cuMemAllocFromPoolAsync_fn cuMemAllocFromPoolAsync;
  cuMemCreate_fn cuMemCreate;
  cuMemAddressReserve_fn cuMemAddressReserve;
  cuMemMap_fn cuMemMap;
  cuMemSetAccess_fn cuMemSetAccess;
  cuModuleLoadData_fn cuModuleLoadData;
  cuModuleGetFunction_fn cuModuleGetFunction;
  cuLaunchKernel_fn cuLaunchKernel;
  cuStreamCreate_fn cuStreamCreate;
  cuStreamSynchronize_fn cuStreamSynchronize;
  cuGetErrorName_fn cuGetErrorName;
  cuMemFreeAsync_fn cuMemFreeAsync;
  cuMemRelease_fn cuMemRelease;
  cuMemUnmap_fn cuMemUnmap;
  cuMemAddressFree_fn cuMemAddressFree;
  cuCtxCreate_v2_fn cuCtxCreate_v2;
  cuCtxDestroy_v2_fn cuCtxDestroy_v2;
  cuDevicePrimaryCtxReset_v2_fn cuDevicePrimaryCtxReset_v2;
  cuArrayCreate_v2_fn cuArrayCreate_v2;
  cuArray3DCreate_v2_fn cuArray3DCreate_v2;
  cuMipmappedArrayCreate_fn cuMipmappedArrayCreate;
  cuStreamBeginCapture_v2_fn cuStreamBeginCapture_v2;
  cuStreamEndCapture_fn cuStreamEndCapture;
  cuGraphInstantiateWithFlags_fn cuGraphInstantiateWithFlags;
  cuGraphLaunch_fn cuGraphLaunch;
  cuGraphExecDestroy_fn cuGraphExecDestroy;
  cuGraphDestroy_fn cuGraphDestroy;
  cuMemcpyHtoD_v2_fn cuMemcpyHtoD_v2;
  cuMemcpyDtoH_v2_fn cuMemcpyDtoH_v2;
  cuMemcpyDtoHAsync_v2_fn cuMemcpyDtoHAsync_v2;
  cuMemcpyDtoHAsync_v2_fn cuMemcpyDtoHAsync_v2_ptsz;
  cuMemcpy2D_v2_fn cuMemcpy2D_v2;
  cuMemcpyPeer_fn cuMemcpyPeer;
  cuMemsetD2D8_v2_fn cuMemsetD2D8_v2;
  cuMemcpyBatchAsync_fn cuMemcpyBatchAsync; /* CUDA 12.8: NULL on an older driver (only --check-copy batch needs it) */
} api;

/* field, exported symbol, name asked of cuGetProcAddress (ENTRY_PTSZ: asked with PER_THREAD_DEFAULT_STREAM;
 * ENTRY_NEWER: asked at a newer CUDA version, and optional: left NULL where the driver lacks it) */
#define ENTRY(field, base) {(void **)&api.field, #field, #base, CU_GET_PROC_ADDRESS_DEFAULT, 0}
#define ENTRY_PTSZ(field, base) {(void **)&api.field, #field, #base, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 0}
#define ENTRY_NEWER(field, base, version) {(void **)&api.field, #field, #base, CU_GET_PROC_ADDRESS_DEFAULT, version}
static const struct {
  void **slot;
  const char *symbol, *base;
  cuuint64_t flags;
  int newer;
} ENTRIES[] = {
    ENTRY(cuInit, cuInit),
    ENTRY(cuDeviceGet, cuDeviceGet),
    ENTRY(cuDeviceGetName, cuDeviceGetName),
    ENTRY(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain),
    ENTRY(cuCtxSetCurrent, cuCtxSetCurrent),
    ENTRY(cuCtxSynchronize, cuCtxSynchronize),
    ENTRY(cuMemGetInfo_v2, cuMemGetInfo),
    ENTRY(cuMemAlloc_v2, cuMemAlloc),
    ENTRY(cuMemAllocPitch_v2, cuMemAllocPitch),
    ENTRY(cuMemAllocManaged, cuMemAllocManaged),
    ENTRY(cuMemAllocAsync, cuMemAllocAsync),
    ENTRY(cuMemPoolCreate, cuMemPoolCreate),
    ENTRY(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync),
    ENTRY(cuMemCreate, cuMemCreate),
    ENTRY(cuMemAddressReserve, cuMemAddressReserve),
    ENTRY(cuMemMap, cuMemMap),
    ENTRY(cuMemSetAccess, cuMemSetAccess),
    ENTRY(cuModuleLoadData, cuModuleLoadData),
    ENTRY(cuModuleGetFunction, cuModuleGetFunction),
    ENTRY(cuLaunchKernel, cuLaunchKernel),
    ENTRY(cuStreamCreate, cuStreamCreate),
    ENTRY(cuStreamSynchronize, cuStreamSynchronize),
    ENTRY(cuGetErrorName, cuGetErrorName),
    ENTRY(cuMemFreeAsync, cuMemFreeAsync),
    ENTRY(cuMemRelease, cuMemRelease),
    ENTRY(cuMemUnmap, cuMemUnmap),
    ENTRY(cuMemAddressFree, cuMemAddressFree),
    ENTRY(cuCtxCreate_v2, cuCtxCreate),
    ENTRY(cuCtxDestroy_v2, cuCtxDestroy),
    ENTRY(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset),
    ENTRY(cuArrayCreate_v2, cuArrayCreate),
    ENTRY(cuArray3DCreate_v2, cuArray3DCreate),
    ENTRY(cuMipmappedArrayCreate, cuMipmappedArrayCreate),
    ENTRY(cuStreamBeginCapture_v2, cuStreamBeginCapture),
    ENTRY(cuStreamEndCapture, cuStreamEndCapture),
    ENTRY(cuGraphInstantiateWithFlags, cuGraphInstantiate), /* CUDA 12: the base name gives WithFlags */
    ENTRY(cuGraphLaunch, cuGraphLaunch),
    ENTRY(cuGraphExecDestroy, cuGraphExecDestroy),
    ENTRY(cuGraphDestroy, cuGraphDestroy),
    ENTRY(cuMemcpyHtoD_v2, cuMemcpyHtoD),
    ENTRY(cuMemcpyDtoH_v2, cuMemcpyDtoH),
    ENTRY(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync),
    ENTRY_PTSZ(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync),
    ENTRY(cuMemcpy2D_v2, cuMemcpy2D),
    ENTRY(cuMemcpyPeer, cuMemcpyPeer),
    ENTRY(cuMemsetD2D8_v2, cuMemsetD2D8),
    ENTRY_NEWER(cuMemcpyBatchAsync, cuMemcpyBatchAsync, 12080),
};

static volatile sig_atomic_t g_stop, g_advance;
static CUfunction g_fn;
static CUstream g_stream;
static int g_device;
static CUdevice g_dev;
static CUcontext g_primary;
static unsigned long long g_kernels;
static fakejob_pattern_t g_pattern; /* the --mem allocation; base 0: none */
static double g_busy_ms;
static double g_t0;

static pid_t g_children[256];
static int g_nchildren;

static void on_signal(int sig) {
  if (sig == SIGUSR1) g_advance = 1; /* ends the current --pause, or an interactive idle, early */
  else g_stop = 1;
  for (int i = 0; i < g_nchildren; i++) kill(g_children[i], sig); /* a job's processes get what it gets */
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms) {
  if (ms <= 0) return;
  struct timespec ts = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
  nanosleep(&ts, NULL); /* a signal ends it early: we check g_stop */
}

static void emit(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

static const char *err_name(CUresult rc) {
  const char *n = NULL;
  if (!api.cuGetErrorName || api.cuGetErrorName(rc, &n) != CUDA_SUCCESS || !n) return "CUDA_ERROR_UNKNOWN";
  return n;
}

static void fail_call(const char *call, CUresult rc) {
  emit("{\"event\":\"error\",\"call\":\"%s\",\"code\":%d,\"name\":\"%s\"}", call, rc, err_name(rc));
  exit(1);
}

#define CHECK(call, args)                 \
  do {                                    \
    CUresult rc_ = api.call args;         \
    if (rc_ != CUDA_SUCCESS) fail_call(#call, rc_); \
  } while (0)

#define CHECK_PATTERN(call)                          \
  do {                                               \
    CUresult rc_ = (call);                           \
    if (rc_ != CUDA_SUCCESS) fail_call("cuMemcpyHtoD_v2", rc_); \
  } while (0)

static void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fakejob: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nusage: fakejob [--resolve symbol|procaddress] [--device N] [--mem SIZE] PROFILE [options]\n"
        "  hold [--duration S] [--fill SIZE]\n"
        "  train --kernel-ms K [--batch B] [--duration S | --iterations N]\n"
        "  infer --rate R --kernel-ms K (--requests N | --duration S) [--seed X] [--kernels-per-request M] [--burst B]\n"
        "  interactive --burst-ms B --idle-ms I [--kernel-ms K] [--duration S] [--check-memory [--check-copy sync|async|ptsz|2d|peer|memset2d|batch]]\n"
        "  alloc --chunk SIZE --count N [--api alloc|pitch|managed|async|pool|vmm|array|array3d|mipmap] [--after S] [--hold]\n"
        "  capture --kernels K --kernel-ms M (--launches N | --duration S) [--mode global|thread_local|relaxed]\n"
        "          [--graph-mem SIZE] [--sync-during-capture]\n"
        "  vmm --chunk SIZE --count N [--release-first] [--pause S]\n"
        "  ctx --chunk SIZE --count N [--reset] [--pause S]\n"
        "  hostile [--gate DIR] [--slot N] [--in-launch N] [--truncate-after S] [--duration S]\n"
        "  global: --children N (N processes run the profile; this one waits)\n"
        "  -- ARG...: ignored (padding: a long command line, as tests of what the engine reads from /proc need)\n",
        stderr);
  va_end(ap);
  exit(2);
}

/* ---- options ---- */

typedef struct {
  const char *name, *val;
} opt_t;
static opt_t g_opts[32];
static int g_nopts;

static const char *opt(const char *name) {
  for (int i = 0; i < g_nopts; i++)
    if (!strcmp(g_opts[i].name, name)) return g_opts[i].val;
  return NULL;
}

static double num_opt(const char *name, double def, double min, double max) {
  const char *v = opt(name);
  if (!v) return def;
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= min) || !(x <= max)) usage_error("bad --%s '%s'", name, v);
  return x;
}

static unsigned long long parse_size(const char *what, const char *s) {
  unsigned long long v;
  if (fg_parse_size(s, &v)) usage_error("bad %s '%s' (e.g. 512M, 2G, 1048576)", what, s ? s : "");
  return v;
}

static void allow_only(const char *profile, const char *const *allowed) {
  static const char *const global[] = {"resolve", "device", "mem", "children", NULL};
  for (int i = 0; i < g_nopts; i++) {
    int ok = 0;
    for (const char *const *p = global; *p; p++) ok |= !strcmp(*p, g_opts[i].name);
    for (const char *const *p = allowed; *p; p++) ok |= !strcmp(*p, g_opts[i].name);
    if (!ok) usage_error("%s: unknown option --%s", profile, g_opts[i].name);
  }
}

/* ---- driver setup ---- */

static void resolve(int by_procaddress) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    emit("{\"event\":\"error\",\"call\":\"dlopen\",\"code\":-1,\"name\":\"libcuda.so.1 not found\"}");
    exit(1);
  }
  cuGetProcAddress_v2_fn gpa = NULL;
  if (by_procaddress) {
    gpa = (cuGetProcAddress_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) {
      emit("{\"event\":\"error\",\"call\":\"dlsym\",\"code\":-1,\"name\":\"cuGetProcAddress_v2\"}");
      exit(1);
    }
  }
  for (size_t i = 0; i < sizeof ENTRIES / sizeof ENTRIES[0]; i++) {
    void *fn = NULL;
    if (by_procaddress) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      int version = ENTRIES[i].newer ? ENTRIES[i].newer : REQUEST_VERSION;
      CUresult rc = gpa(ENTRIES[i].base, &fn, version, ENTRIES[i].flags, &status);
      if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) fn = NULL;
    } else {
      fn = dlsym(h, ENTRIES[i].symbol);
    }
    if (!fn && ENTRIES[i].newer) continue; /* optional: its user checks */
    if (!fn) {
      emit("{\"event\":\"error\",\"call\":\"%s\",\"code\":500,\"name\":\"CUDA_ERROR_NOT_FOUND\"}",
           by_procaddress ? "cuGetProcAddress_v2" : "dlsym");
      exit(1);
    }
    *ENTRIES[i].slot = fn;
  }
}

static void launch(double kernel_ms) {
  unsigned long long us = (unsigned long long)llround(kernel_ms * 1000.0);
  void *params[] = {&us};
  CHECK(cuLaunchKernel, (g_fn, 1, 1, 1, 128, 1, 1, 0, g_stream, params, NULL));
  g_kernels++;
  g_busy_ms += (double)us / 1000.0;
}

static void sync_stream(void) { CHECK(cuStreamSynchronize, (g_stream)); }

static void finish(void) {
  sync_stream();
  emit("{\"event\":\"done\",\"kernels\":%llu,\"busyMs\":%.3f,\"wallMs\":%.3f}", g_kernels, g_busy_ms, now_ms() - g_t0);
  exit(0);
}

static int expired(double duration_s) { return g_stop || (duration_s > 0 && now_ms() - g_t0 >= duration_s * 1e3); }

/* ---- profiles ---- */

static void profile_hold(int run) {
  static const char *const allowed[] = {"duration", "fill", NULL};
  allow_only("hold", allowed);
  double dur = num_opt("duration", 0, 0, 1e9);
  if (!run) return;
  while (!expired(dur)) sleep_ms(dur > 0 ? fmin(100, dur * 1e3 - (now_ms() - g_t0)) : 100);
}

static void profile_train(int run) {
  static const char *const allowed[] = {"kernel-ms", "batch", "duration", "iterations", NULL};
  allow_only("train", allowed);
  if (!opt("kernel-ms")) usage_error("train: missing --kernel-ms");
  if (opt("duration") && opt("iterations")) usage_error("train: give --duration or --iterations, not both");
  double k = num_opt("kernel-ms", 0, 0, 1e7);
  unsigned long long batch = (unsigned long long)num_opt("batch", 10, 1, 1e9);
  double dur = num_opt("duration", 0, 0, 1e9);
  double iters = num_opt("iterations", 0, 0, 1e15);
  if (!run) return;
  double next_progress = now_ms() + 1000;
  for (unsigned long long i = 0;; i++) {
    if ((iters > 0 && i >= iters) || expired(dur)) break;
    launch(k);
    if ((i + 1) % batch == 0) sync_stream();
    if (now_ms() >= next_progress) {
      emit("{\"event\":\"progress\",\"kernels\":%llu,\"elapsedMs\":%.1f}", g_kernels, now_ms() - g_t0);
      next_progress += 1000;
    }
  }
}

static uint64_t g_rng;
static double uniform01(void) {
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return ((double)((g_rng * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p) {
  if (!n) return 0;
  size_t i = (size_t)ceil(p * (double)n);
  return v[i ? i - 1 : 0];
}

static void profile_infer(int run) {
  static const char *const allowed[] = {"rate", "kernel-ms", "requests", "duration", "seed", "kernels-per-request", "burst", NULL};
  allow_only("infer", allowed);
  if (!opt("rate")) usage_error("infer: missing --rate");
  if (!opt("kernel-ms")) usage_error("infer: missing --kernel-ms");
  if (!!opt("requests") == !!opt("duration")) usage_error("infer: give exactly one of --requests or --duration");
  double rate = num_opt("rate", 0, 1e-6, 1e7);
  double k = num_opt("kernel-ms", 0, 0, 1e7);
  double reqs = num_opt("requests", 0, 1, 1e9);
  double dur = num_opt("duration", 0, 1e-3, 1e9);
  unsigned kpr = (unsigned)num_opt("kernels-per-request", 1, 1, 1e6);
  unsigned burst = (unsigned)num_opt("burst", 1, 1, 1e6); /* bursty arrivals: B requests arrive together, R stays the mean rate */
  g_rng = (uint64_t)num_opt("seed", 1, 0, 1.8e19) * 0x9E3779B97F4A7C15ull + 0x1234567ull;
  if (!run) return;
  size_t cap = 1024, n = 0;
  double *lat = malloc(cap * sizeof *lat);
  double arrival = g_t0;
  for (;;) {
    if (n % burst == 0) arrival += -log(uniform01()) / rate * burst * 1e3;
    if (reqs > 0 && (double)n >= reqs) break;
    if (dur > 0 && arrival - g_t0 >= dur * 1e3) break;
    while (!g_stop && now_ms() < arrival) sleep_ms(arrival - now_ms());
    if (g_stop) break;
    for (unsigned i = 0; i < kpr; i++) launch(k);
    sync_stream();
    if (n == cap) lat = realloc(lat, (cap *= 2) * sizeof *lat);
    lat[n++] = now_ms() - arrival; /* a request of a burst waits for those before it */
  }
  double wall_s = (now_ms() - g_t0) / 1e3;
  qsort(lat, n, sizeof *lat, cmp_double);
  emit("{\"event\":\"latency\",\"requests\":%zu,\"p50Ms\":%.3f,\"p90Ms\":%.3f,\"p99Ms\":%.3f,\"maxMs\":%.3f,"
       "\"throughput\":%.3f}",
       n, pct(lat, n, 0.5), pct(lat, n, 0.9), pct(lat, n, 0.99), n ? lat[n - 1] : 0.0, wall_s > 0 ? n / wall_s : 0.0);
  free(lat);
}

/* --check-memory: each cell first reads back what the job wrote into its allocation at start, as a
 * notebook cell reads a result; a parked notebook's first call of a cell is then this copy. */
static void check_memory(void) {
  unsigned long long bytes = 0;
  int ok = 0;
  CUresult rc = fakejob_pattern_check(&g_pattern, &bytes, &ok);
  if (rc != CUDA_SUCCESS)
    fail_call(g_pattern.copy2d ? "cuMemcpy2D_v2" : g_pattern.peer ? "cuMemcpyPeer" : g_pattern.memset2d ? "cuMemsetD2D8_v2"
              : g_pattern.batch ? "cuMemcpyBatchAsync" : g_pattern.dtoh_async ? "cuMemcpyDtoHAsync_v2" : "cuMemcpyDtoH_v2", rc);
  emit("{\"event\":\"memory-check\",\"ok\":%s,\"bytes\":%llu}", ok ? "true" : "false", bytes);
  if (!ok) exit(3);
}

static void profile_interactive(int run) {
  static const char *const allowed[] = {"burst-ms", "idle-ms", "kernel-ms", "duration", "check-memory", "check-copy", NULL};
  allow_only("interactive", allowed);
  if (!opt("burst-ms")) usage_error("interactive: missing --burst-ms");
  if (!opt("idle-ms")) usage_error("interactive: missing --idle-ms");
  double burst = num_opt("burst-ms", 0, 0.001, 1e7);
  double idle = num_opt("idle-ms", 0, 0, 1e7);
  double k = num_opt("kernel-ms", burst < 5 ? burst : 5, 0.001, 1e7);
  double dur = num_opt("duration", 0, 0, 1e9);
  if (!run) return;
  for (unsigned long long b = 0; !expired(dur); b++) {
    double t = now_ms(), queued = 0;
    unsigned n = 0;
    if (opt("check-memory")) check_memory();
    while (queued + 1e-9 < burst) {
      double this_k = fmin(k, burst - queued);
      launch(this_k);
      queued += this_k;
      n++;
    }
    sync_stream();
    emit("{\"event\":\"burst\",\"i\":%llu,\"kernels\":%u,\"ms\":%.3f}", b, n, now_ms() - t);
    double until = now_ms() + idle;
    while (!expired(dur) && !g_advance && now_ms() < until) sleep_ms(fmin(until - now_ms(), 100));
    g_advance = 0; /* SIGUSR1: the next cell now (a test's user at the keyboard) */
  }
}

static CUresult alloc_one(const char *how, unsigned long long bytes, unsigned long long *got) {
  CUdeviceptr p;
  *got = bytes;
  if (!strcmp(how, "alloc")) return api.cuMemAlloc_v2(&p, bytes);
  if (!strcmp(how, "pitch")) {
    size_t pitch = 0;
    CUresult rc = api.cuMemAllocPitch_v2(&p, &pitch, bytes, 1, 4);
    if (rc == CUDA_SUCCESS) *got = pitch;
    return rc;
  }
  if (!strcmp(how, "managed")) return api.cuMemAllocManaged(&p, bytes, 1);
  if (!strcmp(how, "array") || !strcmp(how, "array3d") || !strcmp(how, "mipmap")) {
    /* one row of 32-bit floats: width x 4 bytes */
    *got = bytes / 4 * 4;
    CUarray a;
    CUmipmappedArray m;
    CUDA_ARRAY_DESCRIPTOR d2 = {bytes / 4, 1, CU_AD_FORMAT_FLOAT, 1};
    CUDA_ARRAY3D_DESCRIPTOR d3 = {bytes / 4, 1, 1, CU_AD_FORMAT_FLOAT, 1, 0};
    if (!strcmp(how, "array")) return api.cuArrayCreate_v2(&a, &d2);
    if (!strcmp(how, "array3d")) return api.cuArray3DCreate_v2(&a, &d3);
    return api.cuMipmappedArrayCreate(&m, &d3, 1);
  }
  if (!strcmp(how, "async")) return api.cuMemAllocAsync(&p, bytes, g_stream);
  if (!strcmp(how, "pool")) {
    static CUmemoryPool pool;
    if (!pool) {
      CUmemPoolProps props;
      memset(&props, 0, sizeof props);
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      props.location.id = g_device;
      CHECK(cuMemPoolCreate, (&pool, &props));
    }
    return api.cuMemAllocFromPoolAsync(&p, bytes, pool, g_stream);
  }
  /* vmm */
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = g_device;
  CUmemGenericAllocationHandle handle;
  CUresult rc = api.cuMemCreate(&handle, bytes, &prop, 0);
  if (rc != CUDA_SUCCESS) return rc;
  CHECK(cuMemAddressReserve, (&p, bytes, 0, 0, 0));
  CHECK(cuMemMap, (p, bytes, 0, handle, 0));
  CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, g_device}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CHECK(cuMemSetAccess, (p, bytes, &access, 1));
  return CUDA_SUCCESS;
}

/* count allocations of chunk bytes through `how`, one "alloc" event each (continues after failures) */
static void alloc_chunks(const char *how, unsigned long long chunk, unsigned long long count) {
  unsigned long long total = 0;
  for (unsigned long long i = 0; i < count && !g_stop; i++) {
    unsigned long long got;
    CUresult rc = alloc_one(how, chunk, &got);
    if (rc == CUDA_SUCCESS) total += got;
    emit("{\"event\":\"alloc\",\"i\":%llu,\"bytes\":%llu,\"total\":%llu,\"result\":\"%s\",\"code\":%d}", i,
         rc == CUDA_SUCCESS ? got : chunk, total, err_name(rc), rc);
  }
}

static void profile_alloc(int run, int hold) {
  static const char *const allowed[] = {"chunk", "count", "api", "after", NULL};
  allow_only("alloc", allowed);
  double after_s = num_opt("after", 0, 0, 86400);
  if (!opt("chunk")) usage_error("alloc: missing --chunk");
  if (!opt("count")) usage_error("alloc: missing --count");
  unsigned long long chunk = parse_size("--chunk", opt("chunk"));
  if (chunk == 0) usage_error("alloc: --chunk must be > 0");
  unsigned long long count = (unsigned long long)num_opt("count", 0, 0, 1e9);
  const char *how = opt("api") ? opt("api") : "alloc";
  static const char *const apis[] = {"alloc", "pitch", "managed", "async", "pool", "vmm", "array", "array3d", "mipmap", NULL};
  int ok = 0;
  for (const char *const *a = apis; *a; a++) ok |= !strcmp(*a, how);
  if (!ok) usage_error("alloc: bad --api '%s' (alloc|pitch|managed|async|pool|vmm|array|array3d|mipmap)", how);
  if (chunk < 4 && (!strcmp(how, "array") || !strcmp(how, "array3d") || !strcmp(how, "mipmap")))
    usage_error("alloc: --chunk must be at least 4 bytes for arrays");
  if (!run) return;
  if (after_s > 0) {
    /* time for a quota to be set on the running job before it allocates */
    emit("{\"event\":\"waiting\",\"seconds\":%g}", after_s);
    double until = now_ms() + after_s * 1000;
    while (!g_stop && now_ms() < until) sleep_ms(50);
  }
  alloc_chunks(how, chunk, count);
  size_t free_b = 0, total_b = 0;
  CHECK(cuMemGetInfo_v2, (&free_b, &total_b));
  emit("{\"event\":\"meminfo\",\"free\":%zu,\"total\":%zu}", free_b, total_b);
  while (hold && !g_stop) sleep_ms(100);
}

static void emit_meminfo(const char *event, const char *step) {
  size_t free_b = 0, total_b = 0;
  CHECK(cuMemGetInfo_v2, (&free_b, &total_b));
  emit("{\"event\":\"%s\",\"step\":\"%s\",\"free\":%zu,\"total\":%zu}", event, step, free_b, total_b);
}

/* --pause S between steps; SIGUSR1 ends a pause early (a test steps the job deterministically). */
static void pause_step(double pause_s) {
  double until = now_ms() + pause_s * 1000;
  while (!g_stop && !g_advance && now_ms() < until) sleep_ms(fmin(50, until - now_ms()));
  g_advance = 0;
}

static void profile_capture(int run) {
  static const char *const allowed[] = {"kernels", "kernel-ms", "launches", "duration", "mode", "graph-mem",
                                        "sync-during-capture", NULL};
  allow_only("capture", allowed);
  if (!opt("kernels")) usage_error("capture: missing --kernels");
  if (!opt("kernel-ms")) usage_error("capture: missing --kernel-ms");
  if (!!opt("launches") == !!opt("duration")) usage_error("capture: give exactly one of --launches or --duration");
  unsigned k = (unsigned)num_opt("kernels", 0, 1, 1e6);
  double kms = num_opt("kernel-ms", 0, 0, 1e7);
  double launches = num_opt("launches", 0, 0, 1e12);
  double dur = num_opt("duration", 0, 1e-3, 1e9);
  const char *mode_s = opt("mode") ? opt("mode") : "global";
  CUstreamCaptureMode mode = !strcmp(mode_s, "global")         ? CU_STREAM_CAPTURE_MODE_GLOBAL
                             : !strcmp(mode_s, "thread_local") ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                             : !strcmp(mode_s, "relaxed")      ? CU_STREAM_CAPTURE_MODE_RELAXED
                                                               : (CUstreamCaptureMode)-1;
  if ((int)mode < 0) usage_error("capture: bad --mode '%s' (global|thread_local|relaxed)", mode_s);
  unsigned long long gmem = opt("graph-mem") ? parse_size("--graph-mem", opt("graph-mem")) : 0;
  int sync_in_capture = opt("sync-during-capture") != NULL;
  if (!run) return;
  CUdeviceptr p = 0;
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  unsigned long long us = (unsigned long long)llround(kms * 1000.0);
  void *params[] = {&us};
  CHECK(cuStreamBeginCapture_v2, (g_stream, mode));
  if (gmem) CHECK(cuMemAllocAsync, (&p, gmem, g_stream)); /* a graph memory alloc node */
  for (unsigned i = 0; i < k; i++) CHECK(cuLaunchKernel, (g_fn, 1, 1, 1, 128, 1, 1, 0, g_stream, params, NULL));
  if (gmem) CHECK(cuMemFreeAsync, (p, g_stream));
  CUresult sync_rc = sync_in_capture ? api.cuStreamSynchronize(g_stream) : CUDA_SUCCESS;
  CUresult end_rc = api.cuStreamEndCapture(g_stream, &graph);
  emit("{\"event\":\"captured\",\"kernels\":%u,\"graphMem\":%llu,\"sync\":%s%s%s,\"end\":\"%s\"}", k, gmem,
       sync_in_capture ? "\"" : "", sync_in_capture ? err_name(sync_rc) : "null", sync_in_capture ? "\"" : "",
       err_name(end_rc));
  if (end_rc != CUDA_SUCCESS) return; /* an invalidated capture has no graph to launch */
  CHECK(cuGraphInstantiateWithFlags, (&exec, graph, 0));
  double next_progress = now_ms() + 1000;
  for (unsigned long long n = 0; !(launches > 0 && n >= launches) && !expired(dur); n++) {
    CHECK(cuGraphLaunch, (exec, g_stream));
    g_kernels += k;
    g_busy_ms += (double)us * k / 1000.0;
    sync_stream(); /* one graph per step, as a training loop replays it */
    if (now_ms() >= next_progress) {
      emit("{\"event\":\"progress\",\"kernels\":%llu,\"elapsedMs\":%.1f}", g_kernels, now_ms() - g_t0);
      next_progress += 1000;
    }
  }
  sync_stream();
  emit_meminfo("graph", "launched");
  CHECK(cuGraphExecDestroy, (exec));
  CHECK(cuGraphDestroy, (graph));
}

static void profile_vmm(int run) {
  static const char *const allowed[] = {"chunk", "count", "release-first", "pause", NULL};
  allow_only("vmm", allowed);
  if (!opt("chunk")) usage_error("vmm: missing --chunk");
  if (!opt("count")) usage_error("vmm: missing --count");
  unsigned long long chunk = parse_size("--chunk", opt("chunk"));
  if (chunk == 0) usage_error("vmm: --chunk must be > 0");
  unsigned n = (unsigned)num_opt("count", 0, 1, 4096);
  double pause_s = num_opt("pause", 0, 0, 86400);
  int release_first = opt("release-first") != NULL;
  if (!run) return;
  CUmemGenericAllocationHandle *h = calloc(n, sizeof *h);
  CUdeviceptr *va = calloc(n, sizeof *va);
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = g_device;
  CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, g_device}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  for (unsigned i = 0; i < n; i++) CHECK(cuMemCreate, (&h[i], chunk, &prop, 0));
  emit_meminfo("vmm", "created");
  pause_step(pause_s);
  for (unsigned i = 0; i < n; i++) {
    CHECK(cuMemAddressReserve, (&va[i], chunk, 0, 0, 0));
    CHECK(cuMemMap, (va[i], chunk, 0, h[i], 0));
    CHECK(cuMemSetAccess, (va[i], chunk, &access, 1));
  }
  emit_meminfo("vmm", "mapped");
  pause_step(pause_s);
  for (int pass = 0; pass < 2; pass++) { /* release then unmap (the memory stays until the last unmap), or the other way */
    if (pass == (release_first ? 0 : 1)) {
      for (unsigned i = 0; i < n; i++) CHECK(cuMemRelease, (h[i]));
      emit_meminfo("vmm", "released");
    } else {
      for (unsigned i = 0; i < n; i++) CHECK(cuMemUnmap, (va[i], chunk));
      emit_meminfo("vmm", "unmapped");
    }
    pause_step(pause_s);
  }
  for (unsigned i = 0; i < n; i++) CHECK(cuMemAddressFree, (va[i], chunk));
  free(h);
  free(va);
}

static void profile_ctx(int run) {
  static const char *const allowed[] = {"chunk", "count", "reset", "pause", NULL};
  allow_only("ctx", allowed);
  if (!opt("chunk")) usage_error("ctx: missing --chunk");
  if (!opt("count")) usage_error("ctx: missing --count");
  unsigned long long chunk = parse_size("--chunk", opt("chunk"));
  if (chunk == 0) usage_error("ctx: --chunk must be > 0");
  unsigned long long count = (unsigned long long)num_opt("count", 0, 1, 1e9);
  double pause_s = num_opt("pause", 0, 0, 86400);
  int reset = opt("reset") != NULL;
  if (!run) return;
  CUcontext ctx = NULL;
  if (reset) { /* allocate in the primary context, then reset it: its allocations go */
    alloc_chunks("alloc", chunk, count);
    emit_meminfo("ctx", "allocated");
    pause_step(pause_s);
    CHECK(cuDevicePrimaryCtxReset_v2, (g_dev));
    CHECK(cuDevicePrimaryCtxRetain, (&g_primary, g_dev));
    CHECK(cuCtxSetCurrent, (g_primary));
    emit_meminfo("ctx", "reset");
  } else { /* allocate in a context of its own, then destroy it */
    CHECK(cuCtxCreate_v2, (&ctx, 0, g_dev));
    alloc_chunks("alloc", chunk, count);
    emit_meminfo("ctx", "allocated");
    pause_step(pause_s);
    CHECK(cuCtxDestroy_v2, (ctx));
    CHECK(cuCtxSetCurrent, (g_primary));
    emit_meminfo("ctx", "destroyed");
  }
  pause_step(pause_s);
  alloc_chunks("alloc", chunk, count); /* the same again fits: the bytes came back */
  emit_meminfo("ctx", "reallocated");
}

/* An attack on the launch gate (fakejob_hostile.c): what it tries, and fails, is in its events. */
static void profile_hostile(int run) {
  static const char *const allowed[] = {"gate", "slot", "in-launch", "truncate-after", "duration", NULL};
  allow_only("hostile", allowed);
  fakejob_hostile_opts_t o;
  o.gate = opt("gate") ? opt("gate") : getenv("GPUSHARE_GATE");
  if (!o.gate || !*o.gate) usage_error("hostile: no gate (--gate DIR, or GPUSHARE_GATE)");
  const char *slot_env = getenv("GPUSHARE_GATE_SLOT");
  if (!opt("slot") && (!slot_env || !*slot_env)) usage_error("hostile: no slot (--slot N, or GPUSHARE_GATE_SLOT)");
  if (!opt("slot")) g_opts[g_nopts++] = (opt_t){"slot", slot_env};
  o.slot = (unsigned)num_opt("slot", 0, 0, 63);
  o.in_launch = (unsigned)num_opt("in-launch", 1, 0, 1e9);
  o.truncate_after_s = num_opt("truncate-after", -1, 0, 1e9);
  o.duration_s = num_opt("duration", 0, 0, 1e9);
  if (!run) return;
  int rc = fakejob_hostile(&o, emit, &g_stop, &g_advance);
  if (rc) exit(rc);
}

static void run_profile(const char *profile, int run, int hold) {
  if (!strcmp(profile, "hold")) profile_hold(run);
  else if (!strcmp(profile, "hostile")) profile_hostile(run);
  else if (!strcmp(profile, "capture")) profile_capture(run);
  else if (!strcmp(profile, "vmm")) profile_vmm(run);
  else if (!strcmp(profile, "ctx")) profile_ctx(run);
  else if (!strcmp(profile, "train")) profile_train(run);
  else if (!strcmp(profile, "infer")) profile_infer(run);
  else if (!strcmp(profile, "interactive")) profile_interactive(run);
  else profile_alloc(run, hold);
}

static int is_flag(const char *arg) {
  static const char *const flags[] = {"--sync-during-capture", "--release-first", "--reset", "--check-memory", NULL};
  for (const char *const *f = flags; *f; f++)
    if (!strcmp(*f, arg)) return 1;
  return 0;
}

/* --children N: N processes run the profile; this one only waits for them (and passes signals on). */
static void run_children(unsigned n) {
  int go[2]; /* children start once the "children" event is out, so it always comes first */
  if (pipe(go) != 0) {
    emit("{\"event\":\"error\",\"call\":\"pipe\",\"code\":-1,\"name\":\"%s\"}", strerror(errno));
    exit(1);
  }
  for (unsigned i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      emit("{\"event\":\"error\",\"call\":\"fork\",\"code\":-1,\"name\":\"%s\"}", strerror(errno));
      for (int k = 0; k < g_nchildren; k++) kill(g_children[k], SIGKILL);
      exit(1);
    }
    if (pid == 0) {
      g_nchildren = 0;
      close(go[1]);
      char c;
      while (read(go[0], &c, 1) < 0 && errno == EINTR) {}
      close(go[0]);
      return; /* a child: on with the profile */
    }
    g_children[g_nchildren++] = pid;
  }
  char list[256 * 12] = "";
  for (int i = 0; i < g_nchildren; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", (int)g_children[i]);
  emit("{\"event\":\"children\",\"pid\":%d,\"pids\":[%s]}", (int)getpid(), list);
  close(go[0]);
  close(go[1]);
  int worst = 0;
  for (int left = g_nchildren; left > 0;) {
    int status;
    pid_t p = waitpid(-1, &status, 0);
    if (p < 0) {
      if (errno == EINTR) continue;
      break;
    }
    left--;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code > worst) worst = code;
  }
  exit(worst);
}

int main(int argc, char **argv) {
  const char *profile = NULL;
  int hold_flag = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) break; /* the rest is padding */
    if (!strcmp(argv[i], "--hold")) {
      hold_flag = 1;
    } else if (is_flag(argv[i])) { /* options without a value */
      if (g_nopts == 32) usage_error("too many options");
      for (int k = 0; k < g_nopts; k++)
        if (!strcmp(g_opts[k].name, argv[i] + 2)) usage_error("option %s given twice", argv[i]);
      g_opts[g_nopts++] = (opt_t){argv[i] + 2, "1"};
    } else if (!strncmp(argv[i], "--", 2)) {
      if (i + 1 >= argc) usage_error("option %s needs a value", argv[i]);
      if (g_nopts == 32) usage_error("too many options");
      for (int k = 0; k < g_nopts; k++)
        if (!strcmp(g_opts[k].name, argv[i] + 2)) usage_error("option %s given twice", argv[i]);
      g_opts[g_nopts++] = (opt_t){argv[i] + 2, argv[i + 1]};
      i++;
    } else if (!profile) {
      profile = argv[i];
    } else {
      usage_error("unexpected argument '%s'", argv[i]);
    }
  }
  if (!profile) usage_error("missing PROFILE");
  static const char *const profiles[] = {"hold", "train", "infer", "interactive", "alloc", "capture", "vmm", "ctx", "hostile", NULL};
  int known = 0;
  for (const char *const *p = profiles; *p; p++) known |= !strcmp(*p, profile);
  if (!known) usage_error("unknown profile '%s'", profile);
  if (hold_flag && strcmp(profile, "alloc")) usage_error("--hold is an alloc option");
  const char *res = opt("resolve") ? opt("resolve") : "procaddress";
  if (strcmp(res, "symbol") && strcmp(res, "procaddress")) usage_error("bad --resolve '%s' (symbol or procaddress)", res);
  g_device = (int)num_opt("device", 0, 0, 1024);
  unsigned long long mem = opt("mem") ? parse_size("--mem", opt("mem")) : 0;
  unsigned children = (unsigned)num_opt("children", 0, 0, 256);
  run_profile(profile, 0, hold_flag); /* validate every option before touching the driver */
  if (opt("check-memory") && !mem) usage_error("--check-memory needs --mem (the allocation it writes and reads back)");
  /* --check-copy: the read-back's API: cuMemcpyDtoH_v2, cuMemcpyDtoHAsync_v2 on the job's stream, or its _ptsz
   * variant on the per-thread stream (found with PER_THREAD_DEFAULT_STREAM), as a framework's .cpu() copies;
   * cuMemcpy2D_v2 (an image read back row by row), cuMemcpyPeer to a scratch place, then cuMemcpyDtoH_v2; cuMemsetD2D8_v2
   * of a rectangle in that scratch place read back whole, then the samples; or a cuMemcpyBatchAsync of two halves */
  const char *check_copy = opt("check-copy") ? opt("check-copy") : "sync";
  static const char *const copies[] = {"sync", "async", "ptsz", "2d", "peer", "memset2d", "batch", NULL};
  int copy_known = 0;
  for (const char *const *c = copies; *c; c++) copy_known |= !strcmp(*c, check_copy);
  if (!copy_known) usage_error("bad --check-copy '%s' (sync, async, ptsz, 2d, peer, memset2d or batch)", check_copy);
  if ((!strcmp(check_copy, "peer") || !strcmp(check_copy, "memset2d")) && (mem < FAKEJOB_PEER_MIN || opt("fill")))
    usage_error("--check-copy %s works in the allocation's second 64 KiB: it needs --mem of 192K or more, and no --fill", check_copy);
  if (opt("check-copy") && !opt("check-memory")) usage_error("--check-copy is how --check-memory reads back: give both");
  unsigned long long fill = opt("fill") ? parse_size("--fill", opt("fill")) : 0;
  if (opt("fill") && (!mem || fill > mem)) usage_error("--fill %s needs --mem of at least that much", opt("fill"));

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  if (children) run_children(children); /* before the driver: each child is a CUDA process of its own */

  resolve(!strcmp(res, "procaddress"));
  CUdevice dev;
  CUmodule mod;
  CHECK(cuInit, (0));
  CHECK(cuDeviceGet, (&dev, g_device));
  g_dev = dev;
  CHECK(cuDevicePrimaryCtxRetain, (&g_primary, dev));
  CHECK(cuCtxSetCurrent, (g_primary));
  CHECK(cuModuleLoadData, (&mod, "fakejob image"));
  CHECK(cuModuleGetFunction, (&g_fn, mod, "fakejob_kernel"));
  CHECK(cuStreamCreate, (&g_stream, 0));
  if (mem) {
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2, (&p, mem));
    g_pattern = (fakejob_pattern_t){.htod = api.cuMemcpyHtoD_v2, .dtoh = api.cuMemcpyDtoH_v2, .base = p, .bytes = mem, .seed = (unsigned)getpid()};
    if (!strcmp(check_copy, "2d")) {
      g_pattern.copy2d = api.cuMemcpy2D_v2;
    } else if (!strcmp(check_copy, "peer")) {
      g_pattern.peer = api.cuMemcpyPeer;
      g_pattern.ctx = g_primary;
    } else if (!strcmp(check_copy, "memset2d")) {
      g_pattern.memset2d = api.cuMemsetD2D8_v2;
    } else if (!strcmp(check_copy, "batch")) {
      if (!api.cuMemcpyBatchAsync) {
        emit("{\"event\":\"error\",\"call\":\"cuMemcpyBatchAsync\",\"code\":500,\"name\":\"CUDA_ERROR_NOT_FOUND\"}");
        exit(1);
      }
      g_pattern.batch = api.cuMemcpyBatchAsync;
      g_pattern.stream = g_stream; /* never the legacy stream: the batch refuses it */
      g_pattern.sync_stream = g_stream;
      g_pattern.sync = api.cuStreamSynchronize;
    } else if (strcmp(check_copy, "sync")) {
      int ptsz = !strcmp(check_copy, "ptsz");
      g_pattern.dtoh_async = ptsz ? api.cuMemcpyDtoHAsync_v2_ptsz : api.cuMemcpyDtoHAsync_v2;
      g_pattern.stream = ptsz ? NULL : g_stream; /* _ptsz: NULL is this thread's stream */
      g_pattern.sync_stream = ptsz ? CU_STREAM_PER_THREAD : g_stream;
      g_pattern.sync = api.cuStreamSynchronize;
    }
  }
  unsigned long long written = 0;
  if (opt("check-memory")) CHECK_PATTERN(fakejob_pattern_write(&g_pattern, &written));
  if (fill) {
    CHECK_PATTERN(fakejob_pattern_fill(&g_pattern, fill));
    written = fill;
  }
  if (written) emit("{\"event\":\"memory-written\",\"bytes\":%llu}", written); /* before ready: a parker sees it all */
  char name[128] = "";
  api.cuDeviceGetName(name, sizeof name, dev);
  emit("{\"event\":\"ready\",\"pid\":%d,\"device\":%d,\"name\":\"%s\",\"allocated\":%llu,\"resolve\":\"%s\"}",
       (int)getpid(), g_device, name, mem, res);
  g_t0 = now_ms();
  run_profile(profile, 1, hold_flag);
  finish();
  return 0;
}
