/* Fake libcuda.so.1: virtual memory management. A handle's bytes are
 * charged at cuMemCreate (physical memory exists from then on) and stay
 * charged until it is released AND unmapped everywhere: the real rule, a
 * handle released while still mapped keeps its memory until its last unmap.
 * Reservations and mappings are tracked so misuse fails as in the driver. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "cuda_internal.h"

typedef struct vmm_handle {
  struct vmm_handle *next;
  unsigned long long key; /* the handle's value and its charge key */
  size_t size;
  int refs;     /* 1 until cuMemRelease, +1 per mapping; its memory goes at 0 */
  int released; /* cuMemRelease was called */
} vmm_handle_t;

/* An address reservation, or a mapping inside one (handle != NULL). */
typedef struct va_range {
  struct va_range *next;
  unsigned long long va, size;
  vmm_handle_t *handle;
} va_range_t;

static pthread_mutex_t g_vmm_mu = PTHREAD_MUTEX_INITIALIZER;
static vmm_handle_t *g_handles; /* under g_vmm_mu, like the two lists below */
static va_range_t *g_reserved, *g_mapped;

static vmm_handle_t *handle_of(CUmemGenericAllocationHandle h) {
  for (vmm_handle_t *v = g_handles; v; v = v->next)
    if (v->key == h) return v;
  return NULL;
}

/* Drops one reference (g_vmm_mu held); at 0 the record goes and its key is returned to uncharge. */
static unsigned long long handle_unref(vmm_handle_t *v) {
  if (--v->refs > 0) return 0;
  for (vmm_handle_t **pp = &g_handles; *pp; pp = &(*pp)->next)
    if (*pp == v) {
      *pp = v->next;
      break;
    }
  unsigned long long key = v->key;
  free(v);
  return key;
}

static va_range_t *range_at(va_range_t *list, unsigned long long va, unsigned long long size) {
  for (va_range_t *r = list; r; r = r->next)
    if (va >= r->va && va + size <= r->va + r->size) return r;
  return NULL;
}

API cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                unsigned long long flags) {
  NEED_INIT();
  if (!handle || !prop || size == 0 || flags != 0 || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  devctx_t *d = dev_of(prop->location.id);
  if (!d) return CUDA_ERROR_INVALID_DEVICE;
  vmm_handle_t *v = calloc(1, sizeof *v);
  v->key = mem_new_key();
  v->size = size;
  v->refs = 1;
  CUresult rc = mem_charge(d, v->key, size, NULL); /* physical memory: the device's, not a context's */
  if (rc != CUDA_SUCCESS) {
    free(v);
    return rc;
  }
  pthread_mutex_lock(&g_vmm_mu);
  v->next = g_handles;
  g_handles = v;
  pthread_mutex_unlock(&g_vmm_mu);
  *handle = v->key;
  return CUDA_SUCCESS;
}

API cuMemRelease(CUmemGenericAllocationHandle handle) {
  NEED_INIT();
  pthread_mutex_lock(&g_vmm_mu);
  vmm_handle_t *v = handle_of(handle);
  CUresult rc = CUDA_ERROR_INVALID_VALUE;
  unsigned long long gone = 0;
  if (v && !v->released) {
    v->released = 1; /* mappings keep its memory until the last unmap */
    gone = handle_unref(v);
    rc = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  if (gone) mem_uncharge(gone, 0);
  return rc;
}

API cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags) {
  (void)alignment;
  (void)addr; /* a hint only, as in the driver */
  NEED_INIT();
  if (!ptr || size == 0 || flags) return CUDA_ERROR_INVALID_VALUE;
  va_range_t *r = calloc(1, sizeof *r);
  r->va = mem_reserve_va(size);
  r->size = size;
  pthread_mutex_lock(&g_vmm_mu);
  r->next = g_reserved;
  g_reserved = r;
  pthread_mutex_unlock(&g_vmm_mu);
  *ptr = r->va;
  return CUDA_SUCCESS;
}

API cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  NEED_INIT();
  pthread_mutex_lock(&g_vmm_mu);
  CUresult rc = CUDA_ERROR_INVALID_VALUE;
  for (va_range_t **pp = &g_reserved; *pp; pp = &(*pp)->next)
    if ((*pp)->va == ptr && (*pp)->size == size) {
      int mapped = 0; /* still mapped inside: unmap first */
      for (va_range_t *m = g_mapped; m; m = m->next) mapped |= m->va >= ptr && m->va < ptr + size;
      if (mapped) break;
      va_range_t *r = *pp;
      *pp = r->next;
      free(r);
      rc = CUDA_SUCCESS;
      break;
    }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

API cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
             unsigned long long flags) {
  NEED_INIT();
  if (!ptr || !size || flags) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  vmm_handle_t *v = handle_of(handle);
  CUresult rc = CUDA_SUCCESS;
  if (!v || v->released || offset + size > v->size || !range_at(g_reserved, ptr, size)) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    for (va_range_t *m = g_mapped; m; m = m->next)
      if (ptr < m->va + m->size && m->va < ptr + size) rc = CUDA_ERROR_INVALID_VALUE; /* already mapped */
  }
  if (rc == CUDA_SUCCESS) {
    va_range_t *m = calloc(1, sizeof *m);
    m->va = ptr;
    m->size = size;
    m->handle = v;
    m->next = g_mapped;
    g_mapped = m;
    v->refs++;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

API cuMemUnmap(CUdeviceptr ptr, size_t size) {
  NEED_INIT();
  if (!ptr || !size) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  int inside = 0, partial = 0;
  for (va_range_t *m = g_mapped; m; m = m->next) {
    if (!(ptr < m->va + m->size && m->va < ptr + size)) continue;
    if (m->va >= ptr && m->va + m->size <= ptr + size) inside++;
    else partial++;
  }
  if (!inside || partial) { /* must cover whole mappings; nothing changes otherwise */
    pthread_mutex_unlock(&g_vmm_mu);
    return CUDA_ERROR_INVALID_VALUE;
  }
  unsigned long long *gone = calloc((size_t)inside, sizeof *gone);
  int ngone = 0;
  for (va_range_t **pp = &g_mapped; *pp;) {
    va_range_t *m = *pp;
    if (m->va >= ptr && m->va + m->size <= ptr + size) {
      *pp = m->next;
      unsigned long long key = handle_unref(m->handle);
      if (key) gone[ngone++] = key;
      free(m);
    } else {
      pp = &m->next;
    }
  }
  pthread_mutex_unlock(&g_vmm_mu);
  for (int i = 0; i < ngone; i++) mem_uncharge(gone[i], 0); /* the last unmap of a released handle frees it */
  free(gone);
  return CUDA_SUCCESS;
}

API cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
  NEED_INIT();
  if (!ptr || !size || !desc || !count) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  int ok = range_at(g_mapped, ptr, 1) != NULL; /* only mapped memory gets access rights */
  pthread_mutex_unlock(&g_vmm_mu);
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
