// The gate file's layout: a mirror of native/include/gate_abi.h (the C header
// is the contract; launch-gate.test.ts checks this file against it).
// Engine-written: the header, the domain table, slot bytes 0..63.
// Job-written (the preload library): the rest of each slot (job summary, process table).

export const GATE_MAGIC = 0x3154414753555047n; // "GPUSGAT1"
export const GATE_VERSION = 2;
export const GATE_MAX_SLOTS = 64;
export const GATE_MAX_GPUS = 16;
export const GATE_MAX_DOMAINS = 128;
export const GATE_MAX_PROCS = 8;
export const GATE_DOMAIN_OFFSET = 256;
export const GATE_DOMAIN_SIZE = 32;
export const GATE_SLOT_OFFSET = 8192;
export const GATE_SLOT_SIZE = 512;
export const GATE_PROC_OFFSET = 192;
export const GATE_PROC_SIZE = 40;
export const GATE_FILE_SIZE = GATE_SLOT_OFFSET + GATE_MAX_SLOTS * GATE_SLOT_SIZE;
export const GATE_NO_QUOTA = 0xffff_ffff_ffff_ffffn;
export const GATE_PROC_RECLAIMING = -1;

export const GATE_ENGINE_CLOSED = 0;
export const GATE_ENGINE_RUNNING = 1;
export const GATE_SLOT_FREE = 0;
export const GATE_SLOT_IN_USE = 1;

export const GATE_DEFAULT_ACTIVE_WINDOW_NS = 5_000_000n;
export const GATE_DEFAULT_OUTSTANDING_MAX_NS = 1_000_000_000n;
export const GATE_DEFAULT_BE_SYNC_WINDOW_NS = 2_000_000n;
export const GATE_DEFAULT_ENGINE_GONE_NS = 2_000_000_000n;

/** Byte offsets inside the header (from the start of the file). */
export const HEADER = {
  magic: 0,
  version: 8,
  maxSlots: 12,
  maxDomains: 16,
  enginePid: 20,
  heartbeatNs: 24,
  activeWindowNs: 32,
  outstandingMaxNs: 40,
  beSyncWindowNs: 48,
  engineGoneNs: 56,
  state: 64,
  fileSize: 68,
} as const;

/** Byte offsets inside one domain entry: members[priority] (u64 slot bitmask). */
export const DOMAIN = { members: 0 } as const;

/** Byte offsets inside one slot. */
export const SLOT = {
  // engine half
  state: 0,
  generation: 4,
  pid: 8,
  domain: 12,
  priority: 16,
  paused: 20,
  configSeq: 24,
  gpu: 28,
  quotaBytes: 32,
  // job half: sums over the job's processes
  inLaunch: 64,
  attachedPid: 68,
  lastLaunchNs: 72,
  launches: 80,
  syncedLaunches: 88,
  usedBytes: 96,
  gatedNs: 104,
  pausedNs: 112,
  attachCount: 120,
  failOpenCount: 124,
  oomCount: 128,
  reclaimedCount: 132,
  untrackedCount: 136,
  stuckWaits: 140,
  procs: GATE_PROC_OFFSET,
} as const;

/** Byte offsets inside one process entry of a slot's table. */
export const PROC = {
  pid: 0,
  inLaunch: 4,
  usedBytes: 8,
  launches: 16,
  syncedLaunches: 24,
  capturing: 32,
} as const;

export const JOB_HALF_OFFSET = SLOT.inLaunch;

/** The C names of the fields above, for the layout check against gate_abi.h. */
export const C_FIELD_NAMES: Record<string, number> = {
  'gate_header_t.magic': HEADER.magic,
  'gate_header_t.version': HEADER.version,
  'gate_header_t.max_slots': HEADER.maxSlots,
  'gate_header_t.max_domains': HEADER.maxDomains,
  'gate_header_t.engine_pid': HEADER.enginePid,
  'gate_header_t.heartbeat_ns': HEADER.heartbeatNs,
  'gate_header_t.active_window_ns': HEADER.activeWindowNs,
  'gate_header_t.outstanding_max_ns': HEADER.outstandingMaxNs,
  'gate_header_t.be_sync_window_ns': HEADER.beSyncWindowNs,
  'gate_header_t.engine_gone_ns': HEADER.engineGoneNs,
  'gate_header_t.state': HEADER.state,
  'gate_header_t.file_size': HEADER.fileSize,
  'gate_domain_t.members': DOMAIN.members,
  'gate_slot_t.state': SLOT.state,
  'gate_slot_t.generation': SLOT.generation,
  'gate_slot_t.pid': SLOT.pid,
  'gate_slot_t.domain': SLOT.domain,
  'gate_slot_t.priority': SLOT.priority,
  'gate_slot_t.paused': SLOT.paused,
  'gate_slot_t.config_seq': SLOT.configSeq,
  'gate_slot_t.gpu': SLOT.gpu,
  'gate_slot_t.quota_bytes': SLOT.quotaBytes,
  'gate_slot_t.in_launch': SLOT.inLaunch,
  'gate_slot_t.attached_pid': SLOT.attachedPid,
  'gate_slot_t.last_launch_ns': SLOT.lastLaunchNs,
  'gate_slot_t.launches': SLOT.launches,
  'gate_slot_t.synced_launches': SLOT.syncedLaunches,
  'gate_slot_t.used_bytes': SLOT.usedBytes,
  'gate_slot_t.gated_ns': SLOT.gatedNs,
  'gate_slot_t.paused_ns': SLOT.pausedNs,
  'gate_slot_t.attach_count': SLOT.attachCount,
  'gate_slot_t.fail_open_count': SLOT.failOpenCount,
  'gate_slot_t.oom_count': SLOT.oomCount,
  'gate_slot_t.reclaimed_count': SLOT.reclaimedCount,
  'gate_slot_t.untracked_count': SLOT.untrackedCount,
  'gate_slot_t.stuck_waits': SLOT.stuckWaits,
  'gate_slot_t.procs': SLOT.procs,
  'gate_proc_t.pid': PROC.pid,
  'gate_proc_t.in_launch': PROC.inLaunch,
  'gate_proc_t.used_bytes': PROC.usedBytes,
  'gate_proc_t.launches': PROC.launches,
  'gate_proc_t.synced_launches': PROC.syncedLaunches,
  'gate_proc_t.capturing': PROC.capturing,
};
