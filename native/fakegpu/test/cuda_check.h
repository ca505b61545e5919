/* What the parts of cuda_check share: the driver's entry points as loaded
 * (p_<name>), the EXPECT macros and the state file. */
#ifndef FG_CUDA_CHECK_H
#define FG_CUDA_CHECK_H

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

#endif
