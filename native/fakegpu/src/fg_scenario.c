/* Scenario parser: line-based text → a fresh state image. */
#define _GNU_SOURCE
#include "fg_scenario.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Profile tables, in the order of electron/engine/mig/profiles.ts (MIG user guide, `nvidia-smi mig -lgip`):
 * name, GPU-instance profile id (what GpuInstanceGetInfo reports and `nvidia-smi mig -cgi` takes), compute
 * slices, memory slices, SMs, MiB, CE, NVDEC, NVENC, JPEG, OFA, max instances, NVML_GPU_INSTANCE_PROFILE_*
 * index (what nvmlDeviceGetGpuInstanceProfileInfoV takes). */
#define FG_PROFILES_PER_GPU 7
static const fg_profile_t H100_80[FG_PROFILES_PER_GPU] = {
    {"1g.10gb", 19, 1, 1, 16, 9984, 1, 1, 0, 1, 0, 7, 0x0},
    {"1g.10gb+me", 20, 1, 1, 16, 9984, 1, 7, 0, 7, 1, 1, 0x7},
    {"1g.20gb", 15, 1, 2, 26, 20096, 1, 1, 0, 1, 0, 4, 0x9},
    {"2g.20gb", 14, 2, 2, 32, 20096, 2, 2, 0, 2, 0, 3, 0x1},
    {"3g.40gb", 9, 3, 4, 60, 40448, 3, 3, 0, 3, 0, 2, 0x2},
    {"4g.40gb", 5, 4, 4, 64, 40448, 4, 4, 0, 4, 0, 1, 0x3},
    {"7g.80gb", 0, 7, 8, 132, 81152, 8, 7, 0, 7, 1, 1, 0x4},
};
static const fg_profile_t A100_40[FG_PROFILES_PER_GPU] = {
    {"1g.5gb", 19, 1, 1, 14, 4864, 1, 0, 0, 0, 0, 7, 0x0},
    {"1g.5gb+me", 20, 1, 1, 14, 4864, 1, 5, 0, 1, 1, 1, 0x7},
    {"1g.10gb", 15, 1, 2, 14, 9856, 1, 1, 0, 0, 0, 4, 0x9},
    {"2g.10gb", 14, 2, 2, 28, 9856, 2, 1, 0, 0, 0, 3, 0x1},
    {"3g.20gb", 9, 3, 4, 42, 19968, 3, 2, 0, 0, 0, 2, 0x2},
    {"4g.20gb", 5, 4, 4, 56, 19968, 4, 2, 0, 0, 0, 1, 0x3},
    {"7g.40gb", 0, 7, 8, 98, 40192, 7, 5, 0, 1, 1, 1, 0x4},
};
static const fg_profile_t A100_80[FG_PROFILES_PER_GPU] = {
    {"1g.10gb", 19, 1, 1, 14, 9728, 1, 0, 0, 0, 0, 7, 0x0},
    {"1g.10gb+me", 20, 1, 1, 14, 9728, 1, 5, 0, 1, 1, 1, 0x7},
    {"1g.20gb", 15, 1, 2, 14, 19968, 1, 1, 0, 0, 0, 4, 0x9},
    {"2g.20gb", 14, 2, 2, 28, 19968, 2, 1, 0, 0, 0, 3, 0x1},
    {"3g.40gb", 9, 3, 4, 42, 40192, 3, 2, 0, 0, 0, 2, 0x2},
    {"4g.40gb", 5, 4, 4, 56, 40192, 4, 2, 0, 0, 0, 1, 0x3},
    {"7g.80gb", 0, 7, 8, 98, 80640, 7, 5, 0, 1, 1, 1, 0x4},
};

/* An unknown model: the same shape, sized from the whole GPU (an eighth of its memory per slice). */
static void generic_profile(const fg_gpu_t *g, int i, fg_profile_t *out) {
  static const unsigned NVML[] = {0x0, 0x7, 0x9, 0x1, 0x2, 0x3, 0x4}, ID[] = {19, 20, 15, 14, 9, 5, 0},
                        SLICES[] = {1, 1, 1, 2, 3, 4, 7}, MEM[] = {1, 1, 2, 2, 4, 4, 8}, MAX[] = {7, 1, 4, 3, 2, 1, 1};
  memset(out, 0, sizeof *out);
  unsigned total_mib = (unsigned)(g->memory_total / FG_MIB);
  out->nvml = NVML[i];
  out->id = ID[i];
  out->slices = SLICES[i];
  out->mem_slices = MEM[i];
  out->max_instances = MAX[i];
  out->sm = i == 6 ? g->sm_count : (g->sm_count / 7) * out->slices;
  out->mem_mib = (total_mib / 8 * out->mem_slices) / 128 * 128;
  out->ce = out->slices;
  snprintf(out->name, sizeof out->name, "%ug.%ugb%s", out->slices, (out->mem_mib + 512) / 1024, i == 1 ? "+me" : "");
}

int fg_profile_at(const fg_gpu_t *g, int i, fg_profile_t *out) {
  if (i < 0 || i >= FG_PROFILES_PER_GPU) return 0;
  const fg_profile_t *t = NULL;
  switch ((fg_family_t)g->family) {
    case FG_FAM_H100_80: t = H100_80; break;
    case FG_FAM_A100_40: t = A100_40; break;
    case FG_FAM_A100_80: t = A100_80; break;
    default: break;
  }
  if (t) *out = t[i];
  else generic_profile(g, i, out);
  return 1;
}

int fg_profile_by_id(const fg_gpu_t *g, unsigned nvml_index, fg_profile_t *out) {
  for (int i = 0; fg_profile_at(g, i, out); i++)
    if (out->nvml == nvml_index) return 1;
  return 0;
}

int fg_profile_by_gi_id(const fg_gpu_t *g, unsigned id, fg_profile_t *out) {
  for (int i = 0; fg_profile_at(g, i, out); i++)
    if (out->id == id) return 1;
  return 0;
}

/* Memory slices where an instance of the profile may start, highest first (8 memory slices). */
static const unsigned *allowed_starts(const fg_profile_t *p, int *n) {
  static const unsigned s1[] = {6, 5, 4, 3, 2, 1, 0}, s1x2[] = {6, 4, 2, 0}, s2[] = {4, 2, 0}, s3[] = {4, 0}, s0[] = {0};
  if (p->mem_slices == 1) return *n = 7, s1;
  if (p->mem_slices == 2 && p->slices == 1) return *n = 4, s1x2;
  if (p->mem_slices == 2) return *n = 3, s2;
  if (p->slices == 3) return *n = 2, s3;
  return *n = 1, s0;
}

int fg_mig_start_allowed(const fg_profile_t *p, unsigned start) {
  int n;
  const unsigned *al = allowed_starts(p, &n);
  for (int k = 0; k < n; k++)
    if (al[k] == start) return 1;
  return 0;
}

static void make_uuid(char *out, size_t len, const char *prefix, const char *key);

void fg_mig_fill(const fg_gpu_t *g, fg_mig_t *mi, const fg_profile_t *p, unsigned start, unsigned generation) {
  snprintf(mi->profile, sizeof mi->profile, "%s", p->name);
  snprintf(mi->name, sizeof mi->name, "%.63s MIG %s", g->name, p->name);
  mi->profile_id = p->id;
  mi->nvml_profile = p->nvml;
  mi->slices = p->slices;
  mi->placement_start = start;
  mi->placement_size = p->mem_slices;
  mi->sm_count = p->sm;
  mi->copy_engines = p->ce;
  mi->decoders = p->dec;
  mi->encoders = p->enc;
  mi->jpegs = p->jpg;
  mi->ofas = p->ofa;
  mi->memory_total = (uint64_t)p->mem_mib * FG_MIB;
  if (generation > 0 || !mi->uuid[0]) {
    /* scenario instances: derived from parent, GI and CI; created ones also from the layout generation */
    char key[256];
    if (generation) snprintf(key, sizeof key, "mig|%s|%u|%u|%u", g->uuid, mi->gi, mi->ci, generation);
    else snprintf(key, sizeof key, "mig|%s|%u|%u", g->uuid, mi->gi, mi->ci);
    make_uuid(mi->uuid, sizeof mi->uuid, "MIG", key);
  }
}

/* ---- parsing ---- */

typedef struct {
  const char *file;
  int line;
  char *err;
  size_t errlen;
} pctx_t;

static int fail(pctx_t *c, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->line > 0)
    snprintf(c->err, c->errlen, "%s:%d: %s", c->file, c->line, msg);
  else
    snprintf(c->err, c->errlen, "%s: %s", c->file, msg);
  return -1;
}

/* Splits "key=value key2="quoted value"" in place. */
typedef struct {
  char *key[32];
  char *val[32];
  int n;
} kv_t;

static int split_kv(pctx_t *c, char *s, kv_t *kv) {
  kv->n = 0;
  while (*s) {
    while (isspace((unsigned char)*s)) s++;
    if (!*s) break;
    if (kv->n == 32) return fail(c, "too many settings");
    char *k = s;
    while (*s && *s != '=' && !isspace((unsigned char)*s)) s++;
    if (*s != '=') return fail(c, "expected key=value, got '%s'", k);
    *s++ = 0;
    char *v;
    if (*s == '"') {
      v = ++s;
      while (*s && *s != '"') s++;
      if (*s != '"') return fail(c, "unterminated quote in %s=", k);
      *s++ = 0;
    } else {
      v = s;
      while (*s && !isspace((unsigned char)*s)) s++;
      if (*s) *s++ = 0;
    }
    kv->key[kv->n] = k;
    kv->val[kv->n] = v;
    kv->n++;
  }
  return 0;
}

static int parse_uint(const char *s, unsigned long long *out, char **rest) {
  if (!isdigit((unsigned char)*s)) return -1;
  errno = 0;
  *out = strtoull(s, rest, 10);
  return errno ? -1 : 0;
}

/* Bare numbers are MiB; suffixes B, K/KiB, M/MiB, G/GiB, T/TiB (binary). */
static int parse_mem(const char *s, unsigned long long *bytes) {
  char *rest;
  unsigned long long v;
  if (parse_uint(s, &v, &rest)) return -1;
  unsigned long long mul = FG_MIB;
  if (!*rest) mul = FG_MIB;
  else if (!strcmp(rest, "B")) mul = 1;
  else if (!strcasecmp(rest, "K") || !strcasecmp(rest, "KiB") || !strcasecmp(rest, "KB")) mul = 1024;
  else if (!strcasecmp(rest, "M") || !strcasecmp(rest, "MiB") || !strcasecmp(rest, "MB")) mul = FG_MIB;
  else if (!strcasecmp(rest, "G") || !strcasecmp(rest, "GiB") || !strcasecmp(rest, "GB")) mul = FG_MIB * 1024;
  else if (!strcasecmp(rest, "T") || !strcasecmp(rest, "TiB") || !strcasecmp(rest, "TB")) mul = FG_MIB * 1024 * 1024;
  else return -1;
  *bytes = v * mul;
  return 0;
}

static int parse_unit(const char *s, const char *unit, unsigned long long *out) {
  char *rest;
  if (parse_uint(s, out, &rest)) return -1;
  return (!*rest || !strcasecmp(rest, unit)) ? 0 : -1;
}

static int parse_power_mw(const char *s, unsigned long long *mw) {
  char *rest;
  unsigned long long v;
  if (parse_uint(s, &v, &rest)) return -1;
  if (!*rest || !strcasecmp(rest, "W")) *mw = v * 1000;
  else if (!strcasecmp(rest, "mW")) *mw = v;
  else return -1;
  return 0;
}

static uint64_t fnv1a(const char *s, uint64_t h) {
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void make_uuid(char *out, size_t len, const char *prefix, const char *key) {
  uint64_t a = mix64(fnv1a(key, 0xcbf29ce484222325ull));
  uint64_t b = mix64(a ^ fnv1a(key, 0x84222325cbf29ce4ull));
  snprintf(out, len, "%s-%08x-%04x-%04x-%04x-%012llx", prefix, (unsigned)(a >> 32),
           (unsigned)((a >> 16) & 0xffff), (unsigned)((a & 0x0fff) | 0x4000),
           (unsigned)(((b >> 48) & 0x3fff) | 0x8000), (unsigned long long)(b & 0xffffffffffffull));
}

static int valid_uuid(const char *s, const char *prefix) {
  size_t pl = strlen(prefix);
  if (strncmp(s, prefix, pl) || s[pl] != '-') return 0;
  s += pl + 1;
  static const int groups[] = {8, 4, 4, 4, 12};
  for (int g = 0; g < 5; g++) {
    for (int i = 0; i < groups[g]; i++, s++)
      if (!isxdigit((unsigned char)*s)) return 0;
    if (g < 4 && *s++ != '-') return 0;
  }
  return *s == 0;
}

typedef struct {
  int line;
  int placement; /* -1: solve */
  unsigned profile; /* NVML_GPU_INSTANCE_PROFILE_* index */
} mig_req_t;

static const unsigned PCI_BUSES[8] = {0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD};

static void gpu_defaults(fg_gpu_t *g, const char *model, unsigned index) {
  snprintf(g->name, sizeof g->name, "%s", model);
  g->family = FG_FAM_GENERIC;
  g->sm_count = 82;
  g->sm_clock_max = 1695;
  g->sm_clock_idle = 210;
  g->mem_clock = 9501;
  g->power_limit_mw = 350000;
  g->cc_major = 8;
  g->cc_minor = 6;
  g->memory_total = 24576 * FG_MIB;
  g->pci_device_id = 0x220410DE;
  g->pci_subsys_id = 0x147D10DE;
  g->mig_capable = FG_MIG_UNSUPPORTED;
  if (strstr(model, "H100")) {
    g->family = FG_FAM_H100_80;
    g->sm_count = 132;
    g->sm_clock_max = 1980;
    g->mem_clock = 2619;
    g->power_limit_mw = 700000;
    g->cc_major = 9;
    g->cc_minor = 0;
    g->memory_total = 81559 * FG_MIB;
    g->pci_device_id = 0x233010DE;
    g->pci_subsys_id = 0x16C110DE;
    g->mig_capable = FG_MIG_CAPABLE;
  } else if (strstr(model, "A100")) {
    int big = strstr(model, "80GB") != NULL;
    g->family = big ? FG_FAM_A100_80 : FG_FAM_A100_40;
    g->sm_count = 108;
    g->sm_clock_max = 1410;
    g->mem_clock = big ? 1593 : 1215;
    g->power_limit_mw = 400000;
    g->cc_major = 8;
    g->cc_minor = 0;
    g->memory_total = (big ? 81920 : 40960) * FG_MIB;
    g->pci_device_id = big ? 0x20B210DE : 0x20B010DE;
    g->pci_subsys_id = big ? 0x147F10DE : 0x134F10DE;
    g->mig_capable = FG_MIG_CAPABLE;
  }
  g->pci_domain = 0;
  g->pci_bus = index < 8 ? PCI_BUSES[index] : 0x10 + index;
  g->pci_device = 0;
}

static int parse_gpu(pctx_t *c, fg_state_t *st, kv_t *kv, int *reserved_set) {
  if (st->gpu_count >= FG_MAX_GPUS) return fail(c, "more than %d gpus", FG_MAX_GPUS);
  unsigned idx = st->gpu_count;
  fg_gpu_t *g = &st->gpus[idx];
  const char *model = NULL;
  for (int i = 0; i < kv->n; i++)
    if (!strcmp(kv->key[i], "model")) model = kv->val[i];
  if (!model || !*model) return fail(c, "gpu needs model=\"...\"");
  if (strlen(model) >= 64) return fail(c, "model name longer than 63 characters");
  gpu_defaults(g, model, idx);
  *reserved_set = 0;
  for (int i = 0; i < kv->n; i++) {
    const char *k = kv->key[i], *v = kv->val[i];
    unsigned long long x;
    if (!strcmp(k, "model")) continue;
    if (!strcmp(k, "memory")) {
      if (parse_mem(v, &x) || x < 256 * FG_MIB) return fail(c, "bad memory '%s' (e.g. 40960MiB)", v);
      g->memory_total = x;
    } else if (!strcmp(k, "reserved")) {
      if (parse_mem(v, &x)) return fail(c, "bad reserved '%s' (e.g. 512MiB)", v);
      g->memory_reserved = x;
      *reserved_set = 1;
    } else if (!strcmp(k, "sm")) {
      if (parse_unit(v, "", &x) || x == 0 || x > 1024) return fail(c, "bad sm '%s'", v);
      g->sm_count = (uint32_t)x;
    } else if (!strcmp(k, "sm_clock")) {
      if (parse_unit(v, "MHz", &x) || x == 0 || x > 10000) return fail(c, "bad sm_clock '%s'", v);
      g->sm_clock_max = (uint32_t)x;
    } else if (!strcmp(k, "sm_clock_idle")) {
      if (parse_unit(v, "MHz", &x) || x == 0 || x > 10000) return fail(c, "bad sm_clock_idle '%s'", v);
      g->sm_clock_idle = (uint32_t)x;
    } else if (!strcmp(k, "mem_clock")) {
      if (parse_unit(v, "MHz", &x) || x == 0 || x > 40000) return fail(c, "bad mem_clock '%s'", v);
      g->mem_clock = (uint32_t)x;
    } else if (!strcmp(k, "power_limit")) {
      if (parse_power_mw(v, &x) || x == 0 || x > 10000000) return fail(c, "bad power_limit '%s' (e.g. 400W)", v);
      g->power_limit_mw = (uint32_t)x;
    } else if (!strcmp(k, "pci")) {
      unsigned dom, bus, dev, fn;
      char tail;
      if (sscanf(v, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || bus > 0xff || dev > 0x1f)
        return fail(c, "bad pci '%s' (e.g. 00000000:07:00.0)", v);
      g->pci_domain = dom;
      g->pci_bus = bus;
      g->pci_device = dev;
    } else if (!strcmp(k, "mig")) {
      if (!strcmp(v, "on")) g->mig_current = 1, g->mig_capable = FG_MIG_CAPABLE;
      else if (!strcmp(v, "off")) g->mig_current = 0, g->mig_capable = FG_MIG_CAPABLE;
      else if (!strcmp(v, "unsupported")) g->mig_current = 0, g->mig_capable = FG_MIG_UNSUPPORTED;
      else return fail(c, "bad mig '%s' (on, off or unsupported)", v);
    } else if (!strcmp(k, "uuid")) {
      if (!valid_uuid(v, "GPU")) return fail(c, "bad uuid '%s' (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", v);
      snprintf(g->uuid, sizeof g->uuid, "%s", v);
    } else if (!strcmp(k, "compute_mode")) {
      if (parse_unit(v, "", &x) || x > 3) return fail(c, "bad compute_mode '%s' (0..3)", v);
      g->compute_mode = (uint32_t)x;
    } else if (!strcmp(k, "cc")) {
      unsigned ma, mi;
      if (sscanf(v, "%u.%u", &ma, &mi) != 2) return fail(c, "bad cc '%s' (e.g. 9.0)", v);
      g->cc_major = ma;
      g->cc_minor = mi;
    } else {
      return fail(c, "unknown gpu setting '%s'", k);
    }
  }
  g->mig_pending = g->mig_current;
  snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%08X:%02X:%02X.0", g->pci_domain, g->pci_bus, g->pci_device);
  if (!g->uuid[0]) {
    char key[256];
    snprintf(key, sizeof key, "gpu|%u|%s|%s", idx, g->name, g->pci_bus_id);
    make_uuid(g->uuid, sizeof g->uuid, "GPU", key);
  }
  for (unsigned i = 0; i < idx; i++) {
    if (!strcmp(st->gpus[i].uuid, g->uuid)) return fail(c, "duplicate uuid %s", g->uuid);
    if (!strcmp(st->gpus[i].pci_bus_id, g->pci_bus_id)) return fail(c, "duplicate pci %s", g->pci_bus_id);
  }
  st->gpu_count++;
  return 0;
}

static int place(const fg_gpu_t *g, const mig_req_t *req, int n, int i, unsigned used, unsigned *starts) {
  if (i == n) return 1;
  fg_profile_t p;
  fg_profile_by_id(g, req[i].profile, &p);
  int cnt;
  const unsigned *al = allowed_starts(&p, &cnt);
  for (int k = 0; k < cnt; k++) {
    unsigned s = al[k];
    if (req[i].placement >= 0 && (unsigned)req[i].placement != s) continue;
    unsigned mask = ((1u << p.mem_slices) - 1) << s;
    if (s + p.mem_slices > 8 || (used & mask)) continue;
    starts[i] = s;
    if (place(g, req, n, i + 1, used | mask, starts)) return 1;
  }
  return 0;
}

static int parse_mig(pctx_t *c, fg_state_t *st, kv_t *kv, mig_req_t *reqs, int *gi_set, int *ci_set) {
  if (st->gpu_count == 0) return fail(c, "mig before any gpu");
  fg_gpu_t *g = &st->gpus[st->gpu_count - 1];
  if (!g->mig_current) return fail(c, "mig instance on a gpu without mig=on");
  if (g->mig_count >= FG_MAX_MIG) return fail(c, "more than %d mig instances on one gpu", FG_MAX_MIG);
  unsigned m = g->mig_count;
  fg_mig_t *mi = &g->mig[m];
  mig_req_t *r = &reqs[m];
  r->line = c->line;
  r->placement = -1;
  int have_profile = 0;
  gi_set[m] = ci_set[m] = 0;
  for (int i = 0; i < kv->n; i++) {
    const char *k = kv->key[i], *v = kv->val[i];
    unsigned long long x;
    if (!strcmp(k, "profile")) {
      /* a full name, or just "Ng" for the first profile with N compute slices */
      int found = 0;
      fg_profile_t p;
      for (int pi = 0; !found && fg_profile_at(g, pi, &p); pi++)
        if (!strcmp(p.name, v)) r->profile = p.nvml, found = 1;
      for (int pi = 0; !found && fg_profile_at(g, pi, &p); pi++) {
        size_t pl = strcspn(p.name, ".");
        if (strlen(v) == pl && !strncmp(p.name, v, pl)) r->profile = p.nvml, found = 1;
      }
      if (!found) {
        char names[160] = "";
        for (int pi = 0; fg_profile_at(g, pi, &p); pi++) {
          if (pi) strncat(names, " ", sizeof names - strlen(names) - 1);
          strncat(names, p.name, sizeof names - strlen(names) - 1);
        }
        return fail(c, "unknown profile '%s' for %s (one of: %s)", v, g->name, names);
      }
      have_profile = 1;
    } else if (!strcmp(k, "placement")) {
      if (parse_unit(v, "", &x) || x > 7) return fail(c, "bad placement '%s' (memory slice 0..7)", v);
      r->placement = (int)x;
    } else if (!strcmp(k, "gi")) {
      if (parse_unit(v, "", &x) || x > 14) return fail(c, "bad gi '%s' (0..14)", v);
      mi->gi = (uint32_t)x;
      gi_set[m] = 1;
    } else if (!strcmp(k, "ci")) {
      if (parse_unit(v, "", &x) || x > 7) return fail(c, "bad ci '%s' (0..7)", v);
      mi->ci = (uint32_t)x;
      ci_set[m] = 1;
    } else if (!strcmp(k, "uuid")) {
      if (!valid_uuid(v, "MIG")) return fail(c, "bad uuid '%s' (MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", v);
      snprintf(mi->uuid, sizeof mi->uuid, "%s", v);
    } else {
      return fail(c, "unknown mig setting '%s'", k);
    }
  }
  if (!have_profile) return fail(c, "mig needs profile=NAME (e.g. profile=3g.40gb)");
  if (r->placement >= 0) {
    fg_profile_t p;
    fg_profile_by_id(g, r->profile, &p);
    if (!fg_mig_start_allowed(&p, (unsigned)r->placement))
      return fail(c, "placement %d is not allowed for this profile", r->placement);
  }
  g->mig_count++;
  return 0;
}

static int finish_gpu(pctx_t *c, fg_state_t *st, unsigned gi_idx, mig_req_t *reqs, int *gi_set, int *ci_set,
                      int reserved_set) {
  fg_gpu_t *g = &st->gpus[gi_idx];
  if (!reserved_set) g->memory_reserved = (g->memory_total > 48ull * 1024 * FG_MIB ? 512 : 256) * FG_MIB;
  if (g->memory_reserved >= g->memory_total) return fail(c, "gpu %u: reserved memory >= total", gi_idx);
  if (!g->mig_current) return 0;
  unsigned starts[FG_MAX_MIG];
  unsigned counts[32] = {0}, compute = 0;
  for (unsigned m = 0; m < g->mig_count; m++) {
    fg_profile_t p;
    fg_profile_by_id(g, reqs[m].profile, &p);
    compute += p.slices;
    if (++counts[reqs[m].profile & 31] > p.max_instances) {
      c->line = reqs[m].line;
      return fail(c, "at most %u instances of %s", p.max_instances, p.name);
    }
    if (compute > 7) {
      c->line = reqs[m].line;
      return fail(c, "more than 7 compute slices on gpu %u", gi_idx);
    }
  }
  if (!place(g, reqs, (int)g->mig_count, 0, 0, starts)) {
    c->line = g->mig_count ? reqs[g->mig_count - 1].line : c->line;
    return fail(c, "no valid placement for the mig instances of gpu %u (8 memory slices)", gi_idx);
  }
  unsigned next_gi = 1;
  for (unsigned m = 0; m < g->mig_count; m++) {
    fg_mig_t *mi = &g->mig[m];
    fg_profile_t p;
    fg_profile_by_id(g, reqs[m].profile, &p);
    if (!gi_set[m]) {
      for (;;) {
        int clash = 0;
        for (unsigned o = 0; o < g->mig_count; o++)
          if (o != m && (gi_set[o] || o < m) && g->mig[o].gi == next_gi) clash = 1;
        if (!clash) break;
        next_gi++;
      }
      mi->gi = next_gi++;
    }
    if (!ci_set[m]) mi->ci = 0;
    for (unsigned o = 0; o < m; o++)
      if (g->mig[o].gi == mi->gi) {
        c->line = reqs[m].line;
        return fail(c, "duplicate gi %u", mi->gi);
      }
    fg_mig_fill(g, mi, &p, starts[m], 0);
    mi->present = FG_MIG_GI_CI;
  }
  return 0;
}

int fg_scenario_load(const char *path, fg_state_t *st, char *err, size_t errlen) {
  pctx_t c = {path, 0, err, errlen};
  FILE *f = fopen(path, "r");
  if (!f) return fail(&c, "%s", strerror(errno));
  snprintf(st->driver_version, sizeof st->driver_version, "550.54.15");
  st->cuda_version = 12040;
  st->v3_record_size = 24;
  snprintf(st->scenario, sizeof st->scenario, "%s", path);
  int nvml_set = 0, rc = 0, reserved_set = 0;
  mig_req_t reqs[FG_MAX_MIG];
  int gi_set[FG_MAX_MIG], ci_set[FG_MAX_MIG];
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    c.line++;
    if (!strchr(line, '\n') && !feof(f)) {
      rc = fail(&c, "line too long");
      break;
    }
    int inq = 0;
    for (char *p = line; *p; p++) {
      if (*p == '"') inq = !inq;
      if ((*p == '#' && !inq) || *p == '\n' || *p == '\r') {
        *p = 0;
        break;
      }
    }
    char *s = line;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) continue;
    char *kw = s;
    while (*s && !isspace((unsigned char)*s)) s++;
    if (*s) *s++ = 0;
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    if (!strcmp(kw, "driver") || !strcmp(kw, "nvml")) {
      int ok = *s && strlen(s) < 32;
      for (char *p = s; *p; p++) ok &= isdigit((unsigned char)*p) || *p == '.';
      if (!ok) {
        rc = fail(&c, "bad %s version '%s' (e.g. 550.54.15)", kw, s);
        break;
      }
      if (kw[0] == 'd') snprintf(st->driver_version, sizeof st->driver_version, "%s", s);
      else snprintf(st->nvml_version, sizeof st->nvml_version, "%s", s), nvml_set = 1;
    } else if (!strcmp(kw, "cuda")) {
      unsigned ma, mi;
      char tail;
      unsigned long long v;
      char *rest;
      if (sscanf(s, "%u.%u%c", &ma, &mi, &tail) == 2 && ma < 100 && mi < 100) {
        st->cuda_version = (int32_t)(ma * 1000 + mi * 10);
      } else if (!parse_uint(s, &v, &rest) && !*rest && v >= 1000 && v < 100000) {
        st->cuda_version = (int32_t)v;
      } else {
        rc = fail(&c, "bad cuda version '%s' (e.g. 12040 or 12.4)", s);
        break;
      }
    } else if (!strcmp(kw, "gpu")) {
      if (st->gpu_count > 0 &&
          (rc = finish_gpu(&c, st, st->gpu_count - 1, reqs, gi_set, ci_set, reserved_set)))
        break;
      kv_t kv;
      if ((rc = split_kv(&c, s, &kv)) || (rc = parse_gpu(&c, st, &kv, &reserved_set))) break;
    } else if (!strcmp(kw, "mig")) {
      kv_t kv;
      if ((rc = split_kv(&c, s, &kv)) || (rc = parse_mig(&c, st, &kv, reqs, gi_set, ci_set))) break;
    } else {
      rc = fail(&c, "unknown keyword '%s' (driver, cuda, nvml, gpu, mig)", kw);
      break;
    }
  }
  fclose(f);
  if (rc) return rc;
  if (st->gpu_count == 0) {
    c.line = 0;
    return fail(&c, "no gpu lines");
  }
  if ((rc = finish_gpu(&c, st, st->gpu_count - 1, reqs, gi_set, ci_set, reserved_set))) return rc;
  if (!nvml_set)
    snprintf(st->nvml_version, sizeof st->nvml_version, "%d.%.20s", st->cuda_version / 1000, st->driver_version);
  return 0;
}

int fg_parse_size(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return -1;
  unsigned long long mul = 1;
  switch (*end) {
    case 0: break;
    case 'K': case 'k': mul = 1ull << 10; end++; break;
    case 'M': case 'm': mul = 1ull << 20; end++; break;
    case 'G': case 'g': mul = 1ull << 30; end++; break;
    case 'T': case 't': mul = 1ull << 40; end++; break;
    default: return -1;
  }
  if (*end && strcmp(end, "iB") && strcmp(end, "B") && strcmp(end, "b")) return -1;
  *out = v * mul;
  return 0;
}
