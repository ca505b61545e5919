/* Shared by the fake libnvidia-ml's source files (nvml.c, nvml_*.c): the
 * handle tables, the mapped state and the prologues every call starts with. */
#ifndef FG_NVML_INTERNAL_H
#define FG_NVML_INTERNAL_H

#include <stdint.h>

#include "../../include/nvml_abi.h"
#include "fg_state.h"

#define API FG_EXPORT nvmlReturn_t
#define HANDLE_MAGIC 0x4e564d4cu /* "NVML" */

struct nvmlDevice_opaque {
  uint32_t magic;
  int gpu;
  int mig; /* -1: the whole GPU */
};
struct nvmlGpuInstance_opaque {
  uint32_t magic;
  int gpu;
  int mig;
};
/* the one compute instance of the GPU instance at mig[] slot `mig` */
struct nvmlComputeInstance_opaque {
  uint32_t magic;
  int gpu;
  int mig;
};

/* the state mapped by nvmlInit*; NULL when not initialized */
FG_HIDDEN extern fg_state_t *g_st;
/* handles point into our own table, never into shared memory */
FG_HIDDEN extern struct nvmlDevice_opaque g_dev[FG_MAX_GPUS][FG_MAX_ENGINES];
FG_HIDDEN extern struct nvmlGpuInstance_opaque g_gi[FG_MAX_GPUS][FG_MAX_MIG];
FG_HIDDEN extern struct nvmlComputeInstance_opaque g_ci[FG_MAX_GPUS][FG_MAX_MIG];

static inline nvmlDevice_t dev_handle(int gpu, int mig) { return &g_dev[gpu][mig + 1]; }

static inline const struct nvmlDevice_opaque *dev_of(nvmlDevice_t d) {
  const struct nvmlDevice_opaque *h = d;
  if ((uintptr_t)h - (uintptr_t)g_dev >= sizeof g_dev || h->magic != HANDLE_MAGIC) return NULL;
  return h;
}

/* Common prologue of per-device calls: handle, lost GPU, injected fault. */
#define DEVICE_CALL(device)                                                   \
  fg_state_t *st = g_st;                                                      \
  if (!st) return NVML_ERROR_UNINITIALIZED;                                   \
  const struct nvmlDevice_opaque *h = dev_of(device);                         \
  if (!h || (unsigned)h->gpu >= st->gpu_count) return NVML_ERROR_INVALID_ARGUMENT; \
  fg_gpu_t *g = &st->gpus[h->gpu];                                            \
  if (FG_LOAD(&g->lost)) return NVML_ERROR_GPU_IS_LOST;                       \
  if (h->mig >= 0 && !fg_mig_visible(g, (uint32_t)h->mig)) return NVML_ERROR_INVALID_ARGUMENT; \
  {                                                                           \
    int fc_ = fg_fault_lookup(st, __func__, h->gpu);                          \
    if (fc_) return fc_;                                                      \
  }                                                                           \
  (void)g

/* DEVICE_CALL for readings of the physical board (sensors, clocks, links): a
 * MIG device handle answers NOT_SUPPORTED, as on a real GPU. */
#define BOARD_CALL(device)                           \
  DEVICE_CALL(device);                               \
  if (h->mig >= 0) return NVML_ERROR_NOT_SUPPORTED

#define SYSTEM_CALL()                              \
  fg_state_t *st = g_st;                           \
  if (!st) return NVML_ERROR_UNINITIALIZED;        \
  {                                                \
    int fc_ = fg_fault_lookup(st, __func__, -1);   \
    if (fc_) return fc_;                           \
  }

/* prototypes of every call of nvml_abi.h, so each definition is checked against it */
#define FG_NVML_DECLARE(name, params) FG_EXPORT nvmlReturn_t name params;
GPUSHARE_NVML_FUNCS(FG_NVML_DECLARE)
GPUSHARE_NVML_CLIENT_FUNCS(FG_NVML_DECLARE)
#undef FG_NVML_DECLARE

/* What a real board of the simulated model reports beyond the scenario's values (nvml_identity.c). */
typedef struct {
  unsigned arch, brand;
  unsigned pcie_gen, pcie_width;
  unsigned bus_width, cores_per_sm;
  unsigned bar1_mib; /* the BAR1 aperture */
  unsigned temp_shutdown, temp_slowdown, temp_mem_max, temp_gpu_max; /* 0: no such sensor */
  int fans;       /* 0: passively cooled (data-centre boards) */
  int ecc;        /* ECC memory, enabled */
  int cc_capable; /* confidential computing capable (Hopper), off */
} fg_nvml_model_t;
FG_HIDDEN fg_nvml_model_t fg_nvml_model(const fg_gpu_t *g);

/* nvmlInit_v2 and the other init entry points (nvml.c) */
FG_HIDDEN nvmlReturn_t fg_nvml_init(void);

FG_HIDDEN nvmlReturn_t fg_nvml_copy_str(char *dst, unsigned int length, const char *src);

#endif
