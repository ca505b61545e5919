// The gate files' layout: a mirror of native/include/gate_abi.h (the C header
// is the contract; launch-gate.test.ts checks this file against it).
// control (engine-written, read-only to jobs): the header, the domain table, every slot's engine half.
// slot-N (the job's own, read-only to the other jobs): its activity, one page.

export const GATE_MAGIC = 0x3154414753555047n; // "GPUSGAT1"
export const GATE_ACTIVITY_MAGIC = 0x3141544341535047n; // "GPSACTA1"
export const GATE_VERSION = 3;
export const GATE_MAX_SLOTS = 64;
export const GATE_MAX_GPUS = 16;
export const GATE_MAX_DOMAINS = 128;
export const GATE_MAX_PROCS = 8;
export const GATE_CONTROL_FILE = 'control';
export const GATE_ACTIVITY_PREFIX = 'slot-';
export const GATE_DOMAIN_OFFSET = 256;
export const GATE_DOMAIN_SIZE = 32;
export const GATE_SLOT_OFFSET = 8192;
/** A slot's other domains (a job on several GPUs): two u64 masks of domain numbers, per slot, after the domain table. */
export const GATE_SLOT_DOMAINS_OFFSET = 4352;
export const GATE_SLOT_DOMAINS_SIZE = 16;
export const GATE_SLOT_SIZE = 64;
export const GATE_CONTROL_SIZE = GATE_SLOT_OFFSET + GATE_MAX_SLOTS * GATE_SLOT_SIZE;
export const GATE_ACTIVITY_SIZE = 4096;
export const GATE_PROC_OFFSET = 192;
export const GATE_PROC_SIZE = 40;
export const GATE_STUCK_OFFSET = 512;
export const GATE_GAP_OFFSET = 768;
export const GATE_GAP_BUCKETS = 24;
export const GATE_NO_QUOTA = 0xffff_ffff_ffff_ffffn;
export const GATE_PROC_RECLAIMING = -1;
export const GATE_HOLD_MAX_NS = 1_000_000_000n;

export const GATE_ENGINE_CLOSED = 0;
export const GATE_ENGINE_RUNNING = 1;
export const GATE_SLOT_FREE = 0;
export const GATE_SLOT_IN_USE = 1;
export const GATE_WINDOW_FIXED = 0;
export const GATE_WINDOW_LEARNED = 1;

export const GATE_DEFAULT_ACTIVE_WINDOW_NS = 5_000_000n;
export const GATE_DEFAULT_OUTSTANDING_MAX_NS = 1_000_000_000n;
export const GATE_DEFAULT_BE_SYNC_WINDOW_NS = 2_000_000n;
export const GATE_DEFAULT_ENGINE_GONE_NS = 2_000_000_000n;

/** Byte offsets inside the control file's header. */
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
  windowPolicy: 72,
} as const;

/** Byte offsets inside one domain entry: members[priority] (u64 slot bitmask), stuck (u64 slot bitmask). */
export const DOMAIN = { members: 0, stuck: 24 } as const;

/** Byte offsets inside one slot's engine half (in the control file). */
export const SLOT = {
  state: 0,
  generation: 4,
  pid: 8,
  domain: 12,
  priority: 16,
  paused: 20,
  configSeq: 24,
  gpu: 28,
  quotaBytes: 32,
  activityIno: 40,
  ownerUid: 48,
  /** Zeros up to `unconfirmed`, written at every allocation and adoption (gate_abi.h, "MPS clients"). */
  reserved: 52,
  unconfirmed: 60,
} as const;

/** Byte offsets inside an activity file (slot-N): written by the job's processes from `inLaunch` on. */
export const ACTIVITY = {
  magic: 0,
  slot: 8,
  generation: 12,
  // sums over the job's processes
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
  heldNs: 144,
  truncatedCount: 152,
  gapSamples: 156,
  idleSinceNs: 160,
  holdNs: 168,
  kernelNs: 176,
  procs: GATE_PROC_OFFSET,
  stuckGen: GATE_STUCK_OFFSET,
  gapHist: GATE_GAP_OFFSET,
} as const;

/** Byte offsets inside one process entry of an activity's table. */
export const PROC = {
  pid: 0,
  inLaunch: 4,
  usedBytes: 8,
  launches: 16,
  syncedLaunches: 24,
  capturing: 32,
} as const;

/** The C names of the fields above, for the layout check against gate_abi.h. */
export const C_FIELD_NAMES: Record<string, number> = {
  ...prefixed('gate_header_t', {
    magic: HEADER.magic, version: HEADER.version, max_slots: HEADER.maxSlots, max_domains: HEADER.maxDomains,
    engine_pid: HEADER.enginePid, heartbeat_ns: HEADER.heartbeatNs, active_window_ns: HEADER.activeWindowNs,
    outstanding_max_ns: HEADER.outstandingMaxNs, be_sync_window_ns: HEADER.beSyncWindowNs, engine_gone_ns: HEADER.engineGoneNs,
    state: HEADER.state, file_size: HEADER.fileSize, window_policy: HEADER.windowPolicy,
  }),
  ...prefixed('gate_domain_t', { members: DOMAIN.members, stuck: DOMAIN.stuck }),
  ...prefixed('gate_slot_t', {
    state: SLOT.state, generation: SLOT.generation, pid: SLOT.pid, domain: SLOT.domain, priority: SLOT.priority,
    paused: SLOT.paused, config_seq: SLOT.configSeq, gpu: SLOT.gpu, quota_bytes: SLOT.quotaBytes,
    activity_ino: SLOT.activityIno, owner_uid: SLOT.ownerUid, reserved: SLOT.reserved, unconfirmed: SLOT.unconfirmed,
  }),
  ...prefixed('gate_activity_t', {
    magic: ACTIVITY.magic, slot: ACTIVITY.slot, generation: ACTIVITY.generation,
    in_launch: ACTIVITY.inLaunch, attached_pid: ACTIVITY.attachedPid, last_launch_ns: ACTIVITY.lastLaunchNs,
    launches: ACTIVITY.launches, synced_launches: ACTIVITY.syncedLaunches, used_bytes: ACTIVITY.usedBytes,
    gated_ns: ACTIVITY.gatedNs, paused_ns: ACTIVITY.pausedNs, attach_count: ACTIVITY.attachCount,
    fail_open_count: ACTIVITY.failOpenCount, oom_count: ACTIVITY.oomCount, reclaimed_count: ACTIVITY.reclaimedCount,
    untracked_count: ACTIVITY.untrackedCount, stuck_waits: ACTIVITY.stuckWaits, held_ns: ACTIVITY.heldNs,
    truncated_count: ACTIVITY.truncatedCount, gap_samples: ACTIVITY.gapSamples, idle_since_ns: ACTIVITY.idleSinceNs,
    hold_ns: ACTIVITY.holdNs, kernel_ns: ACTIVITY.kernelNs, procs: ACTIVITY.procs, stuck_gen: ACTIVITY.stuckGen,
    gap_hist: ACTIVITY.gapHist,
  }),
  ...prefixed('gate_proc_t', {
    pid: PROC.pid, in_launch: PROC.inLaunch, used_bytes: PROC.usedBytes, launches: PROC.launches,
    synced_launches: PROC.syncedLaunches, capturing: PROC.capturing,
  }),
};

function prefixed(type: string, fields: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(fields).map(([name, offset]) => [`${type}.${name}`, offset]));
}
