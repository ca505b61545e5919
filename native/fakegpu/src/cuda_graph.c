/* Fake libcuda.so.1: stream capture and CUDA graphs. Work issued to a
 * capturing stream is recorded into a graph instead of run; cuGraphLaunch
 * queues the graph's kernels on a stream like launches (they show in the
 * execution record). Capture is checked as the driver checks it: a
 * synchronize of a capturing stream or its context, or a prohibited call in
 * global mode, fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 * invalidates the capture, which cuStreamEndCapture then reports.
 * Graph memory (alloc nodes) is charged on the device from an executable
 * graph's first launch until it is destroyed, then stays cached for graphs
 * until cuDeviceGraphMemTrim or the device's last context goes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

enum { NODE_KERNEL, NODE_ALLOC, NODE_FREE };

struct CUgraphNode_st {
  uint32_t magic;
  int type;
  uint64_t dur_ns;  /* kernel */
  devctx_t *dc;     /* alloc: the device its memory is on */
  size_t bytes;     /* alloc */
  CUdeviceptr dptr; /* alloc (its fixed address) / free */
};

struct CUgraph_st {
  uint32_t magic;
  struct CUgraphNode_st **nodes;
  size_t n, cap;
};

struct CUgraphExec_st {
  uint32_t magic;
  struct CUgraphNode_st *nodes; /* a copy: the graph may change or go after instantiation */
  size_t n;
  unsigned long long *mem_keys; /* one charge per alloc node, from the first launch */
  int charged;
};

struct capture {
  CUstreamCaptureStatus status;
  CUstreamCaptureMode mode;
  pid_t tid;          /* the thread that began it */
  devctx_t *dc;       /* the stream's device (context) */
  cuuint64_t id;
  CUgraph graph;
  CUgraphNode last;   /* the stream's dependency: captured work is one chain */
  struct capture *next;
};

static pthread_mutex_t g_cap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct capture *g_caps; /* every capture not yet ended, under g_cap_mu */
static int g_ncaps;            /* read without the lock on launch paths */
static cuuint64_t g_next_cap_id = 1;

int cap_open(void) { return __atomic_load_n(&g_ncaps, __ATOMIC_ACQUIRE) != 0; }

/* ---------------- graphs ---------------- */

static CUgraph graph_new(void) {
  CUgraph g = calloc(1, sizeof *g);
  g->magic = MAGIC_GRAPH;
  return g;
}

static CUgraphNode graph_add(CUgraph g, int type) {
  if (g->n == g->cap) {
    size_t ncap = g->cap ? g->cap * 2 : 16;
    struct CUgraphNode_st **nn = realloc(g->nodes, ncap * sizeof *nn);
    if (!nn) return NULL;
    g->nodes = nn;
    g->cap = ncap;
  }
  CUgraphNode node = calloc(1, sizeof *node);
  if (!node) return NULL;
  node->magic = MAGIC_GNODE;
  node->type = type;
  g->nodes[g->n++] = node;
  return node;
}

static int graph_ok(CUgraph g) { return g && g->magic == MAGIC_GRAPH; }

/* The alloc node of g that gave out dptr, or NULL. */
static CUgraphNode graph_alloc_of(CUgraph g, CUdeviceptr dptr) {
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i]->type == NODE_ALLOC && g->nodes[i]->dptr == dptr) return g->nodes[i];
  return NULL;
}

static CUgraphNode add_alloc(CUgraph g, devctx_t *d, size_t bytes) {
  CUgraphNode n = graph_add(g, NODE_ALLOC);
  if (!n) return NULL;
  n->dc = d;
  n->bytes = bytes;
  n->dptr = mem_reserve_va(bytes); /* fixed for the graph's lifetime, as in the driver */
  return n;
}

API cuGraphCreate(CUgraph *phGraph, unsigned int flags) {
  NEED_INIT();
  if (!phGraph || flags) return CUDA_ERROR_INVALID_VALUE;
  *phGraph = graph_new();
  return CUDA_SUCCESS;
}

API cuGraphDestroy(CUgraph g) {
  NEED_INIT();
  if (!graph_ok(g)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < g->n; i++) {
    g->nodes[i]->magic = 0;
    free(g->nodes[i]);
  }
  free(g->nodes);
  g->magic = 0;
  free(g);
  return CUDA_SUCCESS;
}

API cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                           size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *p) {
  NEED_INIT();
  if (!phGraphNode || !graph_ok(hGraph) || !p || (numDependencies && !dependencies) || p->bytesize == 0 ||
      p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED || p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  devctx_t *d = dev_of(p->poolProps.location.id);
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  CUgraphNode n = add_alloc(hGraph, d, p->bytesize);
  if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
  p->dptr = n->dptr;
  *phGraphNode = n;
  return CUDA_SUCCESS;
}

API cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                          size_t numDependencies, CUdeviceptr dptr) {
  NEED_INIT();
  if (!phGraphNode || !graph_ok(hGraph) || (numDependencies && !dependencies)) return CUDA_ERROR_INVALID_VALUE;
  if (!graph_alloc_of(hGraph, dptr)) return CUDA_ERROR_INVALID_VALUE; /* only graph memory of this graph */
  CUgraphNode n = graph_add(hGraph, NODE_FREE);
  if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
  n->dptr = dptr;
  *phGraphNode = n;
  return CUDA_SUCCESS;
}

/* ---------------- executable graphs ---------------- */

static CUresult instantiate(CUgraphExec *out, CUgraph g) {
  NEED_INIT();
  if (!out || !graph_ok(g)) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExec e = calloc(1, sizeof *e);
  e->magic = MAGIC_GEXEC;
  e->n = g->n;
  e->nodes = calloc(g->n ? g->n : 1, sizeof *e->nodes);
  e->mem_keys = calloc(g->n ? g->n : 1, sizeof *e->mem_keys);
  for (size_t i = 0; i < g->n; i++) e->nodes[i] = *g->nodes[i];
  *out = e;
  return CUDA_SUCCESS;
}

API cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags) {
  (void)flags; /* auto-free-on-launch, upload, device launch, priority: no difference here */
  return instantiate(phGraphExec, hGraph);
}

API cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                          size_t bufferSize) {
  if (phErrorNode) *phErrorNode = NULL;
  if (logBuffer && bufferSize) logBuffer[0] = 0;
  return instantiate(phGraphExec, hGraph);
}

API cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                       size_t bufferSize) {
  return cuGraphInstantiate_v2(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

/* Where a destroyed graph's memory waits for cuDeviceGraphMemTrim (one charge key per device). */
static unsigned long long cache_key(const devctx_t *d) { return (3ull << 62) | (0xFFFFull << 40) | (unsigned)d->vis; }

/* First launch: the graph's memory is charged on its devices (all or nothing). */
static CUresult exec_charge_locked(CUgraphExec e);
static pthread_mutex_t g_exec_mu = PTHREAD_MUTEX_INITIALIZER; /* one first launch charges, not two threads */

static CUresult exec_charge(CUgraphExec e) {
  pthread_mutex_lock(&g_exec_mu);
  CUresult rc = exec_charge_locked(e);
  pthread_mutex_unlock(&g_exec_mu);
  return rc;
}

static CUresult exec_charge_locked(CUgraphExec e) {
  if (e->charged) return CUDA_SUCCESS;
  for (size_t i = 0; i < e->n; i++) {
    if (e->nodes[i].type != NODE_ALLOC) continue;
    unsigned long long k = mem_new_key();
    CUresult rc = mem_charge(e->nodes[i].dc, k, e->nodes[i].bytes, NULL);
    if (rc != CUDA_SUCCESS) {
      for (size_t j = 0; j < i; j++)
        if (e->mem_keys[j]) mem_uncharge(e->mem_keys[j], 0), e->mem_keys[j] = 0;
      return rc;
    }
    e->mem_keys[i] = k;
  }
  e->charged = 1;
  return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec e, CUstream hStream, int ptsz) {
  NEED_INIT();
  if (!e || e->magic != MAGIC_GEXEC) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc;
  struct CUstream_st *s = stream_resolve(hStream, ptsz, &rc);
  if (!s) return rc;
  if (dev_lost(s->dc)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (cap_open()) { /* launched into a capture: its kernels join the captured graph */
    for (size_t i = 0; i < e->n; i++)
      if (e->nodes[i].type != NODE_KERNEL) return CUDA_ERROR_NOT_SUPPORTED; /* memory nodes cannot be child graphs */
    int recorded = 0;
    for (size_t i = 0; i < e->n; i++) {
      rc = cap_kernel(s, e->nodes[i].dur_ns, &recorded);
      if (!recorded || rc != CUDA_SUCCESS) break;
    }
    if (recorded || rc != CUDA_SUCCESS) return rc;
  }
  ckpt_gate(s->dc);
  rc = exec_charge(e);
  if (rc != CUDA_SUCCESS) return rc;
  for (size_t i = 0; i < e->n && rc == CUDA_SUCCESS; i++)
    if (e->nodes[i].type == NODE_KERNEL) rc = exec_enqueue(s, e->nodes[i].dur_ns);
  return rc;
}

API cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { return graph_launch(hGraphExec, hStream, 0); }
API cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return graph_launch(hGraphExec, hStream, 1); }

API cuGraphExecDestroy(CUgraphExec e) {
  NEED_INIT();
  if (!e || e->magic != MAGIC_GEXEC) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < e->n; i++) /* its memory goes back to the device's graph cache, still held */
    if (e->mem_keys[i]) mem_uncharge(e->mem_keys[i], cache_key(e->nodes[i].dc));
  e->magic = 0;
  free(e->nodes);
  free(e->mem_keys);
  free(e);
  return CUDA_SUCCESS;
}

API cuDeviceGraphMemTrim(CUdevice device) {
  NEED_DEV(d, device);
  ckpt_gate(d);
  mem_uncharge(cache_key(d), 0); /* cached graph memory back to the device */
  return CUDA_SUCCESS;
}

/* ---------------- capture ---------------- */

static int capturable(const struct CUstream_st *s) { return s != &s->dc->null_stream; }

static CUresult begin_capture(CUstream hStream, CUstreamCaptureMode mode, int ptsz) {
  NEED_INIT();
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult rc;
  struct CUstream_st *s = stream_resolve(hStream, ptsz, &rc);
  if (!s) return rc;
  if (!capturable(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
  ckpt_gate(s->dc);
  pthread_mutex_lock(&g_cap_mu);
  if (s->cap) {
    pthread_mutex_unlock(&g_cap_mu);
    return CUDA_ERROR_ILLEGAL_STATE; /* already capturing */
  }
  struct capture *c = calloc(1, sizeof *c);
  c->status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  c->mode = mode;
  c->tid = gettid();
  c->dc = s->dc;
  c->id = g_next_cap_id++;
  c->graph = graph_new();
  c->next = g_caps;
  g_caps = c;
  s->cap = c;
  __atomic_add_fetch(&g_ncaps, 1, __ATOMIC_ACQ_REL);
  pthread_mutex_unlock(&g_cap_mu);
  return CUDA_SUCCESS;
}

API cuStreamBeginCapture(CUstream hStream) { return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 0); }
API cuStreamBeginCapture_ptsz(CUstream hStream) { return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 1); }
API cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) { return begin_capture(hStream, mode, 0); }
API cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) { return begin_capture(hStream, mode, 1); }

/* Takes s's capture out of the open list (g_cap_mu held); the caller owns it then. */
static struct capture *cap_unlink(struct CUstream_st *s) {
  struct capture *c = s->cap;
  for (struct capture **pp = &g_caps; c && *pp; pp = &(*pp)->next)
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  if (c) __atomic_sub_fetch(&g_ncaps, 1, __ATOMIC_ACQ_REL);
  s->cap = NULL;
  return c;
}

void cap_drop(struct CUstream_st *s) {
  pthread_mutex_lock(&g_cap_mu);
  struct capture *c = cap_unlink(s);
  pthread_mutex_unlock(&g_cap_mu);
  if (!c) return;
  cuGraphDestroy(c->graph); /* a destroyed stream's capture ends with it, its graph unseen */
  free(c);
}

static CUresult end_capture(CUstream hStream, CUgraph *phGraph, int ptsz) {
  NEED_INIT();
  if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc;
  struct CUstream_st *s = stream_resolve(hStream, ptsz, &rc);
  if (!s) return rc;
  pthread_mutex_lock(&g_cap_mu);
  struct capture *c = s->cap;
  if (!c) {
    pthread_mutex_unlock(&g_cap_mu);
    return CUDA_ERROR_ILLEGAL_STATE; /* not capturing */
  }
  if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->tid != gettid()) {
    pthread_mutex_unlock(&g_cap_mu);
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  }
  cap_unlink(s);
  pthread_mutex_unlock(&g_cap_mu);
  if (c->status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
    cuGraphDestroy(c->graph);
    *phGraph = NULL;
    rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  } else {
    *phGraph = c->graph;
    rc = CUDA_SUCCESS;
  }
  free(c);
  return rc;
}

API cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) { return end_capture(hStream, phGraph, 0); }
API cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) { return end_capture(hStream, phGraph, 1); }

static CUresult capture_info(CUstream hStream, int ptsz, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps) {
  NEED_INIT();
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc;
  struct CUstream_st *s = stream_resolve(hStream, ptsz, &rc);
  if (!s) return rc;
  pthread_mutex_lock(&g_cap_mu);
  struct capture *c = s->cap;
  *status = c ? c->status : CU_STREAM_CAPTURE_STATUS_NONE;
  int active = c && c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE; /* the other outputs are defined only then */
  if (id && c) *id = c->id;
  if (graph) *graph = active ? c->graph : NULL;
  if (deps) *deps = active && c->last ? &c->last : NULL;
  if (edges) *edges = NULL; /* NULL: every edge is a plain full dependency */
  if (ndeps) *ndeps = active && c->last ? 1 : 0;
  pthread_mutex_unlock(&g_cap_mu);
  return CUDA_SUCCESS;
}

API cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *st) {
  return capture_info(hStream, 0, st, NULL, NULL, NULL, NULL, NULL);
}
API cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *st) {
  return capture_info(hStream, 1, st, NULL, NULL, NULL, NULL, NULL);
}
API cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *st, cuuint64_t *id) {
  return capture_info(hStream, 0, st, id, NULL, NULL, NULL, NULL);
}
API cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *st, cuuint64_t *id) {
  return capture_info(hStream, 1, st, id, NULL, NULL, NULL, NULL);
}
API cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                              const CUgraphNode **deps, size_t *ndeps) {
  return capture_info(hStream, 0, st, id, graph, deps, NULL, ndeps);
}
API cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, size_t *ndeps) {
  return capture_info(hStream, 1, st, id, graph, deps, NULL, ndeps);
}
API cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                              const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps) {
  return capture_info(hStream, 0, st, id, graph, deps, edges, ndeps);
}
API cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps) {
  return capture_info(hStream, 1, st, id, graph, deps, edges, ndeps);
}

/* ---------------- what capture does to other calls ---------------- */

/* Work on a capturing stream: recorded, or refused once the capture is invalidated. g_cap_mu held. */
static CUresult cap_take(struct CUstream_st *s, int *recorded) {
  *recorded = 0;
  if (!s->cap) return CUDA_SUCCESS;
  if (s->cap->status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  *recorded = 1;
  return CUDA_SUCCESS;
}

CUresult cap_kernel(struct CUstream_st *s, uint64_t dur_ns, int *recorded) {
  pthread_mutex_lock(&g_cap_mu);
  CUresult rc = cap_take(s, recorded);
  if (*recorded) {
    CUgraphNode n = graph_add(s->cap->graph, NODE_KERNEL);
    if (n) n->dur_ns = dur_ns, s->cap->last = n;
    else rc = CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_unlock(&g_cap_mu);
  return rc;
}

CUresult cap_alloc(struct CUstream_st *s, size_t size, CUdeviceptr *dptr, int *recorded) {
  if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_cap_mu);
  CUresult rc = cap_take(s, recorded);
  if (*recorded) {
    CUgraphNode n = add_alloc(s->cap->graph, s->dc, size);
    if (n) *dptr = n->dptr, s->cap->last = n;
    else rc = CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_unlock(&g_cap_mu);
  return rc;
}

CUresult cap_free(struct CUstream_st *s, CUdeviceptr dptr, int *recorded) {
  pthread_mutex_lock(&g_cap_mu);
  CUresult rc = cap_take(s, recorded);
  if (*recorded) {
    CUgraphNode n = graph_alloc_of(s->cap->graph, dptr) ? graph_add(s->cap->graph, NODE_FREE) : NULL;
    if (n) n->dptr = dptr, s->cap->last = n;
    else rc = CUDA_ERROR_INVALID_VALUE; /* only graph memory of the captured graph is freed in it */
  }
  pthread_mutex_unlock(&g_cap_mu);
  return rc;
}

/* The global-mode rule: this thread may not make a potentially unsafe call while it has
 * a non-relaxed capture of its own, or while another thread has a global-mode capture.
 * The call fails and those captures are invalidated. */
CUresult cap_unsafe_call(void) {
  pid_t me = gettid();
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&g_cap_mu);
  for (struct capture *c = g_caps; c; c = c->next) {
    int mine = c->tid == me;
    if ((mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) || (!mine && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
      c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
      rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  }
  pthread_mutex_unlock(&g_cap_mu);
  return rc;
}

CUresult cap_stream_sync(struct CUstream_st *s) {
  pthread_mutex_lock(&g_cap_mu);
  struct capture *c = s->cap;
  if (c) c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED; /* a capturing stream cannot be waited for */
  pthread_mutex_unlock(&g_cap_mu);
  return c ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : cap_unsafe_call();
}

/* A context synchronize fails while any of its streams captures, and invalidates them all. */
CUresult cap_ctx_sync(devctx_t *d) {
  int hit = 0;
  pthread_mutex_lock(&g_cap_mu);
  for (struct capture *c = g_caps; c; c = c->next)
    if (c->dc == d) c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED, hit = 1;
  pthread_mutex_unlock(&g_cap_mu);
  return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : cap_unsafe_call();
}
