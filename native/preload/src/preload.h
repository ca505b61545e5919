/* libgpushare-preload.so internals: the hook table, the memory quota and the
 * launch gate. Everything here is hidden; only the hooked entry points (and
 * dlsym) are exported. */
#ifndef GS_PRELOAD_H
#define GS_PRELOAD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../../include/cuda_abi.h"
#include "../../include/gate_abi.h"
#include "../../include/nvml_abi.h"

#define GS_HIDDEN __attribute__((visibility("hidden")))
#define GS_TLS __thread __attribute__((tls_model("initial-exec")))
/* Export our hook under the driver's name, for programs linked against it (in the file that defines it). */
#define GS_EXPORT_ALIAS(name) \
  extern __typeof__(hook_##name) name __attribute__((alias("hook_" #name), visibility("default")));
#define GS_EXPORT_ROW(name, base, ver, ptsz, lib) GS_EXPORT_ALIAS(name)
#define GS_LIKELY(x) __builtin_expect(!!(x), 1)
#define GS_UNLIKELY(x) __builtin_expect(!!(x), 0)


enum { GS_LIB_CUDA = 0, GS_LIB_NVML = 1, GS_LIBS };

/* THE hook table: every intercepted entry point, one row each.
 * X(exported symbol, base name asked of cuGetProcAddress, first CUDA version,
 *   per-thread-default-stream variant?, library)
 * A new hook is one row here plus its hook_<symbol> function. */
#define GS_HOOKS(X) GS_HOOKS_CORE(X) GS_HOOKS_MEMORY(X) GS_HOOKS_GRAPH(X)
/* hooks_cuda.c: allocations, memory info, launches, synchronisations */
#define GS_HOOKS_CORE(X) \
  X(cuGetProcAddress, cuGetProcAddress, 11030, 0, GS_LIB_CUDA)  \
  X(cuGetProcAddress_v2, cuGetProcAddress, 12000, 0, GS_LIB_CUDA)  \
  X(cuMemAlloc_v2, cuMemAlloc, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemAllocPitch_v2, cuMemAllocPitch, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemAllocManaged, cuMemAllocManaged, 6000, 0, GS_LIB_CUDA)  \
  X(cuMemAllocAsync, cuMemAllocAsync, 11020, 0, GS_LIB_CUDA)  \
  X(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, 1, GS_LIB_CUDA)  \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, 0, GS_LIB_CUDA)  \
  X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, 11020, 1, GS_LIB_CUDA)  \
  X(cuMemCreate, cuMemCreate, 10020, 0, GS_LIB_CUDA)  \
  X(cuMemRelease, cuMemRelease, 10020, 0, GS_LIB_CUDA)  \
  X(cuMemFree_v2, cuMemFree, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemFreeAsync, cuMemFreeAsync, 11020, 0, GS_LIB_CUDA)  \
  X(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, 1, GS_LIB_CUDA)  \
  X(cuMemGetInfo_v2, cuMemGetInfo, 3020, 0, GS_LIB_CUDA)  \
  X(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, 0, GS_LIB_CUDA)  \
  X(cuLaunchKernel, cuLaunchKernel, 4000, 0, GS_LIB_CUDA)  \
  X(cuLaunchKernel_ptsz, cuLaunchKernel, 7000, 1, GS_LIB_CUDA)  \
  X(cuLaunchKernelEx, cuLaunchKernelEx, 11060, 0, GS_LIB_CUDA)  \
  X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx, 11060, 1, GS_LIB_CUDA)  \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 9000, 0, GS_LIB_CUDA)  \
  X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel, 9000, 1, GS_LIB_CUDA)  \
  X(cuGraphLaunch, cuGraphLaunch, 10000, 0, GS_LIB_CUDA)  \
  X(cuGraphLaunch_ptsz, cuGraphLaunch, 10000, 1, GS_LIB_CUDA)  \
  X(cuCtxSynchronize, cuCtxSynchronize, 2000, 0, GS_LIB_CUDA)  \
  X(cuStreamSynchronize, cuStreamSynchronize, 2000, 0, GS_LIB_CUDA)  \
  X(cuStreamSynchronize_ptsz, cuStreamSynchronize, 7000, 1, GS_LIB_CUDA)  \
  X(nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo, 0, 0, GS_LIB_NVML)  \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlDeviceGetMemoryInfo_v2, 0, 0, GS_LIB_NVML)
/* hooks_memory.c: VMM mappings, arrays, contexts, copies (2D/3D, peer, batched, to and from arrays), memsets (2D too) and prefetches (every stream variant) */
#define GS_HOOKS_MEMORY(X) \
  X(cuMemMap, cuMemMap, 10020, 0, GS_LIB_CUDA)  \
  X(cuMemUnmap, cuMemUnmap, 10020, 0, GS_LIB_CUDA)  \
  X(cuArrayCreate_v2, cuArrayCreate, 3020, 0, GS_LIB_CUDA)  \
  X(cuArray3DCreate_v2, cuArray3DCreate, 3020, 0, GS_LIB_CUDA)  \
  X(cuArrayDestroy, cuArrayDestroy, 2000, 0, GS_LIB_CUDA)  \
  X(cuMipmappedArrayCreate, cuMipmappedArrayCreate, 5000, 0, GS_LIB_CUDA)  \
  X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, 5000, 0, GS_LIB_CUDA)  \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, 0, GS_LIB_CUDA)  \
  X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset, 7000, 0, GS_LIB_CUDA)  \
  X(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset, 11000, 0, GS_LIB_CUDA)  \
  X(cuCtxDestroy_v2, cuCtxDestroy, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpyHtoD_v2, cuMemcpyHtoD, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyDtoH_v2, cuMemcpyDtoH, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyDtoD_v2, cuMemcpyDtoD, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD8_v2, cuMemsetD8, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD32_v2, cuMemsetD32, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD8_v2_ptds, cuMemsetD8, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD32_v2_ptds, cuMemsetD32, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy, cuMemcpy, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpy_ptds, cuMemcpy, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyAsync, cuMemcpyAsync, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpyAsync_ptsz, cuMemcpyAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD8Async, cuMemsetD8Async, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD8Async_ptsz, cuMemsetD8Async, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD32Async, cuMemsetD32Async, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD32Async_ptsz, cuMemsetD32Async, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy2D_v2, cuMemcpy2D, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpy2D_v2_ptds, cuMemcpy2D, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2DUnaligned, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy2DAsync_v2, cuMemcpy2DAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpy2DAsync_v2_ptsz, cuMemcpy2DAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy3D_v2, cuMemcpy3D, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpy3D_v2_ptds, cuMemcpy3D, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy3DAsync_v2, cuMemcpy3DAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpy3DAsync_v2_ptsz, cuMemcpy3DAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyPeer, cuMemcpyPeer, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpyPeer_ptds, cuMemcpyPeer, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyPeerAsync, cuMemcpyPeerAsync, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpyPeerAsync_ptsz, cuMemcpyPeerAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy3DPeer, cuMemcpy3DPeer, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpy3DPeer_ptds, cuMemcpy3DPeer, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync, 4000, 0, GS_LIB_CUDA)  \
  X(cuMemcpy3DPeerAsync_ptsz, cuMemcpy3DPeerAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemPrefetchAsync, cuMemPrefetchAsync, 8000, 0, GS_LIB_CUDA)  \
  X(cuMemPrefetchAsync_ptsz, cuMemPrefetchAsync, 8000, 1, GS_LIB_CUDA)  \
  X(cuMemPrefetchAsync_v2, cuMemPrefetchAsync, 12020, 0, GS_LIB_CUDA)  \
  X(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync, 12020, 1, GS_LIB_CUDA)  \
  X(cuMemsetD16_v2, cuMemsetD16, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD16_v2_ptds, cuMemsetD16, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD16Async, cuMemsetD16Async, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD16Async_ptsz, cuMemsetD16Async, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD2D8_v2, cuMemsetD2D8, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD2D8_v2_ptds, cuMemsetD2D8, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD2D8Async, cuMemsetD2D8Async, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD2D16_v2, cuMemsetD2D16, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD2D16_v2_ptds, cuMemsetD2D16, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD2D16Async, cuMemsetD2D16Async, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD2D32_v2, cuMemsetD2D32, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD2D32_v2_ptds, cuMemsetD2D32, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemsetD2D32Async, cuMemsetD2D32Async, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyBatchAsync, cuMemcpyBatchAsync, 12080, 0, GS_LIB_CUDA)  \
  X(cuMemcpyBatchAsync_ptsz, cuMemcpyBatchAsync, 12080, 1, GS_LIB_CUDA)  \
  X(cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync, 13000, 0, GS_LIB_CUDA)  \
  X(cuMemcpyBatchAsync_v2_ptsz, cuMemcpyBatchAsync, 13000, 1, GS_LIB_CUDA)  \
  X(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync, 12080, 0, GS_LIB_CUDA)  \
  X(cuMemcpy3DBatchAsync_ptsz, cuMemcpy3DBatchAsync, 12080, 1, GS_LIB_CUDA)  \
  X(cuMemcpy3DBatchAsync_v2, cuMemcpy3DBatchAsync, 13000, 0, GS_LIB_CUDA)  \
  X(cuMemcpy3DBatchAsync_v2_ptsz, cuMemcpy3DBatchAsync, 13000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyDtoA_v2, cuMemcpyDtoA, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyDtoA_v2_ptds, cuMemcpyDtoA, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyAtoD_v2, cuMemcpyAtoD, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyAtoD_v2_ptds, cuMemcpyAtoD, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyHtoA_v2, cuMemcpyHtoA, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyHtoA_v2_ptds, cuMemcpyHtoA, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyAtoH_v2, cuMemcpyAtoH, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyAtoH_v2_ptds, cuMemcpyAtoH, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyAtoA_v2, cuMemcpyAtoA, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyAtoA_v2_ptds, cuMemcpyAtoA, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyHtoAAsync_v2, cuMemcpyHtoAAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyHtoAAsync_v2_ptsz, cuMemcpyHtoAAsync, 7000, 1, GS_LIB_CUDA)  \
  X(cuMemcpyAtoHAsync_v2, cuMemcpyAtoHAsync, 3020, 0, GS_LIB_CUDA)  \
  X(cuMemcpyAtoHAsync_v2_ptsz, cuMemcpyAtoHAsync, 7000, 1, GS_LIB_CUDA)
/* hooks_graph.c: stream capture, graphs and their memory */
#define GS_HOOKS_GRAPH(X) \
  X(cuStreamBeginCapture, cuStreamBeginCapture, 10000, 0, GS_LIB_CUDA)  \
  X(cuStreamBeginCapture_ptsz, cuStreamBeginCapture, 10000, 1, GS_LIB_CUDA)  \
  X(cuStreamBeginCapture_v2, cuStreamBeginCapture, 10010, 0, GS_LIB_CUDA)  \
  X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture, 10010, 1, GS_LIB_CUDA)  \
  X(cuStreamEndCapture, cuStreamEndCapture, 10000, 0, GS_LIB_CUDA)  \
  X(cuStreamEndCapture_ptsz, cuStreamEndCapture, 10000, 1, GS_LIB_CUDA)  \
  X(cuStreamDestroy_v2, cuStreamDestroy, 4000, 0, GS_LIB_CUDA)  \
  X(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode, 11040, 0, GS_LIB_CUDA)  \
  X(cuGraphInstantiate, cuGraphInstantiate, 10000, 0, GS_LIB_CUDA)  \
  X(cuGraphInstantiate_v2, cuGraphInstantiate, 11000, 0, GS_LIB_CUDA)  \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags, 11040, 0, GS_LIB_CUDA)  \
  X(cuGraphDestroy, cuGraphDestroy, 10000, 0, GS_LIB_CUDA)  \
  X(cuGraphExecDestroy, cuGraphExecDestroy, 10000, 0, GS_LIB_CUDA)  \
  X(cuDeviceGraphMemTrim, cuDeviceGraphMemTrim, 11040, 0, GS_LIB_CUDA)

#define GS_HOOK_ENUM(name, base, ver, ptsz, lib) GS_HOOK_##name,
enum { GS_HOOKS(GS_HOOK_ENUM) GS_HOOK_COUNT };
#undef GS_HOOK_ENUM

/* hooks.c: the real entry point behind a row (resolved lazily), or NULL. */
GS_HIDDEN void *gs_real(int row);
#define REAL(name) ((name##_fn)gs_real(GS_HOOK_##name))
/* The hook for what cuGetProcAddress returned for `symbol` (or p itself). */
GS_HIDDEN void *gs_wrap_proc(const char *symbol, void *p, int version, cuuint64_t flags);
/* A driver entry point we do not hook (cuStreamIsCapturing, say), or NULL. */
GS_HIDDEN void *gs_driver_sym(const char *name);
GS_HIDDEN int gs_debug(void);
GS_HIDDEN void gs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Nonzero while this thread is inside one of our hooks: a driver that calls
 * its own exported entry points must not be counted or gated twice. */
extern GS_HIDDEN GS_TLS int gs_depth;
/* Nonzero while this thread is in a hook that is not the CUDA driver's (NVML): no enrolment from there (gate.c). */
extern GS_HIDDEN GS_TLS int gs_no_enrol;

static inline uint64_t gs_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no system call */
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* quota.c: the hard memory quota: the job's (through its gate slot), else this process's. */
GS_HIDDEN uint64_t gs_quota_limit(void); /* GATE_NO_QUOTA when none */
GS_HIDDEN uint64_t gs_quota_used(void);
/* What a process is told of its memory on its GPU (cuMemGetInfo, cuDeviceTotalMem, NVML): its quota and what of it is
 * used. A job on N GPUs (GPUSHARE_JOB_GPUS) is held to N times its per-GPU quota together; each process is told one
 * GPU's share, less what it holds itself, and never more than the job has left. 0: no quota. */
GS_HIDDEN int gs_quota_told(uint64_t *total, uint64_t *used);
GS_HIDDEN int gs_quota_reserve(uint64_t bytes); /* 1 = within quota (now counted), 0 = over */
GS_HIDDEN void gs_quota_unreserve(uint64_t bytes);
enum { GS_KEY_PTR, GS_KEY_HANDLE, GS_KEY_ARRAY, GS_KEY_MAPPING, GS_KEY_GRAPH, GS_KEY_EXEC, GS_KEY_KINDS };
GS_HIDDEN void gs_quota_track(int kind, uint64_t key, uint64_t bytes); /* PTR/ARRAY: of the current context */
GS_HIDDEN void gs_quota_untrack(int kind, uint64_t key); /* gives the bytes back, if known */
GS_HIDDEN void gs_quota_release_handle(uint64_t handle); /* now, or at its last unmap */
GS_HIDDEN void gs_quota_map(uint64_t va, uint64_t size, uint64_t handle);
GS_HIDDEN void gs_quota_unmap(uint64_t va, uint64_t size);
GS_HIDDEN void gs_quota_forget_ctx(uint64_t ctx); /* the context is gone: its allocations too */
GS_HIDDEN void gs_quota_graph_add(uint64_t graph, uint64_t bytes); /* a memory node in a graph */
GS_HIDDEN void gs_quota_graph_forget(uint64_t graph);
GS_HIDDEN void gs_quota_exec_instantiated(uint64_t exec, uint64_t graph);
GS_HIDDEN int gs_quota_exec_launch(uint64_t exec); /* 0: its graph memory is over the quota */
GS_HIDDEN void gs_quota_exec_destroyed(uint64_t exec);
GS_HIDDEN void gs_quota_graph_trim(void);

/* gate.c: the launch gate. */
typedef struct {
  gate_activity_t *slot; /* our activity; NULL: not gated */
  gate_proc_t *proc; /* this process's share of the slot */
  uint32_t prio, domain;
  int fail_open;
} gs_launch_t;
GS_HIDDEN int gs_gate_quota(uint64_t *quota); /* 1 if the gate slot gives the quota */
/* gate_procs.c: the job's used bytes. -1: not gated; 1: reserved within limit; 0: refused (counted in oom_count). */
GS_HIDDEN int gs_gate_reserve(uint64_t bytes, uint64_t limit);
GS_HIDDEN void gs_gate_unreserve(uint64_t bytes);
GS_HIDDEN int gs_gate_used(uint64_t *used); /* 1 if the job's used bytes came from the slot */
GS_HIDDEN void gs_gate_enter(gs_launch_t *l);
GS_HIDDEN void gs_gate_leave(gs_launch_t *l, CUresult rc, CUstream stream, int ptsz);
GS_HIDDEN uint64_t gs_gate_sync_begin(void);
/* Streams of this process capturing now: launches pass without gate wait or synchronisation. */
GS_HIDDEN void gs_capture_begin(void);
GS_HIDDEN void gs_capture_end(void);
GS_HIDDEN int gs_capturing(void);
/* stream == NULL && full: the whole context was synchronised */
GS_HIDDEN void gs_gate_sync_end(uint64_t snapshot, int full, CUstream stream, int ptsz);

#endif
