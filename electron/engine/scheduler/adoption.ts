// Jobs of an earlier engine: a new engine takes them back from the job store (queued ones wait on,
// live ones are adopted with their gate slots, gone ones are lost), and hears from the guardian what
// it let go of while the engine was stopped or hung.
import { FINAL_STATES } from '../../../shared/jobs.js';
import { checkpointErrorName } from '../holds/checkpointer.js';
import type { ParkStepError } from './actuators.js';
import { PARK_STATES } from './job-state.js';
import type { JobRecord } from './job-table.js';
import type { Scheduler } from './scheduler.js';

/**
 * A job kept by an earlier engine, alive again in this one: queued jobs wait as they did; a job whose
 * process still runs (same pid and start time) is adopted; one whose process is gone is lost.
 */
export async function restoreJob(scheduler: Scheduler, view: JobRecord['view'], kept: Partial<JobRecord>): Promise<void> {
  const record = scheduler.table.add(view, kept);
  const { state, pid } = record.view;
  if (state === 'queued' || FINAL_STATES.has(state)) return;
  if (pid === null || !scheduler.processAlive(record)) {
    scheduler.fire(record, 'lose', 'its process ended while no engine watched it (exit status unknown)');
    return;
  }
  record.adopted = true;
  record.holds.clear(); // the earlier engine let go of every hold when it stopped (or its guardian did)
  const keptSlot = record.slot;
  record.slot = null;
  scheduler.act.adoptSlot(record, keptSlot); // gated again where its slot is still its own
  scheduler.ownership.claim(record.view.id, record.view.owner, pid, record.startTicks);
  if (PARK_STATES.has(state)) {
    // the earlier engine (or its guardian) restored it unless its GPU had no room: then the restore is refused for memory
    const stillParked = await scheduler.act.unpark(record).then(
      () => false,
      (error: unknown) => checkpointErrorName((error as ParkStepError).cause) === 'CUDA_ERROR_OUT_OF_MEMORY',
    );
    if (stillParked) {
      scheduler.act.setGateMember(record, false); // checkpointed: it holds nobody back
      scheduler.fire(record, 'adopt-parked', `re-adopted by a new engine, still parked (not enough free memory on GPU ${record.view.gpu})`);
      return;
    }
  }
  scheduler.fire(record, 'adopt', `re-adopted by a new engine (pid ${pid})`);
  scheduler.act.attach(record);
}

/** The guardian let these go while this engine was stopped or hung (continued, or restored and unlocked): policies decide again. */
export function releasedByGuardian(scheduler: Scheduler, entries: ReadonlyArray<{ jobId: string; hold?: string }>): void {
  for (const { jobId, hold } of entries) {
    const record = scheduler.table.get(jobId);
    if (!record) continue;
    if (hold === 'park' && record.view.state === 'parked') {
      scheduler.fire(record, 'unpark', 'the guardian restored it while the engine was stopped');
      record.parked = null;
      scheduler.act.setGateMember(record, true);
      scheduler.fire(record, 'unparked', `back on GPU ${record.view.gpu}`);
      continue;
    }
    if (record.holds.size === 0) continue;
    record.holds.clear();
    scheduler.settle(record, 'resumed by the guardian while the engine was stopped');
  }
  scheduler.scheduleEvaluation();
}
