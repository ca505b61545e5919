/* Internals shared by the parts of the fake libcuda.so.1 (cuda.c: init,
 * devices, contexts, resolution; cuda_mem.c: memory and its charges;
 * cuda_vmm.c: VMM; cuda_array.c: arrays; cuda_exec.c: modules, streams,
 * kernels; cuda_graph.c: capture and graphs; cuda_ckpt.c: checkpointing;
 * cuda_contents.c: memory contents; cuda_copy2d.c: 2D/3D, peer copies, prefetch;
 * cuda_memset.c: memsets; cuda_batch.c: batched copies; cuda_mps.c: MPS clients). */
#ifndef FG_CUDA_INTERNAL_H
#define FG_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "../../include/cuda_abi.h"
#include "fg_state.h"

#define API FG_EXPORT CUresult
#define MAGIC_CTX 0x43545831u
#define MAGIC_STREAM 0x53545231u
#define MAGIC_MOD 0x4d4f4431u
#define MAGIC_FUNC 0x46554e31u
#define MAGIC_POOL 0x504f4f31u
#define MAGIC_GRAPH 0x47524131u
#define MAGIC_GNODE 0x474e4f31u
#define MAGIC_GEXEC 0x47455831u
#define MAGIC_ARRAY 0x41525231u
#define STREAM_QUEUE_MAX 1024 /* pending kernels per stream; a launch past it blocks until one completes */
#define MAX_VIS (FG_MAX_GPUS * FG_MAX_ENGINES)

/* Prototypes from the shared list: a signature mismatch is a compile error. */
#define DECLARE(name, params) FG_EXPORT CUresult name params;
GPUSHARE_CUDA_FUNCS(DECLARE)
#undef DECLARE

typedef struct devctx devctx_t;
typedef struct capture capture_t;

struct CUstream_st {
  uint32_t magic;
  devctx_t *dc;
  uint64_t enq, done; /* kernels, under dc->mu */
  capture_t *cap;     /* open capture sequence (cuda_graph.c), under g_cap_mu */
};

typedef struct {
  struct CUstream_st *s;
  uint64_t dur_ns, enq_ns;
} job_t;

/* Everything this process has on one visible device. */
struct devctx {
  int vis, gpu, mig, engine;
  int slot; /* shared process slot, -1 until registered */
  int refs; /* contexts alive on this device */
  int primary_refs;
  struct CUctx_st *primary;
  struct CUstream_st null_stream;
  struct CUmemPoolHandle_st *default_pool;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_done;
  job_t *q;
  size_t qcap, qhead, qlen;
  uint64_t enq_total, done_total;
  int executor_started;
  unsigned mps_share;     /* MPS client with this active thread percentage; 0: not an MPS client */
  unsigned mps_priority;  /* CUDA_MPS_CLIENT_PRIORITY: 0 normal, 1 below normal */
  uint64_t mps_mem_limit; /* CUDA_MPS_PINNED_DEVICE_MEM_LIMIT for this device, bytes; 0: none */
  uint64_t mps_last_end_ns; /* when this context's last MPS kernel ended: one queued behind it starts there */
};

struct CUctx_st {
  uint32_t magic;
  devctx_t *dc;
  int is_primary;
};
struct CUmod_st {
  uint32_t magic;
};
struct CUfunc_st {
  uint32_t magic;
  char name[64];
};
struct CUmemPoolHandle_st {
  uint32_t magic;
  int vis;
};

extern FG_HIDDEN pthread_mutex_t g_mu; /* process-private structures below */
extern FG_HIDDEN fg_state_t *g_st;
extern FG_HIDDEN CUresult g_init_rc;
extern FG_HIDDEN int g_init_done;
extern FG_HIDDEN devctx_t g_dev[MAX_VIS];
extern FG_HIDDEN int g_nvis;
extern FG_HIDDEN __thread CUcontext t_cur;

#define NEED_INIT()                                                \
  do {                                                             \
    if (!g_init_done || g_init_rc != CUDA_SUCCESS)                 \
      return g_init_done ? g_init_rc : CUDA_ERROR_NOT_INITIALIZED; \
  } while (0)

FG_HIDDEN devctx_t *dev_of(CUdevice dev);
FG_HIDDEN int dev_lost(const devctx_t *d);
FG_HIDDEN devctx_t *cur_dc(void);
FG_HIDDEN uint64_t dev_total(const devctx_t *d);
FG_HIDDEN void block_signals(void);
FG_HIDDEN CUcontext ctx_owner(devctx_t *d); /* the current context if it is on d, else NULL */

#define NEED_DEV(d, dev)                    \
  NEED_INIT();                              \
  devctx_t *d = dev_of(dev);                \
  if (!d) return CUDA_ERROR_INVALID_DEVICE; \
  if (dev_lost(d)) return CUDA_ERROR_DEVICE_UNAVAILABLE

#define NEED_CTX(d)                          \
  NEED_INIT();                               \
  devctx_t *d = cur_dc();                    \
  if (!d) return CUDA_ERROR_INVALID_CONTEXT; \
  if (dev_lost(d)) return CUDA_ERROR_DEVICE_UNAVAILABLE

/* cuda_mem.c: charges size bytes on d under a unique key (OUT_OF_MEMORY past capacity); the
 * charge belongs to owner (freed with that context) or, owner NULL, to the device. Takes g_mu. */
FG_HIDDEN CUresult mem_charge(devctx_t *d, unsigned long long key, size_t size, CUcontext owner);
/* cuda_mem.c: gives a charge back (0 if the key is unknown); moves it onto key `to` instead when to != 0. */
FG_HIDDEN size_t mem_uncharge(unsigned long long key, unsigned long long to);
FG_HIDDEN unsigned long long mem_new_key(void);  /* unique charge key */
FG_HIDDEN unsigned long long mem_reserve_va(size_t size); /* a fake device address range */
FG_HIDDEN unsigned long long mem_va_end(void); /* device addresses are [FG_VA_BASE, this) */
/* cuda_mem.c: the cuMemAlloc-family allocation holding all of [ptr, ptr + n) and its device;
 * INVALID_VALUE when none does (VMM mappings and graph memory are not searched). Takes g_mu. */
FG_HIDDEN CUresult mem_find(unsigned long long ptr, size_t n, devctx_t **d);
/* cuda_contents.c: device memory contents, at offset va - FG_VA_BASE of a memfd per process slot. */
#define FG_VA_BASE 0x7f0000000000ull /* the first fake device address */
FG_HIDDEN void contents_discard(devctx_t *d, unsigned long long va, size_t size); /* freed: its bytes go */
FG_HIDDEN void contents_close(devctx_t *d); /* the device's last context is gone */
/* cuda_contents.c, called by another process on a checkpointed/locked target: moves every byte of
 * pid's slot between its device and host memfds (to_host: checkpoint). 0, or -1 with both as they were. */
FG_HIDDEN int contents_move(int pid, int slot, int to_host);
/* cuda_contents.c, the steps every copy shares (cuda_copy2d.c's too). A copy keeps its stream's
 * order: contents_in_order waits for the work queued ahead of it (per_thread: a _ptds/_ptsz entry
 * point, where NULL names this thread's stream; async: an asynchronous copy, capture rules). */
typedef struct {
  CUstream stream;
  int per_thread;
  int async;
} copy_order_t;
FG_HIDDEN CUresult contents_in_order(copy_order_t o);
FG_HIDDEN int contents_is_device(unsigned long long p); /* in the fake's device address range */
/* n bytes of d's memory at va to (write 0) or from (write 1) buf: 0, or -1. Between ckpt_kernel_begin/end. */
FG_HIDDEN int contents_io(devctx_t *d, void *buf, size_t n, unsigned long long va, int write);
/* n bytes of d's memory at va set from pattern (FG_FILL_CHUNK bytes of a repeated value; NULL: zeros,
 * which leave a hole): 0, or -1. Between ckpt_kernel_begin/end. */
#define FG_FILL_CHUNK (1u << 20)
FG_HIDDEN int contents_fill(devctx_t *d, unsigned long long va, size_t n, const unsigned char *pattern);
/* cuda_copy2d.c: one copy of a box between two sides, checked (nothing touched) by copy_prepare and
 * moved by copy_run; a batch prepares all its copies before it runs any. */
typedef struct {
  CUmemorytype type; /* UNIFIED: `device` holds a pointer of either kind */
  const void *host;
  CUdeviceptr device;
  CUarray array;
  CUcontext ctx; /* peer copies: the side's context (its device); NULL: any */
  size_t x, y, z, lod, pitch, height;
} side_desc_t;
typedef struct {
  unsigned char *host;
  devctx_t *d;
  unsigned long long va;
  size_t pitch, slice;
} side_t;
typedef struct {
  size_t width, height, depth;
} box_t;
typedef struct {
  side_t src, dst;
  box_t box;
} copy_plan_t;
FG_HIDDEN CUresult copy_prepare(const side_desc_t *src, const side_desc_t *dst, box_t b, int peer, copy_plan_t *out);
FG_HIDDEN CUresult copy_run(const copy_plan_t *p); /* OPERATING_SYSTEM if the contents could not be moved */
/* cuda_mem.c: frees every charge owned by ctx (the context is destroyed or reset). */
FG_HIDDEN void mem_release_ctx(CUcontext ctx);
/* cuda_exec.c: the stream a launch/sync argument names (ptsz: NULL is the per-thread stream). */
FG_HIDDEN struct CUstream_st *stream_resolve(CUstream s, int ptsz, CUresult *rc);
/* cuda_exec.c: queues one kernel on s (blocks while s has STREAM_QUEUE_MAX pending or the process is locked). */
FG_HIDDEN CUresult exec_enqueue(struct CUstream_st *s, uint64_t dur_ns);
/* cuda_graph.c: stream capture as the driver checks it. cap_open: captures not yet ended (fast path). */
FG_HIDDEN int cap_open(void);
/* s is capturing: the kernel is recorded (*recorded = 1) or refused (invalidated capture). */
FG_HIDDEN CUresult cap_kernel(struct CUstream_st *s, uint64_t dur_ns, int *recorded);
FG_HIDDEN CUresult cap_alloc(struct CUstream_st *s, size_t size, CUdeviceptr *dptr, int *recorded);
FG_HIDDEN CUresult cap_free(struct CUstream_st *s, CUdeviceptr dptr, int *recorded);
/* An API call that capture prohibits in this thread (global-mode rule): UNSUPPORTED and invalidates. */
FG_HIDDEN CUresult cap_unsafe_call(void);
FG_HIDDEN CUresult cap_stream_sync(struct CUstream_st *s); /* syncing a capturing stream invalidates it */
FG_HIDDEN CUresult cap_ctx_sync(devctx_t *d);              /* so does syncing its context */
FG_HIDDEN void cap_drop(struct CUstream_st *s);              /* the stream goes: its capture ends unseen */
/* cuda_ckpt.c: API calls of a locked or checkpointed process block here until it is unlocked. */
FG_HIDDEN void ckpt_gate(devctx_t *d);

/* cuda.c: a context exists on d (registers the process there). g_mu held. */
FG_HIDDEN CUresult dc_ref(devctx_t *d);
/* cuda_mem.c: frees every allocation of d (its last context is gone). g_mu held. */
FG_HIDDEN void mem_release_device(devctx_t *d);
/* cuda_exec.c: waits until all kernels queued on d have run. */
FG_HIDDEN void dc_sync(devctx_t *d);
/* cuda_mps.c: before registration, decide whether d is an MPS client (share, pinned memory limit). */
FG_HIDDEN void mps_setup(devctx_t *d);
/* cuda_mps.c: run one kernel on the GPU's shared MPS context; gives its start and end times. */
FG_HIDDEN void mps_run_kernel(devctx_t *d, uint64_t enq_ns, uint64_t dur_ns, uint64_t *start, uint64_t *end);
/* cuda_mps.c: terminate_client was issued for this process on d's GPU. */
FG_HIDDEN int mps_terminated(const devctx_t *d);
/* cuda_ckpt.c: the target's side of cuCheckpointProcess*. Kernels, allocations and memory
 * copies of a locked or checkpointed process wait until it is unlocked. ckpt_kernel_begin/end
 * bracket one device operation (a kernel, a copy): a lock waits until none is in flight. */
FG_HIDDEN void ckpt_kernel_begin(devctx_t *d);
FG_HIDDEN void ckpt_kernel_end(devctx_t *d);
FG_HIDDEN void ckpt_wait_running(int slot);
FG_HIDDEN int ckpt_running(int slot);

#endif
