/* Fake libnvidia-ml: GPU Performance Monitoring (nvmlGpm*), the only per-MIG-slice SM reading
 * NVML has. A sample records which engine (whole GPU or one MIG slice) and when; the metrics
 * between two samples come from the execution ring: the time the engine ran kernels over the
 * time between them. Simulated: a fake kernel fills every SM of its engine with every warp, so
 * SM_UTIL, SM_OCCUPANCY and GRAPHICS_UTIL all read that busy fraction. Hopper and later
 * (compute capability 9+) only, as on real GPUs; other metrics answer NOT_SUPPORTED. */
#include <stdlib.h>
#include <string.h>

#include "nvml_internal.h"

#define GPM_MAGIC 0x47504d53u /* "GPMS" */

struct nvmlGpmSample_opaque {
  uint32_t magic;
  int taken; /* 0 until a SampleGet fills it */
  int gpu;
  int mig; /* -1: the whole GPU */
  uint32_t gpu_instance_id;
  uint64_t at_ns; /* CLOCK_MONOTONIC */
};

static int gpm_supported(const fg_gpu_t *g) { return g->cc_major >= 9; }

API nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport) {
  DEVICE_CALL(device);
  if (!gpmSupport) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  gpmSupport->isSupportedDevice = gpm_supported(g) ? 1 : 0;
  return NVML_SUCCESS;
}

API nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample) {
  SYSTEM_CALL();
  if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
  struct nvmlGpmSample_opaque *s = calloc(1, sizeof *s);
  if (!s) return NVML_ERROR_MEMORY;
  s->magic = GPM_MAGIC;
  *gpmSample = s;
  return NVML_SUCCESS;
}

API nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
  SYSTEM_CALL();
  if (!gpmSample || gpmSample->magic != GPM_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
  gpmSample->magic = 0;
  free(gpmSample);
  return NVML_SUCCESS;
}

/* A MIG device handle samples its own slice; a whole GPU in MIG mode samples all of it. */
API nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
  DEVICE_CALL(device);
  if (!gpmSample || gpmSample->magic != GPM_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
  if (!gpm_supported(g)) return NVML_ERROR_NOT_SUPPORTED;
  gpmSample->taken = 1;
  gpmSample->gpu = h->gpu;
  gpmSample->mig = h->mig;
  gpmSample->gpu_instance_id = h->mig >= 0 ? g->mig[h->mig].gi : FG_ID_NONE;
  gpmSample->at_ns = fg_now_ns();
  return NVML_SUCCESS;
}

/* The GPU instance by id on the parent GPU's handle (what nvidia-smi and DCGM pass). */
API nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample) {
  DEVICE_CALL(device);
  if (!gpmSample || gpmSample->magic != GPM_MAGIC || h->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!gpm_supported(g) || !g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  int found = -1;
  for (uint32_t m = 0; m < g->mig_count; m++)
    if (FG_LOAD(&g->mig[m].present) != FG_MIG_FREE && g->mig[m].gi == gpuInstanceId) found = (int)m;
  if (found < 0) return NVML_ERROR_NOT_FOUND;
  gpmSample->taken = 1;
  gpmSample->gpu = h->gpu;
  gpmSample->mig = found;
  gpmSample->gpu_instance_id = gpuInstanceId;
  gpmSample->at_ns = fg_now_ns();
  return NVML_SUCCESS;
}

/* Busy fraction (0..1) of what a sample covers over [from, to). */
static double busy_fraction(const fg_state_t *st, const struct nvmlGpmSample_opaque *s, uint64_t from, uint64_t to) {
  const fg_gpu_t *g = &st->gpus[s->gpu];
  double span = (double)(to - from);
  if (s->mig >= 0) return (double)fg_busy_ns(st, s->gpu, s->mig + 1, from, to) / span;
  if (!g->mig_current || g->mig_count == 0) return (double)fg_busy_ns(st, s->gpu, 0, from, to) / span;
  /* the whole GPU in MIG mode: the slices' busy fractions weighted by their SMs */
  double acc = 0;
  for (uint32_t m = 0; m < g->mig_count; m++)
    if (FG_LOAD(&g->mig[m].present) != FG_MIG_FREE)
      acc += (double)fg_busy_ns(st, s->gpu, (int)m + 1, from, to) / span * g->mig[m].sm_count;
  return g->sm_count ? acc / g->sm_count : 0;
}

API nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet) {
  SYSTEM_CALL();
  if (!metricsGet) return NVML_ERROR_INVALID_ARGUMENT;
  if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const struct nvmlGpmSample_opaque *a = metricsGet->sample1, *b = metricsGet->sample2;
  if (metricsGet->numMetrics > NVML_GPM_METRIC_MAX || !a || !b || a->magic != GPM_MAGIC || b->magic != GPM_MAGIC)
    return NVML_ERROR_INVALID_ARGUMENT;
  /* two samples of the same engine, the second later */
  if (!a->taken || !b->taken || a->gpu != b->gpu || a->mig != b->mig || a->gpu_instance_id != b->gpu_instance_id ||
      b->at_ns <= a->at_ns || (unsigned)a->gpu >= st->gpu_count)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (FG_LOAD(&st->gpus[a->gpu].lost)) return NVML_ERROR_GPU_IS_LOST;
  double busy = busy_fraction(st, a, a->at_ns, b->at_ns);
  if (busy > 1) busy = 1;
  for (unsigned i = 0; i < metricsGet->numMetrics; i++) {
    nvmlGpmMetric_t *m = &metricsGet->metrics[i];
    memset(&m->metricInfo, 0, sizeof m->metricInfo);
    m->value = 0;
    switch (m->metricId) {
      case NVML_GPM_METRIC_GRAPHICS_UTIL:
      case NVML_GPM_METRIC_SM_UTIL:
      case NVML_GPM_METRIC_SM_OCCUPANCY:
        m->nvmlReturn = NVML_SUCCESS;
        m->value = busy * 100.0;
        break;
      default:
        m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}
