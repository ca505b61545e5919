/* The hook table at run time, and the two ways a program finds driver entry
 * points: dlsym (interposed here) and cuGetProcAddress. Both resolve through
 * the one table, so a new hook is one row in GS_HOOKS (preload.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

typedef void *(*dlsym_fn)(void *, const char *);

typedef struct {
  const char *name, *base;
  int version, ptsz, lib;
  void *real; /* atomic: the driver's entry point behind our hook */
} gs_row_t;

#define GS_ROW(name, base, ver, ptsz, lib) {#name, #base, ver, ptsz, lib, NULL},
static gs_row_t g_rows[GS_HOOK_COUNT] = {GS_HOOKS(GS_ROW)};
#undef GS_ROW

/* hooks_cuda.c: our hook for each row, in table order. */
extern GS_HIDDEN void *const gs_hook_fns[GS_HOOK_COUNT];

GS_HIDDEN GS_TLS int gs_depth;
GS_HIDDEN GS_TLS int gs_nvml_call;

static const char *const LIB_SONAME[GS_LIBS] = {"libcuda.so.1", "libnvidia-ml.so.1"};
static pthread_once_t g_lib_once[GS_LIBS] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static dlsym_fn g_real_dlsym;
static int g_debug = -1;

int gs_debug(void) {
  if (g_debug < 0) {
    const char *d = getenv("GPUSHARE_PRELOAD_DEBUG");
    g_debug = d && *d && strcmp(d, "0") != 0;
  }
  return g_debug;
}

void gs_log(const char *fmt, ...) {
  if (!gs_debug()) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = snprintf(buf, sizeof buf, "gpushare-preload[%d]: ", (int)getpid());
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  size_t len = strnlen(buf, sizeof buf - 2);
  buf[len++] = '\n';
  ssize_t w = write(2, buf, len);
  (void)w;
}

/* glibc >= 2.34 has no __libc_dlsym: the real dlsym is the next one by version. */
static dlsym_fn real_dlsym(void) {
  dlsym_fn f = __atomic_load_n(&g_real_dlsym, __ATOMIC_ACQUIRE);
  if (GS_LIKELY(f != NULL)) return f;
  f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!f) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  __atomic_store_n(&g_real_dlsym, f, __ATOMIC_RELEASE);
  return f;
}

static int is_our_hook(const void *p) {
  for (int i = 0; i < GS_HOOK_COUNT; i++)
    if (gs_hook_fns[i] == p) return 1;
  return 0;
}

/* First resolution wins; never record one of our own hooks as the real one. */
static void set_real(int row, void *p) {
  if (!p || is_our_hook(p)) return;
  void *expected = NULL;
  __atomic_compare_exchange_n(&g_rows[row].real, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static GS_TLS int t_resolving; /* this thread is loading a driver library */
static void resolve_lib(int lib) {
  dlsym_fn sym = real_dlsym();
  if (!sym) return;
  void *h = dlopen(LIB_SONAME[lib], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen(LIB_SONAME[lib], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    gs_log("cannot load %s: %s", LIB_SONAME[lib], dlerror());
    return;
  }
  for (int i = 0; i < GS_HOOK_COUNT; i++)
    if (g_rows[i].lib == lib) set_real(i, sym(h, g_rows[i].name));
}
static void resolve_cuda(void) { resolve_lib(GS_LIB_CUDA); }
static void resolve_nvml(void) { resolve_lib(GS_LIB_NVML); }

void *gs_real(int row) {
  void *p = __atomic_load_n(&g_rows[row].real, __ATOMIC_ACQUIRE);
  if (GS_LIKELY(p != NULL)) return p;
  int lib = g_rows[row].lib;
  if (t_resolving) return NULL; /* the driver's constructor calls back into us */
  t_resolving = 1;
  pthread_once(&g_lib_once[lib], lib == GS_LIB_CUDA ? resolve_cuda : resolve_nvml);
  t_resolving = 0;
  return __atomic_load_n(&g_rows[row].real, __ATOMIC_ACQUIRE);
}

void *gs_driver_sym(const char *name) {
  dlsym_fn sym = real_dlsym();
  void *h = dlopen(LIB_SONAME[GS_LIB_CUDA], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  return sym && h ? sym(h, name) : NULL;
}

static int find_row(const char *name) {
  if (!name || !((name[0] == 'c' && name[1] == 'u') || !strncmp(name, "nvml", 4))) return -1;
  for (int i = 0; i < GS_HOOK_COUNT; i++)
    if (!strcmp(g_rows[i].name, name)) return i;
  return -1;
}

static __attribute__((noinline)) void *dlsym_hooked(dlsym_fn real, void *handle, const char *name, int row) {
  void *p = real(handle, name);
  if (!p) return NULL;
  set_real(row, p);
  gs_log("dlsym(%s) -> hook", name);
  return gs_hook_fns[row];
}

/* Interposed dlsym. Anything not ours, and every RTLD_NEXT lookup, is a tail
 * call to the real dlsym, so glibc still sees the caller's return address. */
__attribute__((visibility("default"))) void *dlsym(void *restrict handle, const char *restrict name) {
  dlsym_fn real = real_dlsym();
  if (GS_UNLIKELY(!real)) return NULL;
  int row = handle == RTLD_NEXT ? -1 : find_row(name);
  if (GS_LIKELY(row < 0)) return real(handle, name);
  return dlsym_hooked(real, handle, name, row);
}

/* Which of our hooks stands for the entry point cuGetProcAddress returned:
 * by address first; else by the driver's own rule (the newest variant of the
 * base name not newer than the requested version, _ptsz when per-thread). */
void *gs_wrap_proc(const char *symbol, void *p, int version, cuuint64_t flags) {
  if (!symbol || !p || is_our_hook(p)) return p;
  for (int i = 0; i < GS_HOOK_COUNT; i++)
    if (g_rows[i].lib == GS_LIB_CUDA && __atomic_load_n(&g_rows[i].real, __ATOMIC_ACQUIRE) == p)
      return gs_hook_fns[i];
  int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  int best = -1, best_known = 0;
#define GS_KNOWN(base, sym, ver, ptsz)                                                  \
  if (!strcmp(#base, symbol) && (ver) <= version && (ptsz) == want_ptsz && (ver) > best_known) \
    best_known = (ver);
  GPUSHARE_CUDA_PROCS(GS_KNOWN)
#undef GS_KNOWN
  for (int i = 0; i < GS_HOOK_COUNT; i++) {
    const gs_row_t *r = &g_rows[i];
    if (r->lib == GS_LIB_CUDA && r->ptsz == want_ptsz && r->version <= version && !strcmp(r->base, symbol) &&
        (best < 0 || r->version > g_rows[best].version))
      best = i;
  }
  /* a newer variant we know of but do not hook: hand out the driver's own */
  if (best < 0 || g_rows[best].version < best_known) return p;
  set_real(best, p);
  return gs_hook_fns[best];
}
