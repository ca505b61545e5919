/* The launch gate: one small file that the engine creates (mode 0600) and
 * writes with pwrite(), and that every managed job's preload library maps
 * MAP_SHARED and reads/writes with atomics. Fixed layout, little-endian,
 * every field 4- or 8-byte aligned; mirrored in
 * electron/engine/control/launch-gate-layout.ts (checked by a test).
 *
 * Single writer per field: the header, the per-GPU table and the first half
 * of each slot (offsets 0..63) are written by the engine only; the second half
 * of a slot (64..127) by the job's preload library only (atomic RMW when
 * several threads or processes of the job share it). The engine zeroes the
 * job half while the slot is free, before handing it out.
 *
 * ---- The protocol ------------------------------------------------------
 * Priorities: 0 high, 1 normal, 2 best-effort. On GPU g, job J is "lower"
 * than K when J.priority > K.priority.
 *
 * A slot S is ACTIVE at time now (CLOCK_MONOTONIC ns) when it is in use and
 *   S.in_launch != 0                                   (mid-launch), or
 *   now - S.last_launch_ns < header.active_window_ns   (launched recently), or
 *   S.launches != S.synced_launches and
 *   now - S.last_launch_ns < header.outstanding_max_ns (work outstanding:
 *     launched work not yet seen complete by a synchronize that returned).
 *
 * Every gated launch of job J does, on J's slot:
 *   1. atomic ++in_launch (sequentially consistent: a full fence);
 *   2. if J is paused, or some higher slot on J's GPU is ACTIVE:
 *        --in_launch, wait (nanosleep), go to 1;
 *   3. wait until every lower slot on J's GPU has in_launch == 0;
 *   4. call the driver's launch (the kernel is enqueued);
 *   5. last_launch_ns = now; ++launches; --in_launch.
 * Steps 1-3 are Dekker's handshake: of a lower job L and a higher job H that
 * both reach step 1, either L sees H's in_launch (and backs off), or H sees
 * L's (and waits until L's enqueue is done). So no lower kernel is ever
 * enqueued after a higher kernel was enqueued and while the higher job stays
 * ACTIVE (its window and outstanding-work rule cover the kernel's run).
 * The fast path (alone on the GPU, or no higher slot active) is two atomic
 * RMWs, a few loads and one vDSO clock read: no system call.
 *
 * Best-effort jobs (and normal jobs while a high job is on their GPU)
 * synchronise every header.be_sync_window_ns of queued work, so little of
 * their work is queued when a higher job arrives.
 *
 * Fail open: a job stops obeying pause and gating while the engine is gone:
 * state != GATE_ENGINE_RUNNING, heartbeat older than engine_gone_ns, or
 * engine_pid no longer exists (checked only on the slow path). A slot whose
 * generation differs from the job's GPUSHARE_GATE_GEN is not the job's any
 * more: the job detaches (no gating, quota from its environment). */
#ifndef GPUSHARE_GATE_ABI_H
#define GPUSHARE_GATE_ABI_H

#include <stdint.h>

#define GATE_MAGIC 0x3154414753555047ULL /* "GPUSGAT1" little-endian */
#define GATE_VERSION 1u
#define GATE_MAX_SLOTS 64u /* one bit each in gate_gpu_t.members */
#define GATE_MAX_GPUS 16u
#define GATE_PRIORITIES 3u

#define GATE_GPU_OFFSET 256u
#define GATE_SLOT_OFFSET 4096u
#define GATE_SLOT_SIZE 128u
#define GATE_FILE_SIZE (GATE_SLOT_OFFSET + GATE_MAX_SLOTS * GATE_SLOT_SIZE) /* 12288 */

#define GATE_NO_QUOTA UINT64_MAX

enum { GATE_PRIORITY_HIGH = 0, GATE_PRIORITY_NORMAL = 1, GATE_PRIORITY_BEST_EFFORT = 2 };
enum { GATE_ENGINE_CLOSED = 0, GATE_ENGINE_RUNNING = 1 };
enum { GATE_SLOT_FREE = 0, GATE_SLOT_IN_USE = 1 };

/* Defaults the engine writes into the header. */
#define GATE_DEFAULT_ACTIVE_WINDOW_NS 5000000ull     /* 5 ms: covers gaps between launches; queued work is tracked by syncs (bench/gate) */
#define GATE_DEFAULT_OUTSTANDING_MAX_NS 1000000000ull /* 1 s */
#define GATE_DEFAULT_BE_SYNC_WINDOW_NS 2000000ull     /* 2 ms */
#define GATE_DEFAULT_ENGINE_GONE_NS 2000000000ull     /* 2 s */

/* Offset 0, 256 bytes. Engine writes. */
typedef struct {
  uint64_t magic;              /* 0 */
  uint32_t version;            /* 8 */
  uint32_t max_slots;          /* 12 */
  uint32_t max_gpus;           /* 16 */
  int32_t engine_pid;          /* 20 */
  uint64_t heartbeat_ns;       /* 24: CLOCK_MONOTONIC, every ~500 ms */
  uint64_t active_window_ns;   /* 32 */
  uint64_t outstanding_max_ns; /* 40 */
  uint64_t be_sync_window_ns;  /* 48 */
  uint64_t engine_gone_ns;     /* 56 */
  uint32_t state;              /* 64: GATE_ENGINE_* (CLOSED on engine shutdown) */
  uint32_t file_size;          /* 68 */
  uint8_t reserved[184];       /* 72..255 */
} gate_header_t;

/* At GATE_GPU_OFFSET + gpu * 64. Engine writes. */
typedef struct {
  uint64_t members[GATE_PRIORITIES]; /* 0,8,16: bit i = slot i is in use on this GPU at that priority */
  uint8_t reserved[40];
} gate_gpu_t;

/* At GATE_SLOT_OFFSET + slot * 128. */
typedef struct {
  /* engine half */
  uint32_t state;        /* 0: GATE_SLOT_* */
  uint32_t generation;   /* 4: bumped at every allocation */
  int32_t pid;           /* 8: the job's pid when the engine knows it, else 0 */
  uint32_t gpu;          /* 12 */
  uint32_t priority;     /* 16: GATE_PRIORITY_* */
  uint32_t paused;       /* 20: nonzero = launch nothing */
  uint32_t config_seq;   /* 24: seqlock over quota_bytes: odd while the engine writes */
  uint32_t reserved0;    /* 28 */
  uint64_t quota_bytes;  /* 32: GATE_NO_QUOTA = none */
  uint8_t reserved1[24]; /* 40..63 */
  /* job half */
  uint32_t in_launch;       /* 64: threads between step 1 and step 5 */
  int32_t attached_pid;     /* 68: last process of the job that attached or launched (checked for liveness) */
  uint64_t last_launch_ns;  /* 72: when the latest launch call returned */
  uint64_t launches;        /* 80: launches passed to the driver */
  uint64_t synced_launches; /* 88: `launches` at the start of the latest synchronize that covered them all */
  uint64_t used_bytes;      /* 96: device memory the job holds (counted allocations) */
  uint64_t gated_ns;        /* 104: time waited for higher-priority jobs */
  uint64_t paused_ns;       /* 112: time held by pause */
  uint32_t attach_count;    /* 120: processes that attached */
  uint32_t fail_open_count; /* 124: slow-path decisions to run because the engine was gone */
} gate_slot_t;

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(gate_header_t) == GATE_GPU_OFFSET, "gate header is 256 bytes");
_Static_assert(sizeof(gate_gpu_t) == 64, "gate gpu entry is 64 bytes");
_Static_assert(sizeof(gate_slot_t) == GATE_SLOT_SIZE, "gate slot is 128 bytes");
_Static_assert(GATE_GPU_OFFSET + GATE_MAX_GPUS * 64 <= GATE_SLOT_OFFSET, "gpu table fits");
#endif

#endif
