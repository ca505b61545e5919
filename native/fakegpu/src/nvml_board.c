/* Fake libnvidia-ml: the board's readings beyond gpushare's own calls
 * (performance state, power limits, temperatures and thresholds, clocks, fans,
 * ECC, video engines, PCIe link) for real NVML clients. Derived from the
 * state's utilization and pins the way nvml.c derives temperature and power;
 * what the board model lacks answers NOT_SUPPORTED, as a real driver does. */
#define _GNU_SOURCE
#include <string.h>

#include "nvml_internal.h"

#define VIDEO_SAMPLE_US 167000 /* the sampling period real drivers report for the video engines */

static unsigned util_of(fg_state_t *st, int gpu) { return fg_gpu_util(st, gpu); }

/* ---- performance and power ---- */

/* P0 while kernels run, P8 when idle (where the SM clock drops to sm_clock_idle) */
API nvmlDeviceGetPerformanceState(nvmlDevice_t device, unsigned int *pState) {
  BOARD_CALL(device);
  if (!pState) return NVML_ERROR_INVALID_ARGUMENT;
  *pState = util_of(st, h->gpu) > 0 ? NVML_PSTATE_0 : NVML_PSTATE_8;
  return NVML_SUCCESS;
}

API nvmlDeviceGetPowerState(nvmlDevice_t device, unsigned int *pState) {
  return nvmlDeviceGetPerformanceState(device, pState);
}

/* nvidia-persistenced runs on a lab workstation */
API nvmlDeviceGetPersistenceMode(nvmlDevice_t device, unsigned int *mode) {
  BOARD_CALL(device);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

/* headless: no display attached or initialized */
API nvmlDeviceGetDisplayActive(nvmlDevice_t device, unsigned int *isActive) {
  BOARD_CALL(device);
  if (!isActive) return NVML_ERROR_INVALID_ARGUMENT;
  *isActive = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

API nvmlDeviceGetDisplayMode(nvmlDevice_t device, unsigned int *display) {
  BOARD_CALL(device);
  if (!display) return NVML_ERROR_INVALID_ARGUMENT;
  *display = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

API nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, unsigned int *mode) {
  BOARD_CALL(device);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

/* The limit is the scenario's power_limit: set, default and enforced alike. */
API nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit) {
  BOARD_CALL(device);
  if (!limit) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = g->power_limit_mw;
  return NVML_SUCCESS;
}

API nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *defaultLimit) {
  return nvmlDeviceGetPowerManagementLimit(device, defaultLimit);
}

/* min = a quarter of the limit (an A100's 100 W of 400 W), max = the limit */
API nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int *minLimit, unsigned int *maxLimit) {
  BOARD_CALL(device);
  if (!minLimit || !maxLimit) return NVML_ERROR_INVALID_ARGUMENT;
  *minLimit = g->power_limit_mw / 4;
  *maxLimit = g->power_limit_mw;
  return NVML_SUCCESS;
}

/* ---- temperature ---- */

API nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t *temperature) {
  BOARD_CALL(device);
  if (!temperature) return NVML_ERROR_INVALID_ARGUMENT;
  if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (temperature->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  temperature->temperature = (int)fg_temperature(st, h->gpu, util_of(st, h->gpu));
  return NVML_SUCCESS;
}

API nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, unsigned int thresholdType, unsigned int *temp) {
  BOARD_CALL(device);
  if (!temp || thresholdType >= NVML_TEMPERATURE_THRESHOLD_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  fg_nvml_model_t m = fg_nvml_model(g);
  unsigned v = 0;
  switch (thresholdType) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: v = m.temp_shutdown; break;
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: v = m.temp_slowdown; break;
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: v = m.temp_mem_max; break;
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: v = m.temp_gpu_max; break;
    default: break; /* acoustic and GPS thresholds: not on these boards */
  }
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *temp = v;
  return NVML_SUCCESS;
}

/* degrees left before the slowdown threshold */
API nvmlDeviceGetMarginTemperature(nvmlDevice_t device, nvmlMarginTemperature_v1_t *marginTempInfo) {
  BOARD_CALL(device);
  if (!marginTempInfo) return NVML_ERROR_INVALID_ARGUMENT;
  if (marginTempInfo->version != nvmlMarginTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  int t = (int)fg_temperature(st, h->gpu, util_of(st, h->gpu));
  marginTempInfo->marginTemperature = (int)fg_nvml_model(g).temp_slowdown - t;
  return NVML_SUCCESS;
}

/* ---- fans: data-centre boards are passively cooled (NOT_SUPPORTED, as nvidia-smi's "N/A") ---- */

/* 30 % idle up to 100 % at full utilization */
static unsigned fan_pct(fg_state_t *st, int gpu) { return 30 + util_of(st, gpu) * 70 / 100; }

API nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans) {
  BOARD_CALL(device);
  if (!numFans) return NVML_ERROR_INVALID_ARGUMENT;
  if (!fg_nvml_model(g).fans) return NVML_ERROR_NOT_SUPPORTED;
  *numFans = (unsigned)fg_nvml_model(g).fans;
  return NVML_SUCCESS;
}

API nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed) {
  BOARD_CALL(device);
  if (!speed) return NVML_ERROR_INVALID_ARGUMENT;
  int fans = fg_nvml_model(g).fans;
  if (!fans) return NVML_ERROR_NOT_SUPPORTED;
  if (fan >= (unsigned)fans) return NVML_ERROR_INVALID_ARGUMENT;
  *speed = fan_pct(st, h->gpu);
  return NVML_SUCCESS;
}

API nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed) { return nvmlDeviceGetFanSpeed_v2(device, 0, speed); }

API nvmlDeviceGetTargetFanSpeed(nvmlDevice_t device, unsigned int fan, unsigned int *targetSpeed) {
  return nvmlDeviceGetFanSpeed_v2(device, fan, targetSpeed);
}

/* ---- clocks: max = the scenario's sm_clock / mem_clock; video runs at 9/10 of the SM clock ---- */

static nvmlReturn_t max_clock(const fg_gpu_t *g, unsigned clockType, unsigned *mhz) {
  switch (clockType) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *mhz = g->sm_clock_max; return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *mhz = g->mem_clock; return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO: *mhz = g->sm_clock_max * 9 / 10; return NVML_SUCCESS;
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
}

API nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, unsigned int clockType, unsigned int *clock) {
  BOARD_CALL(device);
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  return max_clock(g, clockType, clock);
}

API nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device, unsigned int clockType, unsigned int *clockMHz) {
  return nvmlDeviceGetMaxClockInfo(device, clockType, clockMHz);
}

/* application clocks are left at their default, the maximum */
API nvmlDeviceGetApplicationsClock(nvmlDevice_t device, unsigned int clockType, unsigned int *clockMHz) {
  return nvmlDeviceGetMaxClockInfo(device, clockType, clockMHz);
}

API nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, unsigned int clockType, unsigned int *clockMHz) {
  return nvmlDeviceGetMaxClockInfo(device, clockType, clockMHz);
}

API nvmlDeviceGetClock(nvmlDevice_t device, unsigned int clockType, unsigned int clockId, unsigned int *clockMHz) {
  BOARD_CALL(device);
  if (!clockMHz) return NVML_ERROR_INVALID_ARGUMENT;
  switch (clockId) {
    case NVML_CLOCK_ID_CURRENT:
      if (clockType == NVML_CLOCK_VIDEO) {
        *clockMHz = fg_sm_clock(st, h->gpu, util_of(st, h->gpu)) * 9 / 10;
        return NVML_SUCCESS;
      }
      return nvmlDeviceGetClockInfo(device, clockType, clockMHz);
    case NVML_CLOCK_ID_APP_CLOCK_TARGET:
    case NVML_CLOCK_ID_APP_CLOCK_DEFAULT:
    case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX: return max_clock(g, clockType, clockMHz);
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
}

/* idle is the only reason the clocks are held down here */
API nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons) {
  BOARD_CALL(device);
  if (!clocksEventReasons) return NVML_ERROR_INVALID_ARGUMENT;
  *clocksEventReasons = util_of(st, h->gpu) == 0 ? nvmlClocksEventReasonGpuIdle : 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *clocksThrottleReasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, clocksThrottleReasons);
}

API nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device, unsigned long long *supportedClocksEventReasons) {
  BOARD_CALL(device);
  if (!supportedClocksEventReasons) return NVML_ERROR_INVALID_ARGUMENT;
  *supportedClocksEventReasons = nvmlClocksEventReasonSupported;
  return NVML_SUCCESS;
}

API nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device, unsigned long long *supportedClocksThrottleReasons) {
  return nvmlDeviceGetSupportedClocksEventReasons(device, supportedClocksThrottleReasons);
}

/* ---- ECC: on, and no error has ever been counted (desktop cards have no ECC) ---- */

#define ECC_CALL(device)                                             \
  DEVICE_CALL(device);                                               \
  if (!fg_nvml_model(g).ecc) return NVML_ERROR_NOT_SUPPORTED

API nvmlDeviceGetEccMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending) {
  ECC_CALL(device);
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

API nvmlDeviceGetDefaultEccMode(nvmlDevice_t device, unsigned int *defaultMode) {
  ECC_CALL(device);
  if (!defaultMode) return NVML_ERROR_INVALID_ARGUMENT;
  *defaultMode = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

API nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int errorType, unsigned int counterType,
                                unsigned long long *eccCounts) {
  ECC_CALL(device);
  if (!eccCounts || errorType >= NVML_MEMORY_ERROR_TYPE_COUNT || counterType >= NVML_ECC_COUNTER_TYPE_COUNT)
    return NVML_ERROR_INVALID_ARGUMENT;
  *eccCounts = 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetDetailedEccErrors(nvmlDevice_t device, unsigned int errorType, unsigned int counterType,
                                   nvmlEccErrorCounts_t *eccCounts) {
  ECC_CALL(device);
  if (!eccCounts || errorType >= NVML_MEMORY_ERROR_TYPE_COUNT || counterType >= NVML_ECC_COUNTER_TYPE_COUNT)
    return NVML_ERROR_INVALID_ARGUMENT;
  memset(eccCounts, 0, sizeof *eccCounts);
  return NVML_SUCCESS;
}

API nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, unsigned int errorType, unsigned int counterType,
                                    unsigned int locationType, unsigned long long *count) {
  ECC_CALL(device);
  if (!count || errorType >= NVML_MEMORY_ERROR_TYPE_COUNT || counterType >= NVML_ECC_COUNTER_TYPE_COUNT ||
      locationType >= NVML_MEMORY_LOCATION_COUNT)
    return NVML_ERROR_INVALID_ARGUMENT;
  *count = 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                              unsigned int *isPending, unsigned int *failureOccurred) {
  ECC_CALL(device);
  if (!corrRows || !uncRows || !isPending || !failureOccurred) return NVML_ERROR_INVALID_ARGUMENT;
  if (h->mig >= 0 || g->mig_current) return NVML_ERROR_NOT_SUPPORTED; /* as documented: not with MIG on */
  *corrRows = *uncRows = *isPending = *failureOccurred = 0;
  return NVML_SUCCESS;
}

/* ---- video engines: no encode/decode work is simulated, so 0 % and no sessions ---- */

static nvmlReturn_t idle_engine(unsigned int *utilization, unsigned int *samplingPeriodUs) {
  if (!utilization || !samplingPeriodUs) return NVML_ERROR_INVALID_ARGUMENT;
  *utilization = 0;
  *samplingPeriodUs = VIDEO_SAMPLE_US;
  return NVML_SUCCESS;
}

#define VIDEO_ENGINE_CALL(fn)                                                                      \
  API fn(nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs) {        \
    DEVICE_CALL(device);                                                                           \
    return idle_engine(utilization, samplingPeriodUs);                                             \
  }
VIDEO_ENGINE_CALL(nvmlDeviceGetEncoderUtilization)
VIDEO_ENGINE_CALL(nvmlDeviceGetDecoderUtilization)
VIDEO_ENGINE_CALL(nvmlDeviceGetJpgUtilization)
VIDEO_ENGINE_CALL(nvmlDeviceGetOfaUtilization)

API nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
                              unsigned int *averageLatency) {
  DEVICE_CALL(device);
  if (!sessionCount || !averageFps || !averageLatency) return NVML_ERROR_INVALID_ARGUMENT;
  *sessionCount = *averageFps = *averageLatency = 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetEncoderSessions(nvmlDevice_t device, unsigned int *sessionCount, void *sessionInfos) {
  DEVICE_CALL(device);
  (void)sessionInfos;
  if (!sessionCount) return NVML_ERROR_INVALID_ARGUMENT;
  *sessionCount = 0;
  return NVML_SUCCESS;
}

API nvmlDeviceGetFBCStats(nvmlDevice_t device, nvmlFBCStats_t *fbcStats) {
  DEVICE_CALL(device);
  if (!fbcStats) return NVML_ERROR_INVALID_ARGUMENT;
  memset(fbcStats, 0, sizeof *fbcStats);
  return NVML_SUCCESS;
}

API nvmlDeviceGetFBCSessions(nvmlDevice_t device, unsigned int *sessionCount, void *sessionInfo) {
  return nvmlDeviceGetEncoderSessions(device, sessionCount, sessionInfo);
}

/* ---- PCIe: the link trains at the board's generation and width; no copies are simulated ---- */

/* per-lane rate in MT/s, by generation */
static const unsigned PCIE_MTS[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};

#define LINK_CALL(fn, expr)                        \
  API fn(nvmlDevice_t device, unsigned int *out) { \
    BOARD_CALL(device);                            \
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;  \
    fg_nvml_model_t m = fg_nvml_model(g);          \
    (void)m;                                       \
    *out = (expr);                                 \
    return NVML_SUCCESS;                           \
  }
LINK_CALL(nvmlDeviceGetCurrPcieLinkGeneration, m.pcie_gen)
LINK_CALL(nvmlDeviceGetMaxPcieLinkGeneration, m.pcie_gen)
LINK_CALL(nvmlDeviceGetGpuMaxPcieLinkGeneration, m.pcie_gen)
LINK_CALL(nvmlDeviceGetCurrPcieLinkWidth, m.pcie_width)
LINK_CALL(nvmlDeviceGetMaxPcieLinkWidth, m.pcie_width)
LINK_CALL(nvmlDeviceGetPcieSpeed, PCIE_MTS[m.pcie_gen])
LINK_CALL(nvmlDeviceGetPcieLinkMaxSpeed, m.pcie_gen >= 5 ? NVML_PCIE_LINK_MAX_SPEED_32000MBPS
                                                         : NVML_PCIE_LINK_MAX_SPEED_16000MBPS)
LINK_CALL(nvmlDeviceGetPcieReplayCounter, 0)

API nvmlDeviceGetPcieThroughput(nvmlDevice_t device, unsigned int counter, unsigned int *value) {
  BOARD_CALL(device);
  if (!value || (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES))
    return NVML_ERROR_INVALID_ARGUMENT;
  *value = 0; /* KB/s */
  return NVML_SUCCESS;
}
