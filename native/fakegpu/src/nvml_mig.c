/* Fake libnvidia-ml: MIG enumeration beyond gpushare's own calls (profiles v1,
 * possible placements, remaining capacity, GPU instances of a profile, their
 * compute instances), read live from the layout that `fakegpu mig` changes.
 * Each GPU instance has at most one compute instance, using all its slices. */
#define _GNU_SOURCE
#include <string.h>

#include "fg_scenario.h"
#include "nvml_internal.h"

#define MEM_SLICES 8
#define COMPUTE_SLICES 7

struct nvmlComputeInstance_opaque g_ci[FG_MAX_GPUS][FG_MAX_MIG];

/* prologue of calls on a whole MIG-capable GPU with an NVML_GPU_INSTANCE_PROFILE_* index */
#define PROFILE_CALL(device, index, p)                                          \
  DEVICE_CALL(device);                                                          \
  if (h->mig >= 0 || (index) >= NVML_GPU_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT; \
  if (!g->mig_capable) return NVML_ERROR_NOT_SUPPORTED;                         \
  fg_profile_t p;                                                               \
  if (!fg_profile_by_id(g, (index), &p)) return NVML_ERROR_NOT_SUPPORTED

static int slot_used(const fg_gpu_t *g, uint32_t m) {
  return m < g->mig_count && FG_LOAD(&g->mig[m].present) != FG_MIG_FREE;
}

API nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info) {
  PROFILE_CALL(device, profile, p);
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  memset(info, 0, sizeof *info);
  info->id = p.id;
  info->sliceCount = p.slices;
  info->instanceCount = p.max_instances;
  info->multiprocessorCount = p.sm;
  info->copyEngineCount = p.ce;
  info->decoderCount = p.dec;
  info->encoderCount = p.enc;
  info->jpegCount = p.jpg;
  info->ofaCount = p.ofa;
  info->memorySizeMB = p.mem_mib;
  return NVML_SUCCESS;
}

/* Every start the profile allows, whatever is placed now (lowest first); NULL placements: the count. */
API nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                  nvmlGpuInstancePlacement_t *placements, unsigned int *count) {
  PROFILE_CALL(device, profileId, p);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned n = 0;
  for (unsigned s = 0; s + p.mem_slices <= MEM_SLICES; s++) {
    if (!fg_mig_start_allowed(&p, s)) continue;
    if (placements) placements[n] = (nvmlGpuInstancePlacement_t){s, p.mem_slices};
    n++;
  }
  *count = n;
  return NVML_SUCCESS;
}

API nvmlDeviceGetGpuInstancePossiblePlacements(nvmlDevice_t device, unsigned int profileId,
                                               nvmlGpuInstancePlacement_t *placements, unsigned int *count) {
  return nvmlDeviceGetGpuInstancePossiblePlacements_v2(device, profileId, placements, count);
}

/* How many more instances of the profile `fakegpu mig create-gi` could make: each at the highest
 * free allowed start, within the profile's limit, the 7 compute slices and the 7 instance slots. */
API nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device, unsigned int profileId, unsigned int *count) {
  PROFILE_CALL(device, profileId, p);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  unsigned used = 0, compute = 0, instances = 0, of_profile = 0;
  for (uint32_t m = 0; m < FG_MAX_MIG; m++) {
    if (!slot_used(g, m)) continue;
    const fg_mig_t *mi = &g->mig[m];
    used |= ((1u << mi->placement_size) - 1) << mi->placement_start;
    compute += mi->slices;
    instances++;
    of_profile += mi->profile_id == p.id;
  }
  unsigned more = 0, mask = (1u << p.mem_slices) - 1;
  while (of_profile + more < p.max_instances && compute + p.slices <= COMPUTE_SLICES && instances + more < FG_MAX_MIG) {
    int start = -1;
    for (int s = MEM_SLICES - 1; s >= 0 && start < 0; s--)
      if (fg_mig_start_allowed(&p, (unsigned)s) && (unsigned)s + p.mem_slices <= MEM_SLICES && !(used & (mask << s)))
        start = s;
    if (start < 0) break;
    used |= mask << start;
    compute += p.slices;
    more++;
  }
  *count = more;
  return NVML_SUCCESS;
}

/* GPU instances of a profile, with or without a compute instance, in slot order */
API nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances,
                              unsigned int *count) {
  PROFILE_CALL(device, profileId, p);
  if (!count || !gpuInstances) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  unsigned n = 0;
  for (uint32_t m = 0; m < FG_MAX_MIG; m++)
    if (slot_used(g, m) && g->mig[m].profile_id == p.id) gpuInstances[n++] = &g_gi[h->gpu][m];
  *count = n;
  return NVML_SUCCESS;
}

/* ---- compute instances ---- */

/* The GPU instance behind a handle, checked as nvmlGpuInstanceGetInfo checks it. */
static nvmlReturn_t gi_of(nvmlGpuInstance_t handle, const char *call, fg_gpu_t **gp, int *slot) {
  fg_state_t *st = g_st;
  if (!st) return NVML_ERROR_UNINITIALIZED;
  const struct nvmlGpuInstance_opaque *gi = handle;
  if ((uintptr_t)gi - (uintptr_t)g_gi >= sizeof g_gi || gi->magic != HANDLE_MAGIC || (unsigned)gi->gpu >= st->gpu_count)
    return NVML_ERROR_INVALID_ARGUMENT;
  fg_gpu_t *g = &st->gpus[gi->gpu];
  if (FG_LOAD(&g->lost)) return NVML_ERROR_GPU_IS_LOST;
  int fc = fg_fault_lookup(st, call, gi->gpu);
  if (fc) return fc;
  if (!slot_used(g, (uint32_t)gi->mig)) return NVML_ERROR_INVALID_ARGUMENT; /* destroyed since */
  *gp = g;
  *slot = gi->mig;
  return NVML_SUCCESS;
}

/* the compute-instance profile index of an instance of `slices` compute slices */
static unsigned ci_profile(unsigned slices) {
  switch (slices) {
    case 1: return NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
    case 2: return NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE;
    case 3: return NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE;
    case 4: return NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE;
    default: return NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE;
  }
}

API nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                       nvmlComputeInstance_t *computeInstances, unsigned int *count) {
  fg_gpu_t *g;
  int m;
  nvmlReturn_t rc = gi_of(gpuInstance, __func__, &g, &m);
  if (rc != NVML_SUCCESS) return rc;
  if (!computeInstances || !count || profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  const struct nvmlGpuInstance_opaque *gi = gpuInstance;
  unsigned n = 0;
  if (FG_LOAD(&g->mig[m].present) == FG_MIG_GI_CI && ci_profile(g->mig[m].slices) == profileId)
    computeInstances[n++] = &g_ci[gi->gpu][m];
  *count = n;
  return NVML_SUCCESS;
}

API nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
                                          nvmlComputeInstance_t *computeInstance) {
  fg_gpu_t *g;
  int m;
  nvmlReturn_t rc = gi_of(gpuInstance, __func__, &g, &m);
  if (rc != NVML_SUCCESS) return rc;
  if (!computeInstance) return NVML_ERROR_INVALID_ARGUMENT;
  if (FG_LOAD(&g->mig[m].present) != FG_MIG_GI_CI || g->mig[m].ci != id) return NVML_ERROR_NOT_FOUND;
  *computeInstance = &g_ci[((const struct nvmlGpuInstance_opaque *)gpuInstance)->gpu][m];
  return NVML_SUCCESS;
}

static nvmlReturn_t ci_info(nvmlComputeInstance_t computeInstance, const char *call, nvmlComputeInstanceInfo_t *info,
                            int with_placement) {
  fg_state_t *st = g_st;
  if (!st) return NVML_ERROR_UNINITIALIZED;
  const struct nvmlComputeInstance_opaque *ci = computeInstance;
  if (!info || (uintptr_t)ci - (uintptr_t)g_ci >= sizeof g_ci || ci->magic != HANDLE_MAGIC ||
      (unsigned)ci->gpu >= st->gpu_count)
    return NVML_ERROR_INVALID_ARGUMENT;
  const fg_gpu_t *g = &st->gpus[ci->gpu];
  if (FG_LOAD(&g->lost)) return NVML_ERROR_GPU_IS_LOST;
  int fc = fg_fault_lookup(st, call, ci->gpu);
  if (fc) return fc;
  if (!fg_mig_visible(g, (uint32_t)ci->mig)) return NVML_ERROR_INVALID_ARGUMENT; /* destroyed since */
  const fg_mig_t *mi = &g->mig[ci->mig];
  info->device = dev_handle(ci->gpu, -1);
  info->gpuInstance = &g_gi[ci->gpu][ci->mig];
  info->id = mi->ci;
  info->profileId = ci_profile(mi->slices);
  if (with_placement) info->placement = (nvmlComputeInstancePlacement_t){0, mi->slices};
  return NVML_SUCCESS;
}

API nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info) {
  return ci_info(computeInstance, __func__, info, 1);
}

/* v1: the struct without its placement */
API nvmlComputeInstanceGetInfo(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info) {
  return ci_info(computeInstance, __func__, info, 0);
}
