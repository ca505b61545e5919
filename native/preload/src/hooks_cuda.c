/* Our hook for every row of GS_HOOKS: memory calls go through the quota,
 * launches through the gate, synchronisations tell the gate what finished.
 * Every failure of ours falls back to passing the call through. */
#define _GNU_SOURCE
#include "hooks_quota.h"


/* ---- cuGetProcAddress: what it returns goes through the hook table ---- */

GS_HIDDEN CUresult hook_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *symbolStatus) {
  cuGetProcAddress_v2_fn real = REAL(cuGetProcAddress_v2);
  if (!real) {
    if (pfn) *pfn = NULL;
    if (symbolStatus) *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  CUresult rc = real(symbol, pfn, cudaVersion, flags, symbolStatus);
  if (rc == CUDA_SUCCESS && pfn && *pfn) *pfn = gs_wrap_proc(symbol, *pfn, cudaVersion, flags);
  return rc;
}

GS_HIDDEN CUresult hook_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
  cuGetProcAddress_fn real = REAL(cuGetProcAddress);
  CUresult rc;
  if (real) {
    rc = real(symbol, pfn, cudaVersion, flags);
  } else {
    cuGetProcAddress_v2_fn v2 = REAL(cuGetProcAddress_v2);
    if (!v2) return CUDA_ERROR_NOT_FOUND;
    rc = v2(symbol, pfn, cudaVersion, flags, NULL);
  }
  if (rc == CUDA_SUCCESS && pfn && *pfn) *pfn = gs_wrap_proc(symbol, *pfn, cudaVersion, flags);
  return rc;
}

GS_HIDDEN CUresult hook_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  cuMemAlloc_v2_fn real = REAL(cuMemAlloc_v2);
  QUOTA_ALLOC(GS_KEY_PTR, real, dptr, bytesize, real(dptr, bytesize));
}

GS_HIDDEN CUresult hook_cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
  cuMemAllocManaged_fn real = REAL(cuMemAllocManaged);
  QUOTA_ALLOC(GS_KEY_PTR, real, dptr, bytesize, real(dptr, bytesize, flags));
}

GS_HIDDEN CUresult hook_cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  cuMemAllocAsync_fn real = REAL(cuMemAllocAsync);
  CAPTURED_ALLOC(real, hStream, 0, bytesize, real(dptr, bytesize, hStream));
  QUOTA_ALLOC(GS_KEY_PTR, real, dptr, bytesize, real(dptr, bytesize, hStream));
}

GS_HIDDEN CUresult hook_cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  cuMemAllocAsync_ptsz_fn real = REAL(cuMemAllocAsync_ptsz);
  CAPTURED_ALLOC(real, hStream, 1, bytesize, real(dptr, bytesize, hStream));
  QUOTA_ALLOC(GS_KEY_PTR, real, dptr, bytesize, real(dptr, bytesize, hStream));
}

GS_HIDDEN CUresult hook_cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                CUstream hStream) {
  cuMemAllocFromPoolAsync_fn real = REAL(cuMemAllocFromPoolAsync);
  CAPTURED_ALLOC(real, hStream, 0, bytesize, real(dptr, bytesize, pool, hStream));
  QUOTA_ALLOC(GS_KEY_PTR, real, dptr, bytesize, real(dptr, bytesize, pool, hStream));
}

GS_HIDDEN CUresult hook_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                     CUstream hStream) {
  cuMemAllocFromPoolAsync_ptsz_fn real = REAL(cuMemAllocFromPoolAsync_ptsz);
  CAPTURED_ALLOC(real, hStream, 1, bytesize, real(dptr, bytesize, pool, hStream));
  QUOTA_ALLOC(GS_KEY_PTR, real, dptr, bytesize, real(dptr, bytesize, pool, hStream));
}

GS_HIDDEN CUresult hook_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                    const CUmemAllocationProp *prop, unsigned long long flags) {
  cuMemCreate_fn real = REAL(cuMemCreate);
  QUOTA_ALLOC(GS_KEY_HANDLE, real, handle, size, real(handle, size, prop, flags));
}

/* The pitch is only known afterwards: reserve width x height, then the rest. */
GS_HIDDEN CUresult hook_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                           unsigned int ElementSizeBytes) {
  cuMemAllocPitch_v2_fn real = REAL(cuMemAllocPitch_v2);
  if (!real) return NO_DRIVER;
  if (gs_depth || !dptr || !pPitch || Height == 0 || WidthInBytes > UINT64_MAX / Height)
    return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  uint64_t est = (uint64_t)WidthInBytes * Height;
  if (!gs_quota_reserve(est)) return CUDA_ERROR_OUT_OF_MEMORY;
  gs_depth++;
  CUresult rc = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  gs_depth--;
  if (rc != CUDA_SUCCESS) {
    gs_quota_unreserve(est);
    return rc;
  }
  uint64_t actual = (uint64_t)*pPitch * Height;
  if (actual > est && !gs_quota_reserve(actual - est)) {
    cuMemFree_v2_fn release = REAL(cuMemFree_v2);
    if (release) {
      gs_depth++;
      release(*dptr);
      gs_depth--;
    }
    gs_quota_unreserve(est);
    *dptr = 0;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (actual < est) gs_quota_unreserve(est - actual);
  gs_quota_track(GS_KEY_PTR, *dptr, actual);
  return CUDA_SUCCESS;
}

GS_HIDDEN CUresult hook_cuMemFree_v2(CUdeviceptr dptr) {
  cuMemFree_v2_fn real = REAL(cuMemFree_v2);
  QUOTA_FREE(GS_KEY_PTR, real, dptr, real(dptr));
}

GS_HIDDEN CUresult hook_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  cuMemFreeAsync_fn real = REAL(cuMemFreeAsync);
  QUOTA_FREE(GS_KEY_PTR, real, dptr, real(dptr, hStream));
}

GS_HIDDEN CUresult hook_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  cuMemFreeAsync_ptsz_fn real = REAL(cuMemFreeAsync_ptsz);
  QUOTA_FREE(GS_KEY_PTR, real, dptr, real(dptr, hStream));
}

/* Released while mapped, a handle keeps its memory until its last unmap (hooks_memory.c). */
GS_HIDDEN CUresult hook_cuMemRelease(CUmemGenericAllocationHandle handle) {
  cuMemRelease_fn real = REAL(cuMemRelease);
  if (!real) return NO_DRIVER;
  if (gs_depth) return real(handle);
  gs_depth++;
  CUresult rc = real(handle);
  gs_depth--;
  if (rc == CUDA_SUCCESS) gs_quota_release_handle(handle);
  return rc;
}

/* ---- what the job is told about memory ---- */

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

GS_HIDDEN CUresult hook_cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  cuMemGetInfo_v2_fn real = REAL(cuMemGetInfo_v2);
  if (!real) return NO_DRIVER;
  CUresult rc = real(free_bytes, total);
  uint64_t quota, used;
  if (rc != CUDA_SUCCESS || gs_depth || !free_bytes || !total || !gs_quota_told(&quota, &used)) return rc;
  uint64_t t = min_u64(*total, quota);
  *total = t;
  *free_bytes = min_u64(*free_bytes, used >= t ? 0 : t - used);
  return rc;
}

GS_HIDDEN CUresult hook_cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  cuDeviceTotalMem_v2_fn real = REAL(cuDeviceTotalMem_v2);
  if (!real) return NO_DRIVER;
  CUresult rc = real(bytes, dev);
  uint64_t quota, used;
  if (rc == CUDA_SUCCESS && !gs_depth && bytes && gs_quota_told(&quota, &used)) *bytes = min_u64(*bytes, quota);
  return rc;
}

/* The job's quota as NVML's view, where the process has a job: NVML alone (a monitor) never enrols one. */
static uint64_t nvml_quota(void) {
  gs_no_enrol++;
  uint64_t quota = gs_quota_limit();
  gs_no_enrol--;
  return quota;
}

static void nvml_view(unsigned long long *total, unsigned long long *free_b, unsigned long long *used) {
  uint64_t quota, told_used;
  gs_no_enrol++;
  int told = gs_quota_told(&quota, &told_used);
  gs_no_enrol--;
  if (!told) return;
  uint64_t t = min_u64(*total, quota), u = min_u64(told_used, t);
  *total = t;
  *used = u;
  *free_b = min_u64(*free_b, t - u);
}

GS_HIDDEN nvmlReturn_t hook_nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
  nvmlDeviceGetMemoryInfo_fn real = REAL(nvmlDeviceGetMemoryInfo);
  if (!real) return NVML_ERROR_UNINITIALIZED;
  nvmlReturn_t rc = real(device, memory);
  if (rc == NVML_SUCCESS && memory) nvml_view(&memory->total, &memory->free, &memory->used);
  return rc;
}

GS_HIDDEN nvmlReturn_t hook_nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
  nvmlDeviceGetMemoryInfo_v2_fn real = REAL(nvmlDeviceGetMemoryInfo_v2);
  if (!real) return NVML_ERROR_UNINITIALIZED;
  nvmlReturn_t rc = real(device, memory);
  if (rc == NVML_SUCCESS && memory && nvml_quota() != GATE_NO_QUOTA) {
    nvml_view(&memory->total, &memory->free, &memory->used);
    memory->reserved = 0; /* total = used + free inside the quota */
  }
  return rc;
}

/* ---- launches: through the gate ---- */

#define GATED(real, stream, ptsz, call)      \
  do {                                       \
    if (!real) return NO_DRIVER;             \
    if (gs_depth) return call;               \
    gs_launch_t l_;                          \
    gs_gate_enter(&l_);                      \
    gs_depth++;                              \
    CUresult rc_ = call;                     \
    gs_depth--;                              \
    gs_gate_leave(&l_, rc_, stream, ptsz);   \
    return rc_;                              \
  } while (0)

#define LAUNCH_PARAMS                                                                                          \
  CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, \
      unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream
#define LAUNCH_ARGS f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream

GS_HIDDEN CUresult hook_cuLaunchKernel(LAUNCH_PARAMS, void **kernelParams, void **extra) {
  cuLaunchKernel_fn real = REAL(cuLaunchKernel);
  GATED(real, hStream, 0, real(LAUNCH_ARGS, kernelParams, extra));
}

GS_HIDDEN CUresult hook_cuLaunchKernel_ptsz(LAUNCH_PARAMS, void **kernelParams, void **extra) {
  cuLaunchKernel_ptsz_fn real = REAL(cuLaunchKernel_ptsz);
  GATED(real, hStream, 1, real(LAUNCH_ARGS, kernelParams, extra));
}

GS_HIDDEN CUresult hook_cuLaunchCooperativeKernel(LAUNCH_PARAMS, void **kernelParams) {
  cuLaunchCooperativeKernel_fn real = REAL(cuLaunchCooperativeKernel);
  GATED(real, hStream, 0, real(LAUNCH_ARGS, kernelParams));
}

GS_HIDDEN CUresult hook_cuLaunchCooperativeKernel_ptsz(LAUNCH_PARAMS, void **kernelParams) {
  cuLaunchCooperativeKernel_ptsz_fn real = REAL(cuLaunchCooperativeKernel_ptsz);
  GATED(real, hStream, 1, real(LAUNCH_ARGS, kernelParams));
}

GS_HIDDEN CUresult hook_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                         void **extra) {
  cuLaunchKernelEx_fn real = REAL(cuLaunchKernelEx);
  GATED(real, config ? config->hStream : NULL, 0, real(config, f, kernelParams, extra));
}

GS_HIDDEN CUresult hook_cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                              void **extra) {
  cuLaunchKernelEx_ptsz_fn real = REAL(cuLaunchKernelEx_ptsz);
  GATED(real, config ? config->hStream : NULL, 1, real(config, f, kernelParams, extra));
}

/* A graph is one launch to the gate: the whole graph is enqueued at once. Its
 * memory nodes are allocated at its first launch (outside a capture): over the
 * quota, that launch is out of memory and runs nothing. */
#define GRAPH_MEMORY(exec)                                                                  \
  if (!gs_depth && !gs_capturing() && !gs_quota_exec_launch((uint64_t)(uintptr_t)(exec))) { \
    gs_log("graph memory over quota: launch refused");                                       \
    return CUDA_ERROR_OUT_OF_MEMORY;                                                         \
  }

GS_HIDDEN CUresult hook_cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  cuGraphLaunch_fn real = REAL(cuGraphLaunch);
  if (real) GRAPH_MEMORY(hGraphExec);
  GATED(real, hStream, 0, real(hGraphExec, hStream));
}

GS_HIDDEN CUresult hook_cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  cuGraphLaunch_ptsz_fn real = REAL(cuGraphLaunch_ptsz);
  if (real) GRAPH_MEMORY(hGraphExec);
  GATED(real, hStream, 1, real(hGraphExec, hStream));
}

/* ---- synchronisations: the job's launched work is known complete ---- */

#define SYNCED(real, full, stream, ptsz, call)                   \
  do {                                                           \
    if (!real) return NO_DRIVER;                                 \
    if (gs_depth) return call;                                   \
    uint64_t snap_ = gs_gate_sync_begin();                       \
    gs_depth++;                                                  \
    CUresult rc_ = GS_PARK_CALL(call);                           \
    gs_depth--;                                                  \
    if (rc_ == CUDA_SUCCESS) gs_gate_sync_end(snap_, full, stream, ptsz); \
    return rc_;                                                  \
  } while (0)

GS_HIDDEN CUresult hook_cuCtxSynchronize(void) {
  cuCtxSynchronize_fn real = REAL(cuCtxSynchronize);
  SYNCED(real, 1, NULL, 0, real());
}

GS_HIDDEN CUresult hook_cuStreamSynchronize(CUstream hStream) {
  cuStreamSynchronize_fn real = REAL(cuStreamSynchronize);
  SYNCED(real, 0, hStream, 0, real(hStream));
}

GS_HIDDEN CUresult hook_cuStreamSynchronize_ptsz(CUstream hStream) {
  cuStreamSynchronize_ptsz_fn real = REAL(cuStreamSynchronize_ptsz);
  SYNCED(real, 0, hStream, 1, real(hStream));
}

/* ---- the table's hook column, and our exports under the driver's names ---- */

/* Rows whose hook lives in hooks_memory.c or hooks_graph.c: declared from the driver's own type. */
#define GS_HOOK_PROTO(name, base, ver, ptsz, lib) extern __typeof__(*(name##_fn)0) hook_##name GS_HIDDEN;
GS_HOOKS(GS_HOOK_PROTO)
#undef GS_HOOK_PROTO

#define GS_HOOK_ADDR(name, base, ver, ptsz, lib) (void *)hook_##name,
GS_HIDDEN void *const gs_hook_fns[GS_HOOK_COUNT] = {GS_HOOKS(GS_HOOK_ADDR)};
#undef GS_HOOK_ADDR

GS_HOOKS_CORE(GS_EXPORT_ROW)
