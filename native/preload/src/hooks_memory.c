/* Memory the driver holds beyond plain allocations: VMM mappings (a released
 * handle lives until its last unmap), CUDA arrays, and contexts (destroying or
 * resetting one frees what was allocated in it); and the copies (2D/3D, peer,
 * batched and array copies too), memsets (2D too) and prefetches, counted in
 * the park file like synchronisations. */
#define _GNU_SOURCE
#include "hooks_quota.h"

/* ---- VMM ---- */

GS_HIDDEN CUresult hook_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                 unsigned long long flags) {
  cuMemMap_fn real = REAL(cuMemMap);
  if (!real) return NO_DRIVER;
  if (gs_depth) return real(ptr, size, offset, handle, flags);
  gs_depth++;
  CUresult rc = real(ptr, size, offset, handle, flags);
  gs_depth--;
  if (rc == CUDA_SUCCESS) gs_quota_map(ptr, size, handle);
  return rc;
}

GS_HIDDEN CUresult hook_cuMemUnmap(CUdeviceptr ptr, size_t size) {
  cuMemUnmap_fn real = REAL(cuMemUnmap);
  if (!real) return NO_DRIVER;
  if (gs_depth) return real(ptr, size);
  gs_depth++;
  CUresult rc = real(ptr, size);
  gs_depth--;
  if (rc == CUDA_SUCCESS) gs_quota_unmap(ptr, size);
  return rc;
}

/* ---- arrays: width x height x depth x channels x element size (levels summed for mipmaps) ---- */

static uint64_t element_bytes(CUarray_format f) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    default: return 4; /* 32-bit formats; an unknown one errs on the side of the quota */
  }
}

static uint64_t max1(uint64_t v) { return v ? v : 1; }

/* 0 when it overflows: the driver refuses such an array anyway. */
static uint64_t array_bytes(uint64_t w, uint64_t h, uint64_t d, unsigned channels, CUarray_format f) {
  uint64_t unit = (uint64_t)(channels ? channels : 1) * element_bytes(f), n = max1(w);
  if (max1(h) > UINT64_MAX / n) return 0;
  n *= max1(h);
  if (max1(d) > UINT64_MAX / n) return 0;
  n *= max1(d);
  return n > UINT64_MAX / unit ? 0 : n * unit;
}

#define ARRAY_ALLOC(real, handle, bytes, call)                                                  \
  do {                                                                                          \
    if (!real) return NO_DRIVER;                                                                \
    uint64_t n_ = (bytes);                                                                      \
    if (gs_depth || !(handle) || !n_) return call;                                              \
    if (!gs_quota_reserve(n_)) return CUDA_ERROR_OUT_OF_MEMORY;                                 \
    gs_depth++;                                                                                 \
    CUresult rc_ = call;                                                                        \
    gs_depth--;                                                                                 \
    if (rc_ == CUDA_SUCCESS) gs_quota_track(GS_KEY_ARRAY, (uint64_t)(uintptr_t)*(handle), n_);  \
    else gs_quota_unreserve(n_);                                                                \
    return rc_;                                                                                 \
  } while (0)

GS_HIDDEN CUresult hook_cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d) {
  cuArrayCreate_v2_fn real = REAL(cuArrayCreate_v2);
  ARRAY_ALLOC(real, pHandle, d ? array_bytes(d->Width, d->Height, 1, d->NumChannels, d->Format) : 0, real(pHandle, d));
}

GS_HIDDEN CUresult hook_cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d) {
  cuArray3DCreate_v2_fn real = REAL(cuArray3DCreate_v2);
  ARRAY_ALLOC(real, pHandle, d ? array_bytes(d->Width, d->Height, d->Depth, d->NumChannels, d->Format) : 0,
              real(pHandle, d));
}

static uint64_t mipmap_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels) {
  uint64_t total = 0;
  for (unsigned l = 0; d && l < levels && l < 64; l++) {
    uint64_t level = array_bytes(max1(d->Width >> l), d->Height ? max1(d->Height >> l) : 0,
                                 d->Depth ? max1(d->Depth >> l) : 0, d->NumChannels, d->Format);
    if (!level || total > UINT64_MAX - level) return 0;
    total += level;
  }
  return total;
}

GS_HIDDEN CUresult hook_cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                               unsigned int numMipmapLevels) {
  cuMipmappedArrayCreate_fn real = REAL(cuMipmappedArrayCreate);
  ARRAY_ALLOC(real, pHandle, mipmap_bytes(d, numMipmapLevels), real(pHandle, d, numMipmapLevels));
}

GS_HIDDEN CUresult hook_cuArrayDestroy(CUarray hArray) {
  cuArrayDestroy_fn real = REAL(cuArrayDestroy);
  QUOTA_FREE(GS_KEY_ARRAY, real, (uintptr_t)hArray, real(hArray));
}

GS_HIDDEN CUresult hook_cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  cuMipmappedArrayDestroy_fn real = REAL(cuMipmappedArrayDestroy);
  QUOTA_FREE(GS_KEY_ARRAY, real, (uintptr_t)hMipmappedArray, real(hMipmappedArray));
}

/* ---- contexts ---- */

#define GS_MAX_DEVICES 64
static CUcontext g_primary[GS_MAX_DEVICES]; /* each device's primary context, as retained */

GS_HIDDEN CUresult hook_cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  cuDevicePrimaryCtxRetain_fn real = REAL(cuDevicePrimaryCtxRetain);
  if (!real) return NO_DRIVER;
  CUresult rc = real(pctx, dev);
  if (rc == CUDA_SUCCESS && pctx && dev >= 0 && dev < GS_MAX_DEVICES) __atomic_store_n(&g_primary[dev], *pctx, __ATOMIC_RELEASE);
  return rc;
}

static CUresult reset_primary(CUresult (*real)(CUdevice), CUdevice dev) {
  if (gs_depth) return real(dev);
  gs_depth++;
  CUresult rc = real(dev);
  gs_depth--;
  if (rc == CUDA_SUCCESS && dev >= 0 && dev < GS_MAX_DEVICES)
    gs_quota_forget_ctx((uint64_t)(uintptr_t)__atomic_load_n(&g_primary[dev], __ATOMIC_ACQUIRE));
  return rc;
}

GS_HIDDEN CUresult hook_cuDevicePrimaryCtxReset(CUdevice dev) {
  cuDevicePrimaryCtxReset_fn real = REAL(cuDevicePrimaryCtxReset);
  return real ? reset_primary(real, dev) : NO_DRIVER;
}

GS_HIDDEN CUresult hook_cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  cuDevicePrimaryCtxReset_v2_fn real = REAL(cuDevicePrimaryCtxReset_v2);
  return real ? reset_primary(real, dev) : NO_DRIVER;
}

GS_HIDDEN CUresult hook_cuCtxDestroy_v2(CUcontext ctx) {
  cuCtxDestroy_v2_fn real = REAL(cuCtxDestroy_v2);
  if (!real) return NO_DRIVER;
  if (gs_depth) return real(ctx);
  gs_depth++;
  CUresult rc = real(ctx);
  gs_depth--;
  if (rc == CUDA_SUCCESS) gs_quota_forget_ctx((uint64_t)(uintptr_t)ctx);
  return rc;
}

/* ---- copies and memsets: the call a parked job may make first (a notebook cell reading a
 * result: cuMemcpyDtoH, or a framework's .cpu() with cuMemcpyDtoHAsync on its stream); it waits
 * in the driver for the restore, so it is counted in the park file. Every variant: synchronous,
 * per-thread default stream (_ptds), asynchronous and its _ptsz, and cuMemcpy (unified addressing). ---- */

#define PARKED_CALL(real, call)         \
  do {                                  \
    if (!real) return NO_DRIVER;        \
    if (gs_depth) return call;          \
    gs_depth++;                         \
    CUresult rc_ = GS_PARK_CALL(call);  \
    gs_depth--;                         \
    return rc_;                         \
  } while (0)

/* One hook per exported variant: hook_<name> calls the driver's <name> inside PARKED_CALL. */
#define PARKED_HOOK(name, params, args)     \
  GS_HIDDEN CUresult hook_##name params {   \
    name##_fn real = REAL(name);            \
    PARKED_CALL(real, real args);           \
  }
#define HTOD (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
#define DTOH (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
#define DTOD (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
#define UNIFIED (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
#define HTOD_ASYNC (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
#define DTOH_ASYNC (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define DTOD_ASYNC (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define UNIFIED_ASYNC (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
#define D8 (CUdeviceptr dstDevice, unsigned char uc, size_t N)
#define D32 (CUdeviceptr dstDevice, unsigned int ui, size_t N)
#define D8_ASYNC (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
#define D32_ASYNC (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)

PARKED_HOOK(cuMemcpyHtoD_v2, HTOD, (dstDevice, srcHost, ByteCount))
PARKED_HOOK(cuMemcpyHtoD_v2_ptds, HTOD, (dstDevice, srcHost, ByteCount))
PARKED_HOOK(cuMemcpyDtoH_v2, DTOH, (dstHost, srcDevice, ByteCount))
PARKED_HOOK(cuMemcpyDtoH_v2_ptds, DTOH, (dstHost, srcDevice, ByteCount))
PARKED_HOOK(cuMemcpyDtoD_v2, DTOD, (dstDevice, srcDevice, ByteCount))
PARKED_HOOK(cuMemcpyDtoD_v2_ptds, DTOD, (dstDevice, srcDevice, ByteCount))
PARKED_HOOK(cuMemcpy, UNIFIED, (dst, src, ByteCount))
PARKED_HOOK(cuMemcpy_ptds, UNIFIED, (dst, src, ByteCount))
PARKED_HOOK(cuMemcpyHtoDAsync_v2, HTOD_ASYNC, (dstDevice, srcHost, ByteCount, hStream))
PARKED_HOOK(cuMemcpyHtoDAsync_v2_ptsz, HTOD_ASYNC, (dstDevice, srcHost, ByteCount, hStream))
PARKED_HOOK(cuMemcpyDtoHAsync_v2, DTOH_ASYNC, (dstHost, srcDevice, ByteCount, hStream))
PARKED_HOOK(cuMemcpyDtoHAsync_v2_ptsz, DTOH_ASYNC, (dstHost, srcDevice, ByteCount, hStream))
PARKED_HOOK(cuMemcpyDtoDAsync_v2, DTOD_ASYNC, (dstDevice, srcDevice, ByteCount, hStream))
PARKED_HOOK(cuMemcpyDtoDAsync_v2_ptsz, DTOD_ASYNC, (dstDevice, srcDevice, ByteCount, hStream))
PARKED_HOOK(cuMemcpyAsync, UNIFIED_ASYNC, (dst, src, ByteCount, hStream))
PARKED_HOOK(cuMemcpyAsync_ptsz, UNIFIED_ASYNC, (dst, src, ByteCount, hStream))
PARKED_HOOK(cuMemsetD8_v2, D8, (dstDevice, uc, N))
PARKED_HOOK(cuMemsetD8_v2_ptds, D8, (dstDevice, uc, N))
PARKED_HOOK(cuMemsetD32_v2, D32, (dstDevice, ui, N))
PARKED_HOOK(cuMemsetD32_v2_ptds, D32, (dstDevice, ui, N))
PARKED_HOOK(cuMemsetD8Async, D8_ASYNC, (dstDevice, uc, N, hStream))
PARKED_HOOK(cuMemsetD8Async_ptsz, D8_ASYNC, (dstDevice, uc, N, hStream))
PARKED_HOOK(cuMemsetD32Async, D32_ASYNC, (dstDevice, ui, N, hStream))
PARKED_HOOK(cuMemsetD32Async_ptsz, D32_ASYNC, (dstDevice, ui, N, hStream))

/* 2D/3D and peer copies (a notebook cell's first call may be any of them: an image read back, a tensor
 * moved to another GPU's memory) and prefetches of managed memory: each waits in the driver like a copy. */
#define C2D (const CUDA_MEMCPY2D *pCopy)
#define C2D_ASYNC (const CUDA_MEMCPY2D *pCopy, CUstream hStream)
#define C3D (const CUDA_MEMCPY3D *pCopy)
#define C3D_ASYNC (const CUDA_MEMCPY3D *pCopy, CUstream hStream)
#define C3D_PEER (const CUDA_MEMCPY3D_PEER *pCopy)
#define C3D_PEER_ASYNC (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)
#define PEER (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
#define PEER_ASYNC (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream)
#define PREFETCH (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
#define PREFETCH_V2 (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream)

PARKED_HOOK(cuMemcpy2D_v2, C2D, (pCopy))
PARKED_HOOK(cuMemcpy2D_v2_ptds, C2D, (pCopy))
PARKED_HOOK(cuMemcpy2DUnaligned_v2, C2D, (pCopy))
PARKED_HOOK(cuMemcpy2DUnaligned_v2_ptds, C2D, (pCopy))
PARKED_HOOK(cuMemcpy2DAsync_v2, C2D_ASYNC, (pCopy, hStream))
PARKED_HOOK(cuMemcpy2DAsync_v2_ptsz, C2D_ASYNC, (pCopy, hStream))
PARKED_HOOK(cuMemcpy3D_v2, C3D, (pCopy))
PARKED_HOOK(cuMemcpy3D_v2_ptds, C3D, (pCopy))
PARKED_HOOK(cuMemcpy3DAsync_v2, C3D_ASYNC, (pCopy, hStream))
PARKED_HOOK(cuMemcpy3DAsync_v2_ptsz, C3D_ASYNC, (pCopy, hStream))
PARKED_HOOK(cuMemcpyPeer, PEER, (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
PARKED_HOOK(cuMemcpyPeer_ptds, PEER, (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
PARKED_HOOK(cuMemcpyPeerAsync, PEER_ASYNC, (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
PARKED_HOOK(cuMemcpyPeerAsync_ptsz, PEER_ASYNC, (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
PARKED_HOOK(cuMemcpy3DPeer, C3D_PEER, (pCopy))
PARKED_HOOK(cuMemcpy3DPeer_ptds, C3D_PEER, (pCopy))
PARKED_HOOK(cuMemcpy3DPeerAsync, C3D_PEER_ASYNC, (pCopy, hStream))
PARKED_HOOK(cuMemcpy3DPeerAsync_ptsz, C3D_PEER_ASYNC, (pCopy, hStream))
PARKED_HOOK(cuMemPrefetchAsync, PREFETCH, (devPtr, count, dstDevice, hStream))
PARKED_HOOK(cuMemPrefetchAsync_ptsz, PREFETCH, (devPtr, count, dstDevice, hStream))
PARKED_HOOK(cuMemPrefetchAsync_v2, PREFETCH_V2, (devPtr, count, location, flags, hStream))
PARKED_HOOK(cuMemPrefetchAsync_v2_ptsz, PREFETCH_V2, (devPtr, count, location, flags, hStream))

/* cuMemsetD16 and the 2D memsets: a notebook cell may begin by clearing a buffer or an image's padded rows. */
#define D16 (CUdeviceptr dstDevice, unsigned short us, size_t N)
#define D16_ASYNC (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
#define D2D(type, v) (CUdeviceptr dstDevice, size_t dstPitch, type v, size_t Width, size_t Height)
#define D2D_ASYNC(type, v) (CUdeviceptr dstDevice, size_t dstPitch, type v, size_t Width, size_t Height, CUstream hStream)

PARKED_HOOK(cuMemsetD16_v2, D16, (dstDevice, us, N))
PARKED_HOOK(cuMemsetD16_v2_ptds, D16, (dstDevice, us, N))
PARKED_HOOK(cuMemsetD16Async, D16_ASYNC, (dstDevice, us, N, hStream))
PARKED_HOOK(cuMemsetD16Async_ptsz, D16_ASYNC, (dstDevice, us, N, hStream))
PARKED_HOOK(cuMemsetD2D8_v2, D2D(unsigned char, uc), (dstDevice, dstPitch, uc, Width, Height))
PARKED_HOOK(cuMemsetD2D8_v2_ptds, D2D(unsigned char, uc), (dstDevice, dstPitch, uc, Width, Height))
PARKED_HOOK(cuMemsetD2D8Async, D2D_ASYNC(unsigned char, uc), (dstDevice, dstPitch, uc, Width, Height, hStream))
PARKED_HOOK(cuMemsetD2D8Async_ptsz, D2D_ASYNC(unsigned char, uc), (dstDevice, dstPitch, uc, Width, Height, hStream))
PARKED_HOOK(cuMemsetD2D16_v2, D2D(unsigned short, us), (dstDevice, dstPitch, us, Width, Height))
PARKED_HOOK(cuMemsetD2D16_v2_ptds, D2D(unsigned short, us), (dstDevice, dstPitch, us, Width, Height))
PARKED_HOOK(cuMemsetD2D16Async, D2D_ASYNC(unsigned short, us), (dstDevice, dstPitch, us, Width, Height, hStream))
PARKED_HOOK(cuMemsetD2D16Async_ptsz, D2D_ASYNC(unsigned short, us), (dstDevice, dstPitch, us, Width, Height, hStream))
PARKED_HOOK(cuMemsetD2D32_v2, D2D(unsigned int, ui), (dstDevice, dstPitch, ui, Width, Height))
PARKED_HOOK(cuMemsetD2D32_v2_ptds, D2D(unsigned int, ui), (dstDevice, dstPitch, ui, Width, Height))
PARKED_HOOK(cuMemsetD2D32Async, D2D_ASYNC(unsigned int, ui), (dstDevice, dstPitch, ui, Width, Height, hStream))
PARKED_HOOK(cuMemsetD2D32Async_ptsz, D2D_ASYNC(unsigned int, ui), (dstDevice, dstPitch, ui, Width, Height, hStream))

/* The batched copies of CUDA 12.8 (13.0's _v2 drops failIdx): a framework moving many tensors at once. */
#define BATCH_P CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs
#define BATCH_A dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs

PARKED_HOOK(cuMemcpyBatchAsync, (BATCH_P, size_t *failIdx, CUstream hStream), (BATCH_A, failIdx, hStream))
PARKED_HOOK(cuMemcpyBatchAsync_ptsz, (BATCH_P, size_t *failIdx, CUstream hStream), (BATCH_A, failIdx, hStream))
PARKED_HOOK(cuMemcpyBatchAsync_v2, (BATCH_P, CUstream hStream), (BATCH_A, hStream))
PARKED_HOOK(cuMemcpyBatchAsync_v2_ptsz, (BATCH_P, CUstream hStream), (BATCH_A, hStream))
PARKED_HOOK(cuMemcpy3DBatchAsync, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream),
            (numOps, opList, failIdx, flags, hStream))
PARKED_HOOK(cuMemcpy3DBatchAsync_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream),
            (numOps, opList, failIdx, flags, hStream))
PARKED_HOOK(cuMemcpy3DBatchAsync_v2, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream),
            (numOps, opList, flags, hStream))
PARKED_HOOK(cuMemcpy3DBatchAsync_v2_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream),
            (numOps, opList, flags, hStream))

/* Copies to and from CUDA arrays: arrays are device memory that a checkpoint parks like any other. */
#define DTOA (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
#define ATOD (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
#define HTOA (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
#define ATOH (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
#define ATOA (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount)
#define HTOA_ASYNC (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream)
#define ATOH_ASYNC (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream)

PARKED_HOOK(cuMemcpyDtoA_v2, DTOA, (dstArray, dstOffset, srcDevice, ByteCount))
PARKED_HOOK(cuMemcpyDtoA_v2_ptds, DTOA, (dstArray, dstOffset, srcDevice, ByteCount))
PARKED_HOOK(cuMemcpyAtoD_v2, ATOD, (dstDevice, srcArray, srcOffset, ByteCount))
PARKED_HOOK(cuMemcpyAtoD_v2_ptds, ATOD, (dstDevice, srcArray, srcOffset, ByteCount))
PARKED_HOOK(cuMemcpyHtoA_v2, HTOA, (dstArray, dstOffset, srcHost, ByteCount))
PARKED_HOOK(cuMemcpyHtoA_v2_ptds, HTOA, (dstArray, dstOffset, srcHost, ByteCount))
PARKED_HOOK(cuMemcpyAtoH_v2, ATOH, (dstHost, srcArray, srcOffset, ByteCount))
PARKED_HOOK(cuMemcpyAtoH_v2_ptds, ATOH, (dstHost, srcArray, srcOffset, ByteCount))
PARKED_HOOK(cuMemcpyAtoA_v2, ATOA, (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
PARKED_HOOK(cuMemcpyAtoA_v2_ptds, ATOA, (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
PARKED_HOOK(cuMemcpyHtoAAsync_v2, HTOA_ASYNC, (dstArray, dstOffset, srcHost, ByteCount, hStream))
PARKED_HOOK(cuMemcpyHtoAAsync_v2_ptsz, HTOA_ASYNC, (dstArray, dstOffset, srcHost, ByteCount, hStream))
PARKED_HOOK(cuMemcpyAtoHAsync_v2, ATOH_ASYNC, (dstHost, srcArray, srcOffset, ByteCount, hStream))
PARKED_HOOK(cuMemcpyAtoHAsync_v2_ptsz, ATOH_ASYNC, (dstHost, srcArray, srcOffset, ByteCount, hStream))

GS_HOOKS_MEMORY(GS_EXPORT_ROW)
