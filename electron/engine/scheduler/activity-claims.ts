// The one rule for what a job claims on the launch gate. A job writes its own activity (launching,
// launched just now) and the preload library of every other job reads it: trusted as written, a job
// that never uses the GPU could hold lower jobs back for ever by claiming to be launching. So a claim
// counts only while the driver confirms it: the job's processes computing (SM use) or growing their
// memory. A claim the driver has not confirmed within CLAIM_CONFIRM_MS stops holding anyone back (the
// gate marks the slot unconfirmed, gate_abi.h) until the driver shows the job computing again.
import type { JobView } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { Condition } from './policies.js';

/** How long a claim may go without the driver confirming it before it stops holding others back. */
export const CLAIM_CONFIRM_MS = 3000;

/** What the job's activity says now (LaunchGate.readSlot). */
export interface GateClaim {
  /** Threads of the job between the gate's check and their launch returning. */
  inLaunch: number;
  /** When its latest launch returned (CLOCK_MONOTONIC ns; 0n: never). */
  lastLaunchNs: bigint;
  /** When it last went idle (CLOCK_MONOTONIC ns; 0n: never): lower jobs' learned windows and fit rule count from it too. */
  idleSinceNs: bigint;
}

/** What the driver shows of the job in the same tick. */
export interface DriverEvidence {
  /** Its processes computed since the last tick (SM % above 0); null: the driver cannot tell (no per-process SM on this GPU). */
  computed: boolean | null;
  /** Memory its processes hold on the GPU, as the driver counts it (0: none, or not on the GPU at all). */
  usedMemory: number;
}

/** What else the driver showed this tick, besides the job's own processes. */
export interface DriverSight {
  /** Its MIG slice possibly computed (no per-process SM inside a slice). */
  sliceBusy: boolean;
  /** It is an MPS client and its GPU's MPS server computed (a driver may credit the server with its clients' work). */
  mpsServerBusy: boolean;
  /** The driver could not list its GPU's processes this tick (errors, or a busy GPU with none listed): its absence says nothing. */
  blind: boolean;
}

/**
 * The driver could not tell GPU `gpu`'s processes apart this tick: a process-list or per-process utilization call
 * failed, or the GPU computed with no listed process credited for it (per-process SM unsupported reads as 0).
 */
export function driverBlind(snapshot: Pick<Snapshot, 'gpus' | 'processes'>, gpu: number | null): boolean {
  const view = snapshot.gpus.find((g) => g.index === gpu);
  if (!view) return true;
  if (view.errors.some((e) => /^nvmlDevice\w*Process/.test(e))) return true;
  return (view.utilizationGpu ?? 0) > 0 && !snapshot.processes.some((p) => p.gpuIndex === view.index && (p.smPercent ?? 0) > 0);
}

/** What the driver shows of a job in one tick: computing (SM %, else slice or MPS server), idle, or nothing it can tell. */
export function driverEvidence(job: Pick<JobView, 'smPercent' | 'usedMemory'>, seen: DriverSight): DriverEvidence {
  const sm = job.smPercent;
  const computed = (sm ?? 0) > 0 || seen.sliceBusy || seen.mpsServerBusy ? true : sm === null || seen.blind ? null : false;
  return { computed, usedMemory: job.usedMemory ?? 0 };
}

interface JobClaims {
  lastLaunchNs: bigint;
  idleSinceNs: bigint;
  usedMemory: number;
  /** The first tick it claimed activity since the driver last confirmed any (null: none unconfirmed). */
  claimingSince: number | null;
  unconfirmed: boolean;
}

/** Each gated job's claims against what the driver shows, tick by tick. */
export class ActivityClaims {
  private readonly jobs = new Map<string, JobClaims>();

  constructor(private readonly confirmMs = CLAIM_CONFIRM_MS) {}

  /**
   * One tick at `now` (ms): whether the job's claims hold others back from now on. A job claims when it is
   * mid-launch, or has launched or gone idle since the last tick (each starts a window in which lower jobs
   * wait); the driver confirms when it computed or its memory grew.
   */
  observe(jobId: string, claim: GateClaim, driver: DriverEvidence, now: number): { unconfirmed: boolean; changed: boolean } {
    let job = this.jobs.get(jobId);
    if (!job) this.jobs.set(jobId, (job = { lastLaunchNs: claim.lastLaunchNs, idleSinceNs: claim.idleSinceNs, usedMemory: driver.usedMemory, claimingSince: null, unconfirmed: false })); // a launch before the first look is no claim
    const claiming = claim.inLaunch > 0 || claim.lastLaunchNs !== job.lastLaunchNs || claim.idleSinceNs !== job.idleSinceNs;
    const confirmed = driver.computed !== false || driver.usedMemory > job.usedMemory; // a driver that cannot tell takes the job's word
    job.lastLaunchNs = claim.lastLaunchNs;
    job.idleSinceNs = claim.idleSinceNs;
    job.usedMemory = driver.usedMemory;
    if (confirmed) job.claimingSince = null;
    else if (claiming) job.claimingSince ??= now; // only the driver resets it: claiming on and off gains nothing
    const unconfirmed = job.claimingSince !== null && now - job.claimingSince >= this.confirmMs;
    const changed = unconfirmed !== job.unconfirmed;
    job.unconfirmed = unconfirmed;
    return { unconfirmed, changed };
  }

  /** Its claims hold nobody back now. */
  unconfirmed(jobId: string): boolean {
    return this.jobs.get(jobId)?.unconfirmed ?? false;
  }

  /** The job ended: its slot is gone. */
  forget(jobId: string): void {
    this.jobs.delete(jobId);
  }
}

/** What an administrator is told of a job whose claims hold nobody back (a condition while it lasts). */
export function unconfirmedCondition(job: JobView): Condition {
  return {
    key: `unconfirmed:${job.id}`,
    kind: 'contention',
    severity: 'warning',
    gpu: job.gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0]?.split('/').pop() ?? '?'}, ${job.owner}) claims launch-gate activity the driver does not confirm (no SM use, no memory growth for ${CLAIM_CONFIRM_MS / 1000} s): it holds no other job back until it computes.`,
  };
}
