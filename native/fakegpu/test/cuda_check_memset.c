/* cuda_check memset2d, batch, arraycopy: the last device-memory calls a
 * parked job can make. memset2d: cuMemsetD16 and the 2D memsets (D2D8/16/32)
 * write exactly their rectangle (pitch, alignment) in every variant, refuse a
 * rectangle reaching outside its allocation with nothing written, keep stream
 * order and wait while the process is locked. batch: cuMemcpyBatchAsync (12.8,
 * and 13.0's _v2) moves each of its copies by pointer kind, refuses a batch
 * with a bad copy as a whole (failIdx names it), waits for its stream and the
 * lock; cuMemcpy3DBatchAsync is NOT_SUPPORTED. arraycopy: the copies to and
 * from CUDA arrays (which hold no contents here) are NOT_SUPPORTED, after the
 * lock. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"

#define AREA (64 * 1024)
#define PITCH 512

static CUstream g_s;

/* What a 2D memset makes of dev: height rows of width units of `unit` bytes (pattern), pitch bytes apart, from off on. */
static void model_rect(unsigned char *dev, size_t off, size_t pitch, const void *pattern, size_t unit, size_t width, size_t height) {
  for (size_t r = 0; r < height; r++)
    for (size_t i = 0; i < width; i++) memcpy(dev + off + r * pitch + i * unit, pattern, unit);
}

typedef CUresult (*d2d_fn)(CUdeviceptr, size_t, unsigned, size_t, size_t, int how);

/* One 2D memset of `bits` through variant `how` (0 _v2, 1 _v2_ptds, 2 Async on g_s then its sync, 3 Async_ptsz, then its sync). */
static CUresult d2d(int bits, int how, CUdeviceptr p, size_t pitch, unsigned v, size_t w, size_t h) {
  CUresult rc = MISSING;
  switch (bits * 10 + how) {
    case 80: return p_cuMemsetD2D8_v2(p, pitch, (unsigned char)v, w, h);
    case 81: return p_cuMemsetD2D8_v2_ptds(p, pitch, (unsigned char)v, w, h);
    case 82: rc = p_cuMemsetD2D8Async(p, pitch, (unsigned char)v, w, h, g_s); break;
    case 83: rc = p_cuMemsetD2D8Async_ptsz(p, pitch, (unsigned char)v, w, h, NULL); break;
    case 160: return p_cuMemsetD2D16_v2(p, pitch, (unsigned short)v, w, h);
    case 161: return p_cuMemsetD2D16_v2_ptds(p, pitch, (unsigned short)v, w, h);
    case 162: rc = p_cuMemsetD2D16Async(p, pitch, (unsigned short)v, w, h, g_s); break;
    case 163: rc = p_cuMemsetD2D16Async_ptsz(p, pitch, (unsigned short)v, w, h, NULL); break;
    case 320: return p_cuMemsetD2D32_v2(p, pitch, v, w, h);
    case 321: return p_cuMemsetD2D32_v2_ptds(p, pitch, v, w, h);
    case 322: rc = p_cuMemsetD2D32Async(p, pitch, v, w, h, g_s); break;
    case 323: rc = p_cuMemsetD2D32Async_ptsz(p, pitch, v, w, h, NULL); break;
  }
  if (rc != CUDA_SUCCESS) return rc;
  return how == 2 ? p_cuStreamSynchronize(g_s) : p_cuStreamSynchronize_ptsz(NULL);
}

static CUresult d16(int how, CUdeviceptr p, unsigned short v, size_t n) {
  CUresult rc = MISSING;
  switch (how) {
    case 0: return p_cuMemsetD16_v2(p, v, n);
    case 1: return p_cuMemsetD16_v2_ptds(p, v, n);
    case 2: rc = p_cuMemsetD16Async(p, v, n, g_s); break;
    case 3: rc = p_cuMemsetD16Async_ptsz(p, v, n, NULL); break;
  }
  if (rc != CUDA_SUCCESS) return rc;
  return how == 2 ? p_cuStreamSynchronize(g_s) : p_cuStreamSynchronize_ptsz(NULL);
}

static const char *const HOW[] = {"_v2", "_v2_ptds", "Async (then cuStreamSynchronize)", "Async_ptsz on the per-thread stream (then its sync)"};

static void check_d16(CUdeviceptr a, unsigned char *dev) {
  char what[200];
  for (int how = 0; how < 4; how++) {
    unsigned short v = (unsigned short)(0xBE00 + how);
    size_t off = 2 + 1000 * (size_t)how, n = 300 + how;
    snprintf(what, sizeof what, "cuMemsetD16%s: %zu values of 0x%04x at offset %zu", HOW[how], n, v, off);
    EXPECT_RC(what, d16(how, a + off, v, n), CUDA_SUCCESS);
    model_rect(dev, off, 0, &v, 2, n, 1);
    snprintf(what, sizeof what, "cuMemsetD16%s wrote exactly its values: every other byte as it was", HOW[how]);
    EXPECT(what, same(a, dev, AREA), "different bytes");
  }
  EXPECT_RC("cuMemsetD16_v2 at an odd address: INVALID_VALUE", p_cuMemsetD16_v2(a + 1, 7, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemsetD16_v2 running past the allocation: INVALID_VALUE", p_cuMemsetD16_v2(a + AREA - 64, 7, 33), CUDA_ERROR_INVALID_VALUE);
  EXPECT("nothing written by either", same(a, dev, AREA), "bytes were written");
}

static void check_d2d(CUdeviceptr a, unsigned char *dev) {
  static const int BITS[] = {8, 16, 32};
  char what[200];
  for (int b = 0; b < 3; b++) {
    size_t unit = (size_t)BITS[b] / 8;
    for (int how = 0; how < 4; how++) {
      unsigned v = 0xA1B2C3D4u + (unsigned)(b * 4 + how) * 0x01010101u;
      size_t off = (size_t)PITCH * (1 + 20 * (size_t)(b * 4 + how) % 100) + 4 * (size_t)how, w = 37 + how, h = 9;
      unsigned char pat[4];
      memcpy(pat, &v, unit); /* little endian: the value's low bytes */
      snprintf(what, sizeof what, "cuMemsetD2D%d%s: %zu rows of %zu values, pitch %d, at offset %zu", BITS[b], HOW[how], h, w, PITCH, off);
      EXPECT_RC(what, d2d(BITS[b], how, a + off, PITCH, v, w, h), CUDA_SUCCESS);
      model_rect(dev, off, PITCH, pat, unit, w, h);
      snprintf(what, sizeof what, "cuMemsetD2D%d%s wrote exactly its rectangle: every other byte as it was", BITS[b], HOW[how]);
      EXPECT(what, same(a, dev, AREA), "different bytes");
    }
  }
  unsigned char zero = 0;
  EXPECT_RC("cuMemsetD2D8_v2 of zeros over a written rectangle", p_cuMemsetD2D8_v2(a + PITCH + 3, PITCH, 0, 100, 30), CUDA_SUCCESS);
  model_rect(dev, PITCH + 3, PITCH, &zero, 1, 100, 30);
  EXPECT("the rectangle reads as zeros, its surroundings as they were", same(a, dev, AREA), "different bytes");

  EXPECT_RC("a rectangle whose last row runs past the allocation: INVALID_VALUE",
            p_cuMemsetD2D8_v2(a + AREA - 4 * PITCH, PITCH, 0x5A, 100, 5), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("the same through cuMemsetD2D32Async: INVALID_VALUE",
            p_cuMemsetD2D32Async(a + AREA - 4 * PITCH, PITCH, 0x5A5A5A5A, 25, 5, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT("the refused memsets wrote nothing, not even their first rows", same(a, dev, AREA), "bytes were written");
  EXPECT_RC("a pitch narrower than a row (rows would overlap): INVALID_VALUE", p_cuMemsetD2D16_v2(a, 64, 1, 40, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemsetD2D32_v2 at an address not 4-byte aligned: INVALID_VALUE", p_cuMemsetD2D32_v2(a + 2, PITCH, 1, 4, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemsetD2D32_v2 with a pitch not 4-byte aligned: INVALID_VALUE", p_cuMemsetD2D32_v2(a, PITCH + 2, 1, 4, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemsetD2D16_v2 with an odd pitch: INVALID_VALUE", p_cuMemsetD2D16_v2(a, PITCH + 1, 1, 4, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("an empty rectangle (height 0): nothing to do", p_cuMemsetD2D8_v2(a, PITCH, 1, 4, 0), CUDA_SUCCESS);
  EXPECT("and nothing written by any of them", same(a, dev, AREA), "bytes were written");
}

static void check_memset_order(CUdeviceptr a) {
  CUfunction f = kernel();
  unsigned long before = kernels_recorded();
  launch_ms(f, g_s, 300);
  EXPECT_RC("a 300 ms kernel on a stream, then cuMemsetD2D16Async on it", p_cuMemsetD2D16Async(a, PITCH, 3, 8, 8, g_s), CUDA_SUCCESS);
  EXPECT("the memset ran after the kernel", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  before = kernels_recorded();
  launch_ms(f, g_s, 300);
  EXPECT_RC("a 300 ms kernel on a stream, then cuMemsetD16_v2 (legacy stream)", p_cuMemsetD16_v2(a, 3, 8), CUDA_SUCCESS);
  EXPECT("the legacy-stream memset waited for it", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
}

static CUresult memset2d_then_read(void *dst, CUdeviceptr p, size_t n) {
  CUresult rc = p_cuMemsetD2D8_v2(p, 64, 0x11, 16, 4);
  return rc ? rc : p_cuMemcpyDtoH_v2(dst, p, n);
}
static CUresult memset16_ptsz(void *dst, CUdeviceptr p, size_t n) {
  memset(dst, 0, n);
  CUresult rc = p_cuMemsetD16Async_ptsz(p, 0x2222, n / 2, NULL);
  return rc ? rc : p_cuStreamSynchronize_ptsz(NULL);
}

void check_memset2d(void) {
  CUdeviceptr a = 0;
  p_cuStreamCreate(&g_s, 0);
  EXPECT_RC("allocate 64 KiB", p_cuMemAlloc_v2(&a, AREA), CUDA_SUCCESS);
  unsigned char *dev = malloc(AREA);
  fill(dev, AREA, 201);
  p_cuMemcpyHtoD_v2(a, dev, AREA); /* a background each memset must leave alone around what it writes */
  check_d16(a, dev);
  check_d2d(a, dev);
  check_memset_order(a);
  p_cuMemFree_v2(a);
  free(dev);
  check_locked_copy("cuMemsetD2D8_v2", memset2d_then_read);
  check_locked_copy("cuMemsetD16Async_ptsz", memset16_ptsz);
  p_cuStreamDestroy_v2(g_s);
}

/* ---- batched copies ---- */

static CUmemcpyAttributes attrs_in_order(void) {
  return (CUmemcpyAttributes){.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
}

static void check_batch_copies(void) {
  const size_t n = 3000;
  CUdeviceptr a = 0, b = 0;
  p_cuMemAlloc_v2(&a, AREA);
  p_cuMemAlloc_v2(&b, AREA);
  unsigned char *dev = malloc(AREA), *devb = malloc(AREA), *src = malloc(n), *back = malloc(n), *zero = calloc(1, AREA);
  fill(dev, AREA, 211);
  fill(devb, AREA, 212);
  fill(src, n, 213);
  memset(back, 0, n);
  p_cuMemcpyHtoD_v2(a, dev, AREA);
  p_cuMemcpyHtoD_v2(b, devb, AREA);
  /* host to device, device to host, device to device: one batch */
  CUdeviceptr dsts[3] = {a + 100, (CUdeviceptr)(uintptr_t)back, b + 7}, srcs[3] = {(CUdeviceptr)(uintptr_t)src, a + 5000, a + 40000};
  size_t sizes[3] = {n, n, n}, idx[2] = {0, 2}, fail = 77;
  CUmemcpyAttributes at[2] = {attrs_in_order(), {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY}};
  EXPECT_RC("cuMemcpyBatchAsync: host to device, device to host, device to device on a stream (two attribute ranges)",
            p_cuMemcpyBatchAsync(dsts, srcs, sizes, 3, at, idx, 2, &fail, g_s), CUDA_SUCCESS);
  EXPECT_RC("then cuStreamSynchronize", p_cuStreamSynchronize(g_s), CUDA_SUCCESS);
  memcpy(dev + 100, src, n);
  memcpy(devb + 7, dev + 40000, n);
  EXPECT("the host-to-device copy landed, nothing else in that allocation changed", same(a, dev, AREA), "different bytes");
  EXPECT("the device-to-host copy read its bytes", !memcmp(back, dev + 5000, n), "different bytes");
  EXPECT("the device-to-device copy landed", same(b, devb, AREA), "different bytes");

  fill(src, n, 214);
  dsts[0] = b + 20000, srcs[0] = (CUdeviceptr)(uintptr_t)src;
  EXPECT_RC("cuMemcpyBatchAsync_ptsz on the per-thread stream", p_cuMemcpyBatchAsync_ptsz(dsts, srcs, sizes, 1, at, idx, 1, &fail, NULL),
            CUDA_SUCCESS);
  p_cuStreamSynchronize_ptsz(NULL);
  memcpy(devb + 20000, src, n);
  EXPECT("it landed", same(b, devb, AREA), "different bytes");
  fill(src, n, 215);
  EXPECT_RC("cuMemcpyBatchAsync_v2 (CUDA 13: no failIdx)", p_cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, at, idx, 1, g_s) | p_cuStreamSynchronize(g_s),
            CUDA_SUCCESS);
  memcpy(devb + 20000, src, n);
  EXPECT("it landed", same(b, devb, AREA), "different bytes");
  fill(src, n, 216);
  EXPECT_RC("cuMemcpyBatchAsync_v2_ptsz", p_cuMemcpyBatchAsync_v2_ptsz(dsts, srcs, sizes, 1, at, idx, 1, NULL), CUDA_SUCCESS);
  p_cuStreamSynchronize_ptsz(NULL);
  memcpy(devb + 20000, src, n);
  EXPECT("it landed", same(b, devb, AREA), "different bytes");

  /* refused as a whole: nothing written by any copy */
  fill(src, n, 217);
  memset(back, 0, n);
  CUdeviceptr bd[3] = {a + 100, b + AREA - 10, (CUdeviceptr)(uintptr_t)back}, bs[3] = {(CUdeviceptr)(uintptr_t)src, (CUdeviceptr)(uintptr_t)src, a};
  fail = 77;
  EXPECT_RC("a batch whose second copy runs past its allocation: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, sizes, 3, at, idx, 1, &fail, g_s),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT("failIdx names that copy", fail == 1, "failIdx %zu", fail);
  p_cuStreamSynchronize(g_s);
  EXPECT("nothing written by the copies around it either", same(a, dev, AREA) && same(b, devb, AREA) && !memcmp(back, zero, n),
         "bytes were written");
  size_t zero_size[1] = {0};
  EXPECT_RC("a copy of 0 bytes: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, zero_size, 1, at, idx, 1, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT("failIdx 0", fail == 0, "failIdx %zu", fail);
  CUdeviceptr null_dst[1] = {0};
  EXPECT_RC("a NULL destination: INVALID_VALUE", p_cuMemcpyBatchAsync(null_dst, bs, sizes, 1, at, idx, 1, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("count 0: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, sizes, 0, at, idx, 1, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT("failIdx SIZE_MAX: no copy to blame", fail == SIZE_MAX, "failIdx %zu", fail);
  EXPECT_RC("no attributes: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, sizes, 1, at, idx, 0, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("more attributes than copies: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, sizes, 1, at, idx, 2, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  size_t bad_idx[2] = {1, 2};
  EXPECT_RC("attrsIdxs not starting at 0: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, sizes, 3, at, bad_idx, 2, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  size_t down_idx[2] = {0, 0};
  EXPECT_RC("attrsIdxs not increasing: INVALID_VALUE", p_cuMemcpyBatchAsync(bd, bs, sizes, 3, at, down_idx, 2, &fail, g_s), CUDA_ERROR_INVALID_VALUE);
  CUmemcpyAttributes invalid = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID};
  EXPECT_RC("an INVALID source access order: INVALID_VALUE", p_cuMemcpyBatchAsync(dsts, srcs, sizes, 1, &invalid, idx, 1, &fail, g_s),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("the legacy NULL stream: INVALID_VALUE", p_cuMemcpyBatchAsync(dsts, srcs, sizes, 1, at, idx, 1, &fail, NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("CU_STREAM_LEGACY: INVALID_VALUE", p_cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, at, idx, 1, CU_STREAM_LEGACY), CUDA_ERROR_INVALID_VALUE);
  EXPECT("and still nothing written", same(a, dev, AREA) && same(b, devb, AREA), "bytes were written");

  CUfunction f = kernel();
  unsigned long before = kernels_recorded();
  launch_ms(f, g_s, 300);
  EXPECT_RC("a 300 ms kernel on a stream, then cuMemcpyBatchAsync on it", p_cuMemcpyBatchAsync(dsts, srcs, sizes, 1, at, idx, 1, &fail, g_s),
            CUDA_SUCCESS);
  EXPECT("the batch ran after the kernel", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  p_cuStreamSynchronize(g_s);
  memcpy(devb + 20000, src, n);
  EXPECT("and landed", same(b, devb, AREA), "different bytes");

  CUDA_MEMCPY3D_BATCH_OP op = {.src = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr = {.ptr = a, .rowLength = 16, .layerHeight = 1}},
                               .dst = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr = {.ptr = b, .rowLength = 16, .layerHeight = 1}},
                               .extent = {16, 1, 1}, .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
  EXPECT_RC("cuMemcpy3DBatchAsync: NOT_SUPPORTED by the simulated driver", p_cuMemcpy3DBatchAsync(1, &op, &fail, 0, g_s), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_RC("cuMemcpy3DBatchAsync_ptsz: NOT_SUPPORTED", p_cuMemcpy3DBatchAsync_ptsz(1, &op, &fail, 0, NULL), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_RC("cuMemcpy3DBatchAsync_v2: NOT_SUPPORTED", p_cuMemcpy3DBatchAsync_v2(1, &op, 0, g_s), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_RC("cuMemcpy3DBatchAsync_v2_ptsz: NOT_SUPPORTED", p_cuMemcpy3DBatchAsync_v2_ptsz(1, &op, 0, NULL), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT("nothing written", same(b, devb, AREA), "bytes were written");
  p_cuMemFree_v2(a), p_cuMemFree_v2(b);
  free(dev), free(devb), free(src), free(back), free(zero);
}

static CUresult batch_dtoh(void *dst, CUdeviceptr p, size_t n) {
  CUdeviceptr d[1] = {(CUdeviceptr)(uintptr_t)dst}, s[1] = {p};
  size_t sz[1] = {n}, idx[1] = {0}, fail;
  CUmemcpyAttributes at = attrs_in_order();
  CUresult rc = p_cuMemcpyBatchAsync(d, s, sz, 1, &at, idx, 1, &fail, g_s);
  return rc ? rc : p_cuStreamSynchronize(g_s);
}
static CUresult batch3d(void *dst, CUdeviceptr p, size_t n) {
  (void)dst, (void)n;
  CUDA_MEMCPY3D_BATCH_OP op = {.src = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr = {.ptr = p, .rowLength = 16, .layerHeight = 1}},
                               .dst = {.type = CU_MEMCPY_OPERAND_TYPE_POINTER, .op.ptr = {.ptr = p + 4096, .rowLength = 16, .layerHeight = 1}},
                               .extent = {16, 1, 1}, .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
  return p_cuMemcpy3DBatchAsync_v2(1, &op, 0, g_s);
}

void check_batch(void) {
  p_cuStreamCreate(&g_s, 0);
  check_batch_copies();
  check_locked_copy("cuMemcpyBatchAsync", batch_dtoh);
  check_locked_call("cuMemcpy3DBatchAsync_v2", batch3d, CUDA_ERROR_NOT_SUPPORTED);
  p_cuStreamDestroy_v2(g_s);
}

/* ---- copies to and from CUDA arrays ---- */

static CUarray g_arr;
static CUresult dtoa(void *dst, CUdeviceptr p, size_t n) {
  (void)dst;
  return p_cuMemcpyDtoA_v2(g_arr, 0, p, n);
}
static CUresult atod_ptds(void *dst, CUdeviceptr p, size_t n) {
  (void)dst;
  return p_cuMemcpyAtoD_v2_ptds(p, g_arr, 0, n);
}

void check_arraycopy(void) {
  CUDA_ARRAY_DESCRIPTOR desc = {.Width = 1024, .Height = 0, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
  CUarray arr = NULL, arr2 = NULL;
  CUdeviceptr p = 0;
  EXPECT_RC("two 4 KiB arrays and 4 KiB of device memory", p_cuArrayCreate_v2(&arr, &desc) | p_cuArrayCreate_v2(&arr2, &desc) | p_cuMemAlloc_v2(&p, 4096),
            CUDA_SUCCESS);
  unsigned char h[64];
  CUstream s = NULL;
  p_cuStreamCreate(&s, 0);
  const struct {
    const char *name;
    CUresult rc;
  } calls[] = {
      {"cuMemcpyDtoA_v2", p_cuMemcpyDtoA_v2(arr, 0, p, 64)},       {"cuMemcpyDtoA_v2_ptds", p_cuMemcpyDtoA_v2_ptds(arr, 0, p, 64)},
      {"cuMemcpyAtoD_v2", p_cuMemcpyAtoD_v2(p, arr, 0, 64)},       {"cuMemcpyAtoD_v2_ptds", p_cuMemcpyAtoD_v2_ptds(p, arr, 0, 64)},
      {"cuMemcpyHtoA_v2", p_cuMemcpyHtoA_v2(arr, 0, h, 64)},       {"cuMemcpyHtoA_v2_ptds", p_cuMemcpyHtoA_v2_ptds(arr, 0, h, 64)},
      {"cuMemcpyAtoH_v2", p_cuMemcpyAtoH_v2(h, arr, 0, 64)},       {"cuMemcpyAtoH_v2_ptds", p_cuMemcpyAtoH_v2_ptds(h, arr, 0, 64)},
      {"cuMemcpyAtoA_v2", p_cuMemcpyAtoA_v2(arr2, 0, arr, 0, 64)}, {"cuMemcpyAtoA_v2_ptds", p_cuMemcpyAtoA_v2_ptds(arr2, 0, arr, 0, 64)},
      {"cuMemcpyHtoAAsync_v2", p_cuMemcpyHtoAAsync_v2(arr, 0, h, 64, s)},
      {"cuMemcpyHtoAAsync_v2_ptsz", p_cuMemcpyHtoAAsync_v2_ptsz(arr, 0, h, 64, NULL)},
      {"cuMemcpyAtoHAsync_v2", p_cuMemcpyAtoHAsync_v2(h, arr, 0, 64, s)},
      {"cuMemcpyAtoHAsync_v2_ptsz", p_cuMemcpyAtoHAsync_v2_ptsz(h, arr, 0, 64, NULL)},
  };
  char what[160];
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    snprintf(what, sizeof what, "%s: NOT_SUPPORTED (arrays hold no contents in the simulated driver)", calls[i].name);
    EXPECT(what, calls[i].rc == CUDA_ERROR_NOT_SUPPORTED, "returned %d", calls[i].rc);
  }
  CUarray bogus = (CUarray)(void *)&desc;
  EXPECT_RC("cuMemcpyDtoA_v2 to something that is no array: INVALID_HANDLE", p_cuMemcpyDtoA_v2(bogus, 0, p, 64), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_RC("cuMemcpyAtoD_v2 from a NULL array: INVALID_HANDLE", p_cuMemcpyAtoD_v2(p, NULL, 0, 64), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_RC("cuMemcpyDtoA_v2 reading past the allocation: INVALID_VALUE", p_cuMemcpyDtoA_v2(arr, 0, p + 4000, 200), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemcpyHtoA_v2 from a NULL host pointer: INVALID_VALUE", p_cuMemcpyHtoA_v2(arr, 0, NULL, 64), CUDA_ERROR_INVALID_VALUE);
  g_arr = arr;
  check_locked_call("cuMemcpyDtoA_v2", dtoa, CUDA_ERROR_NOT_SUPPORTED);
  check_locked_call("cuMemcpyAtoD_v2_ptds", atod_ptds, CUDA_ERROR_NOT_SUPPORTED);
  p_cuArrayDestroy(arr), p_cuArrayDestroy(arr2), p_cuMemFree_v2(p);
  p_cuStreamDestroy_v2(s);
}
