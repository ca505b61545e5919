/* The gate's own timeline, for benchmarks: with GPUSHARE_GATE_TRACE=DIR a process records why it
 * waited (and its short synchronisations) and writes DIR/trace-PID.txt at exit, one line per span:
 * "KIND START_NS END_NS" (CLOCK_MONOTONIC, the simulated driver's record's clock). bench/gate puts
 * it beside the execution record to say where the GPU time a best-effort job lost went. Without the
 * variable each call is one load and a branch, on slow paths only. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gate_internal.h"

#define TRACE_MAX 200000u
#define TRACE_MERGE_NS 50000ull /* a wait that goes on after the next look is one span, not one per sleep */

typedef struct {
  uint64_t t0, t1;
  char kind;
} span_t;

static pthread_once_t g_trace_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_trace_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_trace_dir[512];
static span_t *g_spans;
static uint32_t g_count;

static void trace_init(void) {
  const char *dir = secure_getenv("GPUSHARE_GATE_TRACE");
  if (!dir || !*dir || snprintf(g_trace_dir, sizeof g_trace_dir, "%s", dir) >= (int)sizeof g_trace_dir) return;
  g_spans = calloc(TRACE_MAX, sizeof *g_spans);
}

void gs_trace(char kind, uint64_t t0, uint64_t t1) {
  pthread_once(&g_trace_once, trace_init);
  if (GS_LIKELY(!g_spans)) return;
  pthread_mutex_lock(&g_trace_mu);
  span_t *last = g_count ? &g_spans[g_count - 1] : NULL;
  if (last && last->kind == kind && t0 >= last->t1 && t0 - last->t1 < TRACE_MERGE_NS) last->t1 = t1;
  else if (g_count < TRACE_MAX) g_spans[g_count++] = (span_t){t0, t1, kind};
  pthread_mutex_unlock(&g_trace_mu);
}

__attribute__((destructor)) static void trace_fini(void) {
  if (!g_spans) return;
  char path[600];
  snprintf(path, sizeof path, "%s/trace-%d.txt", g_trace_dir, (int)getpid());
  FILE *out = fopen(path, "w");
  if (!out) return;
  pthread_mutex_lock(&g_trace_mu);
  for (uint32_t i = 0; i < g_count; i++)
    fprintf(out, "%c %llu %llu\n", g_spans[i].kind, (unsigned long long)g_spans[i].t0, (unsigned long long)g_spans[i].t1);
  pthread_mutex_unlock(&g_trace_mu);
  fclose(out);
}
