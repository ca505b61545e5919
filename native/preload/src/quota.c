/* The hard memory quota: bytes are reserved before the driver allocates (so
 * nothing is ever allocated over the quota), remembered per pointer / VMM
 * handle, and given back on free / release. With a gate slot the quota is the
 * job's, reserved against the slot's used bytes (gate_procs.c); without one it
 * is this process's (GPUSHARE_MEM_QUOTA). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"

#define BUCKETS 4096u
#define STRIPES 64u

typedef struct node {
  struct node *next;
  uint64_t key, bytes;
  uint64_t aux;      /* PTR/ARRAY: the context current at allocation; MAPPING: its handle; EXEC: charged yet */
  uint32_t maps;     /* HANDLE: live mappings */
  uint32_t released; /* HANDLE: cuMemRelease'd while mapped: freed at the last unmap */
} node_t;

typedef struct {
  node_t *buckets[BUCKETS];
  pthread_mutex_t locks[STRIPES];
} map_t;

/* one key space per kind; static initialisers, so that loading the library writes none of it */
static map_t g_maps[GS_KEY_KINDS] = {[0 ... GS_KEY_KINDS - 1] = {.locks = {[0 ... STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER}}};
static pthread_once_t g_first_use = PTHREAD_ONCE_INIT;
static void first_use(void);

static map_t *map_of(int kind) {
  pthread_once(&g_first_use, first_use);
  return &g_maps[kind];
}
static uint64_t g_graph_cache; /* graph memory of destroyed executable graphs, held until cuDeviceGraphMemTrim */
static uint64_t g_used; /* atomic: bytes this process holds */
static uint64_t g_env_quota = GATE_NO_QUOTA;
static uint64_t g_job_gpus = 1; /* GPUSHARE_JOB_GPUS: the GPUs of a job on several (its quota is per GPU) */

static unsigned bucket_of(uint64_t key) { return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 52) % BUCKETS; }

/* "1073741824", "1G", "512M", "512MiB"; anything else: no quota. */
static uint64_t parse_bytes(const char *s) {
  if (!s || !*s) return GATE_NO_QUOTA;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return GATE_NO_QUOTA;
  uint64_t mul = 1;
  switch (*end) {
    case 'K': case 'k': mul = 1ull << 10; end++; break;
    case 'M': case 'm': mul = 1ull << 20; end++; break;
    case 'G': case 'g': mul = 1ull << 30; end++; break;
    case 'T': case 't': mul = 1ull << 40; end++; break;
    default: break;
  }
  if (*end && strcmp(end, "iB") && strcmp(end, "B")) return GATE_NO_QUOTA;
  if (v > UINT64_MAX / mul) return GATE_NO_QUOTA;
  return (uint64_t)v * mul;
}

static void forget_all(void) {
  for (int m = 0; m < GS_KEY_KINDS; m++)
    for (unsigned b = 0; b < BUCKETS; b++) {
      node_t *n = g_maps[m].buckets[b];
      g_maps[m].buckets[b] = NULL;
      while (n) {
        node_t *next = n->next;
        free(n);
        n = next;
      }
    }
}

/* A forked child holds none of its parent's device memory. */
static void after_fork_child(void) {
  for (int m = 0; m < GS_KEY_KINDS; m++)
    for (unsigned i = 0; i < STRIPES; i++) pthread_mutex_init(&g_maps[m].locks[i], NULL);
  forget_all();
  __atomic_store_n(&g_used, 0, __ATOMIC_RELEASE);
}

/* At the first allocation, not at load: a process that never uses CUDA reads nothing and forks as if we were not there. */
static void first_use(void) {
  g_env_quota = parse_bytes(secure_getenv("GPUSHARE_MEM_QUOTA"));
  uint64_t gpus = parse_bytes(secure_getenv("GPUSHARE_JOB_GPUS"));
  g_job_gpus = gpus >= 1 && gpus <= GATE_MAX_GPUS ? gpus : 1;
  pthread_atfork(NULL, NULL, after_fork_child);
}

uint64_t gs_quota_limit(void) {
  pthread_once(&g_first_use, first_use);
  uint64_t q;
  return gs_gate_quota(&q) ? q : g_env_quota;
}

uint64_t gs_quota_used(void) {
  uint64_t job;
  return gs_gate_used(&job) ? job : __atomic_load_n(&g_used, __ATOMIC_ACQUIRE);
}

int gs_quota_told(uint64_t *total, uint64_t *used) {
  uint64_t limit = gs_quota_limit(), job = gs_quota_used();
  if (limit == GATE_NO_QUOTA) return 0;
  uint64_t n = __atomic_load_n(&g_job_gpus, __ATOMIC_ACQUIRE);
  if (n <= 1) {
    *total = limit;
    *used = job < limit ? job : limit;
    return 1;
  }
  uint64_t share = limit / n, here = __atomic_load_n(&g_used, __ATOMIC_ACQUIRE);
  uint64_t free_here = here < share ? share - here : 0, left = job < limit ? limit - job : 0;
  *total = share;
  *used = share - (free_here < left ? free_here : left);
  return 1;
}

int gs_quota_reserve(uint64_t bytes) {
  uint64_t limit = gs_quota_limit();
  int job = gs_gate_reserve(bytes, limit);
  if (job >= 0) {
    if (job) __atomic_add_fetch(&g_used, bytes, __ATOMIC_ACQ_REL);
    return job;
  }
  uint64_t cur = __atomic_load_n(&g_used, __ATOMIC_ACQUIRE);
  for (;;) {
    if (limit != GATE_NO_QUOTA && (cur > limit || bytes > limit - cur)) return 0;
    if (cur > UINT64_MAX - bytes) return 0;
    if (__atomic_compare_exchange_n(&g_used, &cur, cur + bytes, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
  }
}

void gs_quota_unreserve(uint64_t bytes) {
  uint64_t cur = __atomic_load_n(&g_used, __ATOMIC_ACQUIRE), next;
  do {
    next = cur > bytes ? cur - bytes : 0;
  } while (!__atomic_compare_exchange_n(&g_used, &cur, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  gs_gate_unreserve(bytes);
}

typedef CUresult (*ctx_get_fn)(CUcontext *);
/* The context an allocation belongs to (the driver frees it with that context). */
static uint64_t current_ctx(void) {
  static ctx_get_fn get;
  ctx_get_fn f = __atomic_load_n(&get, __ATOMIC_ACQUIRE);
  if (!f) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    f = h ? (ctx_get_fn)dlsym(h, "cuCtxGetCurrent") : NULL;
    if (!f) return 0;
    __atomic_store_n(&get, f, __ATOMIC_RELEASE);
  }
  CUcontext c = NULL;
  gs_depth++;
  CUresult rc = f(&c);
  gs_depth--;
  return rc == CUDA_SUCCESS ? (uint64_t)(uintptr_t)c : 0;
}

static node_t *add_node(int kind, uint64_t key, uint64_t bytes, uint64_t aux) {
  map_t *m = map_of(kind);
  node_t *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->key = key;
  n->bytes = bytes;
  n->aux = aux;
  unsigned b = bucket_of(key);
  pthread_mutex_t *lock = &m->locks[b % STRIPES];
  pthread_mutex_lock(lock);
  n->next = m->buckets[b];
  m->buckets[b] = n;
  pthread_mutex_unlock(lock);
  return n;
}

/* Unlinks and returns the node of `key` (the caller frees it), or NULL. */
static node_t *take_node(int kind, uint64_t key) {
  map_t *m = map_of(kind);
  unsigned b = bucket_of(key);
  pthread_mutex_t *lock = &m->locks[b % STRIPES];
  node_t *found = NULL;
  pthread_mutex_lock(lock);
  for (node_t **pp = &m->buckets[b]; *pp; pp = &(*pp)->next)
    if ((*pp)->key == key) {
      found = *pp;
      *pp = found->next;
      break;
    }
  pthread_mutex_unlock(lock);
  return found;
}

void gs_quota_track(int kind, uint64_t key, uint64_t bytes) {
  uint64_t ctx = kind == GS_KEY_PTR || kind == GS_KEY_ARRAY ? current_ctx() : 0;
  add_node(kind, key, bytes, ctx); /* no memory for the node: the bytes stay counted until exit (safe side) */
}

void gs_quota_untrack(int kind, uint64_t key) {
  node_t *found = take_node(kind, key);
  if (!found) return; /* not allocated through us */
  gs_quota_unreserve(found->bytes);
  free(found);
}

/* ---- VMM: a handle's memory lives until it is released and its last mapping is gone ---- */

void gs_quota_release_handle(uint64_t handle) {
  map_t *m = map_of(GS_KEY_HANDLE);
  unsigned b = bucket_of(handle);
  pthread_mutex_t *lock = &m->locks[b % STRIPES];
  pthread_mutex_lock(lock);
  for (node_t *n = m->buckets[b]; n; n = n->next)
    if (n->key == handle && n->maps > 0) {
      n->released = 1; /* still mapped: the driver keeps the memory */
      pthread_mutex_unlock(lock);
      return;
    }
  pthread_mutex_unlock(lock);
  gs_quota_untrack(GS_KEY_HANDLE, handle);
}

/* Adds `delta` to the handle's mapping count; gives its bytes back when released and unmapped. */
static void handle_maps(uint64_t handle, int delta) {
  map_t *m = map_of(GS_KEY_HANDLE);
  unsigned b = bucket_of(handle);
  pthread_mutex_t *lock = &m->locks[b % STRIPES];
  int gone = 0;
  pthread_mutex_lock(lock);
  for (node_t *n = m->buckets[b]; n; n = n->next)
    if (n->key == handle) {
      if (delta > 0) n->maps++;
      else if (n->maps > 0) n->maps--;
      gone = n->maps == 0 && n->released;
      break;
    }
  pthread_mutex_unlock(lock);
  if (gone) gs_quota_untrack(GS_KEY_HANDLE, handle);
}

void gs_quota_map(uint64_t va, uint64_t size, uint64_t handle) {
  if (add_node(GS_KEY_MAPPING, va, size, handle)) handle_maps(handle, +1);
}

void gs_quota_unmap(uint64_t va, uint64_t size) {
  uint64_t end = va + size;
  while (va < end) { /* cuMemUnmap covers whole mappings, perhaps several */
    node_t *n = take_node(GS_KEY_MAPPING, va);
    if (!n) return;
    va += n->bytes ? n->bytes : size;
    handle_maps(n->aux, -1);
    free(n);
  }
}

/* ---- contexts: destroying or resetting one frees what was allocated in it ---- */

void gs_quota_forget_ctx(uint64_t ctx) {
  if (!ctx) return;
  uint64_t bytes = 0;
  const int kinds[] = {GS_KEY_PTR, GS_KEY_ARRAY};
  for (int k = 0; k < 2; k++) {
    map_t *m = map_of(kinds[k]);
    for (unsigned b = 0; b < BUCKETS; b++) {
      pthread_mutex_t *lock = &m->locks[b % STRIPES];
      pthread_mutex_lock(lock);
      for (node_t **pp = &m->buckets[b]; *pp;) {
        node_t *n = *pp;
        if (n->aux != ctx) {
          pp = &n->next;
          continue;
        }
        *pp = n->next;
        bytes += n->bytes;
        free(n);
      }
      pthread_mutex_unlock(lock);
    }
  }
  if (bytes) gs_quota_unreserve(bytes);
}

/* ---- graph memory: charged from an executable graph's first launch until trimmed ---- */

void gs_quota_graph_add(uint64_t graph, uint64_t bytes) {
  node_t *n = take_node(GS_KEY_GRAPH, graph);
  uint64_t total = (n ? n->bytes : 0) + bytes;
  free(n);
  add_node(GS_KEY_GRAPH, graph, total, 0);
}

void gs_quota_graph_forget(uint64_t graph) { free(take_node(GS_KEY_GRAPH, graph)); }

void gs_quota_exec_instantiated(uint64_t exec, uint64_t graph) {
  node_t *g = take_node(GS_KEY_GRAPH, graph);
  if (!g) return; /* no memory nodes */
  uint64_t bytes = g->bytes;
  add_node(GS_KEY_GRAPH, graph, bytes, 0);
  free(g);
  if (bytes) add_node(GS_KEY_EXEC, exec, bytes, 0);
}

int gs_quota_exec_launch(uint64_t exec) {
  map_t *m = map_of(GS_KEY_EXEC);
  unsigned b = bucket_of(exec);
  pthread_mutex_t *lock = &m->locks[b % STRIPES];
  pthread_mutex_lock(lock);
  node_t *n = m->buckets[b];
  while (n && n->key != exec) n = n->next;
  int ok = 1;
  if (n && !n->aux) { /* the first launch: the graph's memory is allocated now */
    ok = gs_quota_reserve(n->bytes);
    if (ok) n->aux = 1;
  }
  pthread_mutex_unlock(lock);
  return ok;
}

void gs_quota_exec_destroyed(uint64_t exec) {
  node_t *n = take_node(GS_KEY_EXEC, exec);
  if (n && n->aux) __atomic_add_fetch(&g_graph_cache, n->bytes, __ATOMIC_ACQ_REL);
  free(n);
}

void gs_quota_graph_trim(void) {
  uint64_t bytes = __atomic_exchange_n(&g_graph_cache, 0, __ATOMIC_ACQ_REL);
  if (bytes) gs_quota_unreserve(bytes);
}
