// Park and unpark: a job's GPU memory goes to host memory through the driver's
// checkpoint calls (lock → checkpoint) and comes back on the same GPU (restore →
// unlock). A refused or failed step leaves the job as it was.
import { formatByteSize } from '../../../shared/jobs.js';
import { ApiError } from '../api/api-error.js';
import { checkpointErrorName } from '../holds/checkpointer.js';
import type { ParkStepError } from './actuators.js';
import type { JobRecord } from './job-table.js';
import type { Scheduler } from './scheduler.js';

/** What a parked job left on its GPU. */
export interface ParkedJob {
  gpu: number;
  /** GPU memory it held when parked (the last reading), bytes. */
  bytes: number;
  at: number;
}

const why = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function noRoom(id: string, gpu: number, bytes: number, free: number | null | undefined): string {
  const have = typeof free === 'number' ? ` (it needs ${formatByteSize(bytes)}, ${formatByteSize(free)} is free)` : ` (it needs ${formatByteSize(bytes)})`;
  return `Cannot unpark ${id}: not enough free memory to unpark on GPU ${gpu}${have} — try later. It stays parked.`;
}

/** Refusals common to park and unpark; the caller has checked the job and the caller's right to it. */
function checkPossible(scheduler: Scheduler, record: JobRecord, action: 'park' | 'unpark'): void {
  const job = record.view;
  const unsupported = scheduler.checkpointer.supported();
  if (unsupported) throw new ApiError('unsupported', `Cannot ${action} ${job.id}: ${unsupported}`);
  if (job.state === 'parking' || job.state === 'unparking') throw new ApiError('conflict', `Cannot ${action} ${job.id}: it is being ${job.state === 'parking' ? 'parked' : 'unparked'} right now; try again in a moment.`);
  if (job.pid === null) throw new ApiError('conflict', `Cannot ${action} ${job.id}: it has no process.`);
}

/**
 * automatic: parked by auto-park and restored at its next CUDA call; no one needs to act, so no
 * alert is raised (its history says it; a notebook would raise two per cell).
 */
export async function parkJob(scheduler: Scheduler, record: JobRecord, by: string, automatic = false): Promise<void> {
  const job = record.view;
  checkPossible(scheduler, record, 'park');
  if (job.state === 'parked') throw new ApiError('conflict', `${job.id} is already parked (since ${new Date(record.parked?.at ?? Date.now()).toLocaleTimeString()}).`);
  if (job.state !== 'running' && job.state !== 'gated') {
    const hint = job.state === 'suspended' ? ' it is suspended; resume it first (a stopped process cannot reach a safe point).' : ` it is ${job.state}, not running.`;
    throw new ApiError('conflict', `Cannot park ${job.id}:${hint}`);
  }
  const gpu = job.gpu!;
  const bytes = job.usedMemory ?? 0;
  const wasState = job.state;
  scheduler.fire(record, 'park', `parking, asked by ${by}`);
  scheduler.act.setGateMember(record, false); // a checkpoint-locked job must not hold higher jobs back mid-launch
  try {
    await scheduler.act.park(record);
  } catch (error) {
    scheduler.act.setGateMember(record, true);
    const step = error as ParkStepError;
    const message =
      step.step === 'lock'
        ? `Could not park ${job.id}: ${why(error)}. It keeps running on GPU ${gpu}.`
        : `Could not park ${job.id}: ${why(error)}. ${step.undoFailure === null ? 'It keeps running' : `Unlocking it failed too (${step.undoFailure})`} on GPU ${gpu}.`;
    if (scheduler.fire(record, 'park-failed', message) && wasState === 'gated') scheduler.scheduleEvaluation(); // the gate decides again
    throw new ApiError('conflict', message);
  }
  record.parked = { gpu, bytes, at: Date.now() };
  job.usedMemory = 0;
  job.smPercent = 0;
  if (!scheduler.fire(record, 'parked', `parked by ${by}: ${formatByteSize(bytes)} of GPU ${gpu} memory moved to host memory`)) return; // it ended meanwhile
  if (automatic) return;
  scheduler.options.engine.raiseAlert({
    kind: 'parked',
    severity: 'info',
    gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0].split('/').pop()}) is parked: its ${formatByteSize(bytes)} on GPU ${gpu} moved to host memory and GPU ${gpu} is free for others. Unpark it to continue on GPU ${gpu}.`,
  });
}

export async function unparkJob(scheduler: Scheduler, record: JobRecord, by: string, automatic = false): Promise<void> {
  const job = record.view;
  checkPossible(scheduler, record, 'unpark');
  if (job.state !== 'parked') throw new ApiError('conflict', `Cannot unpark ${job.id}: it is not parked (it is ${job.state}).`);
  const gpu = job.gpu!;
  const bytes = record.parked?.bytes ?? 0;
  scheduler.fire(record, 'unpark', `unparking, asked by ${by}`);
  try {
    await scheduler.act.unpark(record);
  } catch (error) {
    const step = error as ParkStepError;
    let message: string;
    if (step.step === 'restore' && checkpointErrorName(step.cause) === 'CUDA_ERROR_OUT_OF_MEMORY') {
      message = noRoom(job.id, gpu, bytes, scheduler.snapshot().gpus.find((g) => g.index === gpu)?.memoryFree);
    } else if (step.step === 'restore') {
      message = `Could not unpark ${job.id}: ${why(error)}. It stays parked.`;
    } else {
      message = `Could not unpark ${job.id}: its memory is back on GPU ${gpu} but unlocking failed: ${why(error)}.`;
    }
    scheduler.fire(record, 'unpark-failed', message);
    throw new ApiError('conflict', message);
  }
  record.parked = null;
  scheduler.act.setGateMember(record, true);
  scheduler.act.applyPriority(record); // a priority set while it was parked
  if (!scheduler.fire(record, 'unparked', `unparked by ${by} on GPU ${gpu}`)) return;
  scheduler.settle(record, 'held back as before it was parked'); // a hold from before the park still applies
  scheduler.scheduleEvaluation(); // priority and quota apply to it again
  if (automatic) return;
  scheduler.options.engine.raiseAlert({
    kind: 'resumed',
    severity: 'info',
    gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0].split('/').pop()}) is unparked: its ${formatByteSize(bytes)} are back on GPU ${gpu} and it runs again.`,
  });
}
