/* Fake libcuda.so.1: 2D and 3D copies (cuMemcpy2D/2DUnaligned/2DAsync,
 * cuMemcpy3D/3DAsync), peer copies (cuMemcpyPeer/PeerAsync, cuMemcpy3DPeer/
 * 3DPeerAsync) and prefetches (cuMemPrefetchAsync, _v2), each with its
 * _ptds/_ptsz variant. A copy moves a box of Depth slices of Height rows of
 * WidthInBytes bytes between host memory and device memory (cuda_contents.c's
 * memfd) through a bounce buffer: each device side is read or written as one
 * device operation per buffer (it waits while the process is locked), so no
 * copy ever holds two devices at once (a lock of both would wait on it).
 * Every device side must lie inside one cuMemAlloc-family allocation, all of
 * its rows included, or the copy is refused with nothing moved. CUDA arrays
 * hold no contents here: a side in an array is NOT_SUPPORTED. cuMemcpy2D and
 * cuMemcpy2DUnaligned behave alike (the real one may refuse pitches that
 * cuMemAllocPitch did not give; the fake never does). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

#define BOUNCE (1u << 20) /* bytes staged per step */

static int mul_ok(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static int add_ok(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }

static devctx_t *ctx_dc(CUcontext c) { return c && c->magic == MAGIC_CTX ? c->dc : NULL; }

/* The side's first byte and the span of bytes its box touches, checked; nothing is touched here. */
static CUresult resolve_side(const side_desc_t *s, box_t b, int peer, side_t *out) {
  CUmemorytype type = s->type;
  const void *host = s->host;
  if (type == CU_MEMORYTYPE_ARRAY) return CUDA_ERROR_NOT_SUPPORTED; /* arrays hold no contents in the fake */
  if (type == CU_MEMORYTYPE_UNIFIED) { /* one pointer, in the Device field, either kind */
    type = contents_is_device(s->device) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    host = (const void *)(uintptr_t)s->device;
  }
  if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  if (s->lod) return CUDA_ERROR_INVALID_VALUE; /* a mipmap level: arrays only */
  if ((b.height > 1 || b.depth > 1) && s->pitch < b.width) return CUDA_ERROR_INVALID_VALUE; /* rows would overlap */
  if (b.depth > 1 && s->height < b.height) return CUDA_ERROR_INVALID_VALUE;             /* so would slices */
  size_t slice, start, span, t;
  if (!mul_ok(s->pitch, s->height, &slice)) return CUDA_ERROR_INVALID_VALUE; /* 2D: no height, no slices */
  /* first byte: z * slice + y * pitch + x; last: first + (depth - 1) * slice + (height - 1) * pitch + width */
  if (!mul_ok(s->z, slice, &start) || !mul_ok(s->y, s->pitch, &t) || !add_ok(start, t, &start) || !add_ok(start, s->x, &start))
    return CUDA_ERROR_INVALID_VALUE;
  if (!mul_ok(b.depth - 1, slice, &span) || !mul_ok(b.height - 1, s->pitch, &t) || !add_ok(span, t, &span) ||
      !add_ok(span, b.width, &span))
    return CUDA_ERROR_INVALID_VALUE;
  *out = (side_t){NULL, NULL, 0, s->pitch, slice};
  if (type == CU_MEMORYTYPE_HOST) {
    if (!host) return CUDA_ERROR_INVALID_VALUE;
    out->host = (unsigned char *)(uintptr_t)host + start;
    return CUDA_SUCCESS;
  }
  unsigned long long va;
  if (__builtin_add_overflow(s->device, (unsigned long long)start, &va)) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc = mem_find(va, span, &out->d);
  if (rc != CUDA_SUCCESS) return rc;
  if (dev_lost(out->d)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (peer && out->d != ctx_dc(s->ctx)) return CUDA_ERROR_INVALID_VALUE; /* not memory of the context named */
  out->va = va;
  return CUDA_SUCCESS;
}

/* Bytes [at, at + n) of the box's row-major byte stream, to or from buf. */
static int side_io(const side_t *s, box_t b, size_t at, unsigned char *buf, size_t n, int write) {
  if (s->d) ckpt_kernel_begin(s->d);
  int bad = 0;
  for (size_t done = 0; !bad && done < n;) {
    size_t row = (at + done) / b.width, col = (at + done) % b.width;
    size_t len = b.width - col < n - done ? b.width - col : n - done;
    size_t off = row / b.height * s->slice + row % b.height * s->pitch + col;
    if (s->d) bad = contents_io(s->d, buf + done, len, s->va + off, write) != 0;
    else if (write) memcpy(s->host + off, buf + done, len);
    else memcpy(buf + done, s->host + off, len);
    done += len;
  }
  if (s->d) ckpt_kernel_end(s->d);
  return bad;
}

CUresult copy_prepare(const side_desc_t *src, const side_desc_t *dst, box_t b, int peer, copy_plan_t *out) {
  out->box = b;
  CUresult rc = resolve_side(src, b, peer, &out->src);
  return rc == CUDA_SUCCESS ? resolve_side(dst, b, peer, &out->dst) : rc;
}

CUresult copy_run(const copy_plan_t *p) {
  size_t total = p->box.width * p->box.height * p->box.depth; /* checked by the caller */
  if (!total) return CUDA_SUCCESS;
  unsigned char *buf = malloc(total < BOUNCE ? total : BOUNCE);
  if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
  int bad = 0;
  for (size_t at = 0; !bad && at < total;) {
    size_t n = total - at < BOUNCE ? total - at : BOUNCE;
    bad = side_io(&p->src, p->box, at, buf, n, 0) || side_io(&p->dst, p->box, at, buf, n, 1);
    at += n;
  }
  free(buf);
  return bad ? CUDA_ERROR_OPERATING_SYSTEM : CUDA_SUCCESS;
}

static CUresult copy_box(const side_desc_t *src, const side_desc_t *dst, box_t b, copy_order_t o, int peer) {
  NEED_CTX(cur);
  (void)cur;
  if (peer && ((src->type != CU_MEMORYTYPE_HOST && !ctx_dc(src->ctx)) || (dst->type != CU_MEMORYTYPE_HOST && !ctx_dc(dst->ctx))))
    return CUDA_ERROR_INVALID_CONTEXT;
  size_t total;
  if (!mul_ok(b.width, b.height, &total) || !mul_ok(total, b.depth, &total)) return CUDA_ERROR_INVALID_VALUE;
  if (!total) return CUDA_SUCCESS; /* an empty box moves nothing */
  copy_plan_t plan;
  CUresult rc = copy_prepare(src, dst, b, peer, &plan);
  if (rc == CUDA_SUCCESS) rc = contents_in_order(o);
  return rc == CUDA_SUCCESS ? copy_run(&plan) : rc;
}

/* ---- 2D ---- */

static CUresult copy_2d(const CUDA_MEMCPY2D *p, copy_order_t o) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  side_desc_t src = {p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, NULL, p->srcXInBytes, p->srcY, 0, 0, p->srcPitch, 0};
  side_desc_t dst = {p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, NULL, p->dstXInBytes, p->dstY, 0, 0, p->dstPitch, 0};
  return copy_box(&src, &dst, (box_t){p->WidthInBytes, p->Height, 1}, o, 0);
}

/* ---- 3D (and 3D peer: the same layout with each side's context) ---- */

#define SIDE_3D(p, side, ctx)                                                                                    \
  (side_desc_t) {                                                                                                \
    p->side##MemoryType, p->side##Host, p->side##Device, p->side##Array, ctx, p->side##XInBytes, p->side##Y,     \
        p->side##Z, p->side##LOD, p->side##Pitch, p->side##Height                                                \
  }

static CUresult copy_3d(const CUDA_MEMCPY3D *p, copy_order_t o) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (p->reserved0 || p->reserved1) return CUDA_ERROR_INVALID_VALUE; /* must be NULL */
  side_desc_t src = SIDE_3D(p, src, NULL), dst = SIDE_3D(p, dst, NULL);
  return copy_box(&src, &dst, (box_t){p->WidthInBytes, p->Height, p->Depth}, o, 0);
}

static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, copy_order_t o) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  side_desc_t src = SIDE_3D(p, src, p->srcContext), dst = SIDE_3D(p, dst, p->dstContext);
  return copy_box(&src, &dst, (box_t){p->WidthInBytes, p->Height, p->Depth}, o, 1);
}

/* ---- peer: ByteCount bytes from srcDevice (memory of srcContext) to dstDevice (of dstContext) ---- */

static CUresult copy_peer(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, size_t n, copy_order_t o) {
  side_desc_t s = {CU_MEMORYTYPE_DEVICE, NULL, src, NULL, srcCtx, 0, 0, 0, 0, n, 0};
  side_desc_t d = {CU_MEMORYTYPE_DEVICE, NULL, dst, NULL, dstCtx, 0, 0, 0, 0, n, 0};
  return copy_box(&s, &d, (box_t){n, 1, 1}, o, 1);
}

/* ---- prefetch: moves no bytes (one memory per device here) but is stream work: it waits for what is
 * queued ahead of it, and while the process is locked. Any cuMemAlloc-family range is accepted: the
 * fake does not tell managed allocations from others (the real driver refuses non-managed ones). ---- */

static CUresult prefetch(CUdeviceptr ptr, size_t count, int to_device, CUdevice dev, copy_order_t o) {
  NEED_CTX(cur);
  (void)cur;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (to_device && !dev_of(dev)) return CUDA_ERROR_INVALID_DEVICE;
  devctx_t *d;
  CUresult rc = mem_find(ptr, count, &d);
  if (rc == CUDA_SUCCESS && dev_lost(d)) rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (rc == CUDA_SUCCESS) rc = contents_in_order(o);
  if (rc != CUDA_SUCCESS) return rc;
  ckpt_kernel_begin(d);
  ckpt_kernel_end(d);
  return CUDA_SUCCESS;
}

static CUresult prefetch_v2(CUdeviceptr ptr, size_t count, CUmemLocation loc, unsigned flags, copy_order_t o) {
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return prefetch(ptr, count, 1, loc.id, o);
    case CU_MEM_LOCATION_TYPE_HOST: case CU_MEM_LOCATION_TYPE_HOST_NUMA: case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      return prefetch(ptr, count, 0, 0, o);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

/* ---- the entry points: legacy stream, per-thread stream (_ptds), a stream, a stream or the per-thread one (_ptsz) ---- */

#define LEGACY ((copy_order_t){NULL, 0, 0})
#define PTDS ((copy_order_t){NULL, 1, 0})
#define ON(s) ((copy_order_t){(s), 0, 1})
#define PTSZ(s) ((copy_order_t){(s), 1, 1})
#define PEER_ARGS CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount
#define PEER_PASS dstDevice, dstContext, srcDevice, srcContext, ByteCount

API cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, LEGACY); }
API cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, PTDS); }
API cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, LEGACY); }
API cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, PTDS); }
API cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream) { return copy_2d(pCopy, ON(hStream)); }
API cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream) { return copy_2d(pCopy, PTSZ(hStream)); }
API cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy) { return copy_3d(pCopy, LEGACY); }
API cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy) { return copy_3d(pCopy, PTDS); }
API cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream) { return copy_3d(pCopy, ON(hStream)); }
API cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream) { return copy_3d(pCopy, PTSZ(hStream)); }
API cuMemcpyPeer(PEER_ARGS) { return copy_peer(PEER_PASS, LEGACY); }
API cuMemcpyPeer_ptds(PEER_ARGS) { return copy_peer(PEER_PASS, PTDS); }
API cuMemcpyPeerAsync(PEER_ARGS, CUstream hStream) { return copy_peer(PEER_PASS, ON(hStream)); }
API cuMemcpyPeerAsync_ptsz(PEER_ARGS, CUstream hStream) { return copy_peer(PEER_PASS, PTSZ(hStream)); }
API cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy) { return copy_3d_peer(pCopy, LEGACY); }
API cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy) { return copy_3d_peer(pCopy, PTDS); }
API cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream) { return copy_3d_peer(pCopy, ON(hStream)); }
API cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream) { return copy_3d_peer(pCopy, PTSZ(hStream)); }
API cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) {
  return prefetch(devPtr, count, dstDevice != CU_DEVICE_CPU, dstDevice, ON(hStream));
}
API cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) {
  return prefetch(devPtr, count, dstDevice != CU_DEVICE_CPU, dstDevice, PTSZ(hStream));
}
API cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream) {
  return prefetch_v2(devPtr, count, location, flags, ON(hStream));
}
API cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream) {
  return prefetch_v2(devPtr, count, location, flags, PTSZ(hStream));
}
