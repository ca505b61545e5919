/* Stream capture and CUDA graphs. While a stream of this process captures,
 * its launches are recorded, not run: the gate neither waits nor synchronises
 * (a synchronise would invalidate the capture). Graph memory nodes are
 * allocated at the executable graph's first launch and held until the graph is
 * destroyed and the device's graph memory trimmed, as the driver does. */
#define _GNU_SOURCE
#include <pthread.h>

#include "hooks_quota.h"

typedef CUresult (*is_capturing_fn)(CUstream, CUstreamCaptureStatus *);

/* CU_STREAM_CAPTURE_STATUS_NONE when not capturing, or when we cannot tell. */
static CUstreamCaptureStatus capture_status(CUstream stream, int ptsz) {
  static is_capturing_fn fns[2];
  is_capturing_fn f = __atomic_load_n(&fns[ptsz], __ATOMIC_ACQUIRE);
  if (!f) {
    f = (is_capturing_fn)gs_driver_sym(ptsz ? "cuStreamIsCapturing_ptsz" : "cuStreamIsCapturing");
    if (!f) return CU_STREAM_CAPTURE_STATUS_NONE;
    __atomic_store_n(&fns[ptsz], f, __ATOMIC_RELEASE);
  }
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  gs_depth++;
  CUresult rc = f(stream, &st);
  gs_depth--;
  return rc == CUDA_SUCCESS ? st : CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Graph memory allocated into each capturing stream so far: its graph's, at the end of the capture. */
#define CAPTURES 32
static struct {
  CUstream stream;
  uint64_t bytes;
} g_captures[CAPTURES];
static pthread_mutex_t g_captures_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture_bytes_add(CUstream stream, uint64_t bytes) {
  pthread_mutex_lock(&g_captures_lock);
  int free_at = -1;
  for (int i = 0; i < CAPTURES; i++) {
    if (g_captures[i].stream == stream && (g_captures[i].bytes || !bytes)) {
      g_captures[i].bytes += bytes;
      pthread_mutex_unlock(&g_captures_lock);
      return;
    }
    if (free_at < 0 && !g_captures[i].bytes) free_at = i;
  }
  if (free_at >= 0 && bytes) g_captures[free_at].stream = stream, g_captures[free_at].bytes = bytes;
  pthread_mutex_unlock(&g_captures_lock);
}

static uint64_t capture_bytes_take(CUstream stream) {
  uint64_t bytes = 0;
  pthread_mutex_lock(&g_captures_lock);
  for (int i = 0; i < CAPTURES; i++)
    if (g_captures[i].stream == stream && g_captures[i].bytes) {
      bytes = g_captures[i].bytes;
      g_captures[i].bytes = 0;
      g_captures[i].stream = NULL;
    }
  pthread_mutex_unlock(&g_captures_lock);
  return bytes;
}

int gs_capture_alloc(CUstream stream, int ptsz, uint64_t bytes) {
  if (capture_status(stream, ptsz) == CU_STREAM_CAPTURE_STATUS_NONE) return 0;
  capture_bytes_add(stream, bytes);
  return 1;
}

#define BEGIN_CAPTURE(real, call)                                  \
  do {                                                             \
    if (!real) return NO_DRIVER;                                   \
    CUresult rc_ = call;                                           \
    if (rc_ == CUDA_SUCCESS && !gs_depth) gs_capture_begin();       \
    return rc_;                                                    \
  } while (0)

GS_HIDDEN CUresult hook_cuStreamBeginCapture(CUstream hStream) {
  cuStreamBeginCapture_fn real = REAL(cuStreamBeginCapture);
  BEGIN_CAPTURE(real, real(hStream));
}

GS_HIDDEN CUresult hook_cuStreamBeginCapture_ptsz(CUstream hStream) {
  cuStreamBeginCapture_ptsz_fn real = REAL(cuStreamBeginCapture_ptsz);
  BEGIN_CAPTURE(real, real(hStream));
}

GS_HIDDEN CUresult hook_cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  cuStreamBeginCapture_v2_fn real = REAL(cuStreamBeginCapture_v2);
  BEGIN_CAPTURE(real, real(hStream, mode));
}

GS_HIDDEN CUresult hook_cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  cuStreamBeginCapture_v2_ptsz_fn real = REAL(cuStreamBeginCapture_v2_ptsz);
  BEGIN_CAPTURE(real, real(hStream, mode));
}

/* The capture ends whatever the result (an invalidated one too); its graph memory goes to the graph. */
static CUresult end_capture(CUresult (*real)(CUstream, CUgraph *), CUstream stream, CUgraph *graph, int ptsz) {
  if (gs_depth) return real(stream, graph);
  int was = capture_status(stream, ptsz) != CU_STREAM_CAPTURE_STATUS_NONE;
  gs_depth++;
  CUresult rc = real(stream, graph);
  gs_depth--;
  if (!was || capture_status(stream, ptsz) != CU_STREAM_CAPTURE_STATUS_NONE) return rc;
  gs_capture_end();
  uint64_t bytes = capture_bytes_take(stream);
  if (rc == CUDA_SUCCESS && graph && *graph && bytes) gs_quota_graph_add((uint64_t)(uintptr_t)*graph, bytes);
  return rc;
}

GS_HIDDEN CUresult hook_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
  cuStreamEndCapture_fn real = REAL(cuStreamEndCapture);
  return real ? end_capture(real, hStream, phGraph, 0) : NO_DRIVER;
}

GS_HIDDEN CUresult hook_cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) {
  cuStreamEndCapture_ptsz_fn real = REAL(cuStreamEndCapture_ptsz);
  return real ? end_capture(real, hStream, phGraph, 1) : NO_DRIVER;
}

/* Destroying a capturing stream ends its capture. */
GS_HIDDEN CUresult hook_cuStreamDestroy_v2(CUstream hStream) {
  cuStreamDestroy_v2_fn real = REAL(cuStreamDestroy_v2);
  if (!real) return NO_DRIVER;
  if (gs_depth || !gs_capturing()) return real(hStream);
  int was = capture_status(hStream, 0) != CU_STREAM_CAPTURE_STATUS_NONE;
  gs_depth++;
  CUresult rc = real(hStream);
  gs_depth--;
  if (was && rc == CUDA_SUCCESS) {
    gs_capture_end();
    capture_bytes_take(hStream);
  }
  return rc;
}

/* ---- graphs and their memory ---- */

GS_HIDDEN CUresult hook_cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                               const CUgraphNode *dependencies, size_t numDependencies,
                                               CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams) {
  cuGraphAddMemAllocNode_fn real = REAL(cuGraphAddMemAllocNode);
  if (!real) return NO_DRIVER;
  CUresult rc = real(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
  if (rc == CUDA_SUCCESS && !gs_depth && nodeParams) gs_quota_graph_add((uint64_t)(uintptr_t)hGraph, nodeParams->bytesize);
  return rc;
}

#define INSTANTIATED(real, exec, graph, call)                                                           \
  do {                                                                                                 \
    if (!real) return NO_DRIVER;                                                                       \
    CUresult rc_ = call;                                                                               \
    if (rc_ == CUDA_SUCCESS && !gs_depth && (exec) && *(exec))                                          \
      gs_quota_exec_instantiated((uint64_t)(uintptr_t)*(exec), (uint64_t)(uintptr_t)(graph));          \
    return rc_;                                                                                        \
  } while (0)

GS_HIDDEN CUresult hook_cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                           char *logBuffer, size_t bufferSize) {
  cuGraphInstantiate_fn real = REAL(cuGraphInstantiate);
  INSTANTIATED(real, phGraphExec, hGraph, real(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize));
}

GS_HIDDEN CUresult hook_cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                              char *logBuffer, size_t bufferSize) {
  cuGraphInstantiate_v2_fn real = REAL(cuGraphInstantiate_v2);
  INSTANTIATED(real, phGraphExec, hGraph, real(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize));
}

GS_HIDDEN CUresult hook_cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                    unsigned long long flags) {
  cuGraphInstantiateWithFlags_fn real = REAL(cuGraphInstantiateWithFlags);
  INSTANTIATED(real, phGraphExec, hGraph, real(phGraphExec, hGraph, flags));
}

GS_HIDDEN CUresult hook_cuGraphDestroy(CUgraph hGraph) {
  cuGraphDestroy_fn real = REAL(cuGraphDestroy);
  if (!real) return NO_DRIVER;
  CUresult rc = real(hGraph);
  if (rc == CUDA_SUCCESS && !gs_depth) gs_quota_graph_forget((uint64_t)(uintptr_t)hGraph);
  return rc;
}

/* Its memory stays with the device (the graph memory cache) until trimmed. */
GS_HIDDEN CUresult hook_cuGraphExecDestroy(CUgraphExec hGraphExec) {
  cuGraphExecDestroy_fn real = REAL(cuGraphExecDestroy);
  if (!real) return NO_DRIVER;
  CUresult rc = real(hGraphExec);
  if (rc == CUDA_SUCCESS && !gs_depth) gs_quota_exec_destroyed((uint64_t)(uintptr_t)hGraphExec);
  return rc;
}

GS_HIDDEN CUresult hook_cuDeviceGraphMemTrim(CUdevice device) {
  cuDeviceGraphMemTrim_fn real = REAL(cuDeviceGraphMemTrim);
  if (!real) return NO_DRIVER;
  CUresult rc = real(device);
  if (rc == CUDA_SUCCESS && !gs_depth) gs_quota_graph_trim();
  return rc;
}

GS_HOOKS_GRAPH(GS_EXPORT_ROW)
