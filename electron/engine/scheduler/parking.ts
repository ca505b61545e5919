// Park and unpark: a job's GPU memory goes to host memory through the driver's
// checkpoint calls (lock → checkpoint) and comes back on the same GPU (restore →
// unlock). A refused or failed step leaves the job as it was.
import { formatByteSize } from '../../../shared/jobs.js';
import { ApiError } from '../api/api-error.js';
import { checkpointErrorName } from '../control/checkpointer.js';
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

/** Refusals common to park and unpark; the caller has checked the job and the caller's right to it. */
function checkPossible(scheduler: Scheduler, record: JobRecord, action: 'park' | 'unpark'): number {
  const job = record.view;
  const unsupported = scheduler.checkpointer.supported();
  if (unsupported) throw new ApiError('unsupported', `Cannot ${action} ${job.id}: ${unsupported}`);
  if (record.parking) throw new ApiError('conflict', `Cannot ${action} ${job.id}: it is being ${record.parking === 'park' ? 'parked' : 'unparked'} right now; try again in a moment.`);
  if (job.pid === null) throw new ApiError('conflict', `Cannot ${action} ${job.id}: it has no process.`);
  return job.pid;
}

export async function parkJob(scheduler: Scheduler, record: JobRecord, by: string): Promise<void> {
  const job = record.view;
  const pid = checkPossible(scheduler, record, 'park');
  if (job.state === 'parked') throw new ApiError('conflict', `${job.id} is already parked (since ${new Date(record.parked!.at).toLocaleTimeString()}).`);
  if (job.state !== 'running' && job.state !== 'gated') {
    const hint = job.state === 'suspended' ? ' it is suspended; resume it first (a stopped process cannot reach a safe point).' : ` it is ${job.state}, not running.`;
    throw new ApiError('conflict', `Cannot park ${job.id}:${hint}`);
  }
  const gpu = job.gpu!;
  const bytes = job.usedMemory ?? 0;
  const checkpointer = scheduler.checkpointer;
  record.parking = 'park';
  try {
    try {
      await checkpointer.lock(pid);
    } catch (error) {
      throw new ApiError('conflict', `Could not park ${job.id}: ${why(error)}. It keeps running on GPU ${gpu}.`);
    }
    try {
      await checkpointer.checkpoint(pid);
    } catch (error) {
      const undo = await checkpointer.unlock(pid).then(() => 'It keeps running', (e: unknown) => `Unlocking it failed too (${why(e)})`);
      throw new ApiError('conflict', `Could not park ${job.id}: ${why(error)}. ${undo} on GPU ${gpu}.`);
    }
  } finally {
    record.parking = null;
  }
  record.parked = { gpu, bytes, at: Date.now() };
  job.usedMemory = 0;
  job.smPercent = 0;
  scheduler.table.transition(record, 'parked', `parked by ${by}: ${formatByteSize(bytes)} of GPU ${gpu} memory moved to host memory`);
  scheduler.options.engine.raiseAlert({
    kind: 'parked',
    severity: 'info',
    gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0].split('/').pop()}) is parked: its ${formatByteSize(bytes)} on GPU ${gpu} moved to host memory and GPU ${gpu} is free for others. Unpark it to continue on GPU ${gpu}.`,
  });
}

export async function unparkJob(scheduler: Scheduler, record: JobRecord, by: string): Promise<void> {
  const job = record.view;
  const pid = checkPossible(scheduler, record, 'unpark');
  if (job.state !== 'parked' || !record.parked) throw new ApiError('conflict', `Cannot unpark ${job.id}: it is not parked (it is ${job.state}).`);
  const { gpu, bytes } = record.parked;
  const checkpointer = scheduler.checkpointer;
  record.parking = 'unpark';
  try {
    try {
      await checkpointer.restore(pid);
    } catch (error) {
      if (checkpointErrorName(error) === 'CUDA_ERROR_OUT_OF_MEMORY') {
        const free = scheduler.snapshot().gpus.find((g) => g.index === gpu)?.memoryFree;
        const have = typeof free === 'number' ? ` (it needs ${formatByteSize(bytes)}, ${formatByteSize(free)} is free)` : ` (it needs ${formatByteSize(bytes)})`;
        throw new ApiError('conflict', `Cannot unpark ${job.id}: not enough free memory to unpark on GPU ${gpu}${have} — try later. It stays parked.`);
      }
      throw new ApiError('conflict', `Could not unpark ${job.id}: ${why(error)}. It stays parked.`);
    }
    try {
      await checkpointer.unlock(pid);
    } catch (error) {
      throw new ApiError('conflict', `Could not unpark ${job.id}: its memory is back on GPU ${gpu} but unlocking failed: ${why(error)}.`);
    }
  } finally {
    record.parking = null;
  }
  record.parked = null;
  scheduler.table.transition(record, 'running', `unparked by ${by} on GPU ${gpu}`);
  scheduler.options.engine.raiseAlert({
    kind: 'resumed',
    severity: 'info',
    gpu,
    jobId: job.id,
    message: `${job.id} (${job.argv[0].split('/').pop()}) is unparked: its ${formatByteSize(bytes)} are back on GPU ${gpu} and it runs again.`,
  });
}

/** Engine shutdown: a parked process must not stay locked forever; give it back its GPU where it fits. */
export function unparkAllOnStop(scheduler: Scheduler, records: readonly JobRecord[]): void {
  for (const r of records) {
    if (r.view.state !== 'parked' || r.view.pid === null) continue;
    const pid = r.view.pid;
    void scheduler.checkpointer
      .restore(pid)
      .then(() => scheduler.checkpointer.unlock(pid))
      .catch(() => undefined); // not enough memory: it stays parked; `gpushare jobs` in the next engine shows it
  }
}
