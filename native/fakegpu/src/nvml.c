/* Fake libnvidia-ml.so.1: every entry point of native/include/nvml_abi.h,
 * answered from the shared state. Reads never take the shared lock (a
 * SIGSTOPped writer must not freeze a sampler). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fg_scenario.h"
#include "nvml_internal.h"

#define MAX_SAMPLES 1024

static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
fg_state_t *g_st;
static int g_refs;
struct nvmlDevice_opaque g_dev[FG_MAX_GPUS][FG_MAX_ENGINES];
struct nvmlGpuInstance_opaque g_gi[FG_MAX_GPUS][FG_MAX_MIG];

nvmlReturn_t fg_nvml_copy_str(char *dst, unsigned int length, const char *src) {
  if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
  size_t n = strlen(src);
  if (length < n + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(dst, src, n + 1);
  return NVML_SUCCESS;
}
#define copy_str fg_nvml_copy_str

/* ---- init ---- */

/* Every init entry point: a failure injected on nvmlInit_v2 fails them all. */
nvmlReturn_t fg_nvml_init(void) {
  pthread_mutex_lock(&g_init_mu);
  nvmlReturn_t rc = NVML_SUCCESS;
  if (g_refs == 0) {
    char err[256];
    fg_state_t *st = fg_state_map(fg_state_path(), err, sizeof err);
    if (!st) {
      rc = NVML_ERROR_DRIVER_NOT_LOADED;
    } else {
      int fc = fg_fault_lookup(st, "nvmlInit_v2", -1);
      if (fc) {
        fg_state_unmap(st);
        rc = fc;
      } else {
        for (int gpu = 0; gpu < FG_MAX_GPUS; gpu++) {
          for (int e = 0; e < FG_MAX_ENGINES; e++) g_dev[gpu][e] = (struct nvmlDevice_opaque){HANDLE_MAGIC, gpu, e - 1};
          for (int m = 0; m < FG_MAX_MIG; m++) g_gi[gpu][m] = (struct nvmlGpuInstance_opaque){HANDLE_MAGIC, gpu, m};
          for (int m = 0; m < FG_MAX_MIG; m++) g_ci[gpu][m] = (struct nvmlComputeInstance_opaque){HANDLE_MAGIC, gpu, m};
        }
        g_st = st;
      }
    }
  }
  if (rc == NVML_SUCCESS) g_refs++;
  pthread_mutex_unlock(&g_init_mu);
  return rc;
}

API nvmlInit_v2(void) { return fg_nvml_init(); }

API nvmlShutdown(void) {
  pthread_mutex_lock(&g_init_mu);
  nvmlReturn_t rc = NVML_SUCCESS;
  if (g_refs == 0) {
    rc = NVML_ERROR_UNINITIALIZED;
  } else if (--g_refs == 0) {
    fg_state_t *st = g_st;
    g_st = NULL;
    fg_state_unmap(st);
  }
  pthread_mutex_unlock(&g_init_mu);
  return rc;
}

FG_EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}

/* ---- system ---- */

API nvmlSystemGetDriverVersion(char *version, unsigned int length) {
  SYSTEM_CALL();
  return copy_str(version, length, st->driver_version);
}

API nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
  SYSTEM_CALL();
  return copy_str(version, length, st->nvml_version);
}

API nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion) {
  SYSTEM_CALL();
  if (!cudaDriverVersion) return NVML_ERROR_INVALID_ARGUMENT;
  *cudaDriverVersion = st->cuda_version;
  return NVML_SUCCESS;
}

API nvmlDeviceGetCount_v2(unsigned int *count) {
  SYSTEM_CALL();
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = st->gpu_count;
  return NVML_SUCCESS;
}

API nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
  fg_state_t *st = g_st;
  if (!st) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= st->gpu_count) return NVML_ERROR_INVALID_ARGUMENT;
  int fc = fg_fault_lookup(st, __func__, (int)index);
  if (fc) return fc;
  *device = dev_handle((int)index, -1);
  return NVML_SUCCESS;
}

/* ---- identity ---- */

API nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index) {
  DEVICE_CALL(device);
  if (!index) return NVML_ERROR_INVALID_ARGUMENT;
  *index = (unsigned)h->gpu;
  return NVML_SUCCESS;
}

API nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
  DEVICE_CALL(device);
  return copy_str(name, length, h->mig >= 0 ? g->mig[h->mig].name : g->name);
}

API nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
  DEVICE_CALL(device);
  return copy_str(uuid, length, h->mig >= 0 ? g->mig[h->mig].uuid : g->uuid);
}

API nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
  DEVICE_CALL(device);
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", g->pci_domain & 0xffff, g->pci_bus,
           g->pci_device);
  snprintf(pci->busId, sizeof pci->busId, "%s", g->pci_bus_id);
  pci->domain = g->pci_domain;
  pci->bus = g->pci_bus;
  pci->device = g->pci_device;
  pci->pciDeviceId = g->pci_device_id;
  pci->pciSubSystemId = g->pci_subsys_id;
  return NVML_SUCCESS;
}

/* ---- memory ---- */

static void mem_numbers(fg_state_t *st, const struct nvmlDevice_opaque *h, unsigned long long *total,
                        unsigned long long *reserved, unsigned long long *procs) {
  fg_reap(st, 0);
  const fg_gpu_t *g = &st->gpus[h->gpu];
  if (h->mig >= 0) {
    *total = g->mig[h->mig].memory_total;
    *reserved = 0;
    *procs = FG_LOAD(&g->mig[h->mig].proc_used);
  } else {
    *total = g->memory_total;
    *reserved = g->memory_reserved;
    *procs = FG_LOAD(&g->proc_used);
  }
  if (*reserved + *procs > *total) *procs = *total - *reserved;
}

API nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
  DEVICE_CALL(device);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long total, reserved, procs;
  mem_numbers(st, h, &total, &reserved, &procs);
  memory->total = total;
  memory->used = reserved + procs; /* v1 counts the driver's reservation as used */
  memory->free = total - memory->used;
  return NVML_SUCCESS;
}

API nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
  DEVICE_CALL(device);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  unsigned long long total, reserved, procs;
  mem_numbers(st, h, &total, &reserved, &procs);
  memory->total = total;
  memory->reserved = reserved;
  memory->used = procs;
  memory->free = total - reserved - procs;
  return NVML_SUCCESS;
}

/* ---- readings ---- */

API nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization) {
  DEVICE_CALL(device);
  if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0 || g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  unsigned u = fg_gpu_util(st, h->gpu);
  utilization->gpu = u;
  utilization->memory = fg_mem_util(u);
  return NVML_SUCCESS;
}

API nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensorType, unsigned int *temp) {
  DEVICE_CALL(device);
  if (!temp || sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *temp = fg_temperature(st, h->gpu, fg_gpu_util(st, h->gpu));
  return NVML_SUCCESS;
}

API nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *milliwatts) {
  DEVICE_CALL(device);
  if (!milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *milliwatts = fg_power_mw(st, h->gpu, fg_gpu_util(st, h->gpu));
  return NVML_SUCCESS;
}

API nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *milliwatts) {
  DEVICE_CALL(device);
  if (!milliwatts) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *milliwatts = g->power_limit_mw;
  return NVML_SUCCESS;
}

API nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned int clockType, unsigned int *mhz) {
  DEVICE_CALL(device);
  if (!mhz) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  switch (clockType) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *mhz = fg_sm_clock(st, h->gpu, fg_gpu_util(st, h->gpu)); return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *mhz = fg_mem_clock(st, h->gpu); return NVML_SUCCESS;
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
}

API nvmlDeviceGetComputeMode(nvmlDevice_t device, unsigned int *mode) {
  DEVICE_CALL(device);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0) return NVML_ERROR_NOT_SUPPORTED;
  *mode = FG_LOAD(&g->compute_mode);
  return NVML_SUCCESS;
}

/* ---- MIG ---- */

API nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode) {
  DEVICE_CALL(device);
  if (!currentMode || !pendingMode || h->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *currentMode = g->mig_current;
  *pendingMode = g->mig_pending;
  return NVML_SUCCESS;
}

API nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *a) {
  DEVICE_CALL(device);
  if (!a) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig < 0) return NVML_ERROR_NOT_SUPPORTED; /* real NVML: MIG device handles only */
  const fg_mig_t *m = &g->mig[h->mig];
  memset(a, 0, sizeof *a);
  a->multiprocessorCount = m->sm_count;
  a->sharedCopyEngineCount = m->copy_engines;
  a->sharedDecoderCount = m->decoders;
  a->sharedEncoderCount = m->encoders;
  a->sharedJpegCount = m->jpegs;
  a->sharedOfaCount = m->ofas;
  a->gpuInstanceSliceCount = m->slices;
  a->computeInstanceSliceCount = m->slices;
  a->memorySizeMB = m->memory_total / FG_MIB;
  return NVML_SUCCESS;
}

API nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count) {
  DEVICE_CALL(device);
  if (!count || h->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *count = FG_MAX_MIG;
  return NVML_SUCCESS;
}

API nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice) {
  DEVICE_CALL(device);
  if (!migDevice || h->mig >= 0 || index >= FG_MAX_MIG) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  if (!g->mig_current || !fg_mig_visible(g, index)) return NVML_ERROR_NOT_FOUND;
  *migDevice = dev_handle(h->gpu, (int)index);
  return NVML_SUCCESS;
}

API nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice) {
  DEVICE_CALL(device);
  if (!isMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
  *isMigDevice = h->mig >= 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id) {
  DEVICE_CALL(device);
  if (!id) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig < 0) return NVML_ERROR_NOT_SUPPORTED;
  *id = g->mig[h->mig].gi;
  return NVML_SUCCESS;
}

API nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id) {
  DEVICE_CALL(device);
  if (!id) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig < 0) return NVML_ERROR_NOT_SUPPORTED;
  *id = g->mig[h->mig].ci;
  return NVML_SUCCESS;
}

API nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance) {
  DEVICE_CALL(device);
  if (!gpuInstance || h->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!g->mig_capable || !g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  for (uint32_t m = 0; m < g->mig_count; m++)
    if (FG_LOAD(&g->mig[m].present) != FG_MIG_FREE && g->mig[m].gi == id) {
      *gpuInstance = &g_gi[h->gpu][m];
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

API nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info) {
  fg_state_t *st = g_st;
  if (!st) return NVML_ERROR_UNINITIALIZED;
  const struct nvmlGpuInstance_opaque *gi = gpuInstance;
  if (!info || (uintptr_t)gi - (uintptr_t)g_gi >= sizeof g_gi || gi->magic != HANDLE_MAGIC ||
      (unsigned)gi->gpu >= st->gpu_count)
    return NVML_ERROR_INVALID_ARGUMENT;
  fg_gpu_t *g = &st->gpus[gi->gpu];
  if (FG_LOAD(&g->lost)) return NVML_ERROR_GPU_IS_LOST;
  int fc = fg_fault_lookup(st, __func__, gi->gpu);
  if (fc) return fc;
  if ((unsigned)gi->mig >= g->mig_count || FG_LOAD(&g->mig[gi->mig].present) == FG_MIG_FREE)
    return NVML_ERROR_INVALID_ARGUMENT;
  const fg_mig_t *m = &g->mig[gi->mig];
  info->device = dev_handle(gi->gpu, -1);
  info->id = m->gi;
  info->profileId = m->profile_id;
  info->placement.start = m->placement_start;
  info->placement.size = m->placement_size;
  return NVML_SUCCESS;
}

API nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                         nvmlGpuInstanceProfileInfo_v2_t *info) {
  DEVICE_CALL(device);
  if (!info || h->mig >= 0 || profile >= NVML_GPU_INSTANCE_PROFILE_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != nvmlGpuInstanceProfileInfo_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (!g->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  fg_profile_t p;
  if (!fg_profile_by_id(g, profile, &p)) return NVML_ERROR_NOT_SUPPORTED;
  unsigned version = info->version;
  memset(info, 0, sizeof *info);
  info->version = version;
  info->id = p.id;
  info->isP2pSupported = 0;
  info->sliceCount = p.slices;
  info->instanceCount = p.max_instances;
  info->multiprocessorCount = p.sm;
  info->copyEngineCount = p.ce;
  info->decoderCount = p.dec;
  info->encoderCount = p.enc;
  info->jpegCount = p.jpg;
  info->ofaCount = p.ofa;
  info->memorySizeMB = p.mem_mib;
  snprintf(info->name, sizeof info->name, "MIG %s", p.name);
  return NVML_SUCCESS;
}

/* ---- processes ---- */

/* Processes visible through handle h, of `type` (-1: any). */
typedef struct {
  int pid, mig;
  unsigned long long used;
} pinfo_t;

static unsigned collect(fg_state_t *st, const struct nvmlDevice_opaque *h, int type, pinfo_t *out, unsigned max) {
  fg_reap(st, 0);
  unsigned n = 0;
  uint32_t hwm = FG_LOAD(&st->proc_hwm);
  for (uint32_t i = 0; i < hwm && i < FG_MAX_PROCS; i++) {
    fg_proc_t p;
    if (!fg_proc_copy(st, (int)i, &p)) continue;
    if (p.ckpt_state == FG_CKPT_CHECKPOINTED) continue; /* released its device handles, as on a real driver */
    if (p.gpu != h->gpu) continue;
    if (h->mig >= 0 && p.mig != h->mig) continue;
    if (type >= 0 && p.type != (uint32_t)type) continue;
    if (n < max) out[n] = (pinfo_t){p.pid, p.mig, p.used_mem};
    n++;
  }
  return n;
}

static void ids_of(const fg_gpu_t *g, const pinfo_t *p, unsigned *gi, unsigned *ci) {
  if (p->mig >= 0 && (uint32_t)p->mig < g->mig_count) {
    *gi = g->mig[p->mig].gi;
    *ci = g->mig[p->mig].ci;
  } else {
    *gi = *ci = NVML_INSTANCE_ID_NONE;
  }
}

static void write_record(const fg_gpu_t *g, const pinfo_t *p, void *base, unsigned i, unsigned recsize) {
  unsigned gi, ci;
  ids_of(g, p, &gi, &ci);
  if (recsize == sizeof(nvmlProcessInfo_v1_t)) {
    nvmlProcessInfo_v1_t *r = (nvmlProcessInfo_v1_t *)base + i;
    memset(r, 0, sizeof *r);
    r->pid = (unsigned)p->pid;
    r->usedGpuMemory = p->used;
  } else if (recsize == sizeof(nvmlProcessInfo_v2_t)) {
    nvmlProcessInfo_v2_t *r = (nvmlProcessInfo_v2_t *)base + i;
    memset(r, 0, sizeof *r);
    r->pid = (unsigned)p->pid;
    r->usedGpuMemory = p->used;
    r->gpuInstanceId = gi;
    r->computeInstanceId = ci;
  } else {
    nvmlProcessDetail_v1_t *r = (nvmlProcessDetail_v1_t *)base + i;
    memset(r, 0, sizeof *r);
    r->pid = (unsigned)p->pid;
    r->usedGpuMemory = p->used;
    r->gpuInstanceId = gi;
    r->computeInstanceId = ci;
    r->usedGpuCcProtectedMemory = 0;
  }
}

static nvmlReturn_t list_processes(fg_state_t *st, const struct nvmlDevice_opaque *h, int type,
                                   unsigned int *infoCount, void *infos, unsigned recsize) {
  if (!infoCount || (!infos && *infoCount > 0)) return NVML_ERROR_INVALID_ARGUMENT;
  pinfo_t buf[FG_MAX_PROCS];
  unsigned n = collect(st, h, type, buf, FG_MAX_PROCS);
  if (n > *infoCount) {
    *infoCount = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  const fg_gpu_t *g = &st->gpus[h->gpu];
  for (unsigned i = 0; i < n; i++) write_record(g, &buf[i], infos, i, recsize);
  *infoCount = n;
  return NVML_SUCCESS;
}

static unsigned v3_size(const fg_state_t *st) {
  return FG_LOAD(&st->v3_record_size) == 32 ? sizeof(nvmlProcessDetail_v1_t) : sizeof(nvmlProcessInfo_v2_t);
}

#define PROC_CALL(fn, type, rectype, recsize)                                  \
  API fn(nvmlDevice_t device, unsigned int *infoCount, rectype *infos) {       \
    DEVICE_CALL(device);                                                       \
    return list_processes(st, h, type, infoCount, infos, recsize);             \
  }

PROC_CALL(nvmlDeviceGetComputeRunningProcesses_v3, FG_TYPE_COMPUTE, nvmlProcessInfo_v2_t, v3_size(st))
PROC_CALL(nvmlDeviceGetComputeRunningProcesses_v2, FG_TYPE_COMPUTE, nvmlProcessInfo_v2_t, sizeof(nvmlProcessInfo_v2_t))
PROC_CALL(nvmlDeviceGetComputeRunningProcesses, FG_TYPE_COMPUTE, nvmlProcessInfo_v1_t, sizeof(nvmlProcessInfo_v1_t))
PROC_CALL(nvmlDeviceGetGraphicsRunningProcesses_v3, FG_TYPE_GRAPHICS, nvmlProcessInfo_v2_t, v3_size(st))
PROC_CALL(nvmlDeviceGetGraphicsRunningProcesses_v2, FG_TYPE_GRAPHICS, nvmlProcessInfo_v2_t, sizeof(nvmlProcessInfo_v2_t))
PROC_CALL(nvmlDeviceGetGraphicsRunningProcesses, FG_TYPE_GRAPHICS, nvmlProcessInfo_v1_t, sizeof(nvmlProcessInfo_v1_t))
PROC_CALL(nvmlDeviceGetMPSComputeRunningProcesses_v3, FG_TYPE_MPS, nvmlProcessInfo_v2_t, v3_size(st))
PROC_CALL(nvmlDeviceGetMPSComputeRunningProcesses_v2, FG_TYPE_MPS, nvmlProcessInfo_v2_t, sizeof(nvmlProcessInfo_v2_t))
PROC_CALL(nvmlDeviceGetMPSComputeRunningProcesses, FG_TYPE_MPS, nvmlProcessInfo_v1_t, sizeof(nvmlProcessInfo_v1_t))

API nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, nvmlProcessDetailList_v1_t *plist) {
  DEVICE_CALL(device);
  if (!plist) return NVML_ERROR_INVALID_ARGUMENT;
  if (plist->version != nvmlProcessDetailList_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  int type;
  switch (plist->mode) {
    case NVML_PROCESS_MODE_COMPUTE: type = FG_TYPE_COMPUTE; break;
    case NVML_PROCESS_MODE_GRAPHICS: type = FG_TYPE_GRAPHICS; break;
    case NVML_PROCESS_MODE_MPS: type = FG_TYPE_MPS; break;
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
  unsigned int cap = plist->procArray ? plist->numProcArrayEntries : 0;
  nvmlReturn_t rc = list_processes(st, h, type, &cap, plist->procArray, sizeof(nvmlProcessDetail_v1_t));
  plist->numProcArrayEntries = cap;
  return rc;
}

/* ---- per-process utilization ---- */

typedef struct {
  uint64_t from, to;
  unsigned n;
  struct {
    int pid;
    uint64_t busy;
  } e[MAX_SAMPLES];
} putil_t;

static void putil_visit(const fg_exec_rec_t *rec, void *vctx) {
  putil_t *c = vctx;
  uint64_t s = rec->start_ns > c->from ? rec->start_ns : c->from;
  uint64_t e = rec->end_ns < c->to ? rec->end_ns : c->to;
  if (e <= s) return;
  unsigned i;
  for (i = 0; i < c->n; i++)
    if (c->e[i].pid == rec->pid) break;
  if (i == c->n) {
    if (c->n == MAX_SAMPLES) return;
    c->e[c->n].pid = rec->pid;
    c->e[c->n].busy = 0;
    c->n++;
  }
  c->e[i].busy += e - s;
}

/* Samples newer than lastSeen (CLOCK_REALTIME µs); window_us gets the window. */
static void process_samples(fg_state_t *st, int gpu, unsigned long long lastSeen, putil_t *c,
                            unsigned long long *now_us, uint64_t *window_ns) {
  uint64_t now = fg_now_ns();
  *now_us = fg_real_us();
  uint64_t win = 1000000000ull;
  if (lastSeen != 0 && lastSeen < *now_us && *now_us - lastSeen <= 10000000ull) win = (*now_us - lastSeen) * 1000ull;
  c->from = now - win;
  c->to = now;
  c->n = 0;
  *window_ns = win;
  fg_ring_scan(st, gpu, 0, c->from, c->to, putil_visit, c);
}

static unsigned sm_pct(uint64_t busy, uint64_t win) {
  unsigned v = win ? (unsigned)((busy * 100 + win / 2) / win) : 0;
  return v > 100 ? 100 : v;
}

API nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                    unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp) {
  DEVICE_CALL(device);
  if (!processSamplesCount) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0 || g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  putil_t c;
  unsigned long long now_us;
  uint64_t win;
  process_samples(st, h->gpu, lastSeenTimeStamp, &c, &now_us, &win);
  if (c.n == 0) {
    *processSamplesCount = 0;
    return NVML_ERROR_NOT_FOUND;
  }
  if (!utilization || *processSamplesCount < c.n) {
    *processSamplesCount = c.n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < c.n; i++) {
    nvmlProcessUtilizationSample_t *s = &utilization[i];
    memset(s, 0, sizeof *s);
    s->pid = (unsigned)c.e[i].pid;
    s->timeStamp = now_us;
    s->smUtil = sm_pct(c.e[i].busy, win);
    s->memUtil = fg_mem_util(s->smUtil);
  }
  *processSamplesCount = c.n;
  return NVML_SUCCESS;
}

API nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device, nvmlProcessesUtilizationInfo_v1_t *info) {
  DEVICE_CALL(device);
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != nvmlProcessesUtilizationInfo_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (h->mig >= 0 || g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
  putil_t c;
  unsigned long long now_us;
  uint64_t win;
  process_samples(st, h->gpu, info->lastSeenTimeStamp, &c, &now_us, &win);
  if (c.n == 0) {
    info->processSamplesCount = 0;
    return NVML_ERROR_NOT_FOUND;
  }
  if (!info->procUtilArray || info->processSamplesCount < c.n) {
    info->processSamplesCount = c.n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < c.n; i++) {
    nvmlProcessUtilizationInfo_v1_t *s = &info->procUtilArray[i];
    memset(s, 0, sizeof *s);
    s->timeStamp = now_us;
    s->pid = (unsigned)c.e[i].pid;
    s->smUtil = sm_pct(c.e[i].busy, win);
    s->memUtil = fg_mem_util(s->smUtil);
  }
  info->processSamplesCount = c.n;
  return NVML_SUCCESS;
}
