/* Fake libcuda.so.1: batched copies (CUDA 12.8). cuMemcpyBatchAsync moves
 * count copies of sizes[i] bytes from srcs[i] to dsts[i], each pointer device
 * or host memory as the fake tells them apart (its device address range, as
 * cuMemcpy does), through cuda_copy2d.c's bounce buffer. The batch is checked
 * whole before any byte moves: a bad copy refuses it with nothing written and
 * failIdx naming that copy (SIZE_MAX when no one copy is to blame). It runs in
 * its stream's order, waits while the process is locked, and is complete when
 * its call returns; its copies run in index order (CUDA promises no order).
 * The attributes are checked, not simulated. CUDA 13.0's _v2 drops failIdx.
 * cuMemcpy3DBatchAsync (boxes between pointers and arrays, in elements) is
 * NOT_SUPPORTED here, after waiting while the process is locked as any copy. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "cuda_internal.h"

static int attrs_ok(const CUmemcpyAttributes *attrs, const size_t *idx, size_t numAttrs, size_t count) {
  if (!attrs || !idx || !numAttrs || numAttrs > count || idx[0] != 0) return 0;
  for (size_t k = 0; k < numAttrs; k++) {
    if (idx[k] >= count || (k && idx[k] <= idx[k - 1])) return 0; /* ranges start at 0 and grow */
    if (attrs[k].srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || attrs[k].srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY) return 0;
    if (attrs[k].flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) return 0;
  }
  return 1;
}

static CUresult batch(const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes, size_t count, const CUmemcpyAttributes *attrs,
                      const size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, copy_order_t o) {
  if (failIdx) *failIdx = SIZE_MAX;
  NEED_CTX(cur);
  (void)cur;
  if (!count || !dsts || !srcs || !sizes || !attrs_ok(attrs, attrsIdxs, numAttrs, count)) return CUDA_ERROR_INVALID_VALUE;
  if (o.stream == CU_STREAM_LEGACY || (!o.stream && !o.per_thread)) return CUDA_ERROR_INVALID_VALUE; /* never the legacy stream */
  copy_plan_t *plans = calloc(count, sizeof *plans);
  if (!plans) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult rc = CUDA_SUCCESS;
  for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++) {
    side_desc_t s = {.type = CU_MEMORYTYPE_UNIFIED, .device = srcs[i]}, d = {.type = CU_MEMORYTYPE_UNIFIED, .device = dsts[i]};
    rc = sizes[i] ? copy_prepare(&s, &d, (box_t){sizes[i], 1, 1}, 0, &plans[i]) : CUDA_ERROR_INVALID_VALUE;
    if (rc != CUDA_SUCCESS && failIdx) *failIdx = i;
  }
  if (rc == CUDA_SUCCESS) rc = contents_in_order(o);
  for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++) {
    rc = copy_run(&plans[i]);
    if (rc != CUDA_SUCCESS && failIdx) *failIdx = i;
  }
  free(plans);
  return rc;
}

static CUresult batch_3d(size_t numOps, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t *failIdx, unsigned long long flags) {
  if (failIdx) *failIdx = SIZE_MAX;
  NEED_CTX(d);
  if (!numOps || !ops || flags) return CUDA_ERROR_INVALID_VALUE;
  ckpt_gate(d); /* a locked process's copy waits, even one the fake then refuses */
  return CUDA_ERROR_NOT_SUPPORTED;
}

#define ON(s) ((copy_order_t){(s), 0, 1})
#define PTSZ(s) ((copy_order_t){(s), 1, 1})
#define BATCH_ARGS                                                                                                         \
  CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs
#define BATCH_PASS dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs

API cuMemcpyBatchAsync(BATCH_ARGS, size_t *failIdx, CUstream hStream) { return batch(BATCH_PASS, failIdx, ON(hStream)); }
API cuMemcpyBatchAsync_ptsz(BATCH_ARGS, size_t *failIdx, CUstream hStream) { return batch(BATCH_PASS, failIdx, PTSZ(hStream)); }
API cuMemcpyBatchAsync_v2(BATCH_ARGS, CUstream hStream) { return batch(BATCH_PASS, NULL, ON(hStream)); }
API cuMemcpyBatchAsync_v2_ptsz(BATCH_ARGS, CUstream hStream) { return batch(BATCH_PASS, NULL, PTSZ(hStream)); }
API cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream) {
  (void)hStream;
  return batch_3d(numOps, opList, failIdx, flags);
}
API cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream) {
  (void)hStream;
  return batch_3d(numOps, opList, failIdx, flags);
}
API cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream) {
  (void)hStream;
  return batch_3d(numOps, opList, NULL, flags);
}
API cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream) {
  (void)hStream;
  return batch_3d(numOps, opList, NULL, flags);
}
