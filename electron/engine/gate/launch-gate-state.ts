// What LaunchGate.readSlot() gives: the slot's engine half (what the engine wrote, from the control
// file) and what the job announces in its activity file (its own claims: nobody else acts on them).
import { JOB_PRIORITIES, pidAlive, type JobPriority } from './launch-gate-checks.js';
import * as L from './launch-gate-layout.js';

/** One process of a job, as its preload library keeps it in the job's activity. */
export interface SlotProcess {
  pid: number;
  /** The pid still runs (checked by the engine now). False: it died without giving its share back; a sibling will. */
  alive: boolean;
  inLaunch: number;
  usedBytes: number;
  launches: number;
  syncedLaunches: number;
  /** Streams of this process capturing a graph now (its launches pass the gate unsynchronised). */
  capturing: number;
}

export interface SlotState {
  slot: number;
  inUse: boolean;
  generation: number;
  pid: number;
  gpu: number;
  /** The MIG slice it was allocated in (engine memory, not in the file), or null. */
  migSlice: string | null;
  domain: number;
  /** Counts in its domain (false: taken out while stopped, parked or locked). */
  member: boolean;
  /** Held a higher job back mid-launch for 1 s in all: higher jobs no longer wait for its launches. */
  stuck: boolean;
  priority: JobPriority;
  paused: boolean;
  /** The driver has not confirmed the activity it claims: its claims hold nobody back (gate_abi.h). */
  unconfirmed: boolean;
  quotaBytes: number | null;
  /** The user its activity file belongs to (the job's). */
  ownerUid: number;
  // published by the job's preload library: sums over the job's processes
  attachedPid: number;
  attachCount: number;
  inLaunch: number;
  usedBytes: number;
  launches: number;
  syncedLaunches: number;
  lastLaunchNs: bigint;
  /** When a synchronise last found all its launched work complete (CLOCK_MONOTONIC ns; 0n: never): learned windows and the fit rule count from it. */
  idleSinceNs: bigint;
  gatedNs: number;
  pausedNs: number;
  /** Time its launches waited for lower jobs mid-launch (step 3 of the protocol). */
  heldNs: number;
  failOpenCount: number;
  /** Allocations the job's quota refused. */
  oomCount: number;
  /** Processes that died without giving their share back, reclaimed by a sibling. */
  reclaimedCount: number;
  /** Processes that found the slot's process table full (counted in the sums only). */
  untrackedCount: number;
  /** Lower slots its processes stopped waiting for, each after holding one of them back 1 s in all. */
  stuckWaits: number;
  /** Other slots' activity files its processes found truncated (read as idle since). */
  truncatedCount: number;
  /** Learned window (window policy 'learned'): how long it holds lower jobs after going idle, in ns; null until learned. */
  holdNs: number | null;
  /** Idle gaps (its work seen complete, then a launch) it has learned from. */
  gapSamples: number;
  /** Its idle gaps by octave (bucket b: [2^(b+10), 2^(b+11)) ns), as lower jobs read them to tell whether a kernel fits before its next launch. */
  gapHistogram: number[];
  /** A lower job's kernel duration as it learned it from its own synchronisations, in ns; null until learned. */
  kernelNs: number | null;
  processes: SlotProcess[];
}

export interface SlotMemory {
  migSlice: string | null;
  member: boolean;
  stuck: boolean;
}

/** Parses a slot's engine half (`control`, GATE_SLOT_SIZE bytes) and the head of its activity (up to the stuck reports). */
export function slotState(slot: number, control: Buffer, a: Buffer, rec: SlotMemory | null): SlotState {
  const quota = control.readBigUInt64LE(L.SLOT.quotaBytes);
  const num = (off: number) => Number(a.readBigUInt64LE(off));
  const inUse = control.readUInt32LE(L.SLOT.state) === L.GATE_SLOT_IN_USE;
  const processes: SlotProcess[] = [];
  for (let i = 0; i < L.GATE_MAX_PROCS; i++) {
    const at = L.ACTIVITY.procs + i * L.GATE_PROC_SIZE;
    const pid = a.readInt32LE(at + L.PROC.pid);
    if (pid <= 0) continue; // free, or being reclaimed
    processes.push({
      pid,
      alive: pidAlive(pid),
      inLaunch: a.readUInt32LE(at + L.PROC.inLaunch),
      usedBytes: num(at + L.PROC.usedBytes),
      launches: num(at + L.PROC.launches),
      syncedLaunches: num(at + L.PROC.syncedLaunches),
      capturing: a.readUInt32LE(at + L.PROC.capturing),
    });
  }
  const known = inUse && rec !== null;
  return {
    slot,
    inUse,
    generation: control.readUInt32LE(L.SLOT.generation),
    pid: control.readInt32LE(L.SLOT.pid),
    gpu: control.readUInt32LE(L.SLOT.gpu),
    migSlice: known ? rec.migSlice : null,
    domain: control.readUInt32LE(L.SLOT.domain),
    member: known && rec.member,
    stuck: known && rec.stuck,
    priority: JOB_PRIORITIES[Math.min(2, control.readUInt32LE(L.SLOT.priority))],
    paused: control.readUInt32LE(L.SLOT.paused) !== 0,
    unconfirmed: control.readUInt32LE(L.SLOT.unconfirmed) !== 0,
    quotaBytes: quota === L.GATE_NO_QUOTA ? null : Number(quota),
    ownerUid: control.readUInt32LE(L.SLOT.ownerUid),
    attachedPid: a.readInt32LE(L.ACTIVITY.attachedPid),
    attachCount: a.readUInt32LE(L.ACTIVITY.attachCount),
    inLaunch: a.readUInt32LE(L.ACTIVITY.inLaunch),
    usedBytes: num(L.ACTIVITY.usedBytes),
    launches: num(L.ACTIVITY.launches),
    syncedLaunches: num(L.ACTIVITY.syncedLaunches),
    lastLaunchNs: a.readBigUInt64LE(L.ACTIVITY.lastLaunchNs),
    idleSinceNs: a.readBigUInt64LE(L.ACTIVITY.idleSinceNs),
    gatedNs: num(L.ACTIVITY.gatedNs),
    pausedNs: num(L.ACTIVITY.pausedNs),
    heldNs: num(L.ACTIVITY.heldNs),
    failOpenCount: a.readUInt32LE(L.ACTIVITY.failOpenCount),
    oomCount: a.readUInt32LE(L.ACTIVITY.oomCount),
    reclaimedCount: a.readUInt32LE(L.ACTIVITY.reclaimedCount),
    untrackedCount: a.readUInt32LE(L.ACTIVITY.untrackedCount),
    stuckWaits: a.readUInt32LE(L.ACTIVITY.stuckWaits),
    truncatedCount: a.readUInt32LE(L.ACTIVITY.truncatedCount),
    holdNs: num(L.ACTIVITY.holdNs) || null,
    gapSamples: a.readUInt32LE(L.ACTIVITY.gapSamples),
    gapHistogram: Array.from({ length: L.GATE_GAP_BUCKETS }, (_, b) => a.readUInt32LE(L.ACTIVITY.gapHist + 4 * b)),
    kernelNs: num(L.ACTIVITY.kernelNs) || null,
    processes,
  };
}
