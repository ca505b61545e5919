// What the scheduler needs of the launch gate (electron/engine/gate/launch-gate.ts):
// one slot per running managed job, through which its priority, pause and quota reach
// the preload library in every process of the job. The scheduler never touches the gate's files itself.
import type { Priority } from '../../../shared/jobs.js';

export interface GateSlotRequest {
  jobId: string;
  /** Its first GPU; `alsoOn`: the others of a job on several (whole GPUs): its slot counts in each one's domain. */
  gpu: number;
  alsoOn?: number[];
  /** The MIG slice the job runs in (its UUID, say): a slice is its own gate domain. Null or absent: the whole GPU. */
  migSlice?: string | null;
  priority: Priority;
  /** The whole job's quota, shared by all its processes. */
  quotaBytes: number | null;
  /**
   * The user the job runs as (JobRecord.runAs): the gate gives that user the slot's activity file,
   * the one thing of the gate the job can write. Null or absent: the engine's own user.
   */
  owner?: { uid: number; gid: number } | null;
}

export interface GateSlot {
  slot: number;
  /** LD_PRELOAD, GPUSHARE_GATE, GPUSHARE_GATE_SLOT, GPUSHARE_MEM_QUOTA, … for the job. */
  env: Record<string, string>;
}

/** What the job's preload library published in its slot. */
export interface GateSlotUsage {
  /** Device memory the job's processes hold, counted by the preload library. */
  usedBytes: number;
  /** Allocations the quota refused since the slot was handed out (one alert per onset: compare with the last reading). */
  oomCount: number;
  /**
   * The job's processes that use the GPU through the library, each with its share of usedBytes.
   * A dead one (SIGKILLed) still holds its share until a sibling reclaims it, or the slot is released.
   */
  processes: Array<{ pid: number; usedBytes: number; alive: boolean }>;
  /** Threads of the job inside a launch call now (a parked job's next launch waits in the driver: it wants its memory back). */
  inLaunch?: number;
  /** Launches its processes passed to the driver so far (a change means it is not idle). */
  launches?: number;
  /** When the latest launch call returned (CLOCK_MONOTONIC ns, as process.hrtime; 0n: none yet). */
  lastLaunchNs?: bigint;
  /** When a synchronise last found its work complete (CLOCK_MONOTONIC ns; 0n: never): lower jobs' learned waits count from it. */
  idleSinceNs?: bigint;
  /** Time its launches waited for higher-priority jobs so far (ns): the gate's own word that it held the job back. */
  gatedNs?: number;
}

/** A slot's files, for an enrolled process that gets them as descriptors (never by name). */
export interface SlotFiles {
  dir: string;
  control: string;
  activity: string;
  generation: number;
}

export interface JobGate {
  allocateSlot(request: GateSlotRequest): GateSlot;
  /** The job's pid, once started (the gate uses it for liveness and reports). */
  setPid?(slot: number, pid: number): void;
  setPriority(slot: number, priority: Priority): void;
  setPaused(slot: number, paused: boolean): void;
  setQuota(slot: number, bytes: number | null): void;
  /**
   * False: the job no longer counts in its gate domain (stopped, parked, checkpoint-locked:
   * it may be frozen inside a launch call and must not stall a higher job). True: back in.
   */
  setMember(slot: number, member: boolean): void;
  /** True: the driver has not confirmed the activity the job claims (scheduler/activity-claims.ts): its claims hold nobody back. */
  setUnconfirmed?(slot: number, unconfirmed: boolean): void;
  /** The job runs on another GPU (or slice) than its slot said: its slot counts in that one's domain from now. */
  moveSlot?(slot: number, gpu: number, migSlice?: string | null, alsoOn?: readonly number[]): void;
  /** What the job's processes published: used bytes, refused allocations. */
  readSlot?(slot: number): GateSlotUsage;
  releaseSlot(slot: number): void;
  /** The slot's files and generation, handed to an enrolled process (enrol/enrolment.ts). */
  slotFiles?(slot: number): SlotFiles;
  /** A job of an earlier engine (same pid in the slot it left) counts again: false when the slot is not its any more. */
  adoptSlot?(slot: number, job: { pid: number; gpu: number; alsoOn?: readonly number[]; migSlice?: string | null; priority: Priority }): boolean;
  /** After adoption: the earlier engine's slots nobody was adopted into are freed. */
  releaseLeftovers?(): number[];
  /** Engine shutdown: mark the gate closed so every job fails open; keepFile when jobs live on for the next engine. */
  close(options?: { keepFile?: boolean }): void;
}
