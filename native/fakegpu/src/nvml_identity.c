/* Fake libnvidia-ml: what a device is (model facts, handles by UUID and PCI
 * address, PCI info layouts, brand, architecture) for real NVML clients. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "fg_scenario.h"
#include "nvml_internal.h"

/* Data-centre boards: passive cooling, ECC on; thresholds as nvidia-smi -q shows them. */
static const fg_nvml_model_t A100_40 = {NVML_DEVICE_ARCH_AMPERE, NVML_BRAND_NVIDIA, 4, 16, 5120, 64, 65536, 92, 89, 95, 85, 0, 1, 0};
static const fg_nvml_model_t A100_80 = {NVML_DEVICE_ARCH_AMPERE, NVML_BRAND_NVIDIA, 4, 16, 5120, 64, 131072, 92, 89, 95, 85, 0, 1, 0};
static const fg_nvml_model_t H100 = {NVML_DEVICE_ARCH_HOPPER, NVML_BRAND_NVIDIA, 5, 16, 5120, 128, 131072, 92, 89, 95, 87, 0, 1, 1};

static unsigned arch_of_cc(unsigned major, unsigned minor) {
  if (major == 7) return minor >= 5 ? NVML_DEVICE_ARCH_TURING : NVML_DEVICE_ARCH_VOLTA;
  if (major == 8) return minor >= 9 ? NVML_DEVICE_ARCH_ADA : NVML_DEVICE_ARCH_AMPERE;
  if (major == 9) return NVML_DEVICE_ARCH_HOPPER;
  if (major == 10 || major == 12) return NVML_DEVICE_ARCH_BLACKWELL;
  return NVML_DEVICE_ARCH_UNKNOWN;
}

fg_nvml_model_t fg_nvml_model(const fg_gpu_t *g) {
  switch ((fg_family_t)g->family) {
    case FG_FAM_A100_40: return A100_40;
    case FG_FAM_A100_80: return A100_80;
    case FG_FAM_H100_80: return H100;
    default: break;
  }
  /* a workstation/desktop card: actively cooled, no ECC; architecture from its compute capability */
  unsigned brand = strstr(g->name, "GeForce") ? NVML_BRAND_GEFORCE
                   : strstr(g->name, "RTX")   ? NVML_BRAND_NVIDIA_RTX
                                              : NVML_BRAND_NVIDIA;
  return (fg_nvml_model_t){arch_of_cc(g->cc_major, g->cc_minor), brand, 4, 16, 384, 128, 256, 98, 95, 0, 93, 1, 0, 0};
}

/* ---- system-wide counts and v1 names ---- */

API nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

API nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

API nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
  SYSTEM_CALL();
  if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned i = 0; i < st->gpu_count; i++) {
    const fg_gpu_t *g = &st->gpus[i];
    if (!strcmp(uuid, g->uuid)) {
      *device = dev_handle((int)i, -1);
      return FG_LOAD(&g->lost) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
    }
    for (uint32_t m = 0; m < g->mig_count; m++)
      if (g->mig_current && fg_mig_visible(g, m) && !strcmp(uuid, g->mig[m].uuid)) {
        *device = dev_handle((int)i, (int)m);
        return FG_LOAD(&g->lost) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
      }
  }
  return NVML_ERROR_NOT_FOUND;
}

/* "domain:bus:device.function" in hex, the domain optional, as nvidia-smi accepts it */
static int parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev) {
  unsigned fn = 0;
  int end = 0;
  if (sscanf(s, "%x:%x:%x.%x%n", dom, bus, dev, &fn, &end) == 4 && s[end] == '\0') return 1;
  *dom = 0;
  end = 0;
  return sscanf(s, "%x:%x.%x%n", bus, dev, &fn, &end) == 3 && s[end] == '\0';
}

API nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device) {
  SYSTEM_CALL();
  unsigned dom, bus, dev;
  if (!pciBusId || !device || !parse_bus_id(pciBusId, &dom, &bus, &dev)) return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned i = 0; i < st->gpu_count; i++) {
    const fg_gpu_t *g = &st->gpus[i];
    if (g->pci_domain == dom && g->pci_bus == bus && g->pci_device == dev) {
      *device = dev_handle((int)i, -1);
      return FG_LOAD(&g->lost) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

API nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device) {
  return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

API nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device) {
  DEVICE_CALL(migDevice);
  if (!device || h->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
  *device = dev_handle(h->gpu, -1);
  return NVML_SUCCESS;
}

/* ---- identity ---- */

API nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber) {
  BOARD_CALL(device);
  if (!minorNumber) return NVML_ERROR_INVALID_ARGUMENT;
  *minorNumber = (unsigned)h->gpu; /* /dev/nvidiaN */
  return NVML_SUCCESS;
}

API nvmlDeviceGetBrand(nvmlDevice_t device, unsigned int *type) {
  DEVICE_CALL(device);
  if (!type) return NVML_ERROR_INVALID_ARGUMENT;
  *type = fg_nvml_model(g).brand;
  return NVML_SUCCESS;
}

API nvmlDeviceGetArchitecture(nvmlDevice_t device, unsigned int *arch) {
  DEVICE_CALL(device);
  if (!arch) return NVML_ERROR_INVALID_ARGUMENT;
  *arch = fg_nvml_model(g).arch;
  return NVML_SUCCESS;
}

API nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
  DEVICE_CALL(device);
  if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  *major = (int)g->cc_major;
  *minor = (int)g->cc_minor;
  return NVML_SUCCESS;
}

API nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores) {
  DEVICE_CALL(device);
  if (!numCores) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned sms = h->mig >= 0 ? g->mig[h->mig].sm_count : g->sm_count;
  *numCores = sms * fg_nvml_model(g).cores_per_sm;
  return NVML_SUCCESS;
}

API nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int *busWidth) {
  BOARD_CALL(device);
  if (!busWidth) return NVML_ERROR_INVALID_ARGUMENT;
  *busWidth = fg_nvml_model(g).bus_width;
  return NVML_SUCCESS;
}

/* 13 digits, stable per board: derived from the UUID's last hex digits. */
API nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length) {
  BOARD_CALL(device);
  if (fg_nvml_model(g).brand == NVML_BRAND_GEFORCE) return NVML_ERROR_NOT_SUPPORTED; /* consumer boards have none */
  unsigned long long tail = 0;
  size_t n = strlen(g->uuid);
  if (n > 12) sscanf(g->uuid + n - 12, "%12llx", &tail);
  char buf[16];
  snprintf(buf, sizeof buf, "1%012llu", tail % 1000000000000ull);
  return fg_nvml_copy_str(serial, length, buf);
}

API nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int *multiGpuBool) {
  BOARD_CALL(device);
  if (!multiGpuBool) return NVML_ERROR_INVALID_ARGUMENT;
  *multiGpuBool = 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetVirtualizationMode(nvmlDevice_t device, unsigned int *mode) {
  BOARD_CALL(device);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = NVML_GPU_VIRTUALIZATION_MODE_NONE; /* bare metal */
  return NVML_SUCCESS;
}

API nvmlDeviceGetAttributes(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes) {
  return nvmlDeviceGetAttributes_v2(device, attributes);
}

/* The aperture (a MIG device gets its share of memory slices); the driver's own mappings use 1 MiB. */
API nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory) {
  DEVICE_CALL(device);
  if (!bar1Memory) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long total = (unsigned long long)fg_nvml_model(g).bar1_mib * FG_MIB;
  if (h->mig >= 0) total = total * g->mig[h->mig].placement_size / 8;
  bar1Memory->bar1Total = total;
  bar1Memory->bar1Used = FG_MIB;
  bar1Memory->bar1Free = total - FG_MIB;
  return NVML_SUCCESS;
}

/* ---- PCI: the v1/v2 layout (busId of 16) and the Ext one ---- */

static nvmlReturn_t pci_v1(nvmlDevice_t device, nvmlPciInfo_v1_t *pci) {
  nvmlPciInfo_t full;
  nvmlReturn_t rc = nvmlDeviceGetPciInfo_v3(device, &full);
  if (rc != NVML_SUCCESS) return rc;
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof *pci);
  memcpy(pci->busId, full.busIdLegacy, sizeof pci->busId);
  pci->domain = full.domain;
  pci->bus = full.bus;
  pci->device = full.device;
  pci->pciDeviceId = full.pciDeviceId;
  pci->pciSubSystemId = full.pciSubSystemId;
  return NVML_SUCCESS;
}

API nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_v1_t *pci) { return pci_v1(device, pci); }
API nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_v1_t *pci) { return pci_v1(device, pci); }

API nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_v1_t *pci) {
  DEVICE_CALL(device);
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  if (pci->version != nvmlPciInfoExt_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  memset(pci, 0, sizeof *pci);
  pci->version = nvmlPciInfoExt_v1;
  pci->domain = g->pci_domain;
  pci->bus = g->pci_bus;
  pci->device = g->pci_device;
  pci->pciDeviceId = g->pci_device_id;
  pci->pciSubSystemId = g->pci_subsys_id;
  pci->baseClass = 0x03; /* display controller */
  pci->subClass = fg_nvml_model(g).fans ? 0x00 : 0x02; /* VGA on a desktop card, 3D controller on a data-centre one */
  snprintf(pci->busId, sizeof pci->busId, "%s", g->pci_bus_id);
  return NVML_SUCCESS;
}
