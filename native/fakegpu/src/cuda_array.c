/* Fake libcuda.so.1: CUDA arrays. cuArrayCreate_v2, cuArray3DCreate_v2 and
 * cuMipmappedArrayCreate charge width x height x depth x channels x element
 * size (every mip level) on the current context's device, like any allocation. */
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
