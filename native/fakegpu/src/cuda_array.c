/* Fake libcuda.so.1: CUDA arrays. cuArrayCreate_v2, cuArray3DCreate_v2 and
 * cuMipmappedArrayCreate charge width x height x depth x channels x element
 * size (every mip level) on the current context's device, like any allocation
 * (a checkpoint parks that charge with the rest). They hold no contents: the
 * copies to and from them are NOT_SUPPORTED, after the lock wait. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "cuda_internal.h"

struct CUarray_st {
  uint32_t magic;
  unsigned long long key; /* its charge */
};

static size_t format_bytes(CUarray_format f) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
  }
}

/* Bytes of a w x h x d array of `levels` mip levels (each level halves every extent, at least 1). */
static size_t array_bytes(size_t w, size_t h, size_t dep, CUarray_format f, unsigned ch, unsigned levels) {
  size_t el = format_bytes(f);
  if (!el || (ch != 1 && ch != 2 && ch != 4) || w == 0) return 0;
  size_t total = 0;
  for (unsigned l = 0; l < levels; l++) {
    size_t level = w;
    if (__builtin_mul_overflow(level, h ? h : 1, &level) || __builtin_mul_overflow(level, dep ? dep : 1, &level) ||
        __builtin_mul_overflow(level, el * ch, &level) || __builtin_add_overflow(total, level, &total))
      return SIZE_MAX; /* more than any device has: OUT_OF_MEMORY */
    w = w > 1 ? w / 2 : 1, h = h > 1 ? h / 2 : h, dep = dep > 1 ? dep / 2 : dep;
  }
  return total;
}

static CUresult array_create(void **handle, uint32_t magic, size_t bytes) {
  NEED_CTX(d);
  if (!handle || !bytes) return CUDA_ERROR_INVALID_VALUE;
  struct CUarray_st *a = calloc(1, sizeof *a);
  a->magic = magic;
  a->key = mem_new_key();
  CUresult rc = mem_charge(d, a->key, bytes, ctx_owner(d));
  if (rc != CUDA_SUCCESS) {
    free(a);
    return rc;
  }
  *handle = a;
  return CUDA_SUCCESS;
}

static CUresult array_destroy(void *h, uint32_t magic) {
  NEED_INIT();
  struct CUarray_st *a = h;
  if (!a || a->magic != magic) return CUDA_ERROR_INVALID_HANDLE;
  mem_uncharge(a->key, 0); /* nothing left if its context is gone already */
  a->magic = 0;
  free(a);
  return CUDA_SUCCESS;
}

API cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  return array_create((void **)pHandle, MAGIC_ARRAY, array_bytes(desc->Width, desc->Height, 0, desc->Format, desc->NumChannels, 1));
}

API cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  return array_create((void **)pHandle, MAGIC_ARRAY,
                      array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels, 1));
}

API cuArrayDestroy(CUarray hArray) { return array_destroy((void *)hArray, MAGIC_ARRAY); }

API cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels) {
  if (!desc || levels == 0 || levels > 32) return CUDA_ERROR_INVALID_VALUE;
  return array_create((void **)pHandle, MAGIC_ARRAY + 1,
                      array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels, levels));
}

API cuMipmappedArrayDestroy(CUmipmappedArray h) { return array_destroy((void *)h, MAGIC_ARRAY + 1); }

/* ---- copies to and from arrays: arrays hold no contents here, so each is NOT_SUPPORTED, but only after
 * its arguments are checked (array handles, the device range inside one allocation, a host pointer) and
 * after it waited while the process is locked, as any copy does: a parked job's first call may be one. ---- */

static int is_array(CUarray a) { return a && a->magic == MAGIC_ARRAY; }

/* a (and b when two): the arrays; dev: the device side (0: none); host_side: host is the host side. */
static CUresult array_copy(CUarray a, int two, CUarray b, CUdeviceptr dev, size_t n, int host_side, const void *host) {
  NEED_CTX(d);
  if (!is_array(a) || (two && !is_array(b))) return CUDA_ERROR_INVALID_HANDLE;
  if (host_side && !host) return CUDA_ERROR_INVALID_VALUE;
  if (dev) {
    CUresult rc = mem_find(dev, n, &d);
    if (rc != CUDA_SUCCESS) return rc;
  }
  ckpt_kernel_begin(d);
  ckpt_kernel_end(d);
  return CUDA_ERROR_NOT_SUPPORTED;
}

#define DTOA_ARGS CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount
#define ATOD_ARGS CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount
#define HTOA_ARGS CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount
#define ATOH_ARGS void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount
#define ATOA_ARGS CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount
#define DTOA array_copy(dstArray, 0, NULL, srcDevice, ByteCount, 0, NULL)
#define ATOD array_copy(srcArray, 0, NULL, dstDevice, ByteCount, 0, NULL)
#define HTOA array_copy(dstArray, 0, NULL, 0, ByteCount, 1, srcHost)
#define ATOH array_copy(srcArray, 0, NULL, 0, ByteCount, 1, dstHost)
#define ATOA array_copy(dstArray, 1, srcArray, 0, ByteCount, 0, NULL)

API cuMemcpyDtoA_v2(DTOA_ARGS) { (void)dstOffset; return DTOA; }
API cuMemcpyDtoA_v2_ptds(DTOA_ARGS) { (void)dstOffset; return DTOA; }
API cuMemcpyAtoD_v2(ATOD_ARGS) { (void)srcOffset; return ATOD; }
API cuMemcpyAtoD_v2_ptds(ATOD_ARGS) { (void)srcOffset; return ATOD; }
API cuMemcpyHtoA_v2(HTOA_ARGS) { (void)dstOffset; return HTOA; }
API cuMemcpyHtoA_v2_ptds(HTOA_ARGS) { (void)dstOffset; return HTOA; }
API cuMemcpyAtoH_v2(ATOH_ARGS) { (void)srcOffset; return ATOH; }
API cuMemcpyAtoH_v2_ptds(ATOH_ARGS) { (void)srcOffset; return ATOH; }
API cuMemcpyAtoA_v2(ATOA_ARGS) { (void)dstOffset, (void)srcOffset; return ATOA; }
API cuMemcpyAtoA_v2_ptds(ATOA_ARGS) { (void)dstOffset, (void)srcOffset; return ATOA; }
API cuMemcpyHtoAAsync_v2(HTOA_ARGS, CUstream hStream) { (void)dstOffset, (void)hStream; return HTOA; }
API cuMemcpyHtoAAsync_v2_ptsz(HTOA_ARGS, CUstream hStream) { (void)dstOffset, (void)hStream; return HTOA; }
API cuMemcpyAtoHAsync_v2(ATOH_ARGS, CUstream hStream) { (void)srcOffset, (void)hStream; return ATOH; }
API cuMemcpyAtoHAsync_v2_ptsz(ATOH_ARGS, CUstream hStream) { (void)srcOffset, (void)hStream; return ATOH; }
