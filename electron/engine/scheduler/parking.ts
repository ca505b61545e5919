// Park and unpark, the steps of the control loop that carry out a ParkWish: a job's GPU memory
// goes to host memory through the driver's checkpoint calls (lock → checkpoint) and comes back on
// the same GPU (restore → unlock). A refused or failed step leaves the job as it was. Only the
// loop runs these (park-wishes.ts, in a step); a command or a policy asks (Scheduler.requestPark).
import { formatByteSize, gpusPhrase, type Alert } from '../../../shared/jobs.js';
import { ApiError } from '../api/api-error.js';
import { checkpointErrorName, type ProcessCheckpointer } from '../holds/checkpointer.js';
import type { JobActuators, ParkStepError } from './actuators.js';
import type { JobEvent } from './job-state.js';
import type { JobRecord } from './job-table.js';
import type { ProcessRef } from '../proc/proc-status.js';
import type { Snapshot } from '../../../shared/snapshot.js';

/** What a park step needs of the loop that runs it. */
export interface ParkStepContext {
  readonly act: JobActuators;
  /** Move the job by an event of the state machine (the loop's one way to change a state). */
  fire(record: JobRecord, event: JobEvent, reason: string): boolean;
  /** Its state from its holds again (a hold from before the park still applies). */
  settle(record: JobRecord, why: string): void;
  raiseAlert(alert: Omit<Alert, 'id' | 'at'>): void;
  /** Free memory on a GPU as the latest published snapshot shows it. */
  memoryFree(gpu: number): number | null | undefined;
  /** The job's processes that hold GPU memory, as the driver lists them (a job's workers, an enrolled job's members). */
  gpuPids(record: JobRecord): number[];
}

/**
 * The job's processes in the snapshot's driver list (`jobOf`: the job a pid belongs to), its main one first; none listed:
 * its main one. Never one of our MPS servers (`ownMpsServers`: they hold every client's context).
 */
export function jobGpuPids(snapshot: Snapshot | null, record: JobRecord, jobOf: (pid: number) => string | null | undefined, ownMpsServers: ReadonlySet<number>): number[] {
  const main = record.view.pid!;
  const listed = new Set<number>();
  for (const p of snapshot?.processes ?? []) if (!ownMpsServers.has(p.pid) && (p.pid === main || jobOf(p.pid) === record.view.id)) listed.add(p.pid);
  if (listed.size === 0) return [main];
  return [...listed].sort((a, b) => Number(b === main) - Number(a === main) || a - b);
}

const why = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function noRoom(id: string, where: string, bytes: number, free: number | null | undefined): string {
  const have = typeof free === 'number' ? ` (it needs ${formatByteSize(bytes)}, ${formatByteSize(free)} is free)` : ` (it needs ${formatByteSize(bytes)})`;
  return `Cannot unpark ${id}: not enough free memory to unpark on ${where}${have} — try later. It stays parked.`;
}

/**
 * Why a park or unpark cannot be asked for now (an ApiError, thrown), checked when it is asked and
 * again when the loop begins it; the caller has checked the job and the caller's right to it.
 */
export function checkParkWish(checkpointer: ProcessCheckpointer, record: JobRecord, want: 'park' | 'unpark'): void {
  const job = record.view;
  const unsupported = checkpointer.supported();
  if (unsupported) throw new ApiError('unsupported', `Cannot ${want} ${job.id}: ${unsupported}`);
  if (job.state === 'parking' || job.state === 'unparking') throw new ApiError('conflict', `Cannot ${want} ${job.id}: it is being ${job.state === 'parking' ? 'parked' : 'unparked'} right now; try again in a moment.`);
  if (job.pid === null) throw new ApiError('conflict', `Cannot ${want} ${job.id}: it has no process.`);
  if (want === 'unpark') {
    if (job.state !== 'parked') throw new ApiError('conflict', `Cannot unpark ${job.id}: it is not parked (it is ${job.state}).`);
    return;
  }
  if (job.state === 'parked') throw new ApiError('conflict', `${job.id} is already parked (since ${new Date(record.parked?.at ?? Date.now()).toLocaleTimeString()}).`);
  if (job.state !== 'running' && job.state !== 'gated') {
    const hint = job.state === 'suspended' ? ' it is suspended; resume it first (a stopped process cannot reach a safe point).' : ` it is ${job.state}, not running.`;
    throw new ApiError('conflict', `Cannot park ${job.id}:${hint}`);
  }
}

/**
 * automatic: parked by auto-park and restored at its next CUDA call; no one needs to act, so no
 * alert is raised (its history says it; a notebook would raise two per cell).
 */
export async function parkJob(loop: ParkStepContext, record: JobRecord, by: string, automatic = false): Promise<void> {
  const job = record.view;
  const gpu = job.gpu!;
  const where = gpusPhrase(job); // a job on several GPUs parks and comes back on all of them
  const bytes = job.usedMemory ?? 0;
  const pids = loop.gpuPids(record);
  loop.fire(record, 'park', `parking, asked by ${by}`);
  loop.act.setGateMember(record, false); // a checkpoint-locked job must not hold higher jobs back mid-launch
  let processes: ProcessRef[];
  try {
    processes = await loop.act.park(record, pids);
  } catch (error) {
    loop.act.setGateMember(record, true);
    const step = error as ParkStepError;
    const message = `Could not park ${job.id}: ${why(error)}. ${step.undoFailure === null ? 'It keeps running' : `Undoing the rest failed too (${step.undoFailure})`} on ${where}.`;
    loop.fire(record, 'park-failed', message); // the loop's next step decides its gating again
    throw new ApiError('conflict', message);
  }
  record.parked = { gpu, bytes, at: Date.now(), processes };
  job.usedMemory = 0;
  job.smPercent = 0;
  if (!loop.fire(record, 'parked', `parked by ${by}: ${formatByteSize(bytes)} of ${where} memory moved to host memory`)) return; // it ended meanwhile
  if (automatic) return;
  loop.raiseAlert({
    kind: 'parked',
    severity: 'info',
    gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0].split('/').pop()}) is parked: its ${formatByteSize(bytes)} on ${where} moved to host memory and ${where} ${job.gpus.length > 1 ? 'are' : 'is'} free for others. Unpark it to continue on ${where}.`,
  });
}

export async function unparkJob(loop: ParkStepContext, record: JobRecord, by: string, automatic = false): Promise<void> {
  const job = record.view;
  const gpu = job.gpu!;
  const where = gpusPhrase(job); // a job on several GPUs parks and comes back on all of them
  const bytes = record.parked?.bytes ?? 0;
  loop.fire(record, 'unpark', `unparking, asked by ${by}`);
  try {
    await loop.act.unpark(record);
  } catch (error) {
    const step = error as ParkStepError;
    let message: string;
    if (step.step === 'restore' && checkpointErrorName(step.cause) === 'CUDA_ERROR_OUT_OF_MEMORY') {
      message = noRoom(job.id, where, bytes, job.gpus.length > 1 ? null : loop.memoryFree(gpu));
    } else if (step.step === 'restore') {
      message = `Could not unpark ${job.id}: ${why(error)}. It stays parked.`;
    } else {
      message = `Could not unpark ${job.id}: its memory is back on ${where} but unlocking failed: ${why(error)}.`;
    }
    if (step.step === 'restore' && step.undoFailure !== null) message += ` Some of its processes came back and could not be moved out again (${step.undoFailure}).`;
    loop.fire(record, 'unpark-failed', message);
    throw new ApiError('conflict', message);
  }
  record.parked = null;
  loop.act.setGateMember(record, true);
  loop.act.applyPriority(record); // a priority set while it was parked
  if (!loop.fire(record, 'unparked', `unparked by ${by} on ${where}`)) return;
  loop.settle(record, 'held back as before it was parked'); // a hold from before the park still applies
  if (automatic) return;
  loop.raiseAlert({
    kind: 'resumed',
    severity: 'info',
    gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0].split('/').pop()}) is unparked: its ${formatByteSize(bytes)} are back on ${where} and it runs again.`,
  });
}
