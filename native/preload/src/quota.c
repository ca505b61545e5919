/* The hard memory quota: bytes are reserved before the driver allocates (so
 * nothing is ever allocated over the quota), remembered per pointer / VMM
 * handle, and given back on free / release. With a gate slot the quota is the
 * job's, reserved against the slot's used bytes (gate_procs.c); without one it
 * is this process's (GPUSHARE_MEM_QUOTA). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"

#define BUCKETS 4096u
#define STRIPES 64u

typedef struct node {
  struct node *next;
  uint64_t key, bytes;
} node_t;

typedef struct {
  node_t *buckets[BUCKETS];
  pthread_mutex_t locks[STRIPES];
} map_t;

static map_t g_maps[2]; /* GS_KEY_PTR, GS_KEY_HANDLE: separate key spaces */
static uint64_t g_used; /* atomic: bytes this process holds */
static uint64_t g_env_quota = GATE_NO_QUOTA;

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
  for (int m = 0; m < 2; m++)
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
  for (int m = 0; m < 2; m++)
    for (unsigned i = 0; i < STRIPES; i++) pthread_mutex_init(&g_maps[m].locks[i], NULL);
  forget_all();
  __atomic_store_n(&g_used, 0, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void quota_init(void) {
  for (int m = 0; m < 2; m++)
    for (unsigned i = 0; i < STRIPES; i++) pthread_mutex_init(&g_maps[m].locks[i], NULL);
  g_env_quota = parse_bytes(getenv("GPUSHARE_MEM_QUOTA"));
  pthread_atfork(NULL, NULL, after_fork_child);
}

uint64_t gs_quota_limit(void) {
  uint64_t q;
  return gs_gate_quota(&q) ? q : g_env_quota;
}

uint64_t gs_quota_used(void) {
  uint64_t job;
  return gs_gate_used(&job) ? job : __atomic_load_n(&g_used, __ATOMIC_ACQUIRE);
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

void gs_quota_track(int kind, uint64_t key, uint64_t bytes) {
  map_t *m = &g_maps[kind];
  node_t *n = malloc(sizeof *n);
  if (!n) return; /* the bytes stay counted until exit: safe side of the quota */
  n->key = key;
  n->bytes = bytes;
  unsigned b = bucket_of(key);
  pthread_mutex_t *lock = &m->locks[b % STRIPES];
  pthread_mutex_lock(lock);
  n->next = m->buckets[b];
  m->buckets[b] = n;
  pthread_mutex_unlock(lock);
}

void gs_quota_untrack(int kind, uint64_t key) {
  map_t *m = &g_maps[kind];
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
  if (!found) return; /* not allocated through us */
  gs_quota_unreserve(found->bytes);
  free(found);
}
