/* Checks the fake NVML through dlopen, as the addon uses it.
 * usage: nvml_check LIB MODE [args]  (run by selftest.sh)
 *   basic              init, names, memory arithmetic, MIG calls
 *   procs DEV N        process calls v1/v2/v3 sizes, growth, expects N procs
 *   v3wide DEV N       _v3 writes 32-byte records (fault --v3-record-size 32)
 *   fault DEV CODE     nvmlDeviceGetName fails with CODE on DEV
 *   lost DEV           every handle call on DEV gives GPU_IS_LOST
 *   util DEV PID       per-process utilization reports PID with smUtil > 0
 *   bench              cost of a full sample of every device
 *   noinit             nvmlInit_v2 fails with DRIVER_NOT_LOADED
 *   symbols FILE       every name in FILE (one a line, # comments) resolves; prints the missing
 *   client DEV         one JSON line: what a real NVML client (nvtop, nvitop) reads of DEV
 *   mig DEV            one JSON line: DEV's GPU-instance profiles, placements, capacity, instances */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/nvml_abi.h"

#define X(name, params) static name##_fn p_##name;
GPUSHARE_NVML_FUNCS(X)
GPUSHARE_NVML_CLIENT_FUNCS(X)
#undef X
static nvmlErrorString_fn p_nvmlErrorString;

static int failures;
static void *g_lib; /* the library under test */
#define EXPECT(cond, ...)                              \
  do {                                                 \
    if (!(cond)) {                                     \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                    \
      fputc('\n', stderr);                             \
      failures++;                                      \
    }                                                  \
  } while (0)
#define OK(call) EXPECT((call) == NVML_SUCCESS, "%s", #call)

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static nvmlDevice_t dev(unsigned i) {
  nvmlDevice_t d = NULL;
  OK(p_nvmlDeviceGetHandleByIndex_v2(i, &d));
  return d;
}

static void basic(void) {
  char buf[128];
  unsigned n = 0;
  OK(p_nvmlDeviceGetCount_v2(&n));
  EXPECT(n >= 1, "count %u", n);
  nvmlDevice_t d0 = NULL;
  EXPECT(p_nvmlDeviceGetHandleByIndex_v2(n, &d0) == NVML_ERROR_INVALID_ARGUMENT, "index past count");
  OK(p_nvmlSystemGetDriverVersion(buf, sizeof buf));
  EXPECT(p_nvmlSystemGetDriverVersion(buf, 3) == NVML_ERROR_INSUFFICIENT_SIZE, "short driver buffer");
  d0 = dev(0);
  OK(p_nvmlDeviceGetName(d0, buf, NVML_DEVICE_NAME_BUFFER_SIZE));
  EXPECT(strncmp(buf, "NVIDIA ", 7) == 0, "name %s", buf);
  OK(p_nvmlDeviceGetUUID(d0, buf, NVML_DEVICE_UUID_BUFFER_SIZE));
  EXPECT(strncmp(buf, "GPU-", 4) == 0 && strlen(buf) == 40, "uuid %s", buf);
  EXPECT(p_nvmlDeviceGetUUID(d0, buf, 10) == NVML_ERROR_INSUFFICIENT_SIZE, "short uuid buffer");
  nvmlMemory_t m1;
  nvmlMemory_v2_t m2;
  memset(&m2, 0, sizeof m2);
  EXPECT(p_nvmlDeviceGetMemoryInfo_v2(d0, &m2) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "v2 version check");
  m2.version = nvmlMemory_v2;
  OK(p_nvmlDeviceGetMemoryInfo_v2(d0, &m2));
  OK(p_nvmlDeviceGetMemoryInfo(d0, &m1));
  EXPECT(m1.total == m2.total && m1.used == m2.used + m2.reserved && m1.free == m2.free,
         "v1/v2 arithmetic total %llu/%llu used %llu/%llu+%llu free %llu/%llu", m1.total, m2.total, m1.used, m2.used,
         m2.reserved, m1.free, m2.free);
  EXPECT(m2.total == m2.reserved + m2.used + m2.free, "v2 sums");
  nvmlPciInfo_t pci;
  OK(p_nvmlDeviceGetPciInfo_v3(d0, &pci));
  EXPECT(strlen(pci.busId) == 16, "busId %s", pci.busId);
  unsigned v = 0, cur = 9, pend = 9;
  OK(p_nvmlDeviceGetTemperature(d0, NVML_TEMPERATURE_GPU, &v));
  OK(p_nvmlDeviceGetPowerUsage(d0, &v));
  OK(p_nvmlDeviceGetClockInfo(d0, NVML_CLOCK_SM, &v));
  OK(p_nvmlDeviceGetMigMode(d0, &cur, &pend));
  /* MIG: find a MIG-enabled GPU */
  for (unsigned i = 0; i < n; i++) {
    nvmlDevice_t d = dev(i);
    if (p_nvmlDeviceGetMigMode(d, &cur, &pend) != NVML_SUCCESS || cur != 1) {
      nvmlDevice_t md;
      if (cur == 0) EXPECT(p_nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &md) == NVML_ERROR_NOT_FOUND, "mig off");
      continue;
    }
    unsigned max = 0, isMig = 9, id;
    OK(p_nvmlDeviceGetMaxMigDeviceCount(d, &max));
    EXPECT(max == 7, "max mig %u", max);
    EXPECT(p_nvmlDeviceGetGpuInstanceId(d, &id) == NVML_ERROR_NOT_SUPPORTED, "GI id of a full GPU");
    nvmlUtilization_t u;
    EXPECT(p_nvmlDeviceGetUtilizationRates(d, &u) == NVML_ERROR_NOT_SUPPORTED, "util on MIG parent");
    unsigned found = 0;
    for (unsigned k = 0; k < max; k++) {
      nvmlDevice_t md;
      nvmlReturn_t r = p_nvmlDeviceGetMigDeviceHandleByIndex(d, k, &md);
      if (r == NVML_ERROR_NOT_FOUND) continue;
      OK(r);
      found++;
      OK(p_nvmlDeviceIsMigDeviceHandle(md, &isMig));
      EXPECT(isMig == 1, "is mig");
      OK(p_nvmlDeviceGetName(md, buf, sizeof buf));
      EXPECT(strstr(buf, " MIG ") != NULL, "mig name %s", buf);
      OK(p_nvmlDeviceGetUUID(md, buf, sizeof buf));
      EXPECT(strncmp(buf, "MIG-", 4) == 0, "mig uuid %s", buf);
      unsigned gi = 0, ci = 9;
      OK(p_nvmlDeviceGetGpuInstanceId(md, &gi));
      OK(p_nvmlDeviceGetComputeInstanceId(md, &ci));
      nvmlDeviceAttributes_t at;
      OK(p_nvmlDeviceGetAttributes_v2(md, &at));
      nvmlMemory_t mm;
      OK(p_nvmlDeviceGetMemoryInfo(md, &mm));
      EXPECT(mm.total == at.memorySizeMB * 1024 * 1024, "mig memory %llu vs %llu MB", mm.total, at.memorySizeMB);
      nvmlGpuInstance_t gih;
      OK(p_nvmlDeviceGetGpuInstanceById(d, gi, &gih));
      nvmlGpuInstanceInfo_t info;
      OK(p_nvmlGpuInstanceGetInfo(gih, &info));
      EXPECT(info.id == gi && info.device == d, "gi info");
      /* ProfileInfoV takes an NVML_GPU_INSTANCE_PROFILE_* index, not the profile id: scan for the id */
      nvmlGpuInstanceProfileInfo_v2_t pi;
      int have = 0;
      for (unsigned ix = 0; ix < NVML_GPU_INSTANCE_PROFILE_COUNT && !have; ix++) {
        memset(&pi, 0, sizeof pi);
        pi.version = nvmlGpuInstanceProfileInfo_v2;
        have = p_nvmlDeviceGetGpuInstanceProfileInfoV(d, ix, &pi) == NVML_SUCCESS && pi.id == info.profileId;
      }
      EXPECT(have, "no profile info with id %u", info.profileId);
      EXPECT(pi.multiprocessorCount == at.multiprocessorCount, "profile SMs %u vs %u", pi.multiprocessorCount,
             at.multiprocessorCount);
      EXPECT(strncmp(pi.name, "MIG ", 4) == 0, "profile name %s", pi.name);
      printf("mig %u: gi=%u ci=%u sm=%u mem=%lluMB placement=%u:%u %s\n", k, gi, ci, at.multiprocessorCount,
             at.memorySizeMB, info.placement.start, info.placement.size, pi.name);
    }
    EXPECT(found > 0, "no MIG devices on MIG GPU %u", i);
  }
}

static void procs(unsigned i, unsigned expect) {
  nvmlDevice_t d = dev(i);
  unsigned n = 0;
  EXPECT(p_nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL) == (expect ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS),
         "count query");
  EXPECT(n == expect, "count %u != %u", n, expect);
  unsigned cap = expect > 1 ? expect - 1 : 0;
  static nvmlProcessDetail_v1_t big[2048];
  if (expect > 1) {
    unsigned c = cap;
    EXPECT(p_nvmlDeviceGetComputeRunningProcesses_v2(d, &c, (nvmlProcessInfo_v2_t *)big) == NVML_ERROR_INSUFFICIENT_SIZE,
           "too small");
    EXPECT(c == expect, "needed %u", c);
  }
  /* v1: 16-byte records */
  memset(big, 0xAB, sizeof big);
  unsigned c = 2048;
  OK(p_nvmlDeviceGetComputeRunningProcesses(d, &c, (nvmlProcessInfo_v1_t *)big));
  EXPECT(c == expect, "v1 count %u", c);
  unsigned char *raw = (unsigned char *)big;
  EXPECT(raw[16 * c] == 0xAB, "v1 wrote past %u records", c);
  nvmlProcessInfo_v1_t *v1 = (nvmlProcessInfo_v1_t *)big;
  static unsigned pids[2048];
  for (unsigned k = 0; k < c; k++) {
    EXPECT(v1[k].pid > 0 && v1[k].usedGpuMemory > 0, "v1 record %u", k);
    pids[k] = v1[k].pid;
  }
  /* v2: 24-byte records */
  memset(big, 0xAB, sizeof big);
  c = 2048;
  OK(p_nvmlDeviceGetComputeRunningProcesses_v2(d, &c, (nvmlProcessInfo_v2_t *)big));
  EXPECT(raw[24 * c] == 0xAB, "v2 wrote past %u records", c);
  nvmlProcessInfo_v2_t *v2 = (nvmlProcessInfo_v2_t *)big;
  for (unsigned k = 0; k < c; k++) EXPECT(v2[k].pid == pids[k] && v2[k].usedGpuMemory > 0, "v2 pid %u", k);
  /* v3: 24 unless the R535 bug is on */
  memset(big, 0xAB, sizeof big);
  c = 2048;
  OK(p_nvmlDeviceGetComputeRunningProcesses_v3(d, &c, (nvmlProcessInfo_v2_t *)big));
  EXPECT(raw[24 * c] == 0xAB || c == 0, "v3 wrote past %u 24-byte records", c);
  /* detail list */
  nvmlProcessDetailList_v1_t pl;
  memset(&pl, 0, sizeof pl);
  pl.version = 0;
  EXPECT(p_nvmlDeviceGetRunningProcessDetailList(d, &pl) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "detail version");
  pl.version = nvmlProcessDetailList_v1;
  pl.mode = NVML_PROCESS_MODE_COMPUTE;
  nvmlReturn_t r = p_nvmlDeviceGetRunningProcessDetailList(d, &pl);
  EXPECT(r == (expect ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS) && pl.numProcArrayEntries == expect,
         "detail count %d %u", r, pl.numProcArrayEntries);
  pl.procArray = big;
  pl.numProcArrayEntries = 2048;
  OK(p_nvmlDeviceGetRunningProcessDetailList(d, &pl));
  EXPECT(pl.numProcArrayEntries == expect, "detail entries %u", pl.numProcArrayEntries);
  for (unsigned k = 0; k < pl.numProcArrayEntries; k++) printf("pid %u used %llu gi %u ci %u\n", big[k].pid,
                                                                 big[k].usedGpuMemory, big[k].gpuInstanceId,
                                                                 big[k].computeInstanceId);
}

static void v3wide(unsigned i, unsigned expect) {
  nvmlDevice_t d = dev(i);
  static unsigned char raw[32 * 2048 + 64];
  memset(raw, 0xAB, sizeof raw);
  unsigned c = 2048;
  OK(p_nvmlDeviceGetComputeRunningProcesses_v3(d, &c, (nvmlProcessInfo_v2_t *)raw));
  EXPECT(c == expect, "count %u", c);
  EXPECT(c == 0 || (raw[32 * c - 1] != 0xAB && raw[32 * c] == 0xAB), "32-byte records expected");
  nvmlProcessDetail_v1_t *r = (nvmlProcessDetail_v1_t *)raw;
  for (unsigned k = 0; k < c; k++) EXPECT(r[k].pid > 0 && r[k].usedGpuCcProtectedMemory == 0, "record %u", k);
}

static void util(unsigned i, unsigned pid) {
  nvmlDevice_t d = dev(i);
  nvmlProcessUtilizationSample_t s[64];
  unsigned n = 0;
  nvmlReturn_t r = p_nvmlDeviceGetProcessUtilization(d, NULL, &n, 0);
  EXPECT(r == NVML_ERROR_INSUFFICIENT_SIZE && n > 0, "util count %d %u", r, n);
  n = 64;
  OK(p_nvmlDeviceGetProcessUtilization(d, s, &n, 0));
  int seen = 0;
  for (unsigned k = 0; k < n; k++) {
    printf("pid %u sm %u%%\n", s[k].pid, s[k].smUtil);
    if (s[k].pid == pid && s[k].smUtil > 0) seen = 1;
  }
  EXPECT(seen, "pid %u not reported", pid);
  nvmlProcessUtilizationInfo_v1_t arr[64];
  nvmlProcessesUtilizationInfo_v1_t info = {nvmlProcessesUtilizationInfo_v1, 64, 0, arr};
  OK(p_nvmlDeviceGetProcessesUtilizationInfo(d, &info));
  EXPECT(info.processSamplesCount == n, "info count %u vs %u", info.processSamplesCount, n);
  /* nothing newer than "now" */
  unsigned long long last = s[0].timeStamp;
  n = 64;
  struct timespec ts = {0, 0};
  (void)ts;
  nvmlUtilization_t u;
  OK(p_nvmlDeviceGetUtilizationRates(d, &u));
  printf("gpu util %u%% mem %u%% lastSeen %llu\n", u.gpu, u.memory, last);
}

static void bench(void) {
  unsigned n = 0;
  OK(p_nvmlDeviceGetCount_v2(&n));
  static nvmlProcessInfo_v2_t buf[1024];
  static nvmlProcessUtilizationSample_t sm[1024];
  double best = 1e18;
  for (int rep = 0; rep < 50; rep++) {
    double t = now_us();
    for (unsigned i = 0; i < n; i++) {
      nvmlDevice_t d;
      char name[96];
      unsigned v, c;
      nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
      nvmlUtilization_t u;
      p_nvmlDeviceGetHandleByIndex_v2(i, &d);
      p_nvmlDeviceGetName(d, name, sizeof name);
      p_nvmlDeviceGetMemoryInfo_v2(d, &m);
      p_nvmlDeviceGetUtilizationRates(d, &u);
      p_nvmlDeviceGetTemperature(d, 0, &v);
      p_nvmlDeviceGetPowerUsage(d, &v);
      p_nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &v);
      p_nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &v);
      c = 1024;
      p_nvmlDeviceGetComputeRunningProcesses_v3(d, &c, buf);
      c = 1024;
      p_nvmlDeviceGetGraphicsRunningProcesses_v3(d, &c, buf);
      c = 1024;
      p_nvmlDeviceGetProcessUtilization(d, sm, &c, 0);
    }
    double dt = now_us() - t;
    if (dt < best) best = dt;
  }
  printf("full sample of %u devices: %.1f us\n", n, best);
}

/* Resolves every entry point named in `list`; prints each one missing. */
static int symbols(void *lib, const char *list) {
  FILE *f = fopen(list, "r");
  if (!f) {
    perror(list);
    return 2;
  }
  char line[256];
  unsigned names = 0, missing = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, " \t\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    names++;
    if (!dlsym(lib, line)) {
      printf("missing %s\n", line);
      missing++;
    }
  }
  fclose(f);
  printf("resolved %u of %u\n", names - missing, names);
  /* before nvmlInit a real driver answers UNINITIALIZED, the NOT_SUPPORTED table included */
  typedef nvmlReturn_t (*link_state_fn)(nvmlDevice_t, unsigned, unsigned *);
  link_state_fn link_state = (link_state_fn)dlsym(lib, "nvmlDeviceGetNvLinkState");
  unsigned v = 0;
  if (link_state) printf("before init nvmlDeviceGetNvLinkState: %d\n", link_state(NULL, 0, &v));
  return missing ? 1 : 0;
}

/* "name": value or the error code as {"error":N} */
static int first_field;
static void field_u(const char *name, nvmlReturn_t r, unsigned long long v) {
  printf("%s\"%s\":", first_field ? "" : ",", name);
  first_field = 0;
  if (r == NVML_SUCCESS) printf("%llu", v);
  else printf("{\"error\":%d}", r);
}
static void field_s(const char *name, nvmlReturn_t r, const char *v) {
  printf("%s\"%s\":", first_field ? "" : ",", name);
  first_field = 0;
  if (r == NVML_SUCCESS) printf("\"%s\"", v);
  else printf("{\"error\":%d}", r);
}

/* the call runs before its outputs are read (argument order is unspecified) */
#define F(name, call, val)                     \
  do {                                         \
    nvmlReturn_t r_ = (call);                  \
    field_u(name, r_, (unsigned long long)(val)); \
  } while (0)
#define FS(name, call, val)  \
  do {                       \
    nvmlReturn_t r_ = (call); \
    field_s(name, r_, val);  \
  } while (0)

/* What nvtop / nvitop / gpustat read of one device, through the v1 names where they use them. */
static void client(unsigned i) {
  unsigned n = 0, v = 0, w = 0;
  unsigned long long ull = 0;
  int cuda = 0, major = 0, minor = 0;
  char buf[128];
  nvmlDevice_t d = NULL, d2 = NULL;
  first_field = 1;
  printf("{");
  F("count", p_nvmlDeviceGetCount(&n), n);
  nvmlReturn_t r = p_nvmlDeviceGetHandleByIndex(i, &d);
  F("handleByIndexV1", r, p_nvmlDeviceGetHandleByIndex_v2(i, &d2) == NVML_SUCCESS && d == d2);
  F("cudaDriverVersion", p_nvmlSystemGetCudaDriverVersion(&cuda), (unsigned)cuda);
  r = p_nvmlDeviceGetUUID(d, buf, sizeof buf);
  FS("uuid", r, buf);
  d2 = NULL;
  F("handleByUuidSame", p_nvmlDeviceGetHandleByUUID(buf, &d2), d2 == d);
  nvmlPciInfo_t pci;
  p_nvmlDeviceGetPciInfo_v3(d, &pci);
  d2 = NULL;
  F("handleByPciSame", p_nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &d2), d2 == d);
  nvmlPciInfo_v1_t pci1;
  r = p_nvmlDeviceGetPciInfo(d, &pci1);
  FS("pciV1BusId", r, pci1.busId);
  F("minorNumber", p_nvmlDeviceGetMinorNumber(d, &v), v);
  F("brand", p_nvmlDeviceGetBrand(d, &v), v);
  F("architecture", p_nvmlDeviceGetArchitecture(d, &v), v);
  r = p_nvmlDeviceGetCudaComputeCapability(d, &major, &minor);
  F("ccMajor", r, (unsigned)major);
  F("ccMinor", r, (unsigned)minor);
  F("performanceState", p_nvmlDeviceGetPerformanceState(d, &v), v);
  F("persistenceMode", p_nvmlDeviceGetPersistenceMode(d, &v), v);
  F("displayActive", p_nvmlDeviceGetDisplayActive(d, &v), v);
  F("powerLimit", p_nvmlDeviceGetPowerManagementLimit(d, &v), v);
  F("enforcedPowerLimit", p_nvmlDeviceGetEnforcedPowerLimit(d, &v), v);
  F("powerUsage", p_nvmlDeviceGetPowerUsage(d, &v), v);
  r = p_nvmlDeviceGetPowerManagementLimitConstraints(d, &v, &w);
  F("powerLimitMin", r, v);
  F("powerLimitMax", r, w);
  nvmlTemperature_v1_t t = {nvmlTemperature_v1, NVML_TEMPERATURE_GPU, -1};
  F("temperatureV", p_nvmlDeviceGetTemperatureV(d, &t), (unsigned)t.temperature);
  F("temperature", p_nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v), v);
  t.version = 0;
  F("temperatureVBadVersion", p_nvmlDeviceGetTemperatureV(d, &t), 0);
  F("thresholdShutdown", p_nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v), v);
  F("thresholdSlowdown", p_nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v), v);
  F("thresholdGpuMax", p_nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &v), v);
  F("clockSm", p_nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &v), v);
  F("clockMem", p_nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &v), v);
  F("maxClockGraphics", p_nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_GRAPHICS, &v), v);
  F("maxClockSm", p_nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &v), v);
  F("maxClockMem", p_nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &v), v);
  F("clocksEventReasons", p_nvmlDeviceGetCurrentClocksEventReasons(d, &ull), ull);
  F("fanSpeed", p_nvmlDeviceGetFanSpeed(d, &v), v);
  F("numFans", p_nvmlDeviceGetNumFans(d, &v), v);
  r = p_nvmlDeviceGetEccMode(d, &v, &w);
  F("eccModeCurrent", r, v);
  F("totalEccErrorsUncorrectedVolatile", p_nvmlDeviceGetTotalEccErrors(d, 1, 0, &ull), ull);
  F("encoderUtilization", p_nvmlDeviceGetEncoderUtilization(d, &v, &w), v);
  F("encoderSamplingPeriodUs", p_nvmlDeviceGetEncoderUtilization(d, &v, &w), w);
  F("decoderUtilization", p_nvmlDeviceGetDecoderUtilization(d, &v, &w), v);
  F("pcieLinkGenCurrent", p_nvmlDeviceGetCurrPcieLinkGeneration(d, &v), v);
  F("pcieLinkGenMax", p_nvmlDeviceGetMaxPcieLinkGeneration(d, &v), v);
  F("pcieLinkWidthCurrent", p_nvmlDeviceGetCurrPcieLinkWidth(d, &v), v);
  F("pcieLinkWidthMax", p_nvmlDeviceGetMaxPcieLinkWidth(d, &v), v);
  F("pcieTxKBps", p_nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES, &v), v);
  F("pcieRxKBps", p_nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &v), v);
  nvmlConfComputeMemSizeInfo_t cc = {0, 0};
  r = p_nvmlDeviceGetConfComputeMemSizeInfo(d, &cc);
  F("ccProtectedKiB", r, cc.protectedMemSizeKib);
  F("ccUnprotectedKiB", r, cc.unprotectedMemSizeKib);
  nvmlBAR1Memory_t bar1 = {0, 0, 0};
  F("bar1TotalMiB", p_nvmlDeviceGetBAR1MemoryInfo(d, &bar1), bar1.bar1Total >> 20);
  F("bar1UsedMiB", p_nvmlDeviceGetBAR1MemoryInfo(d, &bar1), bar1.bar1Used >> 20);
  nvmlDevice_t mig = NULL;
  r = p_nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &mig);
  F("mig0Bar1TotalMiB", r == NVML_SUCCESS ? p_nvmlDeviceGetBAR1MemoryInfo(mig, &bar1) : r, bar1.bar1Total >> 20);
  /* from the NOT_SUPPORTED table, called with its real arguments */
  typedef nvmlReturn_t (*link_state_fn)(nvmlDevice_t, unsigned, unsigned *);
  typedef nvmlReturn_t (*driver_model_fn)(nvmlDevice_t, unsigned *, unsigned *);
  link_state_fn link_state = (link_state_fn)dlsym(g_lib, "nvmlDeviceGetNvLinkState");
  driver_model_fn driver_model = (driver_model_fn)dlsym(g_lib, "nvmlDeviceGetDriverModel_v2");
  F("nvLinkState", link_state ? link_state(d, 0, &v) : NVML_ERROR_FUNCTION_NOT_FOUND, v);
  F("driverModel", driver_model ? driver_model(d, &v, &w) : NVML_ERROR_FUNCTION_NOT_FOUND, v);
  static nvmlProcessInfo_v2_t procs[64];
  n = 64;
  F("computeProcessesV3", p_nvmlDeviceGetComputeRunningProcesses_v3(d, &n, procs), n);
  printf("}\n");
}

/* The MIG enumeration calls (as mig-parted and DCGM make them), every profile of DEV. */
static void mig(unsigned i) {
  nvmlDevice_t d = dev(i);
  printf("{\"profiles\":[");
  int first = 1;
  for (unsigned ix = 0; ix < NVML_GPU_INSTANCE_PROFILE_COUNT; ix++) {
    nvmlGpuInstanceProfileInfo_t pi;
    if (p_nvmlDeviceGetGpuInstanceProfileInfo(d, ix, &pi) != NVML_SUCCESS) continue;
    printf("%s{\"index\":%u,\"id\":%u,\"instanceCount\":%u,\"memorySizeMB\":%llu,\"placements\":[", first ? "" : ",", ix,
           pi.id, pi.instanceCount, pi.memorySizeMB);
    first = 0;
    nvmlGpuInstancePlacement_t pl[8];
    unsigned n = 0;
    OK(p_nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, ix, NULL, &n));
    unsigned counted = n;
    OK(p_nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, ix, pl, &n));
    EXPECT(n == counted && n <= 8, "placements %u vs %u", n, counted);
    for (unsigned k = 0; k < n; k++) printf("%s[%u,%u]", k ? "," : "", pl[k].start, pl[k].size);
    unsigned remaining = 99;
    nvmlReturn_t r = p_nvmlDeviceGetGpuInstanceRemainingCapacity(d, ix, &remaining);
    if (r == NVML_SUCCESS) printf("],\"remaining\":%u,\"instances\":[", remaining);
    else printf("],\"remaining\":{\"error\":%d},\"instances\":[", r);
    nvmlGpuInstance_t gis[8];
    n = 0;
    r = p_nvmlDeviceGetGpuInstances(d, ix, gis, &n);
    for (unsigned k = 0; r == NVML_SUCCESS && k < n; k++) {
      nvmlGpuInstanceInfo_t gi;
      OK(p_nvmlGpuInstanceGetInfo(gis[k], &gi));
      EXPECT(gi.device == d && gi.profileId == pi.id, "gi %u parent/profile", gi.id);
      printf("%s{\"gpuInstanceId\":%u,\"start\":%u,\"computeInstances\":[", k ? "," : "", gi.id, gi.placement.start);
      unsigned shown = 0;
      for (unsigned cp = 0; cp < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; cp++) {
        nvmlComputeInstance_t cis[8];
        unsigned cn = 0;
        OK(p_nvmlGpuInstanceGetComputeInstances(gis[k], cp, cis, &cn));
        for (unsigned c = 0; c < cn; c++) {
          nvmlComputeInstanceInfo_t ci;
          OK(p_nvmlComputeInstanceGetInfo_v2(cis[c], &ci));
          nvmlComputeInstance_t byId = NULL;
          OK(p_nvmlGpuInstanceGetComputeInstanceById(gis[k], ci.id, &byId));
          EXPECT(ci.device == d && ci.gpuInstance == gis[k] && byId == cis[c], "ci %u parents", ci.id);
          printf("%s{\"id\":%u,\"profileId\":%u,\"slices\":%u}", shown++ ? "," : "", ci.id, ci.profileId, ci.placement.size);
        }
      }
      printf("]}");
    }
    if (r == NVML_SUCCESS) printf("]}");
    else printf("],\"instancesError\":%d}", r);
  }
  printf("]}\n");
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  g_lib = h;
  if (!strcmp(argv[2], "symbols")) return argc > 3 ? symbols(h, argv[3]) : 2;
#define X(name, params)                                       \
  p_##name = (name##_fn)dlsym(h, #name);                      \
  if (!p_##name) {                                            \
    fprintf(stderr, "missing symbol %s\n", #name);            \
    return 1;                                                 \
  }
  GPUSHARE_NVML_FUNCS(X)
  GPUSHARE_NVML_CLIENT_FUNCS(X)
#undef X
  p_nvmlErrorString = (nvmlErrorString_fn)dlsym(h, "nvmlErrorString");
  if (!p_nvmlErrorString) return 1;
  const char *mode = argv[2];
  nvmlReturn_t r = p_nvmlInit_v2();
  if (!strcmp(mode, "noinit")) {
    EXPECT(r == NVML_ERROR_DRIVER_NOT_LOADED, "init gave %d", r);
    return failures ? 1 : 0;
  }
  if (r != NVML_SUCCESS) {
    fprintf(stderr, "nvmlInit_v2: %s\n", p_nvmlErrorString(r));
    return 1;
  }
  unsigned a = argc > 3 ? (unsigned)atoi(argv[3]) : 0, b = argc > 4 ? (unsigned)atoi(argv[4]) : 0;
  if (!strcmp(mode, "basic")) basic();
  else if (!strcmp(mode, "procs")) procs(a, b);
  else if (!strcmp(mode, "v3wide")) v3wide(a, b);
  else if (!strcmp(mode, "fault")) {
    char buf[96];
    nvmlReturn_t fr = p_nvmlDeviceGetName(dev(a), buf, sizeof buf);
    EXPECT(fr == (nvmlReturn_t)b, "GetName gave %d, wanted %u", fr, b);
  } else if (!strcmp(mode, "lost")) {
    nvmlDevice_t d = dev(a);
    char buf[96];
    unsigned v;
    nvmlMemory_t m;
    EXPECT(p_nvmlDeviceGetName(d, buf, sizeof buf) == NVML_ERROR_GPU_IS_LOST, "name");
    EXPECT(p_nvmlDeviceGetMemoryInfo(d, &m) == NVML_ERROR_GPU_IS_LOST, "memory");
    EXPECT(p_nvmlDeviceGetTemperature(d, 0, &v) == NVML_ERROR_GPU_IS_LOST, "temperature");
    v = 0;
    EXPECT(p_nvmlDeviceGetComputeRunningProcesses(d, &v, NULL) == NVML_ERROR_GPU_IS_LOST, "processes");
  } else if (!strcmp(mode, "util")) util(a, b);
  else if (!strcmp(mode, "client")) client(a);
  else if (!strcmp(mode, "mig")) mig(a);
  else if (!strcmp(mode, "bench")) bench();
  else return 2;
  OK(p_nvmlShutdown());
  EXPECT(p_nvmlShutdown() == NVML_ERROR_UNINITIALIZED, "double shutdown");
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
