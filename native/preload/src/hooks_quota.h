/* The shapes every memory hook shares (hooks_cuda.c, hooks_memory.c, hooks_graph.c). */
#ifndef GS_HOOKS_QUOTA_H
#define GS_HOOKS_QUOTA_H

#include <stdint.h>

#include "park.h"
#include "preload.h"

#define NO_DRIVER CUDA_ERROR_NOT_INITIALIZED

/* Reserve quota first, so nothing is allocated over it; give back what the driver frees. */

#define QUOTA_ALLOC(kind, real, key_out, bytes, call)  \
  do {                                               \
    if (!real) return NO_DRIVER;                     \
    if (gs_depth || !(key_out)) return call;         \
    uint64_t n_ = (uint64_t)(bytes);                 \
    if (!gs_quota_reserve(n_)) {                     \
      gs_log("allocation of %llu bytes over quota", (unsigned long long)n_); \
      return CUDA_ERROR_OUT_OF_MEMORY;               \
    }                                                \
    gs_depth++;                                      \
    CUresult rc_ = GS_PARK_CALL(call);               \
    gs_depth--;                                      \
    if (rc_ == CUDA_SUCCESS) gs_quota_track(kind, (uint64_t)*(key_out), n_); \
    else gs_quota_unreserve(n_);                     \
    return rc_;                                      \
  } while (0)

#define QUOTA_FREE(kind, real, key, call)            \
  do {                                               \
    if (!real) return NO_DRIVER;                     \
    if (gs_depth) return call;                       \
    gs_depth++;                                      \
    CUresult rc_ = GS_PARK_CALL(call);               \
    gs_depth--;                                      \
    if (rc_ == CUDA_SUCCESS) gs_quota_untrack(kind, (uint64_t)(key)); \
    return rc_;                                      \
  } while (0)

/* hooks_graph.c: an async allocation into a capturing stream is a graph memory
 * node: nothing is allocated now (its graph's first launch counts it). */
GS_HIDDEN int gs_capture_alloc(CUstream stream, int ptsz, uint64_t bytes);
#define CAPTURED_ALLOC(real, stream, ptsz, bytes, call)                              \
  do {                                                                              \
    if (real && !gs_depth && gs_capturing() && gs_capture_alloc(stream, ptsz, (bytes))) return call; \
  } while (0)

#endif
