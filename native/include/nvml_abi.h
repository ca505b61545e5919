/* Our own declarations of the part of the NVML ABI that gpushare uses.
 * Written from NVIDIA's documented ABI so nothing needs nvml.h at build time
 * (as nvtop does). Shared by the addon (caller) and the simulated driver
 * (implementer); keep every layout byte-exact with the real driver. */
#ifndef GPUSHARE_NVML_ABI_H
#define GPUSHARE_NVML_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t;
typedef struct nvmlDevice_opaque *nvmlDevice_t;
typedef struct nvmlGpuInstance_opaque *nvmlGpuInstance_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999
};

#define NVML_STRUCT_VERSION_OF(type, ver) ((unsigned int)(sizeof(type) | ((ver) << 24U)))

#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

#define NVML_COMPUTEMODE_DEFAULT 0
#define NVML_COMPUTEMODE_EXCLUSIVE_THREAD 1
#define NVML_COMPUTEMODE_PROHIBITED 2
#define NVML_COMPUTEMODE_EXCLUSIVE_PROCESS 3

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* gpuInstanceId / computeInstanceId when the GPU is not in MIG mode */
#define NVML_INSTANCE_ID_NONE 0xFFFFFFFFu

#define NVML_PROCESS_MODE_COMPUTE 0
#define NVML_PROCESS_MODE_GRAPHICS 1
#define NVML_PROCESS_MODE_MPS 2

typedef struct {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int version; /* nvmlMemory_v2 */
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION_OF(nvmlMemory_v2_t, 2)

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

/* 16 bytes: the v1 process calls */
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* 24 bytes: the _v2 and _v3 process calls (some R535 drivers write 32-byte
 * nvmlProcessDetail_v1_t records from _v3 instead) */
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/* 32 bytes */
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;

typedef struct {
  unsigned int version; /* nvmlProcessDetailList_v1 */
  unsigned int mode;    /* NVML_PROCESS_MODE_* */
  unsigned int numProcArrayEntries;
  nvmlProcessDetail_v1_t *procArray;
} nvmlProcessDetailList_v1_t;
#define nvmlProcessDetailList_v1 NVML_STRUCT_VERSION_OF(nvmlProcessDetailList_v1_t, 1)

typedef struct {
  unsigned int pid;
  unsigned long long timeStamp; /* CPU time in microseconds */
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
  unsigned long long timeStamp;
  unsigned int pid;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
  unsigned int jpgUtil;
  unsigned int ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;

typedef struct {
  unsigned int version; /* nvmlProcessesUtilizationInfo_v1 */
  unsigned int processSamplesCount;
  unsigned long long lastSeenTimeStamp;
  nvmlProcessUtilizationInfo_v1_t *procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;
#define nvmlProcessesUtilizationInfo_v1 NVML_STRUCT_VERSION_OF(nvmlProcessesUtilizationInfo_v1_t, 1)

typedef struct {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct {
  unsigned int start; /* first memory slice */
  unsigned int size;  /* memory slices */
} nvmlGpuInstancePlacement_t;

typedef struct {
  unsigned int version; /* nvmlGpuInstanceProfileInfo_v2 */
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 NVML_STRUCT_VERSION_OF(nvmlGpuInstanceProfileInfo_v2_t, 2)

typedef struct {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

/* GPU instance profile ids (NVML_GPU_INSTANCE_PROFILE_*) */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x12

/* GPU Performance Monitoring (Hopper and later): SM activity of a whole GPU or of one MIG slice,
 * as the difference of two samples. Layouts from NVIDIA's nvml.h (version 1 of nvmlGpmMetricsGet_t,
 * 98 metric entries). */
typedef struct nvmlGpmSample_opaque *nvmlGpmSample_t;

#define NVML_GPM_METRIC_GRAPHICS_UTIL 1
#define NVML_GPM_METRIC_SM_UTIL 2      /* % of SMs busy, 0.0-100.0 */
#define NVML_GPM_METRIC_SM_OCCUPANCY 3 /* % of warps active vs the theoretical maximum */
#define NVML_GPM_METRIC_MAX 98

typedef struct {
  unsigned int metricId;   /* IN */
  nvmlReturn_t nvmlReturn; /* OUT: value is valid only when NVML_SUCCESS */
  double value;
  struct {
    char *shortName;
    char *longName;
    char *unit;
  } metricInfo;
} nvmlGpmMetric_t;

typedef struct {
  unsigned int version; /* NVML_GPM_METRICS_GET_VERSION */
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
#define NVML_GPM_METRICS_GET_VERSION 1

typedef struct {
  unsigned int version; /* NVML_GPM_SUPPORT_VERSION */
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1

/* Function pointer types: one per entry point we resolve with dlsym. */
#define GPUSHARE_NVML_FUNCS(X) \
  X(nvmlInit_v2, (void)) \
  X(nvmlShutdown, (void)) \
  X(nvmlSystemGetDriverVersion, (char *version, unsigned int length)) \
  X(nvmlSystemGetNVMLVersion, (char *version, unsigned int length)) \
  X(nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion)) \
  X(nvmlDeviceGetCount_v2, (unsigned int *count)) \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device)) \
  X(nvmlDeviceGetIndex, (nvmlDevice_t device, unsigned int *index)) \
  X(nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length)) \
  X(nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length)) \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t *pci)) \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t *memory)) \
  X(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t device, nvmlMemory_v2_t *memory)) \
  X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t *utilization)) \
  X(nvmlDeviceGetTemperature, (nvmlDevice_t device, unsigned int sensorType, unsigned int *temp)) \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int *milliwatts)) \
  X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int *milliwatts)) \
  X(nvmlDeviceGetClockInfo, (nvmlDevice_t device, unsigned int clockType, unsigned int *mhz)) \
  X(nvmlDeviceGetComputeMode, (nvmlDevice_t device, unsigned int *mode)) \
  X(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)) \
  X(nvmlDeviceGetAttributes_v2, (nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)) \
  X(nvmlDeviceGetRunningProcessDetailList, (nvmlDevice_t device, nvmlProcessDetailList_v1_t *plist)) \
  X(nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)) \
  X(nvmlDeviceGetComputeRunningProcesses_v2, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)) \
  X(nvmlDeviceGetComputeRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)) \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)) \
  X(nvmlDeviceGetGraphicsRunningProcesses_v2, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)) \
  X(nvmlDeviceGetGraphicsRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)) \
  X(nvmlDeviceGetMPSComputeRunningProcesses_v3, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)) \
  X(nvmlDeviceGetMPSComputeRunningProcesses_v2, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)) \
  X(nvmlDeviceGetMPSComputeRunningProcesses, (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)) \
  X(nvmlDeviceGetProcessesUtilizationInfo, (nvmlDevice_t device, nvmlProcessesUtilizationInfo_v1_t *info)) \
  X(nvmlDeviceGetProcessUtilization, (nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization, unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp)) \
  X(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int *count)) \
  X(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)) \
  X(nvmlDeviceIsMigDeviceHandle, (nvmlDevice_t device, unsigned int *isMigDevice)) \
  X(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id)) \
  X(nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int *id)) \
  X(nvmlDeviceGetGpuInstanceById, (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance)) \
  X(nvmlGpuInstanceGetInfo, (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info)) \
  X(nvmlDeviceGetGpuInstanceProfileInfoV, (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t *info)) \
  X(nvmlGpmQueryDeviceSupport, (nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)) \
  X(nvmlGpmSampleAlloc, (nvmlGpmSample_t *gpmSample)) \
  X(nvmlGpmSampleFree, (nvmlGpmSample_t gpmSample)) \
  X(nvmlGpmSampleGet, (nvmlDevice_t device, nvmlGpmSample_t gpmSample)) \
  X(nvmlGpmMigSampleGet, (nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample)) \
  X(nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t *metricsGet))

#define GPUSHARE_NVML_TYPEDEF(name, params) typedef nvmlReturn_t (*name##_fn) params;
GPUSHARE_NVML_FUNCS(GPUSHARE_NVML_TYPEDEF)
#undef GPUSHARE_NVML_TYPEDEF

typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);

/* ---- Beyond what gpushare calls: what real NVML clients (nvtop, nvitop, gpustat,
 * pynvml) call at start. The simulated driver implements these from its state;
 * native/fakegpu/nvml-entry-points.txt lists every other name, answered
 * NOT_SUPPORTED there. Layouts from NVIDIA's nvml.h (13.3). ---- */

#define NVML_INIT_FLAG_NO_GPUS 1
#define NVML_INIT_FLAG_NO_ATTACH 2

#define NVML_FEATURE_DISABLED 0
#define NVML_FEATURE_ENABLED 1

#define NVML_TEMPERATURE_THRESHOLD_SHUTDOWN 0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1
#define NVML_TEMPERATURE_THRESHOLD_MEM_MAX 2
#define NVML_TEMPERATURE_THRESHOLD_GPU_MAX 3
#define NVML_TEMPERATURE_THRESHOLD_COUNT 12

#define NVML_CLOCK_VIDEO 3
#define NVML_CLOCK_ID_CURRENT 0
#define NVML_CLOCK_ID_APP_CLOCK_TARGET 1
#define NVML_CLOCK_ID_APP_CLOCK_DEFAULT 2
#define NVML_CLOCK_ID_CUSTOMER_BOOST_MAX 3

#define NVML_PSTATE_0 0
#define NVML_PSTATE_8 8

#define NVML_BRAND_GEFORCE 5
#define NVML_BRAND_NVIDIA_RTX 13
#define NVML_BRAND_NVIDIA 14

#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu

#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1
#define NVML_PCIE_LINK_MAX_SPEED_16000MBPS 4
#define NVML_PCIE_LINK_MAX_SPEED_32000MBPS 5

#define NVML_MEMORY_ERROR_TYPE_COUNT 2 /* corrected, uncorrected */
#define NVML_ECC_COUNTER_TYPE_COUNT 2  /* volatile, aggregate */
#define NVML_MEMORY_LOCATION_COUNT 8

#define NVML_GPU_VIRTUALIZATION_MODE_NONE 0
#define NVML_CC_SYSTEM_GPUS_CC_NOT_CAPABLE 0
#define NVML_CC_SYSTEM_GPUS_CC_CAPABLE 1
#define nvmlClocksEventReasonGpuIdle 0x1ull
#define nvmlClocksEventReasonSupported 0x1ffull /* GpuIdle … DisplayClockSetting */

/* The layout of nvmlPciInfo_t shared by the _v1/_v2 calls (52 bytes, busId of 16). */
typedef struct {
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_v1_t;

typedef struct {
  unsigned int version; /* nvmlPciInfoExt_v1 */
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  unsigned int baseClass;
  unsigned int subClass;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfoExt_v1_t;
#define nvmlPciInfoExt_v1 NVML_STRUCT_VERSION_OF(nvmlPciInfoExt_v1_t, 1)

typedef struct {
  unsigned int version; /* nvmlTemperature_v1 */
  unsigned int sensorType;
  int temperature;
} nvmlTemperature_v1_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION_OF(nvmlTemperature_v1_t, 1)

typedef struct {
  unsigned int version; /* nvmlMarginTemperature_v1 */
  int marginTemperature;
} nvmlMarginTemperature_v1_t;
#define nvmlMarginTemperature_v1 NVML_STRUCT_VERSION_OF(nvmlMarginTemperature_v1_t, 1)

typedef struct {
  unsigned long long l1Cache;
  unsigned long long l2Cache;
  unsigned long long deviceMemory;
  unsigned long long registerFile;
} nvmlEccErrorCounts_t;

typedef struct {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct {
  unsigned int sessionsCount;
  unsigned int averageFPS;
  unsigned int averageLatency;
} nvmlFBCStats_t;

typedef struct {
  unsigned long long protectedMemSizeKib;
  unsigned long long unprotectedMemSizeKib;
} nvmlConfComputeMemSizeInfo_t;

typedef struct {
  unsigned int cpuCaps;
  unsigned int gpusCaps;
} nvmlConfComputeSystemCaps_t;

typedef struct {
  unsigned int environment;
  unsigned int ccFeature;
  unsigned int devToolsMode;
} nvmlConfComputeSystemState_t;

typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

/* MIG GPU-instance profile, v1 (no version, no name) */
typedef struct {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlComputeInstance_opaque *nvmlComputeInstance_t;

/* compute instance profiles (NVML_COMPUTE_INSTANCE_PROFILE_*) by compute slices */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT 0x9

typedef struct {
  unsigned int start; /* first compute slice within the GPU instance */
  unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement; /* _v2 only */
} nvmlComputeInstanceInfo_t;

/* 40 bytes */
typedef struct {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp; /* CLOCK_REALTIME µs */
  long long latencyUsec;
  unsigned int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

#define GPUSHARE_NVML_CLIENT_FUNCS(X) \
  X(nvmlInit, (void)) \
  X(nvmlInitWithFlags, (unsigned int flags)) \
  X(nvmlSystemGetCudaDriverVersion, (int *cudaDriverVersion)) \
  X(nvmlSystemGetProcessName, (unsigned int pid, char *name, unsigned int length)) \
  X(nvmlSystemGetConfComputeCapabilities, (nvmlConfComputeSystemCaps_t *capabilities)) \
  X(nvmlSystemGetConfComputeState, (nvmlConfComputeSystemState_t *state)) \
  X(nvmlUnitGetCount, (unsigned int *unitCount)) \
  X(nvmlGetExcludedDeviceCount, (unsigned int *deviceCount)) \
  X(nvmlDeviceGetCount, (unsigned int *count)) \
  X(nvmlDeviceGetHandleByIndex, (unsigned int index, nvmlDevice_t *device)) \
  X(nvmlDeviceGetHandleByUUID, (const char *uuid, nvmlDevice_t *device)) \
  X(nvmlDeviceGetHandleByPciBusId_v2, (const char *pciBusId, nvmlDevice_t *device)) \
  X(nvmlDeviceGetHandleByPciBusId, (const char *pciBusId, nvmlDevice_t *device)) \
  X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, (nvmlDevice_t migDevice, nvmlDevice_t *device)) \
  X(nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minorNumber)) \
  X(nvmlDeviceGetBrand, (nvmlDevice_t device, unsigned int *type)) \
  X(nvmlDeviceGetArchitecture, (nvmlDevice_t device, unsigned int *arch)) \
  X(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int *major, int *minor)) \
  X(nvmlDeviceGetNumGpuCores, (nvmlDevice_t device, unsigned int *numCores)) \
  X(nvmlDeviceGetMemoryBusWidth, (nvmlDevice_t device, unsigned int *busWidth)) \
  X(nvmlDeviceGetSerial, (nvmlDevice_t device, char *serial, unsigned int length)) \
  X(nvmlDeviceGetMultiGpuBoard, (nvmlDevice_t device, unsigned int *multiGpuBool)) \
  X(nvmlDeviceGetVirtualizationMode, (nvmlDevice_t device, unsigned int *mode)) \
  X(nvmlDeviceGetPciInfo, (nvmlDevice_t device, nvmlPciInfo_v1_t *pci)) \
  X(nvmlDeviceGetPciInfo_v2, (nvmlDevice_t device, nvmlPciInfo_v1_t *pci)) \
  X(nvmlDeviceGetPciInfoExt, (nvmlDevice_t device, nvmlPciInfoExt_v1_t *pci)) \
  X(nvmlDeviceGetAttributes, (nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)) \
  X(nvmlDeviceGetBAR1MemoryInfo, (nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)) \
  X(nvmlDeviceGetPerformanceState, (nvmlDevice_t device, unsigned int *pState)) \
  X(nvmlDeviceGetPowerState, (nvmlDevice_t device, unsigned int *pState)) \
  X(nvmlDeviceGetPersistenceMode, (nvmlDevice_t device, unsigned int *mode)) \
  X(nvmlDeviceGetDisplayActive, (nvmlDevice_t device, unsigned int *isActive)) \
  X(nvmlDeviceGetDisplayMode, (nvmlDevice_t device, unsigned int *display)) \
  X(nvmlDeviceGetPowerManagementMode, (nvmlDevice_t device, unsigned int *mode)) \
  X(nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int *limit)) \
  X(nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t device, unsigned int *defaultLimit)) \
  X(nvmlDeviceGetPowerManagementLimitConstraints, (nvmlDevice_t device, unsigned int *minLimit, unsigned int *maxLimit)) \
  X(nvmlDeviceGetTemperatureV, (nvmlDevice_t device, nvmlTemperature_v1_t *temperature)) \
  X(nvmlDeviceGetTemperatureThreshold, (nvmlDevice_t device, unsigned int thresholdType, unsigned int *temp)) \
  X(nvmlDeviceGetMarginTemperature, (nvmlDevice_t device, nvmlMarginTemperature_v1_t *marginTempInfo)) \
  X(nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int *speed)) \
  X(nvmlDeviceGetFanSpeed_v2, (nvmlDevice_t device, unsigned int fan, unsigned int *speed)) \
  X(nvmlDeviceGetTargetFanSpeed, (nvmlDevice_t device, unsigned int fan, unsigned int *targetSpeed)) \
  X(nvmlDeviceGetNumFans, (nvmlDevice_t device, unsigned int *numFans)) \
  X(nvmlDeviceGetMaxClockInfo, (nvmlDevice_t device, unsigned int clockType, unsigned int *clock)) \
  X(nvmlDeviceGetMaxCustomerBoostClock, (nvmlDevice_t device, unsigned int clockType, unsigned int *clockMHz)) \
  X(nvmlDeviceGetApplicationsClock, (nvmlDevice_t device, unsigned int clockType, unsigned int *clockMHz)) \
  X(nvmlDeviceGetDefaultApplicationsClock, (nvmlDevice_t device, unsigned int clockType, unsigned int *clockMHz)) \
  X(nvmlDeviceGetClock, (nvmlDevice_t device, unsigned int clockType, unsigned int clockId, unsigned int *clockMHz)) \
  X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t device, unsigned long long *clocksEventReasons)) \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, (nvmlDevice_t device, unsigned long long *clocksThrottleReasons)) \
  X(nvmlDeviceGetSupportedClocksEventReasons, (nvmlDevice_t device, unsigned long long *supportedClocksEventReasons)) \
  X(nvmlDeviceGetSupportedClocksThrottleReasons, (nvmlDevice_t device, unsigned long long *supportedClocksThrottleReasons)) \
  X(nvmlDeviceGetEccMode, (nvmlDevice_t device, unsigned int *current, unsigned int *pending)) \
  X(nvmlDeviceGetDefaultEccMode, (nvmlDevice_t device, unsigned int *defaultMode)) \
  X(nvmlDeviceGetTotalEccErrors, (nvmlDevice_t device, unsigned int errorType, unsigned int counterType, unsigned long long *eccCounts)) \
  X(nvmlDeviceGetDetailedEccErrors, (nvmlDevice_t device, unsigned int errorType, unsigned int counterType, nvmlEccErrorCounts_t *eccCounts)) \
  X(nvmlDeviceGetMemoryErrorCounter, (nvmlDevice_t device, unsigned int errorType, unsigned int counterType, unsigned int locationType, unsigned long long *count)) \
  X(nvmlDeviceGetRemappedRows, (nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows, unsigned int *isPending, unsigned int *failureOccurred)) \
  X(nvmlDeviceGetEncoderUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
  X(nvmlDeviceGetDecoderUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
  X(nvmlDeviceGetJpgUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
  X(nvmlDeviceGetOfaUtilization, (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs)) \
  X(nvmlDeviceGetEncoderStats, (nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps, unsigned int *averageLatency)) \
  X(nvmlDeviceGetEncoderSessions, (nvmlDevice_t device, unsigned int *sessionCount, void *sessionInfos)) \
  X(nvmlDeviceGetFBCStats, (nvmlDevice_t device, nvmlFBCStats_t *fbcStats)) \
  X(nvmlDeviceGetFBCSessions, (nvmlDevice_t device, unsigned int *sessionCount, void *sessionInfo)) \
  X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t device, unsigned int *currLinkGen)) \
  X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int *maxLinkGen)) \
  X(nvmlDeviceGetGpuMaxPcieLinkGeneration, (nvmlDevice_t device, unsigned int *maxLinkGenDevice)) \
  X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t device, unsigned int *currLinkWidth)) \
  X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t device, unsigned int *maxLinkWidth)) \
  X(nvmlDeviceGetPcieSpeed, (nvmlDevice_t device, unsigned int *pcieSpeed)) \
  X(nvmlDeviceGetPcieLinkMaxSpeed, (nvmlDevice_t device, unsigned int *maxSpeed)) \
  X(nvmlDeviceGetPcieThroughput, (nvmlDevice_t device, unsigned int counter, unsigned int *value)) \
  X(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t device, unsigned int *value)) \
  X(nvmlDeviceGetConfComputeMemSizeInfo, (nvmlDevice_t device, nvmlConfComputeMemSizeInfo_t *memInfo)) \
  X(nvmlDeviceGetConfComputeProtectedMemoryUsage, (nvmlDevice_t device, nvmlMemory_t *memory)) \
  X(nvmlDeviceGetFieldValues, (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)) \
  X(nvmlDeviceGetGpuInstanceProfileInfo, (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info)) \
  X(nvmlDeviceGetGpuInstancePossiblePlacements_v2, (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t *placements, unsigned int *count)) \
  X(nvmlDeviceGetGpuInstancePossiblePlacements, (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t *placements, unsigned int *count)) \
  X(nvmlDeviceGetGpuInstanceRemainingCapacity, (nvmlDevice_t device, unsigned int profileId, unsigned int *count)) \
  X(nvmlDeviceGetGpuInstances, (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances, unsigned int *count)) \
  X(nvmlGpuInstanceGetComputeInstances, (nvmlGpuInstance_t gpuInstance, unsigned int profileId, nvmlComputeInstance_t *computeInstances, unsigned int *count)) \
  X(nvmlGpuInstanceGetComputeInstanceById, (nvmlGpuInstance_t gpuInstance, unsigned int id, nvmlComputeInstance_t *computeInstance)) \
  X(nvmlComputeInstanceGetInfo_v2, (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info)) \
  X(nvmlComputeInstanceGetInfo, (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info))

#define GPUSHARE_NVML_TYPEDEF(name, params) typedef nvmlReturn_t (*name##_fn) params;
GPUSHARE_NVML_CLIENT_FUNCS(GPUSHARE_NVML_TYPEDEF)
#undef GPUSHARE_NVML_TYPEDEF

#ifdef __cplusplus
}
#endif

#endif
