/* The launch gate: a directory of small files through which the engine sets
 * every managed job's priority, pause and memory quota, and each job announces
 * its own activity. Fixed layouts, little-endian, every field 4- or 8-byte
 * aligned; mirrored in electron/engine/gate/launch-gate-layout.ts (checked
 * by a test).
 *
 * ---- Files and who may write them -------------------------------------
 * The gate directory (GPUSHARE_GATE) belongs to the engine's user: mode 0755
 * when jobs of other users share it (the box daemon, root), 0700 for a
 * personal engine. Nobody else can create, rename or remove anything in it.
 *
 *   control   the header, the domain table and every slot's engine half
 *             (gate_slot_t). Written by the engine only (pwrite), mode 0644,
 *             the engine's. Jobs open it O_RDONLY and map it PROT_READ: a job
 *             cannot raise its priority, unpause itself, lift its quota or join
 *             another domain.
 *   slot-N    slot N's activity (gate_activity_t, one page): the job half. The
 *             engine creates a fresh file (a new inode) for every allocation,
 *             owned by the job's user (chown when the engine is root and the
 *             job another user's), mode 0644, renamed over the last one: a
 *             process of an earlier job that still maps the old inode writes
 *             only there. Its inode number is in the slot's engine half, so a
 *             job knows the file it opened is the current one. A job maps its
 *             own read-write; other slots' read-only, on demand (a slot that
 *             becomes a member of its domain); the engine reads them all.
 *
 * A job can write only its own activity: what it says there is its claim,
 * trusted by nobody else beyond what the protocol bounds:
 *   - mid-launch for ever (in_launch != 0): a higher job waits at step 3 for
 *     a lower slot at most HOLD_MAX (1 s) in all per slot generation and
 *     process; then it stops waiting for that slot (until the slot's
 *     generation changes) and names it in its own stuck_gen[]. The engine
 *     checks such a report (same domain, the named slot lower and of that
 *     generation) and sets the slot's bit in its domain's `stuck` mask: no
 *     higher job waits for its launches any more. The slot stays a member:
 *     lower jobs still yield to it, and it still yields to higher jobs (its
 *     own step 2); all it loses is the handshake (a kernel of it may follow a
 *     higher kernel it raced with).
 *   - active for ever (last_launch_ns, launches != synced, in_launch): holds
 *     back only lower jobs, as launching would, and only while the driver
 *     confirms it: the engine reads each job's SM use and memory from the
 *     driver and marks `unconfirmed` (in the slot's engine half) a job whose
 *     claimed activity the driver has not confirmed within a short bound (the
 *     rule: electron/engine/scheduler/activity-claims.ts). An unconfirmed slot
 *     is ACTIVE to nobody (step 2, the fit rule) and nobody waits for it at
 *     step 3; it still yields to higher jobs itself. The mark goes when the
 *     driver shows the job computing or growing its memory.
 *   - truncating its own file (it owns it): every other job that maps it
 *     would die of SIGBUS at its next read. The preload library guards its
 *     activity mappings: a SIGBUS inside them replaces the faulting page with
 *     zeros (a private anonymous page, MAP_FIXED) and the slot reads as idle
 *     for the rest of its generation; any other SIGBUS goes to the handler
 *     that was there before (or the default action). A program that installs
 *     its own SIGBUS handler after the gate attached loses that guard.
 *   - its own used_bytes: the job can lift its OWN hard quota, as any program
 *     can bypass LD_PRELOAD by calling the driver directly. The engine still
 *     sees NVML's per-process memory and raises a quota alert (it does not
 *     stop a gated job for it).
 *   - chmod of its own file: other jobs may then fail to map it and treat
 *     the slot as idle (a higher job hides only itself; a lower job gains at
 *     most the handshake, as a stuck one does).
 *   - its process table (pids), counters: informative to the engine, acted
 *     on only for its own slot (reclaim of its own dead processes).
 *
 * Gate domains: a whole GPU, or one MIG slice of it, is one domain (slices are
 * isolated engines: a job in one never waits for a job in another). A job on
 * several GPUs has one slot that counts in the domain of each: `domain` is its
 * first GPU's, its others are bits in its gate_slot_domains_t; "J's domain"
 * below then means all of them together (a higher job active on any of its GPUs
 * holds the whole job back, and it waits at step 3 for lower members of each). The engine
 * numbers the domains and writes each slot's; a slot is a MEMBER of its domain
 * (a bit in gate_domain_t.members) while the engine counts it there: it takes a
 * stopped, parked or checkpoint-locked job out, so a job frozen inside a launch
 * call never stalls a higher one.
 *
 * A job is all the processes that share its slot (children inherit the slot
 * through the environment; an exec'd child maps the files again by path).
 * Each process claims an entry in the slot's process table (CAS of its pid on
 * 0) and keeps its own in_launch, launches, synced launches and used bytes
 * there, besides adding to the slot's sums. A process whose pid is gone
 * (SIGKILL: no destructor ran) is reclaimed by a sibling: its bytes leave
 * used_bytes, its launches count as synced, its in_launch leaves the sum. A
 * process that exits cleanly does the same for itself only.
 *
 * Memory quota: per job. Every counted allocation first reserves its bytes by
 * compare-and-swap on the activity's used_bytes against quota_bytes; a refusal
 * increments oom_count.
 *
 * ---- The protocol ------------------------------------------------------
 * Priorities: 0 high, 1 normal, 2 best-effort. In domain d, job J is "lower"
 * than K when J.priority > K.priority. Only members count.
 *
 * A slot S is ACTIVE at time now (CLOCK_MONOTONIC ns) when it is in use, not
 * marked unconfirmed by the engine, and
 *   S.in_launch != 0                                   (mid-launch), or
 *   now - S.last_launch_ns < header.active_window_ns   (launched recently), or
 *   S.launches != S.synced_launches and
 *   now - S.last_launch_ns < header.outstanding_max_ns (work outstanding:
 *     launched work not yet seen complete by a synchronize that returned;
 *     both are sums over the job's processes, and a process's synchronize
 *     covers only its own launches).
 * With header.window_policy == GATE_WINDOW_LEARNED the second rule reads
 *   now - max(S.last_launch_ns, S.idle_since_ns) < W, W = S.hold_ns when the
 *   job has learned one (at most active_window_ns), else active_window_ns:
 *   each job learns, from the gaps between finding its work complete and its
 *   next launch, how long its gaps inside a request last (the lowest cluster of
 *   gap lengths) and holds lower jobs back only that long after going idle,
 *   instead of a fixed window after every launch. A job that claims a long
 *   hold_ns gains nothing it could not claim through last_launch_ns.
 * With GATE_WINDOW_LEARNED a lower job that knows its own kernel duration
 * (kernel_ns, learned from its short synchronisations) also treats a higher
 * member H that is not ACTIVE as a blocker while its kernel would likely not
 * finish before H's next launch: H publishes its idle gaps by octave
 * (gap_hist, bucket b = [2^(b+10), 2^(b+11)) ns, taken as spread evenly inside
 * it); with a = now - max(H.last_launch_ns, H.idle_since_ns) and N(x) the gaps
 * longer than x, the launch waits when N(a) > 2 * N(a + kernel_ns), i.e. more
 * than half the gaps that lasted a end within the kernel's run. A gap longer
 * than any H has shown binds nobody. A job that fills its gap_hist with short
 * gaps holds lower jobs back as a claimed last_launch_ns would, no more.
 *
 * Every gated launch of job J does (priority, domain and pause are read again
 * at every iteration):
 *   1. atomic ++in_launch (sequentially consistent: a full fence);
 *   2. if J is paused, or some higher member of J's domain is ACTIVE:
 *        --in_launch, wait (nanosleep; with GATE_WINDOW_LEARNED, a wait for a higher job's
 *        launched work sleeps on the low half of its idle_since_ns as a futex, which that job wakes
 *        when a synchronise finds its work complete), go to 1;
 *   3. wait until every lower member of J's domain that is not `stuck` (nor
 *      given up by this process) has in_launch == 0;
 *   4. call the driver's launch (the kernel is enqueued);
 *   5. last_launch_ns = now; ++launches; --in_launch.
 * Steps 1-3 are Dekker's handshake: of a lower job L and a higher job H that
 * both reach step 1, either L sees H's in_launch (and backs off), or H sees
 * L's (and waits until L's enqueue is done). So no lower kernel is ever
 * enqueued after a higher kernel was enqueued and while the higher job stays
 * ACTIVE (its window and outstanding-work rule cover the kernel's run).
 * The fast path (alone in its domain, or no higher slot active) is four atomic
 * RMWs, a few loads and one vDSO clock read: no system call.
 *
 * MPS clients are gated as jobs in their own contexts are, whatever their CUDA_MPS_CLIENT_PRIORITY: on an
 * H200, a best-effort client at priority 1 beside an ungated high client made the high one's p99 713x its
 * own (bench/device/README.md). Engines from d15dbcb to 2026-11-28 wrote a slot's MPS daemon and client
 * priority at bytes 52..59, and their libraries let a lower client of that daemon skip steps 2 and 3; the
 * engine writes zeros there now, so such a library in a job it adopts is gated too.
 *
 * Best-effort jobs (and normal jobs while a high job is in their domain)
 * synchronise every header.be_sync_window_ns of queued work, so little of
 * their work is queued when a higher job arrives.
 *
 * Stream capture: while any stream of a process is capturing, its launches
 * (recorded into a graph, not run) pass without a gate wait and without the
 * short synchronisations (a synchronise during capture invalidates it); the
 * graph's launch (cuGraphLaunch) is gated as one launch.
 *
 * Fail open: a job stops obeying pause and gating while the engine is gone:
 * state != GATE_ENGINE_RUNNING, heartbeat older than engine_gone_ns, or
 * engine_pid no longer exists (checked only on the slow path). A slot whose
 * generation differs from the job's GPUSHARE_GATE_GEN is not the job's any
 * more: the job detaches (no gating, quota from its environment). */
#ifndef GPUSHARE_GATE_ABI_H
#define GPUSHARE_GATE_ABI_H

#include <stdint.h>

#define GATE_MAGIC 0x3154414753555047ULL          /* "GPUSGAT1" little-endian: the control file */
#define GATE_ACTIVITY_MAGIC 0x3141544341535047ULL /* "GPSACTA1": an activity file */
#define GATE_VERSION 3u
#define GATE_MAX_SLOTS 64u   /* one bit each in gate_domain_t.members */
#define GATE_MAX_GPUS 16u
#define GATE_MAX_DOMAINS 128u /* whole GPUs and MIG slices: 16 GPUs x (1 + 7 slices) */
#define GATE_MAX_PROCS 8u     /* processes of one job tracked in its slot; more share only the sums */
#define GATE_PRIORITIES 3u

#define GATE_CONTROL_FILE "control"
#define GATE_ACTIVITY_PREFIX "slot-" /* slot-0 .. slot-63 */

#define GATE_DOMAIN_OFFSET 256u
#define GATE_DOMAIN_SIZE 32u
#define GATE_SLOT_OFFSET 8192u
#define GATE_SLOT_DOMAINS_OFFSET 4352u /* after the domain table: each slot's other domains */
#define GATE_SLOT_DOMAINS_SIZE 16u
#define GATE_SLOT_SIZE 64u
#define GATE_CONTROL_SIZE (GATE_SLOT_OFFSET + GATE_MAX_SLOTS * GATE_SLOT_SIZE) /* 12288 */
#define GATE_ACTIVITY_SIZE 4096u /* one page: mapped at a fixed place, replaced whole */
#define GATE_PROC_OFFSET 192u
#define GATE_PROC_SIZE 40u
#define GATE_STUCK_OFFSET 512u
#define GATE_GAP_OFFSET 768u
#define GATE_GAP_BUCKETS 24u /* idle gaps by octave, 1 µs .. 16 s */

#define GATE_NO_QUOTA UINT64_MAX
#define GATE_PROC_RECLAIMING (-1) /* gate_proc_t.pid while a process's entry is being given back */
#define GATE_HOLD_MAX_NS 1000000000ull /* a lower slot holds a process at step 3 at most this long in all */

enum { GATE_PRIORITY_HIGH = 0, GATE_PRIORITY_NORMAL = 1, GATE_PRIORITY_BEST_EFFORT = 2 };
enum { GATE_ENGINE_CLOSED = 0, GATE_ENGINE_RUNNING = 1 };
enum { GATE_SLOT_FREE = 0, GATE_SLOT_IN_USE = 1 };
/* header.window_policy: how long a job stays ACTIVE after its work is done (see "The protocol") */
enum { GATE_WINDOW_FIXED = 0, GATE_WINDOW_LEARNED = 1 };

/* Defaults the engine writes into the header. */
#define GATE_DEFAULT_ACTIVE_WINDOW_NS 5000000ull     /* 5 ms: covers gaps between launches; queued work is tracked by syncs (bench/gate) */
#define GATE_DEFAULT_OUTSTANDING_MAX_NS 1000000000ull /* 1 s */
#define GATE_DEFAULT_BE_SYNC_WINDOW_NS 2000000ull     /* 2 ms */
#define GATE_DEFAULT_ENGINE_GONE_NS 2000000000ull     /* 2 s */

/* control, offset 0, 256 bytes. Engine writes. */
typedef struct {
  uint64_t magic;              /* 0 */
  uint32_t version;            /* 8 */
  uint32_t max_slots;          /* 12 */
  uint32_t max_domains;        /* 16 */
  int32_t engine_pid;          /* 20 */
  uint64_t heartbeat_ns;       /* 24: CLOCK_MONOTONIC, every ~500 ms */
  uint64_t active_window_ns;   /* 32 */
  uint64_t outstanding_max_ns; /* 40 */
  uint64_t be_sync_window_ns;  /* 48 */
  uint64_t engine_gone_ns;     /* 56 */
  uint32_t state;              /* 64: GATE_ENGINE_* (CLOSED on engine shutdown) */
  uint32_t file_size;          /* 68: GATE_CONTROL_SIZE */
  uint32_t window_policy;      /* 72: GATE_WINDOW_* (0 in gates made before it: fixed) */
  uint8_t reserved[180];       /* 76..255 */
} gate_header_t;

/* control, at GATE_DOMAIN_OFFSET + domain * 32. Engine writes. */
typedef struct {
  uint64_t members[GATE_PRIORITIES]; /* 0,8,16: bit i = slot i counts in this domain at that priority */
  uint64_t stuck;                    /* 24: bit i = slot i held a higher job back HOLD_MAX: nobody waits for its launches */
} gate_domain_t;

/* control, at GATE_SLOT_DOMAINS_OFFSET + slot * 16: the domains a slot counts in besides its
 * `domain` (bit d of also[d / 64]: domain d), for a job on several GPUs; zero otherwise (and in
 * gates made before it). Engine writes. */
typedef struct {
  uint64_t also[2];
} gate_slot_domains_t;

/* control, at GATE_SLOT_OFFSET + slot * 64: the engine half. Engine writes. */
typedef struct {
  uint32_t state;        /* 0: GATE_SLOT_* */
  uint32_t generation;   /* 4: changes at every allocation (never 0) */
  int32_t pid;           /* 8: the job's pid when the engine knows it, else 0 */
  uint32_t domain;       /* 12: gate domain (a GPU, or a MIG slice of one) */
  uint32_t priority;     /* 16: GATE_PRIORITY_* */
  uint32_t paused;       /* 20: nonzero = launch nothing */
  uint32_t config_seq;   /* 24: seqlock over quota_bytes: odd while the engine writes */
  uint32_t gpu;          /* 28: the GPU index (informative; gating is per domain) */
  uint64_t quota_bytes;  /* 32: GATE_NO_QUOTA = none; the whole job's */
  uint64_t activity_ino; /* 40: inode of slot-N for this generation (written before state and generation) */
  uint32_t owner_uid;    /* 48: the job's user, who owns slot-N (informative) */
  uint8_t reserved[8];   /* 52..59: zero (see "MPS clients" above) */
  uint32_t unconfirmed;  /* 60: nonzero = the driver has not confirmed the job's claimed activity: it holds nobody back */
} gate_slot_t;

/* One process of a job, in its activity's table. Written by that process (and,
 * once its pid is gone, by the sibling that reclaims it). */
typedef struct {
  int32_t pid;              /* 0: 0 = free, GATE_PROC_RECLAIMING while given back */
  uint32_t in_launch;       /* 4: this process's share of the slot's in_launch */
  uint64_t used_bytes;      /* 8: its share of the slot's used_bytes */
  uint64_t launches;        /* 16: its share of the slot's launches */
  uint64_t synced_launches; /* 24: its share of the slot's synced_launches */
  uint32_t capturing;       /* 32: streams of this process now capturing */
  uint32_t reserved;        /* 36 */
} gate_proc_t;

/* slot-N, one page: the job half. The engine writes bytes 0..15 when it creates
 * the file; the job's processes write the rest (atomic RMW). */
typedef struct {
  uint64_t magic;         /* 0: GATE_ACTIVITY_MAGIC */
  uint32_t slot;          /* 8 */
  uint32_t generation;    /* 12: the slot's generation the file was made for */
  uint8_t reserved0[48];  /* 16..63 */
  /* sums over the job's processes */
  uint32_t in_launch;       /* 64: threads between step 1 and step 5 */
  int32_t attached_pid;     /* 68: last process of the job that attached or launched (checked for liveness) */
  uint64_t last_launch_ns;  /* 72: when the latest launch call returned */
  uint64_t launches;        /* 80: launches passed to the driver */
  uint64_t synced_launches; /* 88: launches seen complete (each process's own synchronizes), or of gone processes */
  uint64_t used_bytes;      /* 96: device memory the job holds (counted allocations): the quota's CAS target */
  uint64_t gated_ns;        /* 104: time waited for higher-priority jobs */
  uint64_t paused_ns;       /* 112: time held by pause */
  uint32_t attach_count;    /* 120: processes that attached */
  uint32_t fail_open_count; /* 124: slow-path decisions to run because the engine was gone */
  uint32_t oom_count;       /* 128: allocations the quota refused */
  uint32_t reclaimed_count; /* 132: gone processes whose share a sibling gave back */
  uint32_t untracked_count; /* 136: processes that found the process table full (sums only) */
  uint32_t stuck_waits;     /* 140: lower slots this job's processes stopped waiting for (held one HOLD_MAX) */
  uint64_t held_ns;         /* 144: time waited at step 3 for lower jobs mid-launch */
  uint32_t truncated_count; /* 152: other slots' activity files found truncated (read as idle since) */
  uint32_t gap_samples;     /* 156: idle gaps the learned window has seen (informative) */
  uint64_t idle_since_ns;   /* 160: when a synchronise last found all the job's launches complete (low half: a futex word, step 2) */
  uint64_t hold_ns;         /* 168: learned window (GATE_WINDOW_LEARNED): 0 = not learned yet */
  uint64_t kernel_ns;       /* 176: a lower job's kernel duration, from its short synchronisations: 0 = not learned yet */
  uint8_t reserved2[8];     /* 184..191 */
  gate_proc_t procs[GATE_MAX_PROCS];   /* 192..511 */
  uint32_t stuck_gen[GATE_MAX_SLOTS];  /* 512..767: slot i's generation when this job stopped waiting for it (0: never) */
  uint32_t gap_hist[GATE_GAP_BUCKETS]; /* 768..863: idle gaps by octave, decayed (GATE_WINDOW_LEARNED; see the protocol) */
  uint8_t reserved3[GATE_ACTIVITY_SIZE - 864];
} gate_activity_t;

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(gate_header_t) == GATE_DOMAIN_OFFSET, "gate header is 256 bytes");
_Static_assert(sizeof(gate_domain_t) == GATE_DOMAIN_SIZE, "gate domain entry is 32 bytes");
_Static_assert(sizeof(gate_slot_t) == GATE_SLOT_SIZE, "gate slot (engine half) is 64 bytes");
_Static_assert(sizeof(gate_proc_t) == GATE_PROC_SIZE, "gate process entry is 40 bytes");
_Static_assert(sizeof(gate_activity_t) == GATE_ACTIVITY_SIZE, "an activity file is one page");
_Static_assert(__builtin_offsetof(gate_slot_t, unconfirmed) == 60, "unconfirmed in the slot's reserved bytes");
_Static_assert(__builtin_offsetof(gate_activity_t, procs) == GATE_PROC_OFFSET, "process table offset");
_Static_assert(__builtin_offsetof(gate_activity_t, stuck_gen) == GATE_STUCK_OFFSET, "stuck reports offset");
_Static_assert(__builtin_offsetof(gate_activity_t, gap_hist) == GATE_GAP_OFFSET, "gap histogram offset");
_Static_assert(GATE_DOMAIN_OFFSET + GATE_MAX_DOMAINS * GATE_DOMAIN_SIZE <= GATE_SLOT_DOMAINS_OFFSET, "domain table fits");
_Static_assert(sizeof(gate_slot_domains_t) == GATE_SLOT_DOMAINS_SIZE, "a slot's other domains: 16 bytes");
_Static_assert(GATE_MAX_DOMAINS <= 8 * GATE_SLOT_DOMAINS_SIZE, "one bit per domain");
_Static_assert(GATE_SLOT_DOMAINS_OFFSET + GATE_MAX_SLOTS * GATE_SLOT_DOMAINS_SIZE <= GATE_SLOT_OFFSET, "slots' other domains fit");
#endif

#endif
