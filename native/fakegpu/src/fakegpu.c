/* fakegpu: the control tool for simulated-driver state files. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../include/nvml_abi.h"
#include "fg_scenario.h"
#include "fg_state.h"

#define MAX_OPTS 16

int fakegpu_cmd_mig(int argc, char **argv); /* fakegpu_spatial.c */
int fakegpu_cmd_mps(int argc, char **argv);

static const char *USAGE =
    "usage: fakegpu init    --state PATH --scenario FILE_OR_NAME\n"
    "       fakegpu dump    --state PATH\n"
    "       fakegpu fault   --state PATH [--device N --lost on|off] [--call NVML_FUNCTION --code N [--device N]]\n"
    "                       [--v3-record-size 24|32]\n"
    "       fakegpu set     --state PATH --device N key=value... (temperature power sm_clock mem_clock compute_mode; =auto unpins)\n"
    "       fakegpu attach  --state PATH --device N --pid P --mem BYTES [--type compute|graphics|mps] [--mig GI]\n"
    "       fakegpu execlog --state PATH --device N [--mig GI] [--since-ns T]\n"
    "       fakegpu mig     --state PATH --device N list | create-gi PROFILE[:START] [-C] | destroy-gi GI\n"
    "                       | create-ci GI | destroy-ci GI CI | mode on|off\n"
    "       fakegpu mps     --state PATH [--device N [--gi GI]] status | start [--user NAME] [--uid U] [--pid P] [--pipe-dir DIR]\n"
    "                       | stop | terminate-client PID\n"
    "--state defaults to $GPUSHARE_FAKEGPU_STATE\n";

/* also used by fakegpu_spatial.c */
void die(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fakegpu: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(code);
}

typedef struct {
  const char *name[MAX_OPTS];
  const char *val[MAX_OPTS];
  int n;
  const char *pos[64];
  int npos;
} args_t;

static void parse_args(int argc, char **argv, args_t *a, const char *const *allowed) {
  memset(a, 0, sizeof *a);
  for (int i = 2; i < argc; i++) {
    if (!strncmp(argv[i], "--", 2)) {
      const char *name = argv[i] + 2;
      int ok = 0;
      for (const char *const *p = allowed; *p; p++) ok |= !strcmp(*p, name);
      if (!ok) die(2, "%s: unknown option %s", argv[1], argv[i]);
      if (i + 1 >= argc) die(2, "%s: option %s needs a value", argv[1], argv[i]);
      for (int k = 0; k < a->n; k++)
        if (!strcmp(a->name[k], name)) die(2, "%s: option %s given twice", argv[1], argv[i]);
      if (a->n == MAX_OPTS) die(2, "too many options");
      a->name[a->n] = name;
      a->val[a->n++] = argv[++i];
    } else {
      if (a->npos == 64) die(2, "too many arguments");
      a->pos[a->npos++] = argv[i];
    }
  }
}

static const char *opt(const args_t *a, const char *name) {
  for (int i = 0; i < a->n; i++)
    if (!strcmp(a->name[i], name)) return a->val[i];
  return NULL;
}

static const char *need(const args_t *a, const char *name, const char *cmd) {
  const char *v = opt(a, name);
  if (!v) die(2, "%s: missing --%s", cmd, name);
  return v;
}

static unsigned long long num(const char *s, const char *what, unsigned long long max) {
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-') die(2, "bad %s '%s' (expected a non-negative integer)", what, s ? s : "");
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > max) die(2, "bad %s '%s'", what, s);
  return v;
}

/* 512M, 2G, 1048576 (binary suffixes K M G T, optional iB/B) */
static unsigned long long size_arg(const char *s, const char *what) {
  unsigned long long v;
  if (fg_parse_size(s, &v)) die(2, "bad %s '%s' (e.g. 512M, 2G, 1048576)", what, s ? s : "");
  return v;
}

static const char *state_path(const args_t *a, const char *cmd) {
  const char *p = opt(a, "state");
  if (!p) p = fg_state_path();
  if (!p) die(2, "%s: missing --state (or GPUSHARE_FAKEGPU_STATE)", cmd);
  return p;
}

static fg_state_t *open_state(const args_t *a, const char *cmd) {
  char err[512];
  fg_state_t *st = fg_state_map(state_path(a, cmd), err, sizeof err);
  if (!st) die(2, "%s: %s", cmd, err);
  return st;
}

static int device_arg(const args_t *a, const fg_state_t *st, const char *cmd, int required) {
  const char *v = opt(a, "device");
  if (!v) {
    if (required) die(2, "%s: missing --device", cmd);
    return -1;
  }
  unsigned long long d = num(v, "--device", 1000);
  if (d >= st->gpu_count) die(2, "%s: --device %llu out of range (%u gpus)", cmd, d, st->gpu_count);
  return (int)d;
}

static int mig_arg(const args_t *a, const fg_state_t *st, int dev, const char *cmd) {
  const char *v = opt(a, "mig");
  if (!v) return -1;
  unsigned long long gi = num(v, "--mig", 1000);
  const fg_gpu_t *g = &st->gpus[dev];
  if (!g->mig_current) die(2, "%s: device %d is not in MIG mode", cmd, dev);
  for (uint32_t m = 0; m < g->mig_count; m++)
    if (g->mig[m].present != FG_MIG_FREE && g->mig[m].gi == gi) return (int)m;
  die(2, "%s: device %d has no GPU instance %llu", cmd, dev, gi);
  return -1;
}

/* ---- init ---- */

static int cmd_init(int argc, char **argv) {
  static const char *const allowed[] = {"state", "scenario", NULL};
  args_t a;
  parse_args(argc, argv, &a, allowed);
  if (a.npos) die(2, "init: unexpected argument '%s'", a.pos[0]);
  const char *path = state_path(&a, "init");
  const char *scn = need(&a, "scenario", "init");
  char resolved[PATH_MAX];
  size_t sl = strlen(scn);
  if (!strchr(scn, '/') && !(sl > 4 && !strcmp(scn + sl - 4, ".scn"))) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) die(2, "init: cannot locate the fakegpu executable");
    exe[n] = 0;
    snprintf(resolved, sizeof resolved, "%s/../scenarios/%s.scn", dirname(exe), scn);
    if (access(resolved, R_OK) != 0) die(2, "init: unknown scenario '%s' (no %s)", scn, resolved);
    scn = resolved;
  }
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) die(2, "init: cannot create %s: %s", tmp, strerror(errno));
  if (ftruncate(fd, (off_t)sizeof(fg_state_t)) != 0) {
    unlink(tmp);
    die(1, "init: ftruncate %s: %s", tmp, strerror(errno));
  }
  fg_state_t *st = mmap(NULL, sizeof(fg_state_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (st == MAP_FAILED) {
    unlink(tmp);
    die(1, "init: mmap: %s", strerror(errno));
  }
  char err[512];
  if (fg_scenario_load(scn, st, err, sizeof err) != 0) {
    munmap(st, sizeof *st);
    unlink(tmp);
    die(2, "init: %s", err);
  }
  fg_state_init_sync(st);
  st->layout_version = FG_LAYOUT_VERSION;
  st->total_size = sizeof(fg_state_t);
  __atomic_store_n(&st->magic, FG_MAGIC, __ATOMIC_RELEASE);
  munmap(st, sizeof *st);
  if (rename(tmp, path) != 0) {
    unlink(tmp);
    die(1, "init: rename to %s: %s", path, strerror(errno));
  }
  return 0;
}

/* ---- dump ---- */

static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static const char *TYPE_NAMES[] = {"compute", "graphics", "mps"};

/* FG_CKPT_* as CUprocessState names; LOCKING still reads as running */
static const char *const CKPT_NAMES[] = {"running", "locked", "checkpointed", "failed", "running"};

static int cmd_dump(int argc, char **argv) {
  static const char *const allowed[] = {"state", NULL};
  args_t a;
  parse_args(argc, argv, &a, allowed);
  if (a.npos) die(2, "dump: unexpected argument '%s'", a.pos[0]);
  fg_state_t *st = open_state(&a, "dump");
  fg_reap(st, 1);
  printf("{\"driverVersion\":");
  json_str(st->driver_version);
  printf(",\"nvmlVersion\":");
  json_str(st->nvml_version);
  printf(",\"cudaDriverVersion\":%d,\"v3RecordSize\":%u,\"faults\":[", st->cuda_version,
         st->v3_record_size == 32 ? 32 : 24);
  int first = 1;
  for (int i = 0; i < FG_MAX_FAULTS; i++) {
    const fg_fault_t *f = &st->faults[i];
    if (!f->code) continue;
    printf("%s{\"call\":", first ? "" : ",");
    json_str(f->call);
    printf(",\"code\":%d,\"device\":%d}", f->code, f->device);
    first = 0;
  }
  printf("],\"devices\":[");
  for (uint32_t d = 0; d < st->gpu_count; d++) {
    const fg_gpu_t *g = &st->gpus[d];
    unsigned util = fg_gpu_util(st, (int)d);
    uint64_t used = g->memory_reserved + FG_LOAD(&g->proc_used);
    if (used > g->memory_total) used = g->memory_total;
    printf("%s{\"index\":%u,\"uuid\":", d ? "," : "", d);
    json_str(g->uuid);
    printf(",\"name\":");
    json_str(g->name);
    printf(",\"pciBusId\":");
    json_str(g->pci_bus_id);
    printf(",\"memoryTotal\":%llu,\"memoryUsed\":%llu,\"memoryReserved\":%llu,\"smCount\":%u",
           (unsigned long long)g->memory_total, (unsigned long long)used, (unsigned long long)g->memory_reserved,
           g->sm_count);
    printf(",\"temperatureC\":%u,\"powerMilliwatts\":%u,\"powerLimitMilliwatts\":%u,\"smClockMHz\":%u,\"memClockMHz\":%u",
           fg_temperature(st, (int)d, util), fg_power_mw(st, (int)d, util), g->power_limit_mw,
           fg_sm_clock(st, (int)d, util), fg_mem_clock(st, (int)d));
    printf(",\"computeMode\":%u,\"migMode\":{\"current\":%u,\"pending\":%u},\"lost\":%s", g->compute_mode,
           g->mig_current, g->mig_pending, g->lost ? "true" : "false");
    unsigned gpu_slices = 0; /* in MIG mode: the most compute slices of a profile (7 on an A100 or H100) */
    fg_profile_t prof;
    for (int k = 0; g->mig_current && fg_profile_at(g, k, &prof); k++)
      if (prof.slices > gpu_slices) gpu_slices = prof.slices;
    if (gpu_slices) printf(",\"migComputeSlices\":%u", gpu_slices);
    else printf(",\"migComputeSlices\":null");
    printf(",\"utilizationGpu\":%u,\"utilizationMemory\":%u,\"migDevices\":[", util, fg_mem_util(util));
    first = 1;
    for (uint32_t m = 0; g->mig_current && m < g->mig_count; m++) {
      const fg_mig_t *mi = &g->mig[m];
      if (!fg_mig_visible(g, m)) continue;
      printf("%s{\"index\":%u,\"uuid\":", first ? "" : ",", m);
      first = 0;
      json_str(mi->uuid);
      printf(",\"name\":");
      json_str(mi->name);
      printf(",\"profileName\":");
      json_str(mi->profile);
      printf(",\"profileId\":%u,\"gpuInstanceId\":%u,\"computeInstanceId\":%u,\"memoryTotal\":%llu,\"memoryUsed\":%llu",
             mi->profile_id, mi->gi, mi->ci, (unsigned long long)mi->memory_total,
             (unsigned long long)FG_LOAD(&mi->proc_used));
      printf(",\"smCount\":%u,\"placement\":{\"start\":%u,\"size\":%u}", mi->sm_count, mi->placement_start,
             mi->placement_size);
      if (fg_profile_by_gi_id(g, mi->profile_id, &prof)) printf(",\"computeSlices\":%u}", prof.slices);
      else printf(",\"computeSlices\":null}");
    }
    printf("],\"processes\":[");
    first = 1;
    for (uint32_t i = 0; i < st->proc_hwm && i < FG_MAX_PROCS; i++) {
      fg_proc_t p;
      if (!fg_proc_copy(st, (int)i, &p) || p.gpu != (int)d) continue;
      unsigned gi = FG_ID_NONE, ci = FG_ID_NONE;
      if (p.mig >= 0 && (uint32_t)p.mig < g->mig_count) gi = g->mig[p.mig].gi, ci = g->mig[p.mig].ci;
      printf("%s{\"pid\":%d,\"type\":\"%s\",\"usedMemory\":%llu,\"gpuInstanceId\":%u,\"computeInstanceId\":%u",
             first ? "" : ",", p.pid, TYPE_NAMES[p.type <= 2 ? p.type : 0], (unsigned long long)p.used_mem, gi, ci);
      printf(",\"checkpointState\":\"%s\",\"parkedMemory\":%llu}", CKPT_NAMES[p.ckpt_state <= 4 ? p.ckpt_state : 3],
             (unsigned long long)p.parked_mem);
      first = 0;
    }
    printf("]}");
  }
  printf("]}\n");
  return 0;
}

/* ---- fault ---- */

#define NVML_NAME(name, params) #name,
static const char *const NVML_NAMES[] = {GPUSHARE_NVML_FUNCS(NVML_NAME) GPUSHARE_NVML_CLIENT_FUNCS(NVML_NAME) NULL};
#undef NVML_NAME

static int cmd_fault(int argc, char **argv) {
  static const char *const allowed[] = {"state", "device", "lost", "call", "code", "v3-record-size", NULL};
  args_t a;
  parse_args(argc, argv, &a, allowed);
  if (a.npos) die(2, "fault: unexpected argument '%s'", a.pos[0]);
  const char *lost = opt(&a, "lost"), *call = opt(&a, "call"), *code = opt(&a, "code"),
             *v3 = opt(&a, "v3-record-size");
  if (!lost && !call && !v3) die(2, "fault: nothing to do (--lost, --call/--code or --v3-record-size)");
  if (call && !code) die(2, "fault: --call needs --code");
  if (code && !call) die(2, "fault: --code needs --call");
  if (lost && strcmp(lost, "on") && strcmp(lost, "off")) die(2, "fault: bad --lost '%s' (on or off)", lost);
  if (call) {
    int known = 0;
    for (const char *const *n = NVML_NAMES; *n; n++) known |= !strcmp(*n, call);
    if (!known) die(2, "fault: unknown NVML function '%s'", call);
  }
  unsigned long long c = code ? num(code, "--code", 999) : 0;
  unsigned long long rs = v3 ? num(v3, "--v3-record-size", 64) : 0;
  if (v3 && rs != 24 && rs != 32) die(2, "fault: bad --v3-record-size '%s' (24 or 32)", v3);
  fg_state_t *st = open_state(&a, "fault");
  int dev = device_arg(&a, st, "fault", lost != NULL);
  if (lost) FG_STORE(&st->gpus[dev].lost, strcmp(lost, "on") == 0 ? 1u : 0u);
  if (call && fg_fault_set(st, call, dev, (int)c) != 0) die(1, "fault: fault table full (%d entries)", FG_MAX_FAULTS);
  if (v3) FG_STORE(&st->v3_record_size, (uint32_t)rs);
  return 0;
}

/* ---- set ---- */

static int cmd_set(int argc, char **argv) {
  static const char *const allowed[] = {"state", "device", NULL};
  args_t a;
  parse_args(argc, argv, &a, allowed);
  if (!a.npos) die(2, "set: nothing to set (key=value: temperature power sm_clock mem_clock compute_mode)");
  fg_state_t *st = open_state(&a, "set");
  int dev = device_arg(&a, st, "set", 1);
  fg_gpu_t *g = &st->gpus[dev];
  /* validate everything before changing anything */
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < a.npos; i++) {
      char kv[256];
      snprintf(kv, sizeof kv, "%s", a.pos[i]);
      char *eq = strchr(kv, '=');
      if (!eq) die(2, "set: expected key=value, got '%s'", a.pos[i]);
      *eq = 0;
      const char *k = kv, *v = eq + 1;
      int is_auto = !strcmp(v, "auto");
      unsigned long long x = 0;
      uint32_t bit = 0, *slot = NULL;
      if (!strcmp(k, "temperature")) bit = FG_PIN_TEMP, slot = &g->pin_temp, x = is_auto ? 0 : num(v, k, 200);
      else if (!strcmp(k, "power")) bit = FG_PIN_POWER, slot = &g->pin_power_mw, x = is_auto ? 0 : num(v, k, 10000000);
      else if (!strcmp(k, "sm_clock")) bit = FG_PIN_SM_CLOCK, slot = &g->pin_sm_clock, x = is_auto ? 0 : num(v, k, 10000);
      else if (!strcmp(k, "mem_clock")) bit = FG_PIN_MEM_CLOCK, slot = &g->pin_mem_clock, x = is_auto ? 0 : num(v, k, 40000);
      else if (!strcmp(k, "compute_mode")) x = is_auto ? 0 : num(v, k, 3);
      else die(2, "set: unknown key '%s' (temperature power sm_clock mem_clock compute_mode)", k);
      if (pass == 0) continue;
      if (!bit) {
        FG_STORE(&g->compute_mode, (uint32_t)x);
      } else if (is_auto) {
        __atomic_and_fetch(&g->pin_mask, ~bit, __ATOMIC_ACQ_REL);
      } else {
        FG_STORE(slot, (uint32_t)x);
        __atomic_or_fetch(&g->pin_mask, bit, __ATOMIC_ACQ_REL);
      }
    }
  }
  return 0;
}

/* ---- attach ---- */

static int cmd_attach(int argc, char **argv) {
  static const char *const allowed[] = {"state", "device", "pid", "mem", "type", "mig", NULL};
  args_t a;
  parse_args(argc, argv, &a, allowed);
  if (a.npos) die(2, "attach: unexpected argument '%s'", a.pos[0]);
  unsigned long long pid = num(need(&a, "pid", "attach"), "--pid", 0x7fffffff);
  unsigned long long mem = size_arg(need(&a, "mem", "attach"), "--mem");
  const char *type = opt(&a, "type");
  unsigned t = FG_TYPE_COMPUTE;
  if (type) {
    if (!strcmp(type, "compute")) t = FG_TYPE_COMPUTE;
    else if (!strcmp(type, "graphics")) t = FG_TYPE_GRAPHICS;
    else if (!strcmp(type, "mps")) t = FG_TYPE_MPS;
    else die(2, "attach: bad --type '%s' (compute, graphics or mps)", type);
  }
  fg_state_t *st = open_state(&a, "attach");
  int dev = device_arg(&a, st, "attach", 1);
  int mig = mig_arg(&a, st, dev, "attach");
  if (st->gpus[dev].mig_current && mig < 0) die(2, "attach: device %d is in MIG mode: pass --mig GI", dev);
  uint64_t start;
  char pstate = 0;
  if (pid == 0 || fg_proc_start_time((pid_t)pid, &start, &pstate) != 0 || pstate == 'Z')
    die(2, "attach: no live process %llu", pid);
  fg_reap(st, 1);
  fg_lock(st);
  if (mem > fg_engine_capacity_free(st, dev, mig)) {
    fg_unlock(st);
    die(1, "attach: out of memory on device %d (%llu bytes requested)", dev, mem);
  }
  int slot = -1;
  for (int i = 0; i < FG_MAX_PROCS && slot < 0; i++) {
    fg_proc_t *p = &st->procs[i];
    if (p->state == FG_PROC_USED && p->kind == FG_KIND_ATTACHED && p->pid == (int32_t)pid && p->gpu == dev &&
        p->mig == mig)
      slot = i;
  }
  for (int i = 0; i < FG_MAX_PROCS && slot < 0; i++)
    if (st->procs[i].state == FG_PROC_FREE) {
      fg_proc_t *p = &st->procs[i];
      p->kind = FG_KIND_ATTACHED;
      p->pid = (int32_t)pid;
      p->gpu = dev;
      p->mig = mig;
      p->type = t;
      p->start_time = start;
      p->used_mem = 0;
      FG_STORE(&p->state, FG_PROC_USED);
      if ((uint32_t)i >= st->proc_hwm) FG_STORE(&st->proc_hwm, (uint32_t)i + 1);
      slot = i;
    }
  if (slot < 0) {
    fg_unlock(st);
    die(1, "attach: process table full (%d slots)", FG_MAX_PROCS);
  }
  st->procs[slot].used_mem += mem;
  FG_ADD(&st->gpus[dev].proc_used, mem);
  if (mig >= 0) FG_ADD(&st->gpus[dev].mig[mig].proc_used, mem);
  fg_unlock(st);
  return 0;
}

/* ---- execlog ---- */

static int by_start(const void *x, const void *y) {
  const fg_exec_rec_t *a = x, *b = y;
  return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns ? 1 : 0;
}

static int cmd_execlog(int argc, char **argv) {
  static const char *const allowed[] = {"state", "device", "mig", "since-ns", NULL};
  args_t a;
  parse_args(argc, argv, &a, allowed);
  if (a.npos) die(2, "execlog: unexpected argument '%s'", a.pos[0]);
  unsigned long long since = opt(&a, "since-ns") ? num(opt(&a, "since-ns"), "--since-ns", ~0ull) : 0;
  fg_state_t *st = open_state(&a, "execlog");
  int dev = device_arg(&a, st, "execlog", 1);
  int mig = mig_arg(&a, st, dev, "execlog");
  int engine = mig >= 0 ? mig + 1 : (st->gpus[dev].mig_current ? -1 : 0);
  const fg_ring_t *r = &st->rings[dev];
  uint64_t head = FG_LOAD(&r->head);
  uint64_t lo = head > FG_RING_SIZE ? head - FG_RING_SIZE : 0;
  fg_exec_rec_t *out = malloc((size_t)(head - lo + 1) * sizeof *out);
  size_t n = 0;
  for (uint64_t i = lo; i < head; i++) {
    const fg_exec_rec_t *s = &r->recs[i % FG_RING_SIZE];
    if (FG_LOAD(&s->seq) != i + 1) continue;
    fg_exec_rec_t rec = *s;
    if (FG_LOAD(&s->seq) != i + 1) continue;
    if (engine >= 0 && rec.engine != engine) continue;
    if (rec.end_ns <= since) continue;
    out[n++] = rec;
  }
  qsort(out, n, sizeof *out, by_start);
  for (size_t i = 0; i < n; i++)
    printf("{\"pid\":%d,\"enqueueNs\":%llu,\"startNs\":%llu,\"endNs\":%llu}\n", out[i].pid,
           (unsigned long long)out[i].enqueue_ns, (unsigned long long)out[i].start_ns,
           (unsigned long long)out[i].end_ns);
  free(out);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(USAGE, stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "init")) return cmd_init(argc, argv);
  if (!strcmp(cmd, "dump")) return cmd_dump(argc, argv);
  if (!strcmp(cmd, "fault")) return cmd_fault(argc, argv);
  if (!strcmp(cmd, "set")) return cmd_set(argc, argv);
  if (!strcmp(cmd, "attach")) return cmd_attach(argc, argv);
  if (!strcmp(cmd, "execlog")) return cmd_execlog(argc, argv);
  if (!strcmp(cmd, "mig")) return fakegpu_cmd_mig(argc, argv);
  if (!strcmp(cmd, "mps")) return fakegpu_cmd_mps(argc, argv);
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    fputs(USAGE, stdout);
    return 0;
  }
  fprintf(stderr, "fakegpu: unknown command '%s'\n%s", cmd, USAGE);
  return 2;
}
