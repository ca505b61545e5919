/* What the parts of cuda_check share: the driver's entry points as loaded
 * (p_<name>), the EXPECT macros and the state file. */
#ifndef FG_CUDA_CHECK_H
#define FG_CUDA_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "../../include/cuda_abi.h"
#include "../src/fg_state.h"

#define MISSING ((CUresult)-1) /* the library lacks the entry point */
#define MiB ((size_t)1024 * 1024)
#define GiB (1024ull * MiB)

#define DECLARE(name, params) extern name##_fn p_##name;
GPUSHARE_CUDA_FUNCS(DECLARE)
#undef DECLARE

extern int g_fails;
extern fg_state_t *g_st;
extern const char *g_build_dir; /* where libcuda.so.1 and the fakegpu CLI are */
extern CUcontext g_ctx;

#define EXPECT(what, cond, ...)                      \
  do {                                               \
    if (cond) {                                      \
      printf("ok   %s\n", what);                     \
    } else {                                         \
      printf("FAIL %s: ", what);                     \
      printf(__VA_ARGS__);                           \
      printf("\n");                                  \
      g_fails++;                                     \
    }                                                \
  } while (0)
#define EXPECT_RC(what, call, want)                                           \
  do {                                                                        \
    CUresult r_ = (call);                                                     \
    EXPECT(what, r_ == (want), "%s returned %d, want %d", #call, r_, (want)); \
  } while (0)

/* cuda_check_contents.c: device memory contents, and the checkpoint moving them. */
void check_contents(void);
/* ... and what the other contents checks share: a seeded byte pattern; device bytes at p are want (read
 * with cuMemcpyDtoH_v2); `name` (made by `copy`) blocks while this process is locked and returns after the
 * unlock; kernels of this process in the execution record; a kernel; a launch of one lasting ms. */
void fill(unsigned char *b, size_t n, uint32_t seed);
int same(CUdeviceptr p, const unsigned char *want, size_t n);
void check_locked_copy(const char *name, CUresult (*copy)(void *dst, CUdeviceptr src, size_t n));
/* ... and the same for a call whose answer after the unlock is `want` (NOT_SUPPORTED, say) */
void check_locked_call(const char *name, CUresult (*copy)(void *dst, CUdeviceptr src, size_t n), CUresult want);
unsigned long kernels_recorded(void);
CUfunction kernel(void);
CUresult launch_ms(CUfunction f, CUstream s, unsigned long long ms);
/* cuda_check_copy2d.c: 2D/3D copies, peer copies and prefetches. */
void check_copy2d(void);
/* cuda_check_memset.c: cuMemsetD16 and the 2D memsets; the batched copies; copies to and from CUDA arrays. */
void check_memset2d(void);
void check_batch(void);
void check_arraycopy(void);

#endif
