/* The shared state of the simulated driver: one file, mmap'd MAP_SHARED by
 * every process (both libraries, fakejob, the fakegpu CLI). Fixed layout,
 * checked by magic + layout version + size. */
#ifndef FG_STATE_H
#define FG_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define FG_HIDDEN __attribute__((visibility("hidden")))
#define FG_EXPORT __attribute__((visibility("default")))

#define FG_MAGIC 0x3155504745414b46ULL /* "FAKEGPU1" */
#define FG_LAYOUT_VERSION 3u /* 2: an MPS daemon per MIG instance (mig_mps); 3: MPS client priority */
#define FG_MAX_GPUS 16
#define FG_MAX_MIG 7
#define FG_MAX_ENGINES (FG_MAX_MIG + 1) /* engine 0: whole GPU; 1+i: MIG index i */
#define FG_MAX_PROCS 1024
#define FG_RING_SIZE 65536u
#define FG_MAX_FAULTS 32
#define FG_NAME_LEN 96
#define FG_UUID_LEN 48
#define FG_MIB (1024ull * 1024ull)
#define FG_ID_NONE 0xFFFFFFFFu

enum { FG_PROC_FREE = 0, FG_PROC_USED = 1 };
enum { FG_KIND_LIFELINE = 0, FG_KIND_ATTACHED = 1 };
enum { FG_TYPE_COMPUTE = 0, FG_TYPE_GRAPHICS = 1, FG_TYPE_MPS = 2 };
enum { FG_PIN_TEMP = 1, FG_PIN_POWER = 2, FG_PIN_SM_CLOCK = 4, FG_PIN_MEM_CLOCK = 8 };
enum { FG_MIG_UNSUPPORTED = 0, FG_MIG_CAPABLE = 1 };
/* fg_mig_t.present: mig[] slots are stable (processes and engines refer to them by index), so a
 * destroyed instance leaves a free slot; a GPU instance without a compute instance has no MIG device. */
enum { FG_MIG_FREE = 0, FG_MIG_GI_ONLY = 1, FG_MIG_GI_CI = 2 };
#define FG_MAX_MPS_CLIENTS 48
#define FG_MAX_MPS_TERMINATED 16

typedef struct {
  uint64_t seq; /* ring index + 1 once the record is complete */
  uint64_t enqueue_ns, start_ns, end_ns; /* CLOCK_MONOTONIC */
  int32_t pid;
  int32_t engine;
} fg_exec_rec_t;

typedef struct {
  uint64_t head; /* records ever appended */
  uint64_t pad[7];
  fg_exec_rec_t recs[FG_RING_SIZE];
} fg_ring_t;

/* A fair, crash-tolerant ticket lock: the engine runs one kernel at a time.
 * turn: low 32 bits = ticket being served (futex word), high 32 = claimed. */
typedef struct {
  uint64_t turn;
  uint32_t next_ticket;
  uint32_t holder_ticket;
  int32_t holder_pid;
  uint32_t pad0;
  uint64_t holder_start_ns, holder_end_ns;
  uint64_t pad[3];
} fg_engine_t;

typedef struct {
  char profile[16]; /* "3g.40gb" */
  char name[FG_NAME_LEN];
  char uuid[FG_UUID_LEN];
  uint32_t profile_id, gi, ci;
  uint32_t slices; /* compute slices: the N of Ng */
  uint32_t placement_start, placement_size; /* memory slices */
  uint32_t sm_count, copy_engines, decoders, encoders, jpegs, ofas;
  uint64_t memory_total; /* bytes */
  uint64_t proc_used;    /* bytes allocated by processes in this instance */
  uint32_t present;      /* FG_MIG_*: a slot of mig[] is a GPU instance (+ its compute instance) or free */
  uint32_t nvml_profile; /* NVML_GPU_INSTANCE_PROFILE_* index of profile_id */
} fg_mig_t;

/* One MPS client process with a kernel on an MPS context (cuda_mps.c): the whole GPU's or a MIG instance's. */
typedef struct {
  int32_t pid; /* 0: free */
  uint32_t share;  /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1..100 */
  uint32_t active; /* a kernel is running now */
  uint32_t engine; /* whose daemon serves it: 0 the whole GPU's, 1 + m MIG instance m's (overlap only within one) */
  uint32_t priority; /* CUDA_MPS_CLIENT_PRIORITY: 0 normal, 1 below normal */
  uint32_t held;     /* % of the SMs its running kernel holds now (a below-normal one: what the normal ones leave) */
  uint64_t heartbeat_ns; /* refreshed while active; stale (stopped/dead client) entries do not count */
  uint64_t kernel_start_ns;
} fg_mps_client_t;

/* A simulated MPS control daemon inside one MIG instance (fakegpu mps --gi GI start). */
typedef struct {
  uint32_t running;
  int32_t pid; /* who started it (0: none given) */
  uint32_t uid;
  uint32_t pad;
  char user[32];
  char pipe_dir[256]; /* clients of the instance whose CUDA_MPS_PIPE_DIRECTORY matches join it */
} fg_mps_daemon_t;

typedef struct {
  char name[FG_NAME_LEN];
  char uuid[FG_UUID_LEN];
  char pci_bus_id[32]; /* "00000000:07:00.0" */
  uint32_t pci_domain, pci_bus, pci_device, pci_device_id, pci_subsys_id;
  uint32_t sm_count, sm_clock_max, sm_clock_idle, mem_clock, power_limit_mw;
  uint32_t cc_major, cc_minor;
  uint32_t family; /* fg_family_t, picks the MIG profile table */
  uint64_t memory_total, memory_reserved; /* bytes */
  uint64_t proc_used; /* bytes allocated by all processes on this GPU */
  uint32_t mig_capable, mig_current, mig_pending, mig_count;
  fg_mig_t mig[FG_MAX_MIG];
  uint32_t compute_mode;
  uint32_t lost;
  uint32_t pin_mask;
  uint32_t pin_temp, pin_power_mw, pin_sm_clock, pin_mem_clock;
  uint32_t pad;
  fg_engine_t engines[FG_MAX_ENGINES];
  /* --- MIG reconfiguration and MPS (fakegpu mig / fakegpu mps; see README) --- */
  uint32_t mig_generation; /* bumped by every GPU/compute instance change */
  uint32_t mps_running;    /* a simulated MPS control daemon serves this GPU */
  int32_t mps_pid;         /* who started it (0: none given) */
  uint32_t mps_uid;
  char mps_user[32];
  char mps_pipe_dir[256]; /* clients whose CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) matches join it */
  fg_mps_client_t mps_clients[FG_MAX_MPS_CLIENTS];
  int32_t mps_terminated[FG_MAX_MPS_TERMINATED]; /* terminate_client'ed pids (ring) */
  uint32_t mps_terminated_next;
  uint32_t mps_pad;
  fg_mps_daemon_t mig_mps[FG_MAX_MIG]; /* by mig[] slot; cleared when the instance is created */
} fg_gpu_t;

typedef struct {
  uint32_t state; /* FG_PROC_* */
  uint32_t kind;  /* FG_KIND_*: who proves the process is alive */
  int32_t pid;
  int32_t gpu;
  int32_t mig; /* MIG index, -1 for the whole GPU */
  uint32_t type; /* FG_TYPE_* */
  uint64_t start_time; /* /proc/PID/stat field 22 */
  uint64_t used_mem;
  pthread_mutex_t alive; /* held by the owner's lifeline thread (robust) */
  /* cuCheckpointProcess*: changed by the caller (another process), obeyed by the owner */
  uint32_t ckpt_state; /* FG_CKPT_* */
  uint32_t busy;       /* device operations of the owner in flight: its executor's kernel, copies (cuda_contents.c) */
  uint64_t parked_mem; /* bytes moved to host memory by a checkpoint (not in used_mem) */
  int32_t restore_tid; /* the owner's lifeline thread */
  uint32_t ckpt_pad;
} fg_proc_t;

/* CUprocessState values; LOCKING (a lock waiting for the in-flight kernel)
 * reads as RUNNING but already holds back new kernels. */
enum { FG_CKPT_RUNNING = 0, FG_CKPT_LOCKED = 1, FG_CKPT_CHECKPOINTED = 2, FG_CKPT_FAILED = 3, FG_CKPT_LOCKING = 4 };

typedef struct {
  char call[64];
  int32_t code;
  int32_t device; /* -1: all devices */
} fg_fault_t;

typedef struct {
  uint64_t magic;
  uint32_t layout_version;
  uint32_t gpu_count;
  uint64_t total_size;
  char driver_version[32];
  char nvml_version[32];
  int32_t cuda_version;
  uint32_t v3_record_size;
  char scenario[256];
  pthread_mutex_t lock; /* robust, process-shared: process table + counters + faults */
  uint64_t last_reap_ns, last_full_reap_ns;
  uint32_t proc_hwm; /* highest process slot ever used + 1 */
  uint32_t fault_count;
  fg_fault_t faults[FG_MAX_FAULTS];
  fg_gpu_t gpus[FG_MAX_GPUS];
  fg_proc_t procs[FG_MAX_PROCS];
  fg_ring_t rings[FG_MAX_GPUS];
} fg_state_t;

/* time */
FG_HIDDEN uint64_t fg_now_ns(void);     /* CLOCK_MONOTONIC */
FG_HIDDEN uint64_t fg_real_us(void);    /* CLOCK_REALTIME in µs */
FG_HIDDEN void fg_sleep_until_ns(uint64_t t);

/* mapping */
FG_HIDDEN const char *fg_state_path(void); /* $GPUSHARE_FAKEGPU_STATE or NULL */
FG_HIDDEN fg_state_t *fg_state_map(const char *path, char *err, size_t errlen);
FG_HIDDEN void fg_state_unmap(fg_state_t *st);
FG_HIDDEN void fg_state_init_sync(fg_state_t *st); /* mutexes, for a fresh image */

/* lock (robust; repairs counters after a dead owner) */
FG_HIDDEN void fg_lock(fg_state_t *st);
FG_HIDDEN int fg_trylock(fg_state_t *st); /* 0 on success */
FG_HIDDEN void fg_unlock(fg_state_t *st);
FG_HIDDEN void fg_recount(fg_state_t *st); /* under lock */

/* processes */
FG_HIDDEN int fg_proc_start_time(pid_t pid, uint64_t *start, char *state);
FG_HIDDEN void fg_reap(fg_state_t *st, int force); /* rate-limited unless force */
FG_HIDDEN void fg_proc_free_locked(fg_state_t *st, int slot);
FG_HIDDEN uint64_t fg_engine_capacity_free(const fg_state_t *st, int gpu, int mig);
FG_HIDDEN int fg_proc_copy(const fg_state_t *st, int slot, fg_proc_t *out); /* racy-safe read */

/* faults */
FG_HIDDEN int fg_fault_lookup(const fg_state_t *st, const char *call, int device);
FG_HIDDEN int fg_fault_set(fg_state_t *st, const char *call, int device, int code);

/* execution ring and utilization */
FG_HIDDEN void fg_ring_append(fg_state_t *st, int gpu, const fg_exec_rec_t *rec);
typedef void (*fg_ring_visit_fn)(const fg_exec_rec_t *rec, void *ctx);
/* Visit complete records of `gpu` (engine filter: -1 all) whose [start,end)
 * may overlap [from, to); newest first. Includes the in-progress holder. */
FG_HIDDEN void fg_ring_scan(const fg_state_t *st, int gpu, int engine, uint64_t from, uint64_t to,
                            fg_ring_visit_fn fn, void *ctx);
FG_HIDDEN uint64_t fg_busy_ns(const fg_state_t *st, int gpu, int engine, uint64_t from, uint64_t to);
FG_HIDDEN unsigned fg_gpu_util(const fg_state_t *st, int gpu);        /* 0..100, last 1 s */
FG_HIDDEN unsigned fg_engine_util(const fg_state_t *st, int gpu, int engine);
FG_HIDDEN unsigned fg_mem_util(unsigned gpu_util);
FG_HIDDEN unsigned fg_temperature(const fg_state_t *st, int gpu, unsigned util);
FG_HIDDEN unsigned fg_power_mw(const fg_state_t *st, int gpu, unsigned util);
FG_HIDDEN unsigned fg_sm_clock(const fg_state_t *st, int gpu, unsigned util);
FG_HIDDEN unsigned fg_mem_clock(const fg_state_t *st, int gpu);

/* MIG slots: a MIG device exists at mig[m] (a GPU instance with its compute instance) */
static inline int fg_mig_visible(const fg_gpu_t *g, uint32_t m) {
  return m < g->mig_count && __atomic_load_n(&g->mig[m].present, __ATOMIC_ACQUIRE) == FG_MIG_GI_CI;
}

/* atomics */
#define FG_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define FG_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define FG_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define FG_SUB(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)

#endif
