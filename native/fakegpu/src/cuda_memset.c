/* Fake libcuda.so.1: memsets. cuMemsetD8/D16/D32 set N values of 1, 2 or 4
 * bytes; the 2D cuMemsetD2D8/D2D16/D2D32 set Height rows of Width values, rows
 * dstPitch bytes apart; each in every variant (synchronous, _ptds, Async,
 * Async_ptsz). A memset is one device operation on the memory contents
 * (cuda_contents.c): it runs in its stream's order, waits while the process is
 * locked, and is complete when its call returns. Its whole rectangle must lie
 * inside one cuMemAlloc-family allocation or it is refused with nothing
 * written; the address, and a 2D memset's pitch, must be aligned to the
 * value's size, as the driver wants. A zero value leaves holes: untouched
 * memory stays sparse. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

static int all_zero(const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

/* height rows of width values of `unit` bytes (value's low bytes) from ptr, pitch bytes apart. */
static CUresult memset_rect(CUdeviceptr ptr, size_t pitch, unsigned value, size_t unit, size_t width, size_t height, copy_order_t o) {
  NEED_CTX(cur);
  (void)cur;
  if (ptr % unit || (height > 1 && pitch % unit)) return CUDA_ERROR_INVALID_VALUE;
  size_t row, span;
  if (__builtin_mul_overflow(width, unit, &row)) return CUDA_ERROR_INVALID_VALUE;
  if (!row || !height) return CUDA_SUCCESS; /* nothing to set */
  if (height > 1 && pitch < row) return CUDA_ERROR_INVALID_VALUE; /* rows would overlap */
  if (__builtin_mul_overflow(height - 1, pitch, &span) || __builtin_add_overflow(span, row, &span)) return CUDA_ERROR_INVALID_VALUE;
  devctx_t *d;
  CUresult rc = mem_find(ptr, span, &d);
  if (rc == CUDA_SUCCESS && dev_lost(d)) rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (rc == CUDA_SUCCESS) rc = contents_in_order(o);
  if (rc != CUDA_SUCCESS) return rc;
  unsigned char one[4];
  memcpy(one, &value, unit); /* little endian: the value's low bytes, as the device stores them */
  unsigned char *pattern = NULL;
  if (!all_zero(one, unit)) {
    if (!(pattern = malloc(FG_FILL_CHUNK))) return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < FG_FILL_CHUNK; i += unit) memcpy(pattern + i, one, unit); /* a multiple of 4: whole values */
  }
  ckpt_kernel_begin(d);
  int bad = 0;
  for (size_t r = 0; !bad && r < height; r++) bad = contents_fill(d, ptr + r * pitch, row, pattern) != 0;
  ckpt_kernel_end(d);
  free(pattern);
  return bad ? CUDA_ERROR_OPERATING_SYSTEM : CUDA_SUCCESS;
}

/* 1D: one row of N values */
static CUresult memset_n(CUdeviceptr p, unsigned v, size_t unit, size_t n, copy_order_t o) { return memset_rect(p, 0, v, unit, n, 1, o); }

#define LEGACY ((copy_order_t){NULL, 0, 0})
#define PTDS ((copy_order_t){NULL, 1, 0})
#define ON(s) ((copy_order_t){(s), 0, 1})
#define PTSZ(s) ((copy_order_t){(s), 1, 1})

API cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) { return memset_n(dstDevice, uc, 1, N, LEGACY); }
API cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) { return memset_n(dstDevice, uc, 1, N, PTDS); }
API cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream s) { return memset_n(dstDevice, uc, 1, N, ON(s)); }
API cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream s) { return memset_n(dstDevice, uc, 1, N, PTSZ(s)); }
API cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) { return memset_n(dstDevice, us, 2, N, LEGACY); }
API cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N) { return memset_n(dstDevice, us, 2, N, PTDS); }
API cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream s) { return memset_n(dstDevice, us, 2, N, ON(s)); }
API cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream s) { return memset_n(dstDevice, us, 2, N, PTSZ(s)); }
API cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) { return memset_n(dstDevice, ui, 4, N, LEGACY); }
API cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N) { return memset_n(dstDevice, ui, 4, N, PTDS); }
API cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream s) { return memset_n(dstDevice, ui, 4, N, ON(s)); }
API cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream s) { return memset_n(dstDevice, ui, 4, N, PTSZ(s)); }

#define D2D(bits, type, unit)                                                                                              \
  API cuMemsetD2D##bits##_v2(CUdeviceptr dst, size_t pitch, type v, size_t w, size_t h) {                                  \
    return memset_rect(dst, pitch, v, unit, w, h, LEGACY);                                                                 \
  }                                                                                                                        \
  API cuMemsetD2D##bits##_v2_ptds(CUdeviceptr dst, size_t pitch, type v, size_t w, size_t h) {                             \
    return memset_rect(dst, pitch, v, unit, w, h, PTDS);                                                                   \
  }                                                                                                                        \
  API cuMemsetD2D##bits##Async(CUdeviceptr dst, size_t pitch, type v, size_t w, size_t h, CUstream s) {                    \
    return memset_rect(dst, pitch, v, unit, w, h, ON(s));                                                                  \
  }                                                                                                                        \
  API cuMemsetD2D##bits##Async_ptsz(CUdeviceptr dst, size_t pitch, type v, size_t w, size_t h, CUstream s) {               \
    return memset_rect(dst, pitch, v, unit, w, h, PTSZ(s));                                                                \
  }
D2D(8, unsigned char, 1)
D2D(16, unsigned short, 2)
D2D(32, unsigned int, 4)
