/* cuda_check LIBCUDA CHECK...: driver-API checks of the simulated libcuda
 * (capture, graphs, graph memory, arrays, VMM, contexts, the bounded launch
 * queue, the checkpoint lock; memory contents in cuda_check_contents.c, 2D/3D
 * and peer copies and prefetches in cuda_check_copy2d.c; 2D memsets, batched
 * and array copies in cuda_check_memset.c). It
 * dlopens LIBCUDA as a framework does and reads the execution record from the state file ($GPUSHARE_FAKEGPU_STATE)
 * to see which kernels really ran. Prints "ok"/"FAIL" lines; exit status =
 * number of failures. Expects device 0 idle and at least 8 GiB free. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_check.h"

#define DEFINE(name, params) name##_fn p_##name;
GPUSHARE_CUDA_FUNCS(DEFINE)
#undef DEFINE

static CUresult missing(void) { return MISSING; }

static void load(void *h) {
#define LOAD(name, params) \
  p_##name = (name##_fn)dlsym(h, #name); \
  if (!p_##name) p_##name = (name##_fn)(void (*)(void))missing;
  GPUSHARE_CUDA_FUNCS(LOAD)
#undef LOAD
}

int g_fails;
fg_state_t *g_st;
const char *g_build_dir;
CUcontext g_ctx;
static CUfunction g_fn;
static CUstream g_s;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Kernel records of this process on GPU 0 (the simulated driver's execution record);
 * *first_end: the earliest end among those enqueued at or after `since` (ns). */
static uint64_t since;
static unsigned long my_records(uint64_t *first_end) {
  const fg_ring_t *r = &g_st->rings[0];
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), from = head > FG_RING_SIZE ? head - FG_RING_SIZE : 0;
  unsigned long n = 0;
  if (first_end) *first_end = 0;
  for (uint64_t i = from; i < head; i++) {
    const fg_exec_rec_t *rec = &r->recs[i % FG_RING_SIZE];
    if (rec->pid != getpid()) continue;
    if (first_end && rec->enqueue_ns >= since && (!*first_end || rec->end_ns < *first_end)) *first_end = rec->end_ns;
    n++;
  }
  return n;
}

static CUresult launch_us(CUstream s, unsigned long long us) {
  void *params[] = {&us};
  return p_cuLaunchKernel(g_fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

static size_t free_mem(void) {
  size_t f = 0, t = 0;
  p_cuMemGetInfo_v2(&f, &t);
  return f;
}

static void setup(void) {
  CUdevice dev;
  CUmodule mod;
  if (p_cuInit(0) || p_cuDeviceGet(&dev, 0) || p_cuDevicePrimaryCtxRetain(&g_ctx, dev) || p_cuCtxSetCurrent(g_ctx) ||
      p_cuModuleLoadData(&mod, "image") || p_cuModuleGetFunction(&g_fn, mod, "k") || p_cuStreamCreate(&g_s, 0)) {
    printf("FAIL setup: the driver did not initialise\n");
    exit(1);
  }
}

/* ---------------- capture and graphs ---------------- */

typedef struct {
  CUresult rc;
  CUstream s;
  int op;
} other_t;

static void *other_thread(void *arg) {
  other_t *o = arg;
  p_cuCtxSetCurrent(g_ctx);
  CUdeviceptr p = 0;
  CUgraph g = NULL;
  if (o->op == 0) {
    o->rc = p_cuMemAlloc_v2(&p, MiB);
    if (o->rc == CUDA_SUCCESS) p_cuMemFree_v2(p);
  } else {
    o->rc = p_cuStreamEndCapture(o->s, &g);
  }
  return NULL;
}

static CUresult in_other_thread(int op, CUstream s) {
  other_t o = {0, s, op};
  pthread_t t;
  pthread_create(&t, NULL, other_thread, &o);
  pthread_join(t, NULL);
  return o.rc;
}

static void check_capture(void) {
  CUstreamCaptureStatus st = 99;
  CUgraph g = NULL;
  CUgraphExec e = NULL;
  cuuint64_t id = 0;
  unsigned long before = my_records(NULL);

  EXPECT_RC("begin capture", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_RC("is capturing", p_cuStreamIsCapturing(g_s, &st), CUDA_SUCCESS);
  EXPECT("status active", st == CU_STREAM_CAPTURE_STATUS_ACTIVE, "status %d", st);
  EXPECT_RC("begin twice: ILLEGAL_STATE", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
  for (int i = 0; i < 3; i++) EXPECT_RC("launch into the capture", launch_us(g_s, 2000), CUDA_SUCCESS);
  CUgraph cg = NULL;
  const CUgraphNode *deps = NULL;
  size_t nd = 9;
  EXPECT_RC("capture info v2", p_cuStreamGetCaptureInfo_v2(g_s, &st, &id, &cg, &deps, &nd), CUDA_SUCCESS);
  EXPECT("capture info: id, graph, one dependency", id > 0 && cg && nd == 1 && deps && deps[0], "id %llu graph %p n %zu",
         (unsigned long long)id, (void *)cg, nd);
  EXPECT_RC("end capture from another thread: WRONG_THREAD", in_other_thread(1, g_s), CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  EXPECT_RC("end capture", p_cuStreamEndCapture(g_s, &g), CUDA_SUCCESS);
  EXPECT("a graph came back", g != NULL, "NULL graph");
  p_cuStreamIsCapturing(g_s, &st);
  EXPECT("status none after end", st == CU_STREAM_CAPTURE_STATUS_NONE, "status %d", st);
  p_cuCtxSynchronize();
  EXPECT("captured kernels did not run", my_records(NULL) == before, "%lu records", my_records(NULL) - before);
  EXPECT_RC("end without capture: ILLEGAL_STATE", p_cuStreamEndCapture(g_s, &cg), CUDA_ERROR_ILLEGAL_STATE);

  EXPECT_RC("instantiate", p_cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
  EXPECT_RC("graph launch 1", p_cuGraphLaunch(e, g_s), CUDA_SUCCESS);
  EXPECT_RC("graph launch 2", p_cuGraphLaunch(e, g_s), CUDA_SUCCESS);
  EXPECT_RC("sync after graph launches", p_cuStreamSynchronize(g_s), CUDA_SUCCESS);
  EXPECT("graph kernels ran: 2 launches x 3 kernels in the execution record", my_records(NULL) - before == 6,
         "%lu records", my_records(NULL) - before);
  EXPECT_RC("exec destroy", p_cuGraphExecDestroy(e), CUDA_SUCCESS);
  EXPECT_RC("graph destroy", p_cuGraphDestroy(g), CUDA_SUCCESS);

  /* a synchronize during capture fails and invalidates it */
  EXPECT_RC("begin capture (2)", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  EXPECT_RC("launch (2)", launch_us(g_s, 1000), CUDA_SUCCESS);
  EXPECT_RC("stream sync during capture: UNSUPPORTED", p_cuStreamSynchronize(g_s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  p_cuStreamIsCapturing(g_s, &st);
  EXPECT("status invalidated", st == CU_STREAM_CAPTURE_STATUS_INVALIDATED, "status %d", st);
  EXPECT_RC("launch into an invalidated capture: INVALIDATED", launch_us(g_s, 1000), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  g = (CUgraph)1;
  EXPECT_RC("end capture: INVALIDATED", p_cuStreamEndCapture(g_s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT("no graph from an invalidated capture", g == NULL, "graph %p", (void *)g);

  EXPECT_RC("begin capture (3)", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
  EXPECT_RC("relaxed: another thread may allocate", in_other_thread(0, NULL), CUDA_SUCCESS);
  EXPECT_RC("context sync during capture: UNSUPPORTED", p_cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_RC("end capture (3): INVALIDATED", p_cuStreamEndCapture(g_s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  CUstream s2;
  p_cuStreamCreate(&s2, 0);
  EXPECT_RC("begin capture (4, global)", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_RC("global: another thread's allocation: UNSUPPORTED", in_other_thread(0, NULL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_RC("end capture (4): INVALIDATED", p_cuStreamEndCapture(g_s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_RC("begin capture (5, global)", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_RC("global: syncing another stream: UNSUPPORTED", p_cuStreamSynchronize(s2), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_RC("end capture (5): INVALIDATED", p_cuStreamEndCapture(g_s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_RC("the legacy stream cannot capture", p_cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  before = my_records(NULL);
  EXPECT_RC("the stream runs again after an invalidated capture", launch_us(g_s, 1000), CUDA_SUCCESS);
  p_cuStreamSynchronize(g_s);
  EXPECT("its kernel ran", my_records(NULL) - before == 1, "%lu records", my_records(NULL) - before);
  p_cuStreamDestroy_v2(s2);
  p_cuStreamCreate(&s2, 0);
  p_cuStreamBeginCapture_v2(s2, CU_STREAM_CAPTURE_MODE_GLOBAL);
  EXPECT_RC("destroying a capturing stream", p_cuStreamDestroy_v2(s2), CUDA_SUCCESS);
  EXPECT_RC("its global capture no longer prohibits allocations", in_other_thread(0, NULL), CUDA_SUCCESS);

  void *fn = NULL;
  CUdriverProcAddressQueryResult q;
  p_cuGetProcAddress_v2("cuGraphLaunch", &fn, 12040, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q);
  EXPECT("cuGetProcAddress: cuGraphLaunch per-thread", fn && fn == (void *)p_cuGraphLaunch_ptsz, "got %p", fn);
  p_cuGetProcAddress_v2("cuStreamBeginCapture", &fn, 12040, 0, &q);
  EXPECT("cuGetProcAddress: cuStreamBeginCapture is _v2", fn && fn == (void *)p_cuStreamBeginCapture_v2, "got %p", fn);
  p_cuGetProcAddress_v2("cuStreamGetCaptureInfo", &fn, 12040, 0, &q);
  EXPECT("cuGetProcAddress: cuStreamGetCaptureInfo at 12.4 is _v3", fn && fn == (void *)p_cuStreamGetCaptureInfo_v3, "got %p", fn);
}

/* ---------------- graph memory ---------------- */

static void check_graph_memory(void) {
  size_t f0 = free_mem();
  CUgraph g = NULL;
  CUgraphExec e = NULL, e2 = NULL;
  CUdeviceptr p = 0;
  EXPECT_RC("begin capture", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_RC("cuMemAllocAsync in a capture", p_cuMemAllocAsync(&p, GiB, g_s), CUDA_SUCCESS);
  EXPECT("it gives an address", p != 0, "NULL pointer");
  EXPECT("nothing charged while capturing", free_mem() == f0, "free %zu MiB less", (f0 - free_mem()) / MiB);
  launch_us(g_s, 100);
  EXPECT_RC("cuMemFreeAsync in a capture", p_cuMemFreeAsync(p, g_s), CUDA_SUCCESS);
  EXPECT_RC("freeing a non-graph pointer in a capture: INVALID_VALUE", p_cuMemFreeAsync(12345, g_s), CUDA_ERROR_INVALID_VALUE);
  p_cuStreamEndCapture(g_s, &g);
  g = NULL;
  EXPECT_RC("begin capture (2)", p_cuStreamBeginCapture_v2(g_s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  p_cuMemAllocAsync(&p, GiB, g_s);
  launch_us(g_s, 100);
  p_cuMemFreeAsync(p, g_s);
  EXPECT_RC("end capture (2)", p_cuStreamEndCapture(g_s, &g), CUDA_SUCCESS);
  EXPECT_RC("instantiate", p_cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
  EXPECT("nothing charged at instantiation", free_mem() == f0, "free %zu MiB less", (f0 - free_mem()) / MiB);
  EXPECT_RC("launch", p_cuGraphLaunch(e, g_s), CUDA_SUCCESS);
  EXPECT("first launch charges the graph's memory", f0 - free_mem() == GiB, "free %zu MiB less", (f0 - free_mem()) / MiB);
  p_cuStreamSynchronize(g_s);
  p_cuGraphLaunch(e, g_s);
  p_cuStreamSynchronize(g_s);
  EXPECT("the graph keeps it between launches, once", f0 - free_mem() == GiB, "free %zu MiB less", (f0 - free_mem()) / MiB);
  EXPECT_RC("exec destroy", p_cuGraphExecDestroy(e), CUDA_SUCCESS);
  EXPECT("a destroyed graph's memory stays cached", f0 - free_mem() == GiB, "free %zu MiB less", (f0 - free_mem()) / MiB);
  EXPECT_RC("cuDeviceGraphMemTrim", p_cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
  EXPECT("trim gives it back", free_mem() == f0, "free %zu MiB less", (f0 - free_mem()) / MiB);
  p_cuGraphDestroy(g);

  /* explicit nodes */
  CUgraphNode an = NULL, fnode = NULL;
  CUDA_MEM_ALLOC_NODE_PARAMS ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = 0;
  ap.bytesize = 2 * GiB;
  p_cuGraphCreate(&g, 0);
  EXPECT_RC("cuGraphAddMemAllocNode", p_cuGraphAddMemAllocNode(&an, g, NULL, 0, &ap), CUDA_SUCCESS);
  EXPECT("alloc node gives its address", ap.dptr != 0, "dptr 0");
  EXPECT_RC("cuGraphAddMemFreeNode", p_cuGraphAddMemFreeNode(&fnode, g, &an, 1, ap.dptr), CUDA_SUCCESS);
  EXPECT_RC("free node of foreign memory: INVALID_VALUE", p_cuGraphAddMemFreeNode(&fnode, g, &an, 1, ap.dptr + 1),
            CUDA_ERROR_INVALID_VALUE);
  p_cuGraphInstantiateWithFlags(&e, g, 0);
  EXPECT_RC("launch (nodes)", p_cuGraphLaunch(e, g_s), CUDA_SUCCESS);
  EXPECT("alloc node charged from the first launch", f0 - free_mem() == 2 * GiB, "free %zu MiB less", (f0 - free_mem()) / MiB);
  p_cuStreamSynchronize(g_s);
  p_cuGraphExecDestroy(e);
  p_cuDeviceGraphMemTrim(0);
  p_cuGraphDestroy(g);
  EXPECT("destroy + trim: all back", free_mem() == f0, "free %zu MiB less", (f0 - free_mem()) / MiB);

  /* past capacity: the first launch fails and charges nothing */
  ap.bytesize = f0 + GiB;
  p_cuGraphCreate(&g, 0);
  p_cuGraphAddMemAllocNode(&an, g, NULL, 0, &ap);
  p_cuGraphInstantiateWithFlags(&e2, g, 0);
  unsigned long before = my_records(NULL);
  EXPECT_RC("graph memory past capacity: OUT_OF_MEMORY at launch", p_cuGraphLaunch(e2, g_s), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT("nothing charged, nothing ran", free_mem() == f0 && my_records(NULL) == before, "free %zu MiB less",
         (f0 - free_mem()) / MiB);
  p_cuGraphExecDestroy(e2);
  p_cuGraphDestroy(g);
}

/* ---------------- arrays ---------------- */

static void check_arrays(void) {
  size_t f0 = free_mem();
  CUarray a = NULL, b = NULL;
  CUmipmappedArray m = NULL;
  CUDA_ARRAY_DESCRIPTOR d2 = {1024, 1024, CU_AD_FORMAT_FLOAT, 4};
  EXPECT_RC("cuArrayCreate_v2 1024x1024 float4", p_cuArrayCreate_v2(&a, &d2), CUDA_SUCCESS);
  EXPECT("charged 16 MiB", f0 - free_mem() == 16 * MiB, "free %zu less", f0 - free_mem());
  CUDA_ARRAY3D_DESCRIPTOR d3 = {256, 256, 256, CU_AD_FORMAT_UNSIGNED_INT8, 2, 0};
  EXPECT_RC("cuArray3DCreate_v2 256^3 u8x2", p_cuArray3DCreate_v2(&b, &d3), CUDA_SUCCESS);
  EXPECT("charged 32 MiB more", f0 - free_mem() == 48 * MiB, "free %zu less", f0 - free_mem());
  CUDA_ARRAY3D_DESCRIPTOR dm = {1024, 1024, 0, CU_AD_FORMAT_HALF, 1, 0};
  EXPECT_RC("cuMipmappedArrayCreate 1024x1024 half, 3 levels", p_cuMipmappedArrayCreate(&m, &dm, 3), CUDA_SUCCESS);
  size_t mip = (1024 * 1024 + 512 * 512 + 256 * 256) * 2;
  EXPECT("charged every level", f0 - free_mem() == 48 * MiB + mip, "free %zu less", f0 - free_mem());
  EXPECT_RC("cuArrayDestroy", p_cuArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_RC("cuArrayDestroy (3D)", p_cuArrayDestroy(b), CUDA_SUCCESS);
  EXPECT_RC("cuMipmappedArrayDestroy", p_cuMipmappedArrayDestroy(m), CUDA_SUCCESS);
  EXPECT("all back", free_mem() == f0, "free %zu less", f0 - free_mem());
  CUDA_ARRAY3D_DESCRIPTOR huge = {65536, 65536, 64, CU_AD_FORMAT_FLOAT, 4, 0};
  EXPECT_RC("array past capacity: OUT_OF_MEMORY", p_cuArray3DCreate_v2(&a, &huge), CUDA_ERROR_OUT_OF_MEMORY);
  CUDA_ARRAY3D_DESCRIPTOR wraps = {1ull << 62, 1ull << 62, 0, CU_AD_FORMAT_FLOAT, 4, 0};
  EXPECT_RC("array whose size overflows: OUT_OF_MEMORY", p_cuArray3DCreate_v2(&a, &wraps), CUDA_ERROR_OUT_OF_MEMORY);
  CUDA_ARRAY_DESCRIPTOR bad = {16, 16, (CUarray_format)0x77, 1};
  EXPECT_RC("unknown format: INVALID_VALUE", p_cuArrayCreate_v2(&a, &bad), CUDA_ERROR_INVALID_VALUE);
  EXPECT("nothing charged by refusals", free_mem() == f0, "free %zu less", f0 - free_mem());
}

/* ---------------- VMM ---------------- */

static void check_vmm(void) {
  size_t f0 = free_mem();
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0, va2 = 0;
  CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  EXPECT_RC("cuMemCreate 64 MiB", p_cuMemCreate(&h, 64 * MiB, &prop, 0), CUDA_SUCCESS);
  EXPECT("charged at create", f0 - free_mem() == 64 * MiB, "free %zu less", f0 - free_mem());
  EXPECT_RC("reserve", p_cuMemAddressReserve(&va, 64 * MiB, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_RC("set access before map: INVALID_VALUE", p_cuMemSetAccess(va, 64 * MiB, &acc, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("map", p_cuMemMap(va, 64 * MiB, 0, h, 0), CUDA_SUCCESS);
  EXPECT_RC("map over a mapping: INVALID_VALUE", p_cuMemMap(va, 64 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("set access", p_cuMemSetAccess(va, 64 * MiB, &acc, 1), CUDA_SUCCESS);
  EXPECT_RC("release while mapped", p_cuMemRelease(h), CUDA_SUCCESS);
  EXPECT("a released but mapped handle keeps its memory", f0 - free_mem() == 64 * MiB, "free %zu less", f0 - free_mem());
  EXPECT_RC("release twice: INVALID_VALUE", p_cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("address free while mapped: INVALID_VALUE", p_cuMemAddressFree(va, 64 * MiB), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("unmap", p_cuMemUnmap(va, 64 * MiB), CUDA_SUCCESS);
  EXPECT("the last unmap frees it", free_mem() == f0, "free %zu less", f0 - free_mem());
  EXPECT_RC("address free", p_cuMemAddressFree(va, 64 * MiB), CUDA_SUCCESS);

  /* one handle, two mappings */
  p_cuMemCreate(&h, 32 * MiB, &prop, 0);
  p_cuMemAddressReserve(&va, 32 * MiB, 0, 0, 0);
  p_cuMemAddressReserve(&va2, 32 * MiB, 0, 0, 0);
  p_cuMemMap(va, 32 * MiB, 0, h, 0);
  EXPECT_RC("second mapping of one handle", p_cuMemMap(va2, 32 * MiB, 0, h, 0), CUDA_SUCCESS);
  p_cuMemRelease(h);
  p_cuMemUnmap(va, 32 * MiB);
  EXPECT("one mapping left: still charged", f0 - free_mem() == 32 * MiB, "free %zu less", f0 - free_mem());
  p_cuMemUnmap(va2, 32 * MiB);
  EXPECT("both unmapped: freed", free_mem() == f0, "free %zu less", f0 - free_mem());
  EXPECT_RC("unmap of nothing: INVALID_VALUE", p_cuMemUnmap(va2, 32 * MiB), CUDA_ERROR_INVALID_VALUE);
  p_cuMemAddressFree(va, 32 * MiB);
  p_cuMemAddressFree(va2, 32 * MiB);

  /* never mapped: release frees at once */
  p_cuMemCreate(&h, 16 * MiB, &prop, 0);
  p_cuMemRelease(h);
  EXPECT("unmapped handle: freed at release", free_mem() == f0, "free %zu less", f0 - free_mem());
}

/* ---------------- contexts ---------------- */

static void check_contexts(void) {
  size_t f0 = free_mem();
  CUcontext c2 = NULL;
  CUdeviceptr p;
  EXPECT_RC("cuCtxCreate", p_cuCtxCreate_v2(&c2, 0, 0), CUDA_SUCCESS);
  EXPECT_RC("allocate 1 GiB in it", p_cuMemAlloc_v2(&p, GiB), CUDA_SUCCESS);
  CUarray a;
  CUDA_ARRAY_DESCRIPTOR d2 = {1024, 1024, CU_AD_FORMAT_FLOAT, 1};
  p_cuArrayCreate_v2(&a, &d2);
  EXPECT("charged", f0 - free_mem() == GiB + 4 * MiB, "free %zu MiB less", (f0 - free_mem()) / MiB);
  EXPECT_RC("cuCtxDestroy", p_cuCtxDestroy_v2(c2), CUDA_SUCCESS);
  p_cuCtxSetCurrent(g_ctx);
  EXPECT("its allocations are freed with it (the primary context lives on)", free_mem() == f0, "free %zu MiB less",
         (f0 - free_mem()) / MiB);
  EXPECT_RC("allocate 512 MiB in the primary context", p_cuMemAlloc_v2(&p, 512 * MiB), CUDA_SUCCESS);
  EXPECT_RC("cuDevicePrimaryCtxReset", p_cuDevicePrimaryCtxReset_v2(0), CUDA_SUCCESS);
  EXPECT("reset frees the primary context's memory", free_mem() == f0, "free %zu MiB less", (f0 - free_mem()) / MiB);
  EXPECT_RC("retain again", p_cuDevicePrimaryCtxRetain(&g_ctx, 0), CUDA_SUCCESS);
  p_cuCtxSetCurrent(g_ctx);
  EXPECT_RC("allocate 256 MiB", p_cuMemAlloc_v2(&p, 256 * MiB), CUDA_SUCCESS);
  EXPECT_RC("release the primary context", p_cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
  EXPECT("the last release frees it", free_mem() == f0, "free %zu MiB less", (f0 - free_mem()) / MiB);
  p_cuDevicePrimaryCtxRetain(&g_ctx, 0);
  p_cuCtxSetCurrent(g_ctx);
  p_cuStreamCreate(&g_s, 0);
}

/* ---------------- bounded launch queue ---------------- */

static void check_queue(void) {
  CUstream s;
  p_cuStreamCreate(&s, 0);
  unsigned long before = my_records(NULL);
  since = now_ns();
  launch_us(s, 1000000); /* 1 s: the queue fills behind it */
  for (int i = 1; i < 1024; i++) launch_us(s, 0);
  uint64_t t_1024 = now_ns();
  CUresult rc = launch_us(s, 0);
  uint64_t t_1025 = now_ns(), first_end = 0;
  p_cuStreamSynchronize(s);
  my_records(&first_end);
  EXPECT("launch 1025 succeeds", rc == CUDA_SUCCESS, "rc %d", rc);
  EXPECT("1024 pending launches return at once (before the first kernel ends)", t_1024 < first_end,
         "the 1024th launch returned %.1f ms after the first kernel ended", (double)(t_1024 - first_end) / 1e6);
  EXPECT("launch 1025 blocks until a kernel of the full queue completes", t_1025 >= first_end,
         "it returned %.1f ms before the first kernel ended", (double)(first_end - t_1025) / 1e6);
  EXPECT("every kernel ran", my_records(NULL) - before == 1025, "%lu records", my_records(NULL) - before);
  p_cuStreamDestroy_v2(s);
}

/* ---------------- the checkpoint lock blocks API calls ---------------- */

typedef struct {
  int op;
  volatile int done, saw_unlock;
  volatile int *unlocking;
  CUresult rc;
} locked_call_t;

static void *locked_call(void *arg) {
  locked_call_t *c = arg;
  p_cuCtxSetCurrent(g_ctx);
  CUdeviceptr p;
  switch (c->op) {
    case 0: c->rc = launch_us(g_s, 100); break;
    case 1: c->rc = p_cuMemAlloc_v2(&p, MiB); break;
    case 2: c->rc = p_cuStreamSynchronize(g_s); break;
    case 3: c->rc = p_cuCtxSynchronize(); break;
  }
  c->saw_unlock = *c->unlocking;
  c->done = 1;
  return NULL;
}

static void check_ckpt_lock(void) {
  static const char *const ops[] = {"cuLaunchKernel", "cuMemAlloc_v2", "cuStreamSynchronize", "cuCtxSynchronize"};
  for (int op = 0; op < 4; op++) {
    volatile int unlocking = 0;
    locked_call_t c = {op, 0, 0, &unlocking, -1};
    char what[128];
    CUresult rc = p_cuCheckpointProcessLock(getpid(), NULL);
    snprintf(what, sizeof what, "lock (before %s)", ops[op]);
    EXPECT(what, rc == CUDA_SUCCESS, "rc %d", rc);
    pthread_t t;
    pthread_create(&t, NULL, locked_call, &c);
    sleep_ms(200);
    snprintf(what, sizeof what, "%s blocks while the process is locked", ops[op]);
    EXPECT(what, !c.done, "it returned %d while locked", c.rc);
    unlocking = 1;
    p_cuCheckpointProcessUnlock(getpid(), NULL);
    pthread_join(t, NULL);
    snprintf(what, sizeof what, "%s returns after the unlock", ops[op]);
    EXPECT(what, c.saw_unlock && c.rc == CUDA_SUCCESS, "rc %d, after unlock: %d", c.rc, c.saw_unlock);
  }
  p_cuCtxSynchronize();
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cuda_check LIBCUDA capture|graphmem|arrays|vmm|ctx|queue|ckpt|contents|copy2d|memset2d|batch|arraycopy...\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  static char build_dir[4096];
  snprintf(build_dir, sizeof build_dir, "%s", argv[1]);
  char *slash = strrchr(build_dir, '/');
  if (slash) *slash = 0;
  else snprintf(build_dir, sizeof build_dir, ".");
  g_build_dir = build_dir;
  if (!h) {
    fprintf(stderr, "cuda_check: %s\n", dlerror());
    return 2;
  }
  char err[256];
  g_st = fg_state_map(fg_state_path(), err, sizeof err);
  if (!g_st) {
    fprintf(stderr, "cuda_check: state: %s\n", err);
    return 2;
  }
  load(h);
  setup();
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "capture")) check_capture();
    else if (!strcmp(argv[i], "graphmem")) check_graph_memory();
    else if (!strcmp(argv[i], "arrays")) check_arrays();
    else if (!strcmp(argv[i], "vmm")) check_vmm();
    else if (!strcmp(argv[i], "ctx")) check_contexts();
    else if (!strcmp(argv[i], "queue")) check_queue();
    else if (!strcmp(argv[i], "ckpt")) check_ckpt_lock();
    else if (!strcmp(argv[i], "contents")) check_contents();
    else if (!strcmp(argv[i], "copy2d")) check_copy2d();
    else if (!strcmp(argv[i], "memset2d")) check_memset2d();
    else if (!strcmp(argv[i], "batch")) check_batch();
    else if (!strcmp(argv[i], "arraycopy")) check_arraycopy();
    else {
      fprintf(stderr, "cuda_check: unknown check '%s'\n", argv[i]);
      return 2;
    }
  }
  return g_fails > 125 ? 125 : g_fails;
}
