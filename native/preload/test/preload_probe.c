/* preload_probe: a scripted CUDA driver-API user for the preload tests. It
 * resolves entry points like fakejob (dlsym or cuGetProcAddress_v2) and runs
 * the steps given on the command line, one JSON line per step (before them: --resolve symbol|procaddress,
 * --device N, --visible LIST: CUDA_VISIBLE_DEVICES set in its own environment before the first CUDA call):
 *   alloc:SIZE pitch:W:H managed:SIZE async:SIZE pool:SIZE vmm:SIZE
 *   free:I (the I-th allocation, with its matching free/release)
 *   meminfo totalmem nvml self wait (reads one line from stdin)
 *   launch:N:US launchex:N:US coop:N:US ptsz:N:US (N kernels of US µs, then a sync)
 *   launchq:N:US (N kernels of US µs, no sync: left queued) sync (cuCtxSynchronize)
 *   sleep:US (US µs of the program's own work: no CUDA call)
 *   map:I unmap:I (reserve a range and map the I-th vmm handle into it; unmap it)
 *   array:SIZE mipmap:SIZE (a 1-D float array of SIZE bytes; a 2-level mipmapped one: SIZE + SIZE/2)
 *   ctxnew ctxdestroy (a cuCtxCreate context, current; destroy it, primary current again)
 *   reset (cuDevicePrimaryCtxReset_v2, then retain the primary context again)
 *   catchbus (installs its own SIGBUS handler: it prints {"op":"caught"} and exits 7)
 *   bus (maps a file of its own, truncates it and reads it: a SIGBUS that is not the gate's)
 *   dtoa:I (cuMemcpyDtoA_v2 of 64 bytes from the I-th allocation into the first array:SIZE array)
 *   copies:I (every copy and memset variant, the 2D/3D, peer, batched and array copies, 2D memsets and prefetches included, once
 *     on the I-th allocation (>= 8 KiB) and the first two array:SIZE arrays (>= 64 bytes), one line each: its name,
 *     code and the library its entry point came from) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cuda_abi.h"
#include "../../include/nvml_abi.h"

#define VERSION 12040
#define MAX_ALLOCS 4096

static void *g_lib;
static cuGetProcAddress_v2_fn g_gpa;
static int g_by_proc = 1;

static void *resolve_at(const char *symbol, const char *base, int per_thread, int version) {
  if (!g_by_proc) return dlsym(g_lib, symbol);
  void *fn = NULL;
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
  if (g_gpa(base, &fn, version, flags, &st) != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS) return NULL;
  return fn;
}

static void *resolve(const char *symbol, const char *base, int per_thread) { return resolve_at(symbol, base, per_thread, VERSION); }

#define R(var, type, symbol, base, ptsz) type var = (type)resolve(symbol, base, ptsz)

static const char *lib_of(void *p) {
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname) return "?";
  const char *slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

static void caught_bus(int sig) {
  (void)sig;
  static const char line[] = "{\"op\":\"caught\"}\n";
  if (write(1, line, sizeof line - 1) < 0) _exit(8);
  _exit(7);
}

/* A read past the end of a truncated file of our own: SIGBUS, which the gate must leave to us. */
static int own_bus(void) {
  char path[] = "/tmp/gpushare-probe-bus-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return -1;
  unlink(path);
  volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED || ftruncate(fd, 0) != 0) return -1;
  return p[0];
}

/* ---- copies:I ---- */

#define COPY_BYTES 64
static const struct {
  const char *symbol, *base;
  int per_thread;
  int version; /* asked of cuGetProcAddress; 0: VERSION (an older one finds a variant a newer one replaced) */
} COPIES[] = {
    {"cuMemcpyHtoD_v2", "cuMemcpyHtoD", 0, 0},  {"cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoD", 1, 0},
    {"cuMemcpyDtoH_v2", "cuMemcpyDtoH", 0, 0},  {"cuMemcpyDtoH_v2_ptds", "cuMemcpyDtoH", 1, 0},
    {"cuMemcpyDtoD_v2", "cuMemcpyDtoD", 0, 0},  {"cuMemcpyDtoD_v2_ptds", "cuMemcpyDtoD", 1, 0},
    {"cuMemcpy", "cuMemcpy", 0, 0},  {"cuMemcpy_ptds", "cuMemcpy", 1, 0},
    {"cuMemcpyAsync", "cuMemcpyAsync", 0, 0},  {"cuMemcpyAsync_ptsz", "cuMemcpyAsync", 1, 0},
    {"cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync", 0, 0},  {"cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync", 1, 0},
    {"cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync", 0, 0},  {"cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpyDtoHAsync", 1, 0},
    {"cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync", 0, 0},  {"cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpyDtoDAsync", 1, 0},
    {"cuMemsetD8_v2", "cuMemsetD8", 0, 0},  {"cuMemsetD8_v2_ptds", "cuMemsetD8", 1, 0},
    {"cuMemsetD32_v2", "cuMemsetD32", 0, 0},  {"cuMemsetD32_v2_ptds", "cuMemsetD32", 1, 0},
    {"cuMemsetD8Async", "cuMemsetD8Async", 0, 0},  {"cuMemsetD8Async_ptsz", "cuMemsetD8Async", 1, 0},
    {"cuMemsetD32Async", "cuMemsetD32Async", 0, 0},  {"cuMemsetD32Async_ptsz", "cuMemsetD32Async", 1, 0},
    {"cuMemcpy2D_v2", "cuMemcpy2D", 0, 0},  {"cuMemcpy2D_v2_ptds", "cuMemcpy2D", 1, 0},
    {"cuMemcpy2DUnaligned_v2", "cuMemcpy2DUnaligned", 0, 0},  {"cuMemcpy2DUnaligned_v2_ptds", "cuMemcpy2DUnaligned", 1, 0},
    {"cuMemcpy2DAsync_v2", "cuMemcpy2DAsync", 0, 0},  {"cuMemcpy2DAsync_v2_ptsz", "cuMemcpy2DAsync", 1, 0},
    {"cuMemcpy3D_v2", "cuMemcpy3D", 0, 0},  {"cuMemcpy3D_v2_ptds", "cuMemcpy3D", 1, 0},
    {"cuMemcpy3DAsync_v2", "cuMemcpy3DAsync", 0, 0},  {"cuMemcpy3DAsync_v2_ptsz", "cuMemcpy3DAsync", 1, 0},
    {"cuMemcpyPeer", "cuMemcpyPeer", 0, 0},  {"cuMemcpyPeer_ptds", "cuMemcpyPeer", 1, 0},
    {"cuMemcpyPeerAsync", "cuMemcpyPeerAsync", 0, 0},  {"cuMemcpyPeerAsync_ptsz", "cuMemcpyPeerAsync", 1, 0},
    {"cuMemcpy3DPeer", "cuMemcpy3DPeer", 0, 0},  {"cuMemcpy3DPeer_ptds", "cuMemcpy3DPeer", 1, 0},
    {"cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 0, 0},  {"cuMemcpy3DPeerAsync_ptsz", "cuMemcpy3DPeerAsync", 1, 0},
    {"cuMemPrefetchAsync", "cuMemPrefetchAsync", 0, 11080},  {"cuMemPrefetchAsync_ptsz", "cuMemPrefetchAsync", 1, 11080},
    {"cuMemPrefetchAsync_v2", "cuMemPrefetchAsync", 0, 0},  {"cuMemPrefetchAsync_v2_ptsz", "cuMemPrefetchAsync", 1, 0},
    {"cuMemsetD16_v2", "cuMemsetD16", 0, 0},  {"cuMemsetD16_v2_ptds", "cuMemsetD16", 1, 0},
    {"cuMemsetD16Async", "cuMemsetD16Async", 0, 0},  {"cuMemsetD16Async_ptsz", "cuMemsetD16Async", 1, 0},
    {"cuMemsetD2D8_v2", "cuMemsetD2D8", 0, 0},  {"cuMemsetD2D8_v2_ptds", "cuMemsetD2D8", 1, 0},
    {"cuMemsetD2D8Async", "cuMemsetD2D8Async", 0, 0},  {"cuMemsetD2D8Async_ptsz", "cuMemsetD2D8Async", 1, 0},
    {"cuMemsetD2D16_v2", "cuMemsetD2D16", 0, 0},  {"cuMemsetD2D16_v2_ptds", "cuMemsetD2D16", 1, 0},
    {"cuMemsetD2D16Async", "cuMemsetD2D16Async", 0, 0},  {"cuMemsetD2D16Async_ptsz", "cuMemsetD2D16Async", 1, 0},
    {"cuMemsetD2D32_v2", "cuMemsetD2D32", 0, 0},  {"cuMemsetD2D32_v2_ptds", "cuMemsetD2D32", 1, 0},
    {"cuMemsetD2D32Async", "cuMemsetD2D32Async", 0, 0},  {"cuMemsetD2D32Async_ptsz", "cuMemsetD2D32Async", 1, 0},
    {"cuMemcpyBatchAsync", "cuMemcpyBatchAsync", 0, 12080},  {"cuMemcpyBatchAsync_ptsz", "cuMemcpyBatchAsync", 1, 12080},
    {"cuMemcpyBatchAsync_v2", "cuMemcpyBatchAsync", 0, 13000},  {"cuMemcpyBatchAsync_v2_ptsz", "cuMemcpyBatchAsync", 1, 13000},
    {"cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync", 0, 12080},  {"cuMemcpy3DBatchAsync_ptsz", "cuMemcpy3DBatchAsync", 1, 12080},
    {"cuMemcpy3DBatchAsync_v2", "cuMemcpy3DBatchAsync", 0, 13000},  {"cuMemcpy3DBatchAsync_v2_ptsz", "cuMemcpy3DBatchAsync", 1, 13000},
    {"cuMemcpyDtoA_v2", "cuMemcpyDtoA", 0, 0},  {"cuMemcpyDtoA_v2_ptds", "cuMemcpyDtoA", 1, 0},
    {"cuMemcpyAtoD_v2", "cuMemcpyAtoD", 0, 0},  {"cuMemcpyAtoD_v2_ptds", "cuMemcpyAtoD", 1, 0},
    {"cuMemcpyHtoA_v2", "cuMemcpyHtoA", 0, 0},  {"cuMemcpyHtoA_v2_ptds", "cuMemcpyHtoA", 1, 0},
    {"cuMemcpyAtoH_v2", "cuMemcpyAtoH", 0, 0},  {"cuMemcpyAtoH_v2_ptds", "cuMemcpyAtoH", 1, 0},
    {"cuMemcpyAtoA_v2", "cuMemcpyAtoA", 0, 0},  {"cuMemcpyAtoA_v2_ptds", "cuMemcpyAtoA", 1, 0},
    {"cuMemcpyHtoAAsync_v2", "cuMemcpyHtoAAsync", 0, 0},  {"cuMemcpyHtoAAsync_v2_ptsz", "cuMemcpyHtoAAsync", 1, 0},
    {"cuMemcpyAtoHAsync_v2", "cuMemcpyAtoHAsync", 0, 0},  {"cuMemcpyAtoHAsync_v2_ptsz", "cuMemcpyAtoHAsync", 1, 0},
};

/* The i-th entry of COPIES through fn: host buffer h, device d (its second 4 KiB the DtoD target), context ctx,
 * arrays a and a2 (copies to or from them are NOT_SUPPORTED in the simulated driver, after its lock wait). */
static CUresult copy_call(int i, void *fn, unsigned char *h, CUdeviceptr d, CUstream stream, CUcontext ctx, CUarray a, CUarray a2) {
  CUstream s = COPIES[i].per_thread ? NULL : stream; /* _ptsz: NULL is this thread's stream */
  CUdeviceptr hp = (CUdeviceptr)(uintptr_t)h;
  /* 2D: 4 rows of 16 bytes host to device; 3D and 3D peer: 2 slices of 2 such rows, device to device */
  CUDA_MEMCPY2D c2 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = h, .srcPitch = 16, .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                      .dstDevice = d, .dstPitch = 16, .WidthInBytes = 16, .Height = COPY_BYTES / 16};
  CUDA_MEMCPY3D c3 = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d, .srcPitch = 16, .srcHeight = 2,
                      .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = d + 4096, .dstPitch = 16, .dstHeight = 2,
                      .WidthInBytes = 16, .Height = 2, .Depth = COPY_BYTES / 32};
  CUDA_MEMCPY3D_PEER cp = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d, .srcContext = ctx, .srcPitch = 16, .srcHeight = 2,
                           .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = d + 4096, .dstContext = ctx, .dstPitch = 16,
                           .dstHeight = 2, .WidthInBytes = 16, .Height = 2, .Depth = COPY_BYTES / 32};
  CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  /* batches: host to device and device to device, in order on the stream; 3D: one row between two pointers */
  CUdeviceptr dsts[2] = {d, d + 4096}, srcs[2] = {hp, d + 64};
  size_t sizes[2] = {COPY_BYTES, COPY_BYTES}, idx[1] = {0}, fail;
  CUmemcpyAttributes at = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
  CUDA_MEMCPY3D_BATCH_OP op = {.src = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr = {.ptr = d, .rowLength = COPY_BYTES, .layerHeight = 1}},
                               .dst = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr = {.ptr = d + 4096, .rowLength = COPY_BYTES, .layerHeight = 1}},
                               .extent = {COPY_BYTES, 1, 1}, .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
  switch (i / 2) {
    case 0: return ((cuMemcpyHtoD_v2_fn)fn)(d, h, COPY_BYTES);
    case 1: return ((cuMemcpyDtoH_v2_fn)fn)(h, d, COPY_BYTES);
    case 2: return ((cuMemcpyDtoD_v2_fn)fn)(d + 4096, d, COPY_BYTES);
    case 3: return ((cuMemcpy_fn)fn)(d, hp, COPY_BYTES);
    case 4: return ((cuMemcpyAsync_fn)fn)(hp, d, COPY_BYTES, s);
    case 5: return ((cuMemcpyHtoDAsync_v2_fn)fn)(d, h, COPY_BYTES, s);
    case 6: return ((cuMemcpyDtoHAsync_v2_fn)fn)(h, d, COPY_BYTES, s);
    case 7: return ((cuMemcpyDtoDAsync_v2_fn)fn)(d + 4096, d, COPY_BYTES, s);
    case 8: return ((cuMemsetD8_v2_fn)fn)(d, 7, COPY_BYTES);
    case 9: return ((cuMemsetD32_v2_fn)fn)(d, 7, COPY_BYTES / 4);
    case 10: return ((cuMemsetD8Async_fn)fn)(d, 7, COPY_BYTES, s);
    case 11: return ((cuMemsetD32Async_fn)fn)(d, 7, COPY_BYTES / 4, s);
    case 12: return ((cuMemcpy2D_v2_fn)fn)(&c2);
    case 13: return ((cuMemcpy2DUnaligned_v2_fn)fn)(&c2);
    case 14: return ((cuMemcpy2DAsync_v2_fn)fn)(&c2, s);
    case 15: return ((cuMemcpy3D_v2_fn)fn)(&c3);
    case 16: return ((cuMemcpy3DAsync_v2_fn)fn)(&c3, s);
    case 17: return ((cuMemcpyPeer_fn)fn)(d + 4096, ctx, d, ctx, COPY_BYTES);
    case 18: return ((cuMemcpyPeerAsync_fn)fn)(d + 4096, ctx, d, ctx, COPY_BYTES, s);
    case 19: return ((cuMemcpy3DPeer_fn)fn)(&cp);
    case 20: return ((cuMemcpy3DPeerAsync_fn)fn)(&cp, s);
    case 21: return ((cuMemPrefetchAsync_fn)fn)(d, COPY_BYTES, 0, s);
    case 22: return ((cuMemPrefetchAsync_v2_fn)fn)(d, COPY_BYTES, dev0, 0, s);
    case 23: return ((cuMemsetD16_v2_fn)fn)(d, 7, COPY_BYTES / 2);
    case 24: return ((cuMemsetD16Async_fn)fn)(d, 7, COPY_BYTES / 2, s);
    case 25: return ((cuMemsetD2D8_v2_fn)fn)(d, 32, 7, 16, 2);
    case 26: return ((cuMemsetD2D8Async_fn)fn)(d, 32, 7, 16, 2, s);
    case 27: return ((cuMemsetD2D16_v2_fn)fn)(d, 32, 7, 8, 2);
    case 28: return ((cuMemsetD2D16Async_fn)fn)(d, 32, 7, 8, 2, s);
    case 29: return ((cuMemsetD2D32_v2_fn)fn)(d, 32, 7, 4, 2);
    case 30: return ((cuMemsetD2D32Async_fn)fn)(d, 32, 7, 4, 2, s);
    case 31: return ((cuMemcpyBatchAsync_fn)fn)(dsts, srcs, sizes, 2, &at, idx, 1, &fail, s);
    case 32: return ((cuMemcpyBatchAsync_v2_fn)fn)(dsts, srcs, sizes, 2, &at, idx, 1, s);
    case 33: return ((cuMemcpy3DBatchAsync_fn)fn)(1, &op, &fail, 0, s);
    case 34: return ((cuMemcpy3DBatchAsync_v2_fn)fn)(1, &op, 0, s);
    case 35: return ((cuMemcpyDtoA_v2_fn)fn)(a, 0, d, COPY_BYTES);
    case 36: return ((cuMemcpyAtoD_v2_fn)fn)(d, a, 0, COPY_BYTES);
    case 37: return ((cuMemcpyHtoA_v2_fn)fn)(a, 0, h, COPY_BYTES);
    case 38: return ((cuMemcpyAtoH_v2_fn)fn)(h, a, 0, COPY_BYTES);
    case 39: return ((cuMemcpyAtoA_v2_fn)fn)(a2, 0, a, 0, COPY_BYTES);
    case 40: return ((cuMemcpyHtoAAsync_v2_fn)fn)(a, 0, h, COPY_BYTES, s);
    case 41: return ((cuMemcpyAtoHAsync_v2_fn)fn)(h, a, 0, COPY_BYTES, s);
    default: return CUDA_ERROR_NOT_FOUND;
  }
}

static void copies(CUdeviceptr d, CUstream stream, CUcontext ctx, CUarray a, CUarray a2) {
  static unsigned char h[COPY_BYTES];
  for (int i = 0; i < (int)(sizeof COPIES / sizeof COPIES[0]); i++) {
    void *fn = resolve_at(COPIES[i].symbol, COPIES[i].base, COPIES[i].per_thread, COPIES[i].version ? COPIES[i].version : VERSION);
    CUresult rc = fn ? copy_call(i, fn, h, d, stream, ctx, a, a2) : CUDA_ERROR_NOT_FOUND;
    printf("{\"op\":\"copy\",\"name\":\"%s\",\"code\":%d,\"from\":\"%s\"}\n", COPIES[i].symbol, rc, lib_of(fn));
  }
}

typedef struct {
  char kind[8];
  unsigned long long key, bytes, va;
} alloc_t;

int main(int argc, char **argv) {
  int first = 1, device = 0;
  for (; first + 1 < argc && !strncmp(argv[first], "--", 2); first += 2) {
    if (!strcmp(argv[first], "--resolve")) g_by_proc = strcmp(argv[first + 1], "symbol") != 0;
    else if (!strcmp(argv[first], "--device")) device = atoi(argv[first + 1]);
    /* as a Python program's os.environ does before its first CUDA call: /proc/PID/environ keeps what it started with */
    else if (!strcmp(argv[first], "--visible")) setenv("CUDA_VISIBLE_DEVICES", argv[first + 1], 1);
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  g_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!g_lib) return printf("{\"op\":\"error\",\"what\":\"dlopen\"}\n"), 1;
  g_gpa = (cuGetProcAddress_v2_fn)dlsym(g_lib, "cuGetProcAddress_v2");
  if (!g_gpa) return printf("{\"op\":\"error\",\"what\":\"cuGetProcAddress_v2\"}\n"), 1;
  R(init, cuInit_fn, "cuInit", "cuInit", 0);
  R(dev_get, cuDeviceGet_fn, "cuDeviceGet", "cuDeviceGet", 0);
  R(retain, cuDevicePrimaryCtxRetain_fn, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 0);
  R(set_cur, cuCtxSetCurrent_fn, "cuCtxSetCurrent", "cuCtxSetCurrent", 0);
  R(mem_alloc, cuMemAlloc_v2_fn, "cuMemAlloc_v2", "cuMemAlloc", 0);
  R(mem_pitch, cuMemAllocPitch_v2_fn, "cuMemAllocPitch_v2", "cuMemAllocPitch", 0);
  R(mem_managed, cuMemAllocManaged_fn, "cuMemAllocManaged", "cuMemAllocManaged", 0);
  R(mem_async, cuMemAllocAsync_fn, "cuMemAllocAsync", "cuMemAllocAsync", 0);
  R(pool_create, cuMemPoolCreate_fn, "cuMemPoolCreate", "cuMemPoolCreate", 0);
  R(mem_pool, cuMemAllocFromPoolAsync_fn, "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", 0);
  R(mem_create, cuMemCreate_fn, "cuMemCreate", "cuMemCreate", 0);
  R(mem_release, cuMemRelease_fn, "cuMemRelease", "cuMemRelease", 0);
  R(mem_free, cuMemFree_v2_fn, "cuMemFree_v2", "cuMemFree", 0);
  R(mem_free_async, cuMemFreeAsync_fn, "cuMemFreeAsync", "cuMemFreeAsync", 0);
  R(mem_info, cuMemGetInfo_v2_fn, "cuMemGetInfo_v2", "cuMemGetInfo", 0);
  R(total_mem, cuDeviceTotalMem_v2_fn, "cuDeviceTotalMem_v2", "cuDeviceTotalMem", 0);
  R(mod_load, cuModuleLoadData_fn, "cuModuleLoadData", "cuModuleLoadData", 0);
  R(mod_fn, cuModuleGetFunction_fn, "cuModuleGetFunction", "cuModuleGetFunction", 0);
  R(stream_create, cuStreamCreate_fn, "cuStreamCreate", "cuStreamCreate", 0);
  R(stream_sync, cuStreamSynchronize_fn, "cuStreamSynchronize", "cuStreamSynchronize", 0);
  R(launch, cuLaunchKernel_fn, "cuLaunchKernel", "cuLaunchKernel", 0);
  R(launch_ptsz, cuLaunchKernel_ptsz_fn, "cuLaunchKernel_ptsz", "cuLaunchKernel", 1);
  R(launch_ex, cuLaunchKernelEx_fn, "cuLaunchKernelEx", "cuLaunchKernelEx", 0);
  R(launch_coop, cuLaunchCooperativeKernel_fn, "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 0);
  R(sync_ptsz, cuStreamSynchronize_ptsz_fn, "cuStreamSynchronize_ptsz", "cuStreamSynchronize", 1);
  R(ctx_sync, cuCtxSynchronize_fn, "cuCtxSynchronize", "cuCtxSynchronize", 0);
  R(va_reserve, cuMemAddressReserve_fn, "cuMemAddressReserve", "cuMemAddressReserve", 0);
  R(mem_map, cuMemMap_fn, "cuMemMap", "cuMemMap", 0);
  R(mem_unmap, cuMemUnmap_fn, "cuMemUnmap", "cuMemUnmap", 0);
  R(array_create, cuArrayCreate_v2_fn, "cuArrayCreate_v2", "cuArrayCreate", 0);
  R(array_destroy, cuArrayDestroy_fn, "cuArrayDestroy", "cuArrayDestroy", 0);
  R(mipmap_create, cuMipmappedArrayCreate_fn, "cuMipmappedArrayCreate", "cuMipmappedArrayCreate", 0);
  R(mipmap_destroy, cuMipmappedArrayDestroy_fn, "cuMipmappedArrayDestroy", "cuMipmappedArrayDestroy", 0);
  R(ctx_create, cuCtxCreate_v2_fn, "cuCtxCreate_v2", "cuCtxCreate", 0);
  R(ctx_destroy, cuCtxDestroy_v2_fn, "cuCtxDestroy_v2", "cuCtxDestroy", 0);
  R(primary_reset, cuDevicePrimaryCtxReset_v2_fn, "cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset", 0);
  CUcontext own_ctx = NULL;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CUstream stream;
  CUmemoryPool pool = NULL;
  if (!init || init(0) || dev_get(&dev, device) || retain(&ctx, dev) || set_cur(ctx) || mod_load(&mod, "probe") ||
      mod_fn(&fn, mod, "probe_kernel") || stream_create(&stream, 0))
    return printf("{\"op\":\"error\",\"what\":\"setup\"}\n"), 1;
  printf("{\"op\":\"ready\",\"pid\":%d,\"resolve\":\"%s\",\"memAllocFrom\":\"%s\"}\n", (int)getpid(),
         g_by_proc ? "procaddress" : "symbol", lib_of((void *)mem_alloc));
  static alloc_t allocs[MAX_ALLOCS];
  int nallocs = 0;
  for (int a = first; a < argc; a++) {
    char op[32] = "";
    unsigned long long x = 0, y = 0;
    sscanf(argv[a], "%31[a-z]:%llu:%llu", op, &x, &y);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr p = 0;
    if (!strcmp(op, "alloc") || !strcmp(op, "managed") || !strcmp(op, "async") || !strcmp(op, "pool") ||
        !strcmp(op, "vmm") || !strcmp(op, "pitch") || !strcmp(op, "array") || !strcmp(op, "mipmap")) {
      unsigned long long key = 0, bytes = x;
      if (!strcmp(op, "alloc")) rc = mem_alloc(&p, x);
      else if (!strcmp(op, "managed")) rc = mem_managed(&p, x, 1);
      else if (!strcmp(op, "async")) rc = mem_async(&p, x, stream);
      else if (!strcmp(op, "pitch")) {
        size_t pitch = 0;
        rc = mem_pitch(&p, &pitch, x, y, 4);
        bytes = (unsigned long long)pitch * y;
      } else if (!strcmp(op, "array")) {
        CUDA_ARRAY_DESCRIPTOR d = {x / 4, 0, CU_AD_FORMAT_FLOAT, 1};
        CUarray a = NULL;
        rc = array_create(&a, &d);
        p = (CUdeviceptr)a;
      } else if (!strcmp(op, "mipmap")) {
        CUDA_ARRAY3D_DESCRIPTOR d = {x / 4, 0, 0, CU_AD_FORMAT_FLOAT, 1, 0};
        CUmipmappedArray a = NULL;
        rc = mipmap_create(&a, &d, 2);
        p = (CUdeviceptr)a;
        bytes = x + x / 2;
      } else if (!strcmp(op, "pool")) {
        if (!pool) {
          CUmemPoolProps props;
          memset(&props, 0, sizeof props);
          props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
          props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
          props.location.id = device;
          pool_create(&pool, &props);
        }
        rc = mem_pool(&p, x, pool, stream);
      } else {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        CUmemGenericAllocationHandle h = 0;
        rc = mem_create(&h, x, &prop, 0);
        key = h;
      }
      if (strcmp(op, "vmm")) key = p;
      int index = -1;
      if (rc == CUDA_SUCCESS && nallocs < MAX_ALLOCS) {
        index = nallocs++;
        snprintf(allocs[index].kind, sizeof allocs[index].kind, "%s", op);
        allocs[index].key = key;
        allocs[index].bytes = bytes;
      }
      printf("{\"op\":\"%s\",\"index\":%d,\"bytes\":%llu,\"code\":%d}\n", op, index, bytes, rc);
    } else if (!strcmp(op, "free")) {
      if (x < (unsigned long long)nallocs) {
        alloc_t *al = &allocs[x];
        if (!strcmp(al->kind, "vmm")) rc = mem_release(al->key);
        else if (!strcmp(al->kind, "array")) rc = array_destroy((CUarray)(uintptr_t)al->key);
        else if (!strcmp(al->kind, "mipmap")) rc = mipmap_destroy((CUmipmappedArray)(uintptr_t)al->key);
        else if (!strcmp(al->kind, "async") || !strcmp(al->kind, "pool")) rc = mem_free_async(al->key, stream);
        else rc = mem_free(al->key);
      }
      printf("{\"op\":\"free\",\"index\":%llu,\"code\":%d}\n", x, rc);
    } else if (!strcmp(op, "meminfo")) {
      size_t f = 0, t = 0;
      rc = mem_info(&f, &t);
      printf("{\"op\":\"meminfo\",\"free\":%zu,\"total\":%zu,\"code\":%d}\n", f, t, rc);
    } else if (!strcmp(op, "totalmem")) {
      size_t t = 0;
      rc = total_mem(&t, dev);
      printf("{\"op\":\"totalmem\",\"total\":%zu,\"code\":%d}\n", t, rc);
    } else if (!strcmp(op, "nvml")) {
      void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
      nvmlInit_v2_fn ninit = nv ? (nvmlInit_v2_fn)dlsym(nv, "nvmlInit_v2") : NULL;
      nvmlDeviceGetHandleByIndex_v2_fn nget = nv ? (nvmlDeviceGetHandleByIndex_v2_fn)dlsym(nv, "nvmlDeviceGetHandleByIndex_v2") : NULL;
      nvmlDeviceGetMemoryInfo_fn ninfo = nv ? (nvmlDeviceGetMemoryInfo_fn)dlsym(nv, "nvmlDeviceGetMemoryInfo") : NULL;
      nvmlDeviceGetMemoryInfo_v2_fn ninfo2 = nv ? (nvmlDeviceGetMemoryInfo_v2_fn)dlsym(nv, "nvmlDeviceGetMemoryInfo_v2") : NULL;
      nvmlDevice_t h = NULL;
      nvmlMemory_t m1 = {0, 0, 0};
      nvmlMemory_v2_t m2;
      memset(&m2, 0, sizeof m2);
      m2.version = nvmlMemory_v2;
      int r0 = ninit ? ninit() : -1, r1 = -1, r2 = -1;
      if (r0 == 0 && nget && nget((unsigned)device, &h) == 0) {
        r1 = ninfo ? ninfo(h, &m1) : -1;
        r2 = ninfo2 ? ninfo2(h, &m2) : -1;
      }
      printf("{\"op\":\"nvml\",\"code\":%d,\"total\":%llu,\"free\":%llu,\"used\":%llu,\"code2\":%d,\"total2\":%llu,"
             "\"free2\":%llu,\"used2\":%llu}\n",
             r1, m1.total, m1.free, m1.used, r2, m2.total, m2.free, m2.used);
    } else if (!strcmp(op, "self")) {
      void *got = NULL;
      CUdriverProcAddressQueryResult st;
      rc = g_gpa("cuGetProcAddress", &got, VERSION, 0, &st);
      printf("{\"op\":\"self\",\"code\":%d,\"from\":\"%s\",\"sameAsDlsym\":%s,\"memAllocFrom\":\"%s\","
             "\"launchFrom\":\"%s\",\"launchPtszFrom\":\"%s\"}\n",
             rc, lib_of(got), got == (void *)g_gpa ? "true" : "false", lib_of((void *)mem_alloc),
             lib_of((void *)launch), lib_of((void *)launch_ptsz));
    } else if (!strcmp(op, "copies")) {
      if (x >= (unsigned long long)nallocs || strcmp(allocs[x].kind, "alloc") || allocs[x].bytes < 8192) {
        printf("{\"op\":\"error\",\"what\":\"copies:%llu needs an alloc of 8 KiB or more\"}\n", x);
        return 2;
      }
      CUarray arrays[2] = {NULL, NULL}; /* the first two array:SIZE allocations, for the array copies */
      for (int i = 0, n = 0; i < nallocs && n < 2; i++)
        if (!strcmp(allocs[i].kind, "array")) arrays[n++] = (CUarray)(uintptr_t)allocs[i].key;
      copies(allocs[x].key, stream, ctx, arrays[0], arrays[1]);
      printf("{\"op\":\"copies\"}\n");
      continue;
    } else if (!strcmp(op, "dtoa")) { /* a parked program's first call may be a copy into an array */
      CUarray arr = NULL;
      for (int i = 0; i < nallocs && !arr; i++)
        if (!strcmp(allocs[i].kind, "array")) arr = (CUarray)(uintptr_t)allocs[i].key;
      R(dtoa, cuMemcpyDtoA_v2_fn, "cuMemcpyDtoA_v2", "cuMemcpyDtoA", 0);
      rc = x < (unsigned long long)nallocs && dtoa ? dtoa(arr, 0, allocs[x].key, 64) : CUDA_ERROR_INVALID_VALUE;
      printf("{\"op\":\"dtoa\",\"code\":%d,\"from\":\"%s\"}\n", rc, lib_of((void *)dtoa));
      continue;
    } else if (!strcmp(op, "wait")) {
      char line[64];
      if (!fgets(line, sizeof line, stdin)) line[0] = 0;
      printf("{\"op\":\"wait\"}\n");
      continue;
    } else if (!strcmp(op, "map") || !strcmp(op, "unmap")) {
      if (x < (unsigned long long)nallocs && !strcmp(allocs[x].kind, "vmm")) {
        alloc_t *al = &allocs[x];
        if (!strcmp(op, "unmap")) rc = mem_unmap(al->va, al->bytes);
        else {
          CUdeviceptr va = 0;
          rc = va_reserve(&va, al->bytes, 0, 0, 0);
          if (rc == CUDA_SUCCESS) rc = mem_map(va, al->bytes, 0, al->key, 0);
          if (rc == CUDA_SUCCESS) al->va = va;
        }
      }
      printf("{\"op\":\"%s\",\"index\":%llu,\"code\":%d}\n", op, x, rc);
    } else if (!strcmp(op, "ctxnew")) {
      rc = ctx_create(&own_ctx, 0, dev);
      printf("{\"op\":\"ctxnew\",\"code\":%d}\n", rc);
    } else if (!strcmp(op, "ctxdestroy")) {
      rc = ctx_destroy(own_ctx);
      set_cur(ctx);
      printf("{\"op\":\"ctxdestroy\",\"code\":%d}\n", rc);
    } else if (!strcmp(op, "reset")) {
      rc = primary_reset(dev);
      if (rc == CUDA_SUCCESS) rc = retain(&ctx, dev);
      if (rc == CUDA_SUCCESS) rc = set_cur(ctx);
      printf("{\"op\":\"reset\",\"code\":%d}\n", rc);
    } else if (!strcmp(op, "catchbus")) {
      signal(SIGBUS, caught_bus);
      printf("{\"op\":\"catchbus\"}\n");
    } else if (!strcmp(op, "bus")) {
      printf("{\"op\":\"bus\",\"read\":%d}\n", own_bus());
    } else if (!strcmp(op, "sleep")) { /* the program's own work between kernels: no CUDA call */
      struct timespec ts = {(time_t)(x / 1000000ull), (long)(x % 1000000ull) * 1000L};
      nanosleep(&ts, NULL);
      printf("{\"op\":\"sleep\",\"us\":%llu}\n", x);
    } else if (!strcmp(op, "sync")) {
      rc = ctx_sync();
      printf("{\"op\":\"sync\",\"code\":%d}\n", rc);
    } else if (!strcmp(op, "launchq")) {
      unsigned long long us = y;
      void *params[] = {&us};
      rc = CUDA_SUCCESS;
      for (unsigned long long i = 0; i < x && rc == CUDA_SUCCESS; i++) rc = launch(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL);
      printf("{\"op\":\"launchq\",\"kernels\":%llu,\"code\":%d}\n", x, rc);
    } else if (!strcmp(op, "launch") || !strcmp(op, "launchex") || !strcmp(op, "coop") || !strcmp(op, "ptsz")) {
      unsigned long long us = y;
      void *params[] = {&us};
      CUlaunchConfig cfg;
      memset(&cfg, 0, sizeof cfg);
      cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
      cfg.hStream = stream;
      rc = CUDA_SUCCESS;
      for (unsigned long long i = 0; i < x && rc == CUDA_SUCCESS; i++) {
        if (!strcmp(op, "launch")) rc = launch(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL);
        else if (!strcmp(op, "launchex")) rc = launch_ex(&cfg, fn, params, NULL);
        else if (!strcmp(op, "coop")) rc = launch_coop(fn, 1, 1, 1, 1, 1, 1, 0, stream, params);
        else rc = launch_ptsz(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
      }
      CUresult src = !strcmp(op, "ptsz") ? sync_ptsz(NULL) : stream_sync(stream);
      printf("{\"op\":\"%s\",\"kernels\":%llu,\"code\":%d,\"syncCode\":%d}\n", op, x, rc, src);
    } else {
      printf("{\"op\":\"error\",\"what\":\"unknown step %s\"}\n", argv[a]);
      return 2;
    }
  }
  printf("{\"op\":\"done\"}\n");
  return 0;
}
