/* cuda_check copy2d: 2D and 3D copies move exactly their rectangle or box
 * (pitches, offsets), host to device, device to host and device to device,
 * in every variant (_ptds, asynchronous, _ptsz, Unaligned); peer copies and
 * 3D peer copies between two allocations; prefetches of managed memory. A copy
 * reaching outside its allocation is refused with nothing written; each keeps
 * its stream's order and waits while the process is locked. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"

/* What a 2D copy makes of dst (rows dpitch apart) from src (rows spitch apart): the model the driver must match. */
static void model_2d(unsigned char *dst, size_t dpitch, size_t dx, size_t dy, const unsigned char *src, size_t spitch, size_t sx,
                     size_t sy, size_t w, size_t h) {
  for (size_t r = 0; r < h; r++) memcpy(dst + (dy + r) * dpitch + dx, src + (sy + r) * spitch + sx, w);
}

static CUDA_MEMCPY2D host_to_device(const void *h, size_t sx, size_t sy, size_t sp, CUdeviceptr d, size_t dx, size_t dy, size_t dp,
                                    size_t w, size_t rows) {
  return (CUDA_MEMCPY2D){.srcXInBytes = sx, .srcY = sy, .srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = h, .srcPitch = sp,
                         .dstXInBytes = dx, .dstY = dy, .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = d, .dstPitch = dp,
                         .WidthInBytes = w, .Height = rows};
}

static CUDA_MEMCPY2D device_to_host(CUdeviceptr d, size_t sx, size_t sy, size_t sp, void *h, size_t dx, size_t dy, size_t dp,
                                    size_t w, size_t rows) {
  return (CUDA_MEMCPY2D){.srcXInBytes = sx, .srcY = sy, .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d, .srcPitch = sp,
                         .dstXInBytes = dx, .dstY = dy, .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = h, .dstPitch = dp,
                         .WidthInBytes = w, .Height = rows};
}

static CUstream g_s;
static CUresult copy2d_async(const CUDA_MEMCPY2D *c) {
  CUresult rc = p_cuMemcpy2DAsync_v2(c, g_s);
  return rc ? rc : p_cuStreamSynchronize(g_s);
}
static CUresult copy2d_async_ptsz(const CUDA_MEMCPY2D *c) {
  CUresult rc = p_cuMemcpy2DAsync_v2_ptsz(c, NULL);
  return rc ? rc : p_cuStreamSynchronize_ptsz(NULL);
}

#define AREA (64 * 1024)
#define DP 512 /* the device image's pitch */

static void check_2d(void) {
  CUdeviceptr a = 0, b = 0, c = 0;
  p_cuStreamCreate(&g_s, 0);
  EXPECT_RC("allocate 64 KiB twice and 4 KiB", p_cuMemAlloc_v2(&a, AREA) | p_cuMemAlloc_v2(&b, AREA) | p_cuMemAlloc_v2(&c, 4096), CUDA_SUCCESS);
  unsigned char *dev = malloc(AREA), *devb = malloc(AREA), *src = malloc(300 * 20), *host = malloc(256 * 12), *want = malloc(256 * 12);
  fill(dev, AREA, 41);
  p_cuMemcpyHtoD_v2(a, dev, AREA); /* a background the copy must leave alone around its rectangle */
  fill(src, 300 * 20, 42);

  CUDA_MEMCPY2D cp = host_to_device(src, 7, 3, 300, a, 33, 2, DP, 200, 9);
  EXPECT_RC("cuMemcpy2D_v2 host to device: 9 rows of 200 bytes, pitches 300 and 512, offsets (7,3) and (33,2)", p_cuMemcpy2D_v2(&cp), CUDA_SUCCESS);
  model_2d(dev, DP, 33, 2, src, 300, 7, 3, 200, 9);
  EXPECT("it moved exactly the rectangle: every other byte of the allocation is as it was", same(a, dev, AREA), "different bytes");

  fill(host, 256 * 12, 43);
  memcpy(want, host, 256 * 12);
  cp = device_to_host(a, 5, 1, DP, host, 20, 1, 256, 100, 10);
  EXPECT_RC("cuMemcpy2D_v2 device to host: 10 rows of 100 bytes into a 256-byte pitch", p_cuMemcpy2D_v2(&cp), CUDA_SUCCESS);
  model_2d(want, 256, 20, 1, dev, DP, 5, 1, 100, 10);
  EXPECT("the host image holds the rectangle and nothing else changed", !memcmp(host, want, 256 * 12), "different bytes");

  fill(devb, AREA, 44);
  p_cuMemcpyHtoD_v2(b, devb, AREA);
  cp = (CUDA_MEMCPY2D){.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = a, .srcPitch = DP, .dstXInBytes = 64, .dstY = 5,
                       .dstMemoryType = CU_MEMORYTYPE_UNIFIED, .dstDevice = b, .dstPitch = 1024, .WidthInBytes = DP, .Height = 16};
  EXPECT_RC("cuMemcpy2D_v2 device to device (the destination as UNIFIED): 16 rows of 512 bytes into a 1024-byte pitch",
            p_cuMemcpy2D_v2(&cp), CUDA_SUCCESS);
  model_2d(devb, 1024, 64, 5, dev, DP, 0, 0, DP, 16);
  EXPECT("the other allocation holds the rectangle, the rest as it was", same(b, devb, AREA), "different bytes");

  fill(host, 256 * 12, 45);
  memcpy(want, host, 256 * 12);
  cp = (CUDA_MEMCPY2D){.srcXInBytes = 64, .srcY = 5, .srcMemoryType = CU_MEMORYTYPE_UNIFIED, .srcDevice = b, .srcPitch = 1024,
                       .dstMemoryType = CU_MEMORYTYPE_UNIFIED, .dstDevice = (CUdeviceptr)(uintptr_t)host, .dstPitch = 256,
                       .WidthInBytes = 200, .Height = 12};
  EXPECT_RC("cuMemcpy2D_v2 with both sides UNIFIED (the host side's pointer in dstDevice): device to host", p_cuMemcpy2D_v2(&cp),
            CUDA_SUCCESS);
  model_2d(want, 256, 0, 0, devb, 1024, 64, 5, 200, 12);
  EXPECT("the host image holds the rectangle", !memcmp(host, want, 256 * 12), "different bytes");

  /* every variant: a rectangle in, read back by the same variant */
  static const struct {
    const char *name;
    CUresult (*fn)(const CUDA_MEMCPY2D *);
  } variants[] = {{"cuMemcpy2D_v2_ptds", NULL}, {"cuMemcpy2DUnaligned_v2", NULL}, {"cuMemcpy2DUnaligned_v2_ptds", NULL},
                  {"cuMemcpy2DAsync_v2 (then cuStreamSynchronize)", copy2d_async},
                  {"cuMemcpy2DAsync_v2_ptsz on the per-thread stream (then its synchronisation)", copy2d_async_ptsz}};
  CUresult (*plain[])(const CUDA_MEMCPY2D *) = {p_cuMemcpy2D_v2_ptds, p_cuMemcpy2DUnaligned_v2, p_cuMemcpy2DUnaligned_v2_ptds};
  for (int v = 0; v < 5; v++) {
    CUresult (*fn)(const CUDA_MEMCPY2D *) = v < 3 ? plain[v] : variants[v].fn;
    char what[200];
    fill(src, 300 * 20, 50 + v);
    cp = host_to_device(src, v, v + 1, 300, a, 3 * v, v, DP, 150 + v, 7);
    model_2d(dev, DP, 3 * v, v, src, 300, v, v + 1, 150 + v, 7);
    snprintf(what, sizeof what, "%s host to device", variants[v].name);
    EXPECT_RC(what, fn(&cp), CUDA_SUCCESS);
    snprintf(what, sizeof what, "%s moved exactly its rectangle", variants[v].name);
    EXPECT(what, same(a, dev, AREA), "different bytes");
    fill(host, 256 * 12, 60 + v);
    memcpy(want, host, 256 * 12);
    cp = device_to_host(a, 3 * v, v, DP, host, 1, 2, 256, 150 + v, 7);
    model_2d(want, 256, 1, 2, dev, DP, 3 * v, v, 150 + v, 7);
    snprintf(what, sizeof what, "%s device to host reads it back", variants[v].name);
    EXPECT(what, fn(&cp) == CUDA_SUCCESS && !memcmp(host, want, 256 * 12), "different bytes");
  }

  /* refused: nothing moves */
  unsigned char zeros[4096] = {0};
  fill(src, 300 * 20, 70);
  cp = host_to_device(src, 0, 0, 300, c, 0, 0, DP, 100, 9); /* row 8 starts at 4096: past the 4 KiB allocation */
  EXPECT_RC("a 2D copy whose last row lies past the allocation's end: INVALID_VALUE", p_cuMemcpy2D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  EXPECT("the refused copy wrote nothing, not even its first rows", same(c, zeros, 4096), "bytes were written");
  cp = host_to_device(src, 0, 0, 300, c, 4000, 0, DP, 100, 1);
  EXPECT_RC("a one-row copy running past the end: INVALID_VALUE", p_cuMemcpy2DAsync_v2(&cp, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT("nothing written", same(c, zeros, 4096), "bytes were written");
  memcpy(want, host, 256 * 12);
  cp = device_to_host(c, 0, 4, DP, host, 0, 0, 256, 64, 5);
  EXPECT_RC("a device-to-host copy reading past the end: INVALID_VALUE", p_cuMemcpy2DUnaligned_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  EXPECT("the host image untouched", !memcmp(host, want, 256 * 12), "bytes were written");
  cp = host_to_device(src, 0, 0, 300, c, 0, 0, 64, 100, 2);
  EXPECT_RC("a pitch narrower than the width (rows would overlap): INVALID_VALUE", p_cuMemcpy2D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  cp = host_to_device(src, 0, 0, 300, a, 0, 0, DP, 10, 1);
  cp.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  EXPECT_RC("a side in a CUDA array (no contents in the fake): NOT_SUPPORTED", p_cuMemcpy2D_v2(&cp), CUDA_ERROR_NOT_SUPPORTED);
  cp.dstMemoryType = (CUmemorytype)9;
  EXPECT_RC("an unknown memory type: INVALID_VALUE", p_cuMemcpy2D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  cp = host_to_device(NULL, 0, 0, 300, a, 0, 0, DP, 10, 1);
  EXPECT_RC("a NULL host pointer: INVALID_VALUE", p_cuMemcpy2D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("a NULL CUDA_MEMCPY2D: INVALID_VALUE", p_cuMemcpy2D_v2(NULL), CUDA_ERROR_INVALID_VALUE);
  EXPECT("and the allocation is as it was", same(a, dev, AREA), "bytes were written");
  p_cuMemFree_v2(a), p_cuMemFree_v2(b), p_cuMemFree_v2(c);
  free(dev), free(devb), free(src), free(host), free(want);
}

/* ---- 3D: a box of slices ---- */

static void model_3d(unsigned char *dst, size_t dp, size_t dh, size_t dx, size_t dy, size_t dz, const unsigned char *src, size_t sp,
                     size_t sh, size_t sx, size_t sy, size_t sz, size_t w, size_t h, size_t depth) {
  for (size_t z = 0; z < depth; z++)
    for (size_t r = 0; r < h; r++)
      memcpy(dst + ((dz + z) * dh + dy + r) * dp + dx, src + ((sz + z) * sh + sy + r) * sp + sx, w);
}

#define SP 64  /* host box: pitch, height, depth */
#define SH 8
#define SD 4
#define DP3 128 /* device box: pitch, height, depth */
#define DH3 10
#define DD3 4

static void check_3d(void) {
  CUdeviceptr a = 0, b = 0;
  p_cuMemAlloc_v2(&a, DP3 * DH3 * DD3);
  p_cuMemAlloc_v2(&b, DP3 * DH3 * DD3);
  unsigned char src[SP * SH * SD], dev[DP3 * DH3 * DD3], back[SP * SH * SD], want[SP * SH * SD];
  fill(src, sizeof src, 81);
  fill(dev, sizeof dev, 82);
  p_cuMemcpyHtoD_v2(a, dev, sizeof dev);
  CUDA_MEMCPY3D cp = {.srcXInBytes = 2, .srcY = 1, .srcZ = 1, .srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = src, .srcPitch = SP,
                      .srcHeight = SH, .dstXInBytes = 3, .dstY = 2, .dstZ = 0, .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = a,
                      .dstPitch = DP3, .dstHeight = DH3, .WidthInBytes = 40, .Height = 5, .Depth = 3};
  EXPECT_RC("cuMemcpy3D_v2 host to device: 3 slices of 5 rows of 40 bytes", p_cuMemcpy3D_v2(&cp), CUDA_SUCCESS);
  model_3d(dev, DP3, DH3, 3, 2, 0, src, SP, SH, 2, 1, 1, 40, 5, 3);
  EXPECT("it moved exactly the box: every other byte as it was", same(a, dev, sizeof dev), "different bytes");

  fill(back, sizeof back, 83);
  memcpy(want, back, sizeof want);
  cp = (CUDA_MEMCPY3D){.srcXInBytes = 3, .srcY = 2, .srcZ = 1, .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = a, .srcPitch = DP3,
                       .srcHeight = DH3, .dstXInBytes = 0, .dstY = 0, .dstZ = 2, .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = back,
                       .dstPitch = SP, .dstHeight = SH, .WidthInBytes = 40, .Height = 5, .Depth = 2};
  EXPECT_RC("cuMemcpy3DAsync_v2_ptsz device to host (then the per-thread stream's synchronisation)",
            p_cuMemcpy3DAsync_v2_ptsz(&cp, NULL) | p_cuStreamSynchronize_ptsz(NULL), CUDA_SUCCESS);
  model_3d(want, SP, SH, 0, 0, 2, dev, DP3, DH3, 3, 2, 1, 40, 5, 2);
  EXPECT("the host box holds exactly those slices", !memcmp(back, want, sizeof want), "different bytes");

  unsigned char devb[DP3 * DH3 * DD3];
  fill(devb, sizeof devb, 84);
  p_cuMemcpyHtoD_v2(b, devb, sizeof devb);
  cp = (CUDA_MEMCPY3D){.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = a, .srcPitch = DP3, .srcHeight = DH3, .dstXInBytes = 1,
                       .dstY = 1, .dstZ = 1, .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = b, .dstPitch = DP3, .dstHeight = DH3,
                       .WidthInBytes = 100, .Height = 8, .Depth = 3};
  EXPECT_RC("cuMemcpy3D_v2_ptds device to device", p_cuMemcpy3D_v2_ptds(&cp), CUDA_SUCCESS);
  model_3d(devb, DP3, DH3, 1, 1, 1, dev, DP3, DH3, 0, 0, 0, 100, 8, 3);
  EXPECT("the other allocation holds the box", same(b, devb, sizeof devb), "different bytes");
  cp.dstXInBytes = 0, cp.dstY = 0, cp.dstZ = 0;
  EXPECT_RC("cuMemcpy3DAsync_v2 device to device on a stream", p_cuMemcpy3DAsync_v2(&cp, g_s) | p_cuStreamSynchronize(g_s), CUDA_SUCCESS);
  model_3d(devb, DP3, DH3, 0, 0, 0, dev, DP3, DH3, 0, 0, 0, 100, 8, 3);
  EXPECT("holds it too", same(b, devb, sizeof devb), "different bytes");

  cp.dstZ = 2; /* slices 2..4 of a 4-slice allocation */
  EXPECT_RC("a box whose last slice lies past the allocation: INVALID_VALUE", p_cuMemcpy3D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  EXPECT("nothing written", same(b, devb, sizeof devb), "bytes were written");
  cp.dstZ = 0, cp.dstHeight = 4;
  EXPECT_RC("a slice height below the box's height: INVALID_VALUE", p_cuMemcpy3D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  cp.dstHeight = DH3, cp.reserved0 = &cp;
  EXPECT_RC("reserved0 not NULL: INVALID_VALUE", p_cuMemcpy3D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  cp.reserved0 = NULL, cp.srcLOD = 1;
  EXPECT_RC("a mipmap level on linear memory: INVALID_VALUE", p_cuMemcpy3D_v2(&cp), CUDA_ERROR_INVALID_VALUE);
  p_cuMemFree_v2(a), p_cuMemFree_v2(b);
}

/* ---- peer copies: between two allocations, each named with its context ---- */

static void check_peer(void) {
  CUdeviceptr a = 0, b = 0;
  const size_t n = 100000;
  p_cuMemAlloc_v2(&a, 2 * n);
  p_cuMemAlloc_v2(&b, 2 * n);
  unsigned char *src = malloc(n), *zero = calloc(1, 2 * n);
  fill(src, n, 91);
  p_cuMemcpyHtoD_v2(a + 3, src, n);
  EXPECT_RC("cuMemcpyPeer", p_cuMemcpyPeer(b + 7, g_ctx, a + 3, g_ctx, n), CUDA_SUCCESS);
  EXPECT("the destination holds the bytes", same(b + 7, src, n), "different bytes");
  EXPECT_RC("cuMemcpyPeer_ptds", p_cuMemcpyPeer_ptds(b + n, g_ctx, b + 7, g_ctx, n), CUDA_SUCCESS);
  EXPECT("and its copy", same(b + n, src, n), "different bytes");
  p_cuMemsetD8_v2(b, 0, 2 * n);
  EXPECT_RC("cuMemcpyPeerAsync on a stream", p_cuMemcpyPeerAsync(b, g_ctx, a + 3, g_ctx, n, g_s) | p_cuStreamSynchronize(g_s), CUDA_SUCCESS);
  EXPECT_RC("cuMemcpyPeerAsync_ptsz on the per-thread stream", p_cuMemcpyPeerAsync_ptsz(b + n, g_ctx, b, g_ctx, n, NULL), CUDA_SUCCESS);
  p_cuStreamSynchronize_ptsz(NULL);
  EXPECT("both hold the bytes", same(b, src, n) && same(b + n, src, n), "different bytes");
  p_cuMemsetD8_v2(b, 0, 2 * n);
  EXPECT_RC("a peer copy past the destination's end: INVALID_VALUE", p_cuMemcpyPeer(b + n + 1, g_ctx, a, g_ctx, n), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("a peer copy with no source context: INVALID_CONTEXT", p_cuMemcpyPeer(b, g_ctx, a, NULL, n), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT("nothing written", same(b, zero, 2 * n), "bytes were written");

  CUDA_MEMCPY3D_PEER cp = {.srcXInBytes = 3, .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = a, .srcContext = g_ctx, .srcPitch = 1000,
                           .srcHeight = 10, .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = b, .dstContext = g_ctx, .dstPitch = 1000,
                           .dstHeight = 10, .WidthInBytes = 1000, .Height = 10, .Depth = 10};
  EXPECT_RC("cuMemcpy3DPeer: 10 slices of 10 rows of 1000 bytes", p_cuMemcpy3DPeer(&cp), CUDA_SUCCESS);
  EXPECT("the destination holds them", same(b, src, n), "different bytes");
  cp.dstDevice = b + n;
  EXPECT_RC("cuMemcpy3DPeerAsync_ptsz", p_cuMemcpy3DPeerAsync_ptsz(&cp, NULL) | p_cuStreamSynchronize_ptsz(NULL), CUDA_SUCCESS);
  EXPECT("and there", same(b + n, src, n), "different bytes");
  cp.dstContext = NULL;
  EXPECT_RC("cuMemcpy3DPeer with no destination context: INVALID_CONTEXT", p_cuMemcpy3DPeer_ptds(&cp), CUDA_ERROR_INVALID_CONTEXT);
  p_cuMemFree_v2(a), p_cuMemFree_v2(b);
  free(src), free(zero);
}

/* ---- prefetch: stream work that moves no bytes ---- */

static void check_prefetch(void) {
  CUdeviceptr m = 0;
  EXPECT_RC("cuMemAllocManaged 1 MiB", p_cuMemAllocManaged(&m, MiB, 1), CUDA_SUCCESS);
  unsigned char src[4096];
  fill(src, sizeof src, 101);
  p_cuMemcpyHtoD_v2(m + 4096, src, sizeof src);
  EXPECT_RC("cuMemPrefetchAsync to the host (CU_DEVICE_CPU)", p_cuMemPrefetchAsync(m, MiB, CU_DEVICE_CPU, g_s), CUDA_SUCCESS);
  EXPECT_RC("cuMemPrefetchAsync_ptsz to device 0", p_cuMemPrefetchAsync_ptsz(m, MiB, 0, NULL), CUDA_SUCCESS);
  CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, host = {CU_MEM_LOCATION_TYPE_HOST, 0};
  EXPECT_RC("cuMemPrefetchAsync_v2 to the host", p_cuMemPrefetchAsync_v2(m, MiB, host, 0, g_s), CUDA_SUCCESS);
  EXPECT_RC("cuMemPrefetchAsync_v2_ptsz to device 0", p_cuMemPrefetchAsync_v2_ptsz(m + 4096, 4096, dev0, 0, NULL), CUDA_SUCCESS);
  p_cuStreamSynchronize(g_s);
  EXPECT("the bytes are what was written", same(m + 4096, src, sizeof src), "different bytes");
  EXPECT_RC("to device 99: INVALID_DEVICE", p_cuMemPrefetchAsync(m, MiB, 99, g_s), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_RC("past the allocation: INVALID_VALUE", p_cuMemPrefetchAsync(m + 1, MiB, 0, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("zero bytes: INVALID_VALUE", p_cuMemPrefetchAsync(m, 0, 0, g_s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("_v2 with flags: INVALID_VALUE", p_cuMemPrefetchAsync_v2(m, MiB, dev0, 1, g_s), CUDA_ERROR_INVALID_VALUE);
  CUmemLocation bad = {CU_MEM_LOCATION_TYPE_INVALID, 0};
  EXPECT_RC("_v2 to an invalid location: INVALID_VALUE", p_cuMemPrefetchAsync_v2(m, MiB, bad, 0, g_s), CUDA_ERROR_INVALID_VALUE);
  p_cuMemFree_v2(m);
}

/* ---- stream order and the checkpoint lock ---- */

static void check_order(void) {
  CUfunction f = kernel();
  CUdeviceptr a = 0;
  p_cuMemAlloc_v2(&a, MiB);
  unsigned char src[256];
  fill(src, sizeof src, 111);
  unsigned long before = kernels_recorded();
  launch_ms(f, g_s, 300);
  CUDA_MEMCPY2D cp = host_to_device(src, 0, 0, 16, a, 0, 0, 32, 16, 16);
  EXPECT_RC("a 300 ms kernel on a stream, then cuMemcpy2DAsync_v2 on it", p_cuMemcpy2DAsync_v2(&cp, g_s), CUDA_SUCCESS);
  EXPECT("the copy ran after the kernel", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  before = kernels_recorded();
  launch_ms(f, g_s, 300);
  EXPECT_RC("a 300 ms kernel on a stream, then cuMemcpyPeer (legacy stream)", p_cuMemcpyPeer(a + 4096, g_ctx, a, g_ctx, 256), CUDA_SUCCESS);
  EXPECT("the peer copy waited for it", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  before = kernels_recorded();
  launch_ms(f, g_s, 300);
  EXPECT_RC("a 300 ms kernel on a stream, then cuMemPrefetchAsync on it", p_cuMemPrefetchAsync(a, MiB, 0, g_s), CUDA_SUCCESS);
  EXPECT("the prefetch waited for it", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  p_cuMemFree_v2(a);
}

static CUresult dtoh_2d(void *dst, CUdeviceptr src, size_t n) {
  CUDA_MEMCPY2D cp = device_to_host(src, 0, 0, n, dst, 0, 0, n, n, 1);
  return p_cuMemcpy2D_v2(&cp);
}
static CUresult peer_within(void *dst, CUdeviceptr src, size_t n) {
  memset(dst, 0, n); /* the check only times it: a copy to src + 4096 of the same allocation */
  return p_cuMemcpyPeer(src + 4096, g_ctx, src, g_ctx, n);
}
static CUresult prefetch_ptsz(void *dst, CUdeviceptr src, size_t n) {
  memset(dst, 0, n);
  CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  return p_cuMemPrefetchAsync_v2_ptsz(src, n, dev0, 0, NULL);
}

void check_copy2d(void) {
  check_2d();
  check_3d();
  check_peer();
  check_prefetch();
  check_order();
  check_locked_copy("cuMemcpy2D_v2", dtoh_2d);
  check_locked_copy("cuMemcpyPeer", peer_within);
  check_locked_copy("cuMemPrefetchAsync_v2_ptsz", prefetch_ptsz);
  p_cuStreamDestroy_v2(g_s);
}
