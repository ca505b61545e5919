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
#include <time.h>
#include <unistd.h>

#include "../../include/cuda_abi.h"
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
} api;

/* field, exported symbol, name asked of cuGetProcAddress */
#define ENTRY(field, base) {(void **)&api.field, #field, #base}
static const struct {
  void **slot;
  const char *symbol, *base;
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
};

static volatile sig_atomic_t g_stop;
static CUfunction g_fn;
static CUstream g_stream;
static int g_device;
static unsigned long long g_kernels;
static double g_busy_ms;
static double g_t0;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
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

static void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fakejob: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nusage: fakejob [--resolve symbol|procaddress] [--device N] [--mem SIZE] PROFILE [options]\n"
        "  hold [--duration S]\n"
        "  train --kernel-ms K [--batch B] [--duration S | --iterations N]\n"
        "  infer --rate R --kernel-ms K (--requests N | --duration S) [--seed X] [--kernels-per-request M]\n"
        "  interactive --burst-ms B --idle-ms I [--kernel-ms K] [--duration S]\n"
        "  alloc --chunk SIZE --count N [--api alloc|pitch|managed|async|pool|vmm] [--after S] [--hold]\n",
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
  static const char *const global[] = {"resolve", "device", "mem", NULL};
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
      CUresult rc = gpa(ENTRIES[i].base, &fn, REQUEST_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) fn = NULL;
    } else {
      fn = dlsym(h, ENTRIES[i].symbol);
    }
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
  static const char *const allowed[] = {"duration", NULL};
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
  static const char *const allowed[] = {"rate", "kernel-ms", "requests", "duration", "seed", "kernels-per-request", NULL};
  allow_only("infer", allowed);
  if (!opt("rate")) usage_error("infer: missing --rate");
  if (!opt("kernel-ms")) usage_error("infer: missing --kernel-ms");
  if (!!opt("requests") == !!opt("duration")) usage_error("infer: give exactly one of --requests or --duration");
  double rate = num_opt("rate", 0, 1e-6, 1e7);
  double k = num_opt("kernel-ms", 0, 0, 1e7);
  double reqs = num_opt("requests", 0, 1, 1e9);
  double dur = num_opt("duration", 0, 1e-3, 1e9);
  unsigned kpr = (unsigned)num_opt("kernels-per-request", 1, 1, 1e6);
  g_rng = (uint64_t)num_opt("seed", 1, 0, 1.8e19) * 0x9E3779B97F4A7C15ull + 0x1234567ull;
  if (!run) return;
  size_t cap = 1024, n = 0;
  double *lat = malloc(cap * sizeof *lat);
  double arrival = g_t0;
  for (;;) {
    arrival += -log(uniform01()) / rate * 1e3;
    if (reqs > 0 && (double)n >= reqs) break;
    if (dur > 0 && arrival - g_t0 >= dur * 1e3) break;
    while (!g_stop && now_ms() < arrival) sleep_ms(arrival - now_ms());
    if (g_stop) break;
    for (unsigned i = 0; i < kpr; i++) launch(k);
    sync_stream();
    if (n == cap) lat = realloc(lat, (cap *= 2) * sizeof *lat);
    lat[n++] = now_ms() - arrival;
  }
  double wall_s = (now_ms() - g_t0) / 1e3;
  qsort(lat, n, sizeof *lat, cmp_double);
  emit("{\"event\":\"latency\",\"requests\":%zu,\"p50Ms\":%.3f,\"p90Ms\":%.3f,\"p99Ms\":%.3f,\"maxMs\":%.3f,"
       "\"throughput\":%.3f}",
       n, pct(lat, n, 0.5), pct(lat, n, 0.9), pct(lat, n, 0.99), n ? lat[n - 1] : 0.0, wall_s > 0 ? n / wall_s : 0.0);
  free(lat);
}

static void profile_interactive(int run) {
  static const char *const allowed[] = {"burst-ms", "idle-ms", "kernel-ms", "duration", NULL};
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
    while (queued + 1e-9 < burst) {
      double this_k = fmin(k, burst - queued);
      launch(this_k);
      queued += this_k;
      n++;
    }
    sync_stream();
    emit("{\"event\":\"burst\",\"i\":%llu,\"kernels\":%u,\"ms\":%.3f}", b, n, now_ms() - t);
    double until = now_ms() + idle;
    while (!expired(dur) && now_ms() < until) sleep_ms(fmin(until - now_ms(), 100));
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
  static const char *const apis[] = {"alloc", "pitch", "managed", "async", "pool", "vmm", NULL};
  int ok = 0;
  for (const char *const *a = apis; *a; a++) ok |= !strcmp(*a, how);
  if (!ok) usage_error("alloc: bad --api '%s' (alloc|pitch|managed|async|pool|vmm)", how);
  if (!run) return;
  if (after_s > 0) {
    /* time for a quota to be set on the running job before it allocates */
    emit("{\"event\":\"waiting\",\"seconds\":%g}", after_s);
    double until = now_ms() + after_s * 1000;
    while (!g_stop && now_ms() < until) sleep_ms(50);
  }
  unsigned long long total = 0;
  for (unsigned long long i = 0; i < count && !g_stop; i++) {
    unsigned long long got;
    CUresult rc = alloc_one(how, chunk, &got);
    if (rc == CUDA_SUCCESS) total += got;
    emit("{\"event\":\"alloc\",\"i\":%llu,\"bytes\":%llu,\"total\":%llu,\"result\":\"%s\",\"code\":%d}", i,
         rc == CUDA_SUCCESS ? got : chunk, total, err_name(rc), rc);
  }
  size_t free_b = 0, total_b = 0;
  CHECK(cuMemGetInfo_v2, (&free_b, &total_b));
  emit("{\"event\":\"meminfo\",\"free\":%zu,\"total\":%zu}", free_b, total_b);
  while (hold && !g_stop) sleep_ms(100);
}

static void run_profile(const char *profile, int run, int hold) {
  if (!strcmp(profile, "hold")) profile_hold(run);
  else if (!strcmp(profile, "train")) profile_train(run);
  else if (!strcmp(profile, "infer")) profile_infer(run);
  else if (!strcmp(profile, "interactive")) profile_interactive(run);
  else profile_alloc(run, hold);
}

int main(int argc, char **argv) {
  const char *profile = NULL;
  int hold_flag = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--hold")) {
      hold_flag = 1;
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
  static const char *const profiles[] = {"hold", "train", "infer", "interactive", "alloc", NULL};
  int known = 0;
  for (const char *const *p = profiles; *p; p++) known |= !strcmp(*p, profile);
  if (!known) usage_error("unknown profile '%s'", profile);
  if (hold_flag && strcmp(profile, "alloc")) usage_error("--hold is an alloc option");
  const char *res = opt("resolve") ? opt("resolve") : "procaddress";
  if (strcmp(res, "symbol") && strcmp(res, "procaddress")) usage_error("bad --resolve '%s' (symbol or procaddress)", res);
  g_device = (int)num_opt("device", 0, 0, 1024);
  unsigned long long mem = opt("mem") ? parse_size("--mem", opt("mem")) : 0;
  run_profile(profile, 0, hold_flag); /* validate every option before touching the driver */

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  resolve(!strcmp(res, "procaddress"));
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CHECK(cuInit, (0));
  CHECK(cuDeviceGet, (&dev, g_device));
  CHECK(cuDevicePrimaryCtxRetain, (&ctx, dev));
  CHECK(cuCtxSetCurrent, (ctx));
  CHECK(cuModuleLoadData, (&mod, "fakejob image"));
  CHECK(cuModuleGetFunction, (&g_fn, mod, "fakejob_kernel"));
  CHECK(cuStreamCreate, (&g_stream, 0));
  if (mem) {
    CUdeviceptr p;
    CHECK(cuMemAlloc_v2, (&p, mem));
  }
  char name[128] = "";
  api.cuDeviceGetName(name, sizeof name, dev);
  emit("{\"event\":\"ready\",\"pid\":%d,\"device\":%d,\"name\":\"%s\",\"allocated\":%llu,\"resolve\":\"%s\"}",
       (int)getpid(), g_device, name, mem, res);
  g_t0 = now_ms();
  run_profile(profile, 1, hold_flag);
  finish();
  return 0;
}
