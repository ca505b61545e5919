/* Fake libcuda.so.1: memory. Every allocation API accounts the exact bytes
 * against the device (or MIG instance) in the shared state, at once. Each
 * charge belongs to the context that made it (freed with it) or to the device.
 * VMM is in cuda_vmm.c, arrays in cuda_array.c, graph memory in cuda_graph.c:
 * all charge through mem_charge/mem_uncharge. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

#define VA_GRANULE (2ull * FG_MIB)
#define CKPT_WAIT (-1) /* account_alloc_once: the process is locked, wait and retry */
#define HASH_BUCKETS 4096

typedef struct alloc_node {
  struct alloc_node *next;
  unsigned long long key; /* device pointer, VMM handle, array handle or graph memory key */
  size_t size;
  devctx_t *dc;
  CUcontext owner; /* freed with this context; NULL: with the device's last context */
  int counted;     /* accounted in the shared state */
} alloc_node_t;

static unsigned long long g_next_va = FG_VA_BASE;
static unsigned long long g_last_found; /* mem_find's last hit: copies come in runs on one allocation */
static unsigned long long g_next_handle = 1;
static alloc_node_t *g_allocs[HASH_BUCKETS]; /* under g_mu */
static unsigned long long reserve_va(size_t size);


static CUresult account_alloc_once(devctx_t *d, size_t size) {
  fg_state_t *st = g_st;
  fg_lock(st);
  CUresult rc = CUDA_SUCCESS;
  fg_proc_t *p = &st->procs[d->slot];
  if (p->state != FG_PROC_USED || p->pid != getpid()) {
    rc = CUDA_ERROR_INVALID_CONTEXT;
  } else if (!ckpt_running(d->slot)) {
    rc = CKPT_WAIT;
  } else if (size > fg_engine_capacity_free(st, d->gpu, d->mig)) {
    rc = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (d->mps_mem_limit && p->used_mem + size > d->mps_mem_limit) {
    rc = CUDA_ERROR_OUT_OF_MEMORY; /* CUDA_MPS_PINNED_DEVICE_MEM_LIMIT */
  } else {
    p->used_mem += size;
    FG_ADD(&st->gpus[d->gpu].proc_used, size);
    if (d->mig >= 0) FG_ADD(&st->gpus[d->gpu].mig[d->mig].proc_used, size);
  }
  fg_unlock(st);
  return rc;
}

/* An allocation that does not fit first reaps processes that died since the
 * last reap, as the real driver frees a dead process's memory at once. */
static CUresult account_alloc(devctx_t *d, size_t size) {
  CUresult rc;
  while ((rc = account_alloc_once(d, size)) == CKPT_WAIT) ckpt_wait_running(d->slot); /* blocks like a locked driver */
  if (rc != CUDA_ERROR_OUT_OF_MEMORY) return rc;
  fg_reap(g_st, 1);
  return account_alloc_once(d, size);
}

static void account_free(devctx_t *d, size_t size) {
  fg_state_t *st = g_st;
  if (d->slot < 0) return;
  fg_lock(st);
  while (!ckpt_running(d->slot)) { /* its bytes may be parked on the host: wait for unlock */
    fg_unlock(st);
    ckpt_wait_running(d->slot);
    fg_lock(st);
  }
  fg_proc_t *p = &st->procs[d->slot];
  if (p->state == FG_PROC_USED && p->pid == getpid()) {
    if (size > p->used_mem) size = p->used_mem;
    p->used_mem -= size;
    FG_SUB(&st->gpus[d->gpu].proc_used, size);
    if (d->mig >= 0) FG_SUB(&st->gpus[d->gpu].mig[d->mig].proc_used, size);
  }
  fg_unlock(st);
}

static unsigned hash_key(unsigned long long k) { return (unsigned)((k * 0x9e3779b97f4a7c15ull) >> 52) % HASH_BUCKETS; }

static void track(unsigned long long key, size_t size, devctx_t *d, int counted, CUcontext owner) {
  alloc_node_t *n = calloc(1, sizeof *n);
  n->key = key;
  n->size = size;
  n->dc = d;
  n->owner = owner;
  n->counted = counted;
  unsigned b = hash_key(key);
  n->next = g_allocs[b];
  g_allocs[b] = n;
}

static alloc_node_t *untrack(unsigned long long key) {
  alloc_node_t **pp = &g_allocs[hash_key(key)];
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->key == key) {
      alloc_node_t *n = *pp;
      *pp = n->next;
      return n;
    }
  return NULL;
}

static alloc_node_t *lookup(unsigned long long key) {
  for (alloc_node_t *n = g_allocs[hash_key(key)]; n; n = n->next)
    if (n->key == key) return n;
  return NULL;
}

/* Allocations start on VA_GRANULE boundaries above FG_VA_BASE and never overlap: the one holding
 * ptr, if any, is the nearest start at or below it. Keys of the VA range are device pointers only. */
CUresult mem_find(unsigned long long ptr, size_t n, devctx_t **d) {
  pthread_mutex_lock(&g_mu);
  alloc_node_t *hit = NULL;
  if (g_last_found && ptr >= g_last_found) hit = lookup(g_last_found);
  if (!hit || ptr - hit->key >= hit->size) {
    hit = NULL;
    if (ptr >= FG_VA_BASE && ptr < g_next_va)
      for (unsigned long long b = ptr - (ptr - FG_VA_BASE) % VA_GRANULE; !hit; b -= VA_GRANULE) {
        hit = lookup(b);
        if (b == FG_VA_BASE) break;
      }
  }
  CUresult rc = CUDA_ERROR_INVALID_VALUE;
  if (hit && ptr - hit->key < hit->size && n <= hit->size - (ptr - hit->key)) {
    g_last_found = hit->key;
    *d = hit->dc;
    rc = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

CUcontext ctx_owner(devctx_t *d) {
  CUcontext c = t_cur;
  return (c && c->magic == MAGIC_CTX && c->dc == d) ? c : NULL;
}

unsigned long long mem_reserve_va(size_t size) { return reserve_va(size); }
unsigned long long mem_va_end(void) { return __atomic_load_n(&g_next_va, __ATOMIC_RELAXED); }

static unsigned long long reserve_va(size_t size) {
  unsigned long long span = (size + VA_GRANULE - 1) / VA_GRANULE * VA_GRANULE;
  if (span == 0) span = VA_GRANULE;
  unsigned long long va = g_next_va;
  g_next_va += span;
  return va;
}

CUresult mem_charge(devctx_t *d, unsigned long long key, size_t size, CUcontext owner) {
  if (dev_lost(d)) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  pthread_mutex_lock(&g_mu);
  CUresult rc = d->slot < 0 ? dc_ref(d) : CUDA_SUCCESS; /* pools/VMM without a context */
  if (rc == CUDA_SUCCESS) rc = account_alloc(d, size);
  if (rc == CUDA_SUCCESS) track(key, size, d, 1, owner);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

unsigned long long mem_new_key(void) {
  pthread_mutex_lock(&g_mu);
  unsigned long long k = (3ull << 62) | g_next_handle++;
  pthread_mutex_unlock(&g_mu);
  return k;
}

size_t mem_uncharge(unsigned long long key, unsigned long long to) {
  pthread_mutex_lock(&g_mu);
  alloc_node_t *n = untrack(key);
  if (n && to) { /* the bytes stay counted under the other key */
    alloc_node_t *m = lookup(to);
    size_t size = n->size;
    if (m) m->size += size;
    else track(to, size, n->dc, n->counted, NULL);
    free(n);
    pthread_mutex_unlock(&g_mu);
    return size;
  }
  pthread_mutex_unlock(&g_mu);
  if (!n) return 0;
  size_t size = n->size;
  contents_discard(n->dc, key, n->size);
  if (n->counted) account_free(n->dc, n->size);
  free(n);
  return size;
}

static CUresult do_alloc(devctx_t *d, CUdeviceptr *dptr, size_t size) {
  if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  unsigned long long va = reserve_va(size);
  pthread_mutex_unlock(&g_mu);
  CUresult rc = mem_charge(d, va, size, ctx_owner(d));
  if (rc == CUDA_SUCCESS) *dptr = va;
  return rc;
}

static CUresult do_free(unsigned long long key) {
  pthread_mutex_lock(&g_mu);
  alloc_node_t *n = lookup(key);
  int ok = n && (key >> 62) == 0; /* only device pointers here */
  pthread_mutex_unlock(&g_mu);
  if (!ok) return CUDA_ERROR_INVALID_VALUE;
  return mem_uncharge(key, 0) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  NEED_CTX(d);
  if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
  ckpt_gate(d);
  fg_reap(g_st, 0);
  *total = dev_total(d);
  *free_bytes = fg_engine_capacity_free(g_st, d->gpu, d->mig);
  return CUDA_SUCCESS;
}

#define NO_UNSAFE_CALL()                                              \
  do {                                                                \
    if (cap_open()) {                                                 \
      CUresult crc_ = cap_unsafe_call(); /* prohibited while capturing */ \
      if (crc_ != CUDA_SUCCESS) return crc_;                          \
    }                                                                 \
  } while (0)

API cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  NEED_CTX(d);
  NO_UNSAFE_CALL();
  return do_alloc(d, dptr, bytesize);
}

API cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                       unsigned int ElementSizeBytes) {
  NEED_CTX(d);
  if (!pPitch || WidthInBytes == 0 || Height == 0 ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  NO_UNSAFE_CALL();
  size_t pitch = (WidthInBytes + 511) / 512 * 512;
  CUresult rc = do_alloc(d, dptr, pitch * Height);
  if (rc == CUDA_SUCCESS) *pPitch = pitch;
  return rc;
}

API cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
  NEED_CTX(d);
  if (flags != 1 && flags != 2) return CUDA_ERROR_INVALID_VALUE; /* CU_MEM_ATTACH_GLOBAL / HOST */
  NO_UNSAFE_CALL();
  return do_alloc(d, dptr, bytesize);
}

API cuMemFree_v2(CUdeviceptr dptr) {
  NEED_INIT();
  if (dptr == 0) return CUDA_SUCCESS;
  NO_UNSAFE_CALL();
  return do_free(dptr);
}

static devctx_t *stream_dc(CUstream s) {
  if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return cur_dc();
  return s->magic == MAGIC_STREAM ? s->dc : NULL;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUstream s, int ptsz) {
  NEED_INIT();
  devctx_t *d = stream_dc(s);
  if (!d) return (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD) ? CUDA_ERROR_INVALID_HANDLE
                                                                          : CUDA_ERROR_INVALID_CONTEXT;
  if (cap_open()) { /* inside a capture it becomes a graph memory alloc node */
    CUresult rc;
    struct CUstream_st *cs = stream_resolve(s, ptsz, &rc);
    int recorded = 0;
    if (cs) rc = cap_alloc(cs, size, dptr, &recorded);
    if (recorded || rc != CUDA_SUCCESS) return rc;
  }
  return do_alloc(d, dptr, size);
}

API cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) { return alloc_async(dptr, bytesize, hStream, 0); }
API cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  return alloc_async(dptr, bytesize, hStream, 1);
}

static CUresult free_async(CUdeviceptr dptr, CUstream hStream, int ptsz) {
  NEED_INIT();
  if (cap_open()) { /* inside a capture it becomes a graph memory free node */
    CUresult rc;
    struct CUstream_st *cs = stream_resolve(hStream, ptsz, &rc);
    int recorded = 0;
    if (cs) rc = cap_free(cs, dptr, &recorded);
    if (recorded || rc != CUDA_SUCCESS) return rc;
  }
  return do_free(dptr);
}
API cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return free_async(dptr, hStream, 0); }
API cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) { return free_async(dptr, hStream, 1); }

static CUresult new_pool(CUmemoryPool *pool, int vis) {
  struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
  p->magic = MAGIC_POOL;
  p->vis = vis;
  *pool = p;
  return CUDA_SUCCESS;
}

API cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
  NEED_INIT();
  if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !dev_of(props->location.id))
    return CUDA_ERROR_INVALID_VALUE;
  return new_pool(pool, props->location.id);
}

API cuMemPoolDestroy(CUmemoryPool pool) {
  NEED_INIT();
  if (!pool || pool->magic != MAGIC_POOL) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < g_nvis; i++)
    if (g_dev[i].default_pool == pool) return CUDA_ERROR_INVALID_VALUE;
  pool->magic = 0;
  free(pool);
  return CUDA_SUCCESS;
}

API cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev) {
  NEED_DEV(d, dev);
  if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (!d->default_pool) new_pool(&d->default_pool, d->vis);
  *pool_out = d->default_pool;
  pthread_mutex_unlock(&g_mu);
  return CUDA_SUCCESS;
}

static CUresult alloc_pool(CUdeviceptr *dptr, size_t size, CUmemoryPool pool) {
  NEED_INIT();
  if (!pool || pool->magic != MAGIC_POOL) return CUDA_ERROR_INVALID_VALUE;
  return do_alloc(&g_dev[pool->vis], dptr, size);
}

API cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  (void)hStream;
  return alloc_pool(dptr, bytesize, pool);
}
API cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  (void)hStream;
  return alloc_pool(dptr, bytesize, pool);
}

static void free_node(alloc_node_t *n) {
  if (!n) return;
  contents_discard(n->dc, n->key, n->size);
  if (n->counted) account_free(n->dc, n->size);
  free(n);
}

/* ---------------- teardown ---------------- */

void mem_release_ctx(CUcontext ctx) {
  for (int b = 0; b < HASH_BUCKETS; b++) {
    alloc_node_t **pp = &g_allocs[b];
    while (*pp) {
      alloc_node_t *n = *pp;
      if (n->owner == ctx) {
        *pp = n->next;
        free_node(n);
      } else {
        pp = &n->next;
      }
    }
  }
}

void mem_release_device(devctx_t *d) {
  for (int b = 0; b < HASH_BUCKETS; b++) {
    alloc_node_t **pp = &g_allocs[b];
    while (*pp) {
      alloc_node_t *n = *pp;
      if (n->dc == d) {
        if (n->counted) account_free(d, n->size);
        *pp = n->next;
        free(n);
      } else {
        pp = &n->next;
      }
    }
  }
  contents_close(d); /* its bytes go with the slot */
}
