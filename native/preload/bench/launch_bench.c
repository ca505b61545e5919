/* launch_bench: ns per cuLaunchKernel of a 0-µs kernel, resolved through
 * cuGetProcAddress_v2 as the CUDA runtime does. Run with and without
 * LD_PRELOAD=libgpushare-preload.so to see what the hook costs.
 * usage: launch_bench [LAUNCHES] [REPEATS]  → one JSON line: ns per launch call,
 * and ns per kernel including the final synchronise (what the fake GPU needs
 * to run them: the honest figure for jobs that synchronise on their own).
 * Launches go in batches of 512, a synchronise after each (only the launch
 * calls are timed for the first figure). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../include/cuda_abi.h"

#define BATCH 512

/* an empty kernel k(u64) for a real driver, which cannot load the simulated driver's module name */
static const char EMPTY_KERNEL_PTX[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n";

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define GET(var, type, base)                                                                  \
  type var = NULL;                                                                            \
  do {                                                                                        \
    CUdriverProcAddressQueryResult st_;                                                       \
    if (gpa(base, (void **)&var, 12040, 0, &st_) != CUDA_SUCCESS || !var) {                   \
      printf("{\"error\":\"cannot resolve %s\"}\n", base);                                    \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

int main(int argc, char **argv) {
  long launches = argc > 1 ? atol(argv[1]) : 20000, repeats = argc > 2 ? atol(argv[2]) : 7;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return printf("{\"error\":\"libcuda.so.1 not found\"}\n"), 1;
  cuGetProcAddress_v2_fn gpa = (cuGetProcAddress_v2_fn)dlsym(lib, "cuGetProcAddress_v2");
  if (!gpa) return printf("{\"error\":\"no cuGetProcAddress_v2\"}\n"), 1;
  GET(init, cuInit_fn, "cuInit");
  GET(dev_get, cuDeviceGet_fn, "cuDeviceGet");
  GET(retain, cuDevicePrimaryCtxRetain_fn, "cuDevicePrimaryCtxRetain");
  GET(set_cur, cuCtxSetCurrent_fn, "cuCtxSetCurrent");
  GET(mod_load, cuModuleLoadData_fn, "cuModuleLoadData");
  GET(mod_fn, cuModuleGetFunction_fn, "cuModuleGetFunction");
  GET(stream_create, cuStreamCreate_fn, "cuStreamCreate");
  GET(stream_sync, cuStreamSynchronize_fn, "cuStreamSynchronize");
  GET(launch, cuLaunchKernel_fn, "cuLaunchKernel");
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CUstream s;
  if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set_cur(ctx) ||
      (mod_load(&mod, "bench") && mod_load(&mod, EMPTY_KERNEL_PTX)) ||
      mod_fn(&fn, mod, "k") || stream_create(&s, 0))
    return printf("{\"error\":\"setup failed\"}\n"), 1;
  unsigned long long us = 0;
  void *params[] = {&us};
  double *per = calloc((size_t)repeats, sizeof *per), *all = calloc((size_t)repeats, sizeof *all);
  for (long r = -1; r < repeats; r++) { /* r = -1: warm-up */
    double in_calls = 0, t0 = now_ns();
    /* batches under the driver's launch queue bound (1024 per stream): past it a launch waits for the GPU */
    for (long done = 0; done < launches; done += BATCH) {
      long n = launches - done < BATCH ? launches - done : BATCH;
      double b0 = now_ns();
      for (long i = 0; i < n; i++) launch(fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
      in_calls += now_ns() - b0;
      stream_sync(s);
    }
    double t2 = now_ns();
    if (r >= 0) per[r] = in_calls / (double)launches, all[r] = (t2 - t0) / (double)launches;
  }
  qsort(per, (size_t)repeats, sizeof *per, cmp);
  qsort(all, (size_t)repeats, sizeof *all, cmp);
  printf("{\"launches\":%ld,\"repeats\":%ld,\"nsPerLaunchMedian\":%.1f,\"nsPerLaunchMin\":%.1f,"
         "\"nsPerKernelWithSyncMedian\":%.1f}\n",
         launches, repeats, per[repeats / 2], per[0], all[repeats / 2]);
  return 0;
}
