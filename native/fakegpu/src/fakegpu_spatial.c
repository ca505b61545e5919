/* fakegpu mig / fakegpu mps: what `nvidia-smi mig` and `nvidia-cuda-mps-control`
 * do to a real driver, done to a state file. Bad arguments exit 2, refusals
 * (busy instance, no room, another user's MPS daemon) exit 1; one line on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg_scenario.h"
#include "fg_state.h"

int fakegpu_cmd_mig(int argc, char **argv);
int fakegpu_cmd_mps(int argc, char **argv);

/* fakegpu.c: print "fakegpu: …" and exit with code */
void die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

typedef struct {
  const char *state, *device, *user, *uid, *pid, *pipe_dir, *gi;
  const char *pos[8];
  int npos;
} sargs_t;

static void parse(int argc, char **argv, sargs_t *a) {
  memset(a, 0, sizeof *a);
  for (int i = 2; i < argc; i++) {
    const char **slot = NULL;
    if (!strcmp(argv[i], "--state")) slot = &a->state;
    else if (!strcmp(argv[i], "--device")) slot = &a->device;
    else if (!strcmp(argv[i], "--user")) slot = &a->user;
    else if (!strcmp(argv[i], "--uid")) slot = &a->uid;
    else if (!strcmp(argv[i], "--pid")) slot = &a->pid;
    else if (!strcmp(argv[i], "--pipe-dir")) slot = &a->pipe_dir;
    else if (!strcmp(argv[i], "--gi")) slot = &a->gi;
    else if (!strncmp(argv[i], "--", 2)) die(2, "%s: unknown option %s", argv[1], argv[i]);
    if (slot) {
      if (i + 1 >= argc) die(2, "%s: option %s needs a value", argv[1], argv[i]);
      *slot = argv[++i];
    } else {
      if (a->npos == 8) die(2, "%s: too many arguments", argv[1]);
      a->pos[a->npos++] = argv[i];
    }
  }
}

static unsigned long long number(const char *s, const char *what, unsigned long long max) {
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-') die(2, "bad %s '%s'", what, s ? s : "");
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v > max) die(2, "bad %s '%s'", what, s);
  return v;
}

static fg_state_t *open_state(const sargs_t *a, const char *cmd) {
  const char *path = a->state ? a->state : fg_state_path();
  if (!path) die(2, "%s: missing --state (or GPUSHARE_FAKEGPU_STATE)", cmd);
  char err[512];
  fg_state_t *st = fg_state_map(path, err, sizeof err);
  if (!st) die(2, "%s: %s", cmd, err);
  return st;
}

static int device(const sargs_t *a, const fg_state_t *st, const char *cmd) {
  if (!a->device) die(2, "%s: missing --device", cmd);
  unsigned long long d = number(a->device, "--device", 1000);
  if (d >= st->gpu_count) die(2, "%s: --device %llu out of range (%u gpus)", cmd, d, st->gpu_count);
  return (int)d;
}

/* ---- mig ---- */

static const char *MIG_USAGE =
    "fakegpu mig --device N (list | create-gi PROFILE[:START] [-C] | destroy-gi GI | create-ci GI | "
    "destroy-ci GI CI | mode on|off)";

static int find_gi(const fg_gpu_t *g, unsigned gi) {
  for (uint32_t m = 0; m < g->mig_count; m++)
    if (g->mig[m].present != FG_MIG_FREE && g->mig[m].gi == gi) return (int)m;
  return -1;
}

/* The first live process in slot m of GPU dev (any slot when m < 0), or -1. */
static int first_process(const fg_state_t *st, int dev, int m) {
  for (uint32_t i = 0; i < st->proc_hwm && i < FG_MAX_PROCS; i++) {
    const fg_proc_t *p = &st->procs[i];
    if (p->state == FG_PROC_USED && p->gpu == dev && (m < 0 || p->mig == m)) return (int)i;
  }
  return -1;
}

static void refuse_busy(fg_state_t *st, int dev, int m, const char *what) {
  int busy = first_process(st, dev, m);
  if (busy < 0) return;
  int pid = st->procs[busy].pid;
  fg_unlock(st);
  die(1, "%s: in use by pid %d (device %d)", what, pid, dev);
}

/* A running MPS daemon holds its slice (slot m; any slot when m < 0) as a real MPS server holds its MIG device. */
static void refuse_mps(fg_state_t *st, int dev, int m, const char *what) {
  const fg_gpu_t *g = &st->gpus[dev];
  for (int i = 0; i < FG_MAX_MIG; i++) {
    if ((m >= 0 && i != m) || !g->mig_mps[i].running) continue;
    char user[32];
    snprintf(user, sizeof user, "%s", g->mig_mps[i].user);
    fg_unlock(st);
    die(1, "%s: its MPS daemon runs (user %s; stop it first: fakegpu mps --device %d --gi %u stop)", what, user, dev, g->mig[i].gi);
  }
}

static void changed(fg_gpu_t *g) { FG_ADD(&g->mig_generation, 1u); }

static void mig_list(const fg_gpu_t *g) {
  printf("{\"migMode\":%u,\"generation\":%u,\"instances\":[", g->mig_current, FG_LOAD(&g->mig_generation));
  int first = 1;
  for (uint32_t m = 0; g->mig_current && m < g->mig_count; m++) {
    const fg_mig_t *mi = &g->mig[m];
    if (mi->present == FG_MIG_FREE) continue;
    printf("%s{\"slot\":%u,\"gpuInstanceId\":%u,\"profileId\":%u,\"profileName\":\"%s\",\"placement\":{\"start\":%u,"
           "\"size\":%u},\"computeInstanceIds\":[",
           first ? "" : ",", m, mi->gi, mi->profile_id, mi->profile, mi->placement_start, mi->placement_size);
    if (mi->present == FG_MIG_GI_CI) printf("%u", mi->ci);
    printf("],\"uuid\":\"%s\"}", mi->present == FG_MIG_GI_CI ? mi->uuid : "");
    first = 0;
  }
  printf("],\"profiles\":[");
  fg_profile_t p;
  for (int i = 0; fg_profile_at(g, i, &p); i++)
    printf("%s{\"name\":\"%s\",\"id\":%u,\"memoryMiB\":%u,\"smCount\":%u,\"maxInstances\":%u}", i ? "," : "", p.name,
           p.id, p.mem_mib, p.sm, p.max_instances);
  printf("]}\n");
}

/* "9:4", "3g.40gb:4" or "9" (the highest free start). */
static void create_gi(fg_state_t *st, int dev, const char *spec, int with_ci) {
  fg_gpu_t *g = &st->gpus[dev];
  char name[32];
  snprintf(name, sizeof name, "%s", spec);
  char *colon = strchr(name, ':');
  long start = -1;
  if (colon) {
    *colon = 0;
    start = (long)number(colon + 1, "placement start", 7);
  }
  fg_profile_t p;
  int found = 0;
  if (name[0] >= '0' && name[0] <= '9' && !strchr(name, 'g')) found = fg_profile_by_gi_id(g, (unsigned)number(name, "profile id", 1000), &p);
  for (int i = 0; !found && fg_profile_at(g, i, &p); i++) found = !strcmp(p.name, name);
  if (!found) die(1, "create-gi: no GPU instance profile '%s' on %s (device %d)", name, g->name, dev);
  fg_lock(st);
  if (!g->mig_current) {
    fg_unlock(st);
    die(1, "create-gi: MIG mode is off on device %d", dev);
  }
  unsigned used = 0, count = 0, compute = 0;
  int free_slot = -1;
  for (uint32_t m = 0; m < FG_MAX_MIG; m++) {
    const fg_mig_t *mi = &g->mig[m];
    if (m >= g->mig_count || mi->present == FG_MIG_FREE) {
      if (free_slot < 0) free_slot = (int)m;
      continue;
    }
    used |= ((1u << mi->placement_size) - 1) << mi->placement_start;
    compute += mi->slices;
    count += mi->profile_id == p.id;
  }
  const char *why = NULL;
  if (count >= p.max_instances) why = "the profile's instance limit is reached";
  else if (compute + p.slices > 7) why = "not enough free compute slices";
  else if (free_slot < 0) why = "7 instances exist";
  if (!why && start < 0) { /* no placement given: the highest free one, as the driver picks */
    for (long s = 7; s >= 0 && start < 0; s--)
      if (fg_mig_start_allowed(&p, (unsigned)s) && s + p.mem_slices <= 8 &&
          !(used & (((1u << p.mem_slices) - 1) << s)))
        start = s;
    if (start < 0) why = "no free placement";
  } else if (!why && !fg_mig_start_allowed(&p, (unsigned)start)) {
    why = "the placement is not allowed for this profile";
  } else if (!why && (used & (((1u << p.mem_slices) - 1) << start))) {
    why = "its memory slices are taken";
  }
  if (why) {
    fg_unlock(st);
    die(1, "create-gi: cannot create %s at %ld on device %d: %s", p.name, start, dev, why);
  }
  unsigned gi = 1;
  while (find_gi(g, gi) >= 0) gi++;
  fg_mig_t *mi = &g->mig[free_slot];
  memset(mi, 0, sizeof *mi);
  memset(&g->engines[free_slot + 1], 0, sizeof g->engines[0]);
  memset(&g->mig_mps[free_slot], 0, sizeof g->mig_mps[0]);
  mi->gi = gi;
  mi->ci = 0;
  unsigned gen = FG_LOAD(&g->mig_generation) + 1;
  fg_mig_fill(g, mi, &p, (unsigned)start, gen);
  if ((uint32_t)free_slot >= g->mig_count) g->mig_count = (uint32_t)free_slot + 1;
  FG_STORE(&mi->present, with_ci ? (uint32_t)FG_MIG_GI_CI : (uint32_t)FG_MIG_GI_ONLY);
  changed(g);
  fg_unlock(st);
  printf("{\"gpuInstanceId\":%u,\"profileId\":%u,\"placement\":{\"start\":%ld,\"size\":%u}%s%s%s}\n", gi, p.id, start,
         p.mem_slices, with_ci ? ",\"computeInstanceId\":0,\"uuid\":\"" : "", with_ci ? mi->uuid : "", with_ci ? "\"" : "");
}

int fakegpu_cmd_mig(int argc, char **argv) {
  sargs_t a;
  parse(argc, argv, &a);
  if (a.npos == 0) die(2, "mig: nothing to do; %s", MIG_USAGE);
  const char *op = a.pos[0];
  int with_ci = 0;
  for (int i = 1; i < a.npos; i++)
    if (!strcmp(a.pos[i], "-C")) with_ci = 1, memmove(&a.pos[i], &a.pos[i + 1], (size_t)(--a.npos - i) * sizeof a.pos[0]);
  fg_state_t *st = open_state(&a, "mig");
  int dev = device(&a, st, "mig");
  fg_gpu_t *g = &st->gpus[dev];
  if (g->mig_capable != FG_MIG_CAPABLE) die(1, "mig: device %d (%s) does not support MIG", dev, g->name);
  if (!strcmp(op, "list")) {
    mig_list(g);
    return 0;
  }
  if (!strcmp(op, "create-gi")) {
    if (a.npos != 2) die(2, "mig create-gi PROFILE:START [-C]");
    create_gi(st, dev, a.pos[1], with_ci);
    return 0;
  }
  if (!strcmp(op, "mode")) {
    if (a.npos != 2 || (strcmp(a.pos[1], "on") && strcmp(a.pos[1], "off"))) die(2, "mig mode on|off");
    fg_reap(st, 1);
    fg_lock(st);
    refuse_busy(st, dev, -1, "mig mode: the GPU");
    refuse_mps(st, dev, -1, "mig mode: a GPU instance");
    uint32_t on = !strcmp(a.pos[1], "on");
    if (!on)
      for (uint32_t m = 0; m < FG_MAX_MIG; m++) FG_STORE(&g->mig[m].present, (uint32_t)FG_MIG_FREE);
    if (!on) g->mig_count = 0;
    g->mig_current = g->mig_pending = on;
    changed(g);
    fg_unlock(st);
    return 0;
  }
  if (a.npos < 2) die(2, "mig %s GI%s", op, !strcmp(op, "destroy-ci") ? " CI" : "");
  unsigned gi = (unsigned)number(a.pos[1], "GPU instance id", 1000);
  fg_reap(st, 1);
  fg_lock(st);
  int m = find_gi(g, gi);
  if (m < 0 || !g->mig_current) {
    fg_unlock(st);
    die(1, "mig %s: device %d has no GPU instance %u", op, dev, gi);
  }
  fg_mig_t *mi = &g->mig[m];
  char what[96];
  snprintf(what, sizeof what, "GPU instance %u (%s)", gi, mi->profile);
  if (!strcmp(op, "destroy-gi") && a.npos == 2) {
    if (mi->present == FG_MIG_GI_CI) {
      fg_unlock(st);
      die(1, "destroy-gi: %s still has compute instance %u (destroy it first)", what, mi->ci);
    }
    refuse_busy(st, dev, m, what);
    refuse_mps(st, dev, m, what);
    FG_STORE(&mi->present, (uint32_t)FG_MIG_FREE);
  } else if (!strcmp(op, "create-ci") && a.npos == 2) {
    if (mi->present == FG_MIG_GI_CI) {
      fg_unlock(st);
      die(1, "create-ci: %s already has its compute instance (one per GPU instance is simulated)", what);
    }
    fg_profile_t p;
    fg_profile_by_gi_id(g, mi->profile_id, &p);
    mi->ci = 0;
    fg_mig_fill(g, mi, &p, mi->placement_start, FG_LOAD(&g->mig_generation) + 1);
    FG_STORE(&mi->present, (uint32_t)FG_MIG_GI_CI);
  } else if (!strcmp(op, "destroy-ci") && a.npos == 3) {
    unsigned ci = (unsigned)number(a.pos[2], "compute instance id", 1000);
    if (mi->present != FG_MIG_GI_CI || mi->ci != ci) {
      fg_unlock(st);
      die(1, "destroy-ci: %s has no compute instance %u", what, ci);
    }
    refuse_busy(st, dev, m, what);
    refuse_mps(st, dev, m, what);
    FG_STORE(&mi->present, (uint32_t)FG_MIG_GI_ONLY);
  } else {
    fg_unlock(st);
    die(2, "mig: bad command; %s", MIG_USAGE);
  }
  changed(g);
  fg_unlock(st);
  return 0;
}

/* ---- mps ---- */

/* The clients of one daemon (engine 0: the whole GPU's, 1 + m: MIG slot m's), as a JSON array. */
static void mps_clients(const fg_gpu_t *g, uint32_t engine) {
  printf("[");
  int first = 1;
  for (int i = 0; i < FG_MAX_MPS_CLIENTS; i++) {
    const fg_mps_client_t *c = &g->mps_clients[i];
    if (!c->pid || c->engine != engine) continue;
    printf("%s{\"pid\":%d,\"share\":%u,\"priority\":%u,\"active\":%s}", first ? "" : ",", c->pid, c->share, c->priority, c->active ? "true" : "false");
    first = 0;
  }
  printf("]");
}

static void mps_status(const fg_state_t *st) {
  printf("[");
  for (uint32_t d = 0; d < st->gpu_count; d++) {
    const fg_gpu_t *g = &st->gpus[d];
    printf("%s{\"device\":%u,\"running\":%s,\"user\":\"%s\",\"uid\":%u,\"pid\":%d,\"pipeDir\":\"%s\",\"clients\":", d ? "," : "",
           d, g->mps_running ? "true" : "false", g->mps_running ? g->mps_user : "", g->mps_uid, g->mps_pid,
           g->mps_running ? g->mps_pipe_dir : "");
    mps_clients(g, 0);
    printf(",\"instances\":[");
    int first = 1;
    for (uint32_t m = 0; g->mig_current && m < g->mig_count && m < FG_MAX_MIG; m++) {
      if (g->mig[m].present == FG_MIG_FREE) continue;
      const fg_mps_daemon_t *md = &g->mig_mps[m];
      printf("%s{\"gpuInstanceId\":%u,\"uuid\":\"%s\",\"running\":%s,\"user\":\"%s\",\"uid\":%u,\"pid\":%d,\"pipeDir\":\"%s\",\"clients\":",
             first ? "" : ",", g->mig[m].gi, g->mig[m].present == FG_MIG_GI_CI ? g->mig[m].uuid : "", md->running ? "true" : "false",
             md->running ? md->user : "", md->uid, md->pid, md->running ? md->pipe_dir : "");
      mps_clients(g, m + 1);
      printf("}");
      first = 0;
    }
    printf("]}");
  }
  printf("]\n");
}

/* One simulated daemon: the whole GPU's (fields of fg_gpu_t) or a MIG instance's (mig_mps[m]). */
typedef struct {
  uint32_t *running, *uid;
  int32_t *pid;
  char *user, *pipe_dir;
  size_t user_size, pipe_size;
  int mig; /* slot, -1: the whole GPU */
  char what[64];
} daemon_ref_t;

static daemon_ref_t daemon_of(fg_state_t *st, int dev, const sargs_t *a) {
  fg_gpu_t *g = &st->gpus[dev];
  daemon_ref_t r;
  if (!a->gi) {
    r = (daemon_ref_t){&g->mps_running, &g->mps_uid, &g->mps_pid, g->mps_user, g->mps_pipe_dir, sizeof g->mps_user, sizeof g->mps_pipe_dir, -1, ""};
    snprintf(r.what, sizeof r.what, "device %d", dev);
    return r;
  }
  unsigned gi = (unsigned)number(a->gi, "--gi", 1000);
  if (!g->mig_current) die(1, "mps: device %d is not in MIG mode", dev);
  int m = find_gi(g, gi);
  if (m < 0 || g->mig[m].present != FG_MIG_GI_CI) die(1, "mps: device %d has no GPU instance %u with a compute instance", dev, gi);
  fg_mps_daemon_t *md = &g->mig_mps[m];
  r = (daemon_ref_t){&md->running, &md->uid, &md->pid, md->user, md->pipe_dir, sizeof md->user, sizeof md->pipe_dir, m, ""};
  snprintf(r.what, sizeof r.what, "GPU instance %u of device %d", gi, dev);
  return r;
}

int fakegpu_cmd_mps(int argc, char **argv) {
  sargs_t a;
  parse(argc, argv, &a);
  if (a.npos == 0) die(2, "mps: nothing to do (start, stop, status, terminate-client PID)");
  const char *op = a.pos[0];
  fg_state_t *st = open_state(&a, "mps");
  if (!strcmp(op, "status")) {
    mps_status(st);
    return 0;
  }
  int dev = device(&a, st, "mps");
  fg_gpu_t *g = &st->gpus[dev];
  daemon_ref_t dm = daemon_of(st, dev, &a);
  if (!strcmp(op, "start") && a.npos == 1) {
    unsigned uid = a.uid ? (unsigned)number(a.uid, "--uid", 0x7fffffff) : (unsigned)getuid();
    const char *user = a.user;
    if (!user) {
      struct passwd *pw = getpwuid(uid);
      user = pw ? pw->pw_name : "unknown";
    }
    const char *pipe = a.pipe_dir ? a.pipe_dir : "/tmp/nvidia-mps";
    if (strlen(user) >= dm.user_size || strlen(pipe) >= dm.pipe_size) die(2, "mps start: --user or --pipe-dir too long");
    fg_lock(st);
    if (*dm.running && strcmp(dm.user, user)) {
      char held[32];
      snprintf(held, sizeof held, "%s", dm.user);
      fg_unlock(st);
      if (dm.mig < 0) die(1, "mps start: device %d already has an MPS daemon of user %s", dev, held);
      die(1, "mps start: GPU instance %u already has an MPS daemon of user %s", g->mig[dm.mig].gi, held);
    }
    snprintf(dm.user, dm.user_size, "%s", user);
    snprintf(dm.pipe_dir, dm.pipe_size, "%s", pipe);
    *dm.uid = uid;
    *dm.pid = a.pid ? (int32_t)number(a.pid, "--pid", 0x7fffffff) : 0;
    if (!g->mps_running && !FG_LOAD(dm.running))
      for (int i = 0; i < FG_MAX_MPS_TERMINATED; i++) FG_STORE(&g->mps_terminated[i], 0);
    FG_STORE(dm.running, 1u);
    fg_unlock(st);
    return 0;
  }
  if (!strcmp(op, "stop") && a.npos == 1) {
    fg_lock(st);
    FG_STORE(dm.running, 0u);
    fg_unlock(st);
    return 0;
  }
  if (!strcmp(op, "terminate-client") && a.npos == 2) {
    int32_t pid = (int32_t)number(a.pos[1], "client pid", 0x7fffffff);
    uint32_t engine = (uint32_t)(dm.mig + 1);
    fg_lock(st);
    int known = 0;
    for (int i = 0; i < FG_MAX_MPS_CLIENTS; i++) known |= g->mps_clients[i].pid == pid && g->mps_clients[i].engine == engine;
    for (uint32_t i = 0; i < st->proc_hwm && i < FG_MAX_PROCS; i++)
      known |= st->procs[i].state == FG_PROC_USED && st->procs[i].pid == pid && st->procs[i].gpu == dev &&
               st->procs[i].mig == dm.mig && st->procs[i].type == FG_TYPE_MPS;
    if (!*dm.running || !known) {
      fg_unlock(st);
      die(1, "mps terminate-client: pid %d is not an MPS client on %s", (int)pid, dm.what);
    }
    uint32_t at = g->mps_terminated_next++ % FG_MAX_MPS_TERMINATED;
    FG_STORE(&g->mps_terminated[at], pid);
    fg_unlock(st);
    return 0;
  }
  die(2, "mps: bad command ([--gi GI] start [--user NAME] [--uid U] [--pid P] [--pipe-dir DIR], stop, status, terminate-client PID)");
  return 2;
}
