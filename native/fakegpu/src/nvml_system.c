/* Fake libnvidia-ml: the older init and system entry points, confidential
 * computing and field values, for real NVML clients. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "nvml_internal.h"

/* ---- init: the v1 name and the flags variant map the same state as nvmlInit_v2 ---- */

API nvmlInit(void) { return fg_nvml_init(); }

/* NO_GPUS / NO_ATTACH change nothing here: the state holds at least one GPU and nothing attaches */
API nvmlInitWithFlags(unsigned int flags) {
  (void)flags;
  return fg_nvml_init();
}

/* ---- system ---- */

API nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion) {
  SYSTEM_CALL();
  if (!cudaDriverVersion) return NVML_ERROR_INVALID_ARGUMENT;
  *cudaDriverVersion = st->cuda_version;
  return NVML_SUCCESS;
}

/* the process's command name, from /proc as the real driver's is */
API nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length) {
  SYSTEM_CALL();
  char path[64], comm[256];
  snprintf(path, sizeof path, "/proc/%u/comm", pid);
  FILE *f = fopen(path, "r");
  if (!f) return NVML_ERROR_NOT_FOUND;
  size_t n = fread(comm, 1, sizeof comm - 1, f);
  fclose(f);
  while (n > 0 && (comm[n - 1] == '\n' || comm[n - 1] == '\0')) n--;
  comm[n] = '\0';
  return fg_nvml_copy_str(name, length, comm);
}

/* S-class units and excluded GPUs: a workstation has none */
API nvmlUnitGetCount(unsigned int *unitCount) {
  SYSTEM_CALL();
  if (!unitCount) return NVML_ERROR_INVALID_ARGUMENT;
  *unitCount = 0;
  return NVML_SUCCESS;
}

API nvmlGetExcludedDeviceCount(unsigned int *deviceCount) {
  SYSTEM_CALL();
  if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = 0;
  return NVML_SUCCESS;
}

/* ---- confidential computing: Hopper is capable, and it is off ---- */

API nvmlSystemGetConfComputeCapabilities(nvmlConfComputeSystemCaps_t *capabilities) {
  SYSTEM_CALL();
  if (!capabilities) return NVML_ERROR_INVALID_ARGUMENT;
  int all_capable = st->gpu_count > 0;
  for (unsigned i = 0; i < st->gpu_count; i++) all_capable &= fg_nvml_model(&st->gpus[i]).cc_capable;
  capabilities->cpuCaps = 0; /* NVML_CC_SYSTEM_CPU_CAPS_NONE */
  capabilities->gpusCaps = all_capable ? NVML_CC_SYSTEM_GPUS_CC_CAPABLE : NVML_CC_SYSTEM_GPUS_CC_NOT_CAPABLE;
  return NVML_SUCCESS;
}

API nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t *state) {
  SYSTEM_CALL();
  if (!state) return NVML_ERROR_INVALID_ARGUMENT;
  memset(state, 0, sizeof *state); /* environment unavailable, feature disabled, devtools off */
  return NVML_SUCCESS;
}

/* With confidential computing off, all of the memory is unprotected. */
API nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device, nvmlConfComputeMemSizeInfo_t *memInfo) {
  DEVICE_CALL(device);
  if (!memInfo) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0 || !fg_nvml_model(g).cc_capable) return NVML_ERROR_NOT_SUPPORTED;
  memInfo->protectedMemSizeKib = 0;
  memInfo->unprotectedMemSizeKib = g->memory_total / 1024;
  return NVML_SUCCESS;
}

API nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device, nvmlMemory_t *memory) {
  DEVICE_CALL(device);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0 || !fg_nvml_model(g).cc_capable) return NVML_ERROR_NOT_SUPPORTED;
  memset(memory, 0, sizeof *memory);
  return NVML_SUCCESS;
}

/* ---- field values: no field is simulated; each answers NOT_SUPPORTED in its own slot ---- */

API nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values) {
  DEVICE_CALL(device);
  if (valuesCount < 0 || (!values && valuesCount > 0)) return NVML_ERROR_INVALID_ARGUMENT;
  long long now = (long long)fg_real_us();
  for (int i = 0; i < valuesCount; i++) {
    values[i].timestamp = now;
    values[i].latencyUsec = 0;
    values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    memset(&values[i].value, 0, sizeof values[i].value);
  }
  return NVML_SUCCESS;
}
