// Jobs of an earlier engine: a new engine takes them back from the job store (queued ones wait on,
// live ones are adopted with their gate slots, gone ones are lost). This module decides; the control
// loop's steps carry the decisions out (Scheduler.takeBack), one job after another, before anything
// else is decided.
import { FINAL_STATES } from '../../../shared/jobs.js';
import { checkpointErrorName } from '../holds/checkpointer.js';
import type { ParkStepError } from './actuators.js';
import { PARK_STATES } from './job-state.js';
import type { JobRecord } from './job-table.js';

/** What a step does with a job an earlier engine kept. */
export type Adoption =
  | { kind: 'wait' } // queued (or ended): as it was
  | { kind: 'lose'; reason: string }
  /** restore: it was parked; the earlier engine (or its guardian) restored it unless its GPU had no room, so its memory goes back first. */
  | { kind: 'adopt'; restore: boolean };

/**
 * A job whose process still runs (same pid and start time: `alive`) is adopted; one whose process is gone is lost,
 * and so is one kept without its process's start time (`startTicks` null): its pid alone may name another process now.
 */
export function decideAdoption(view: JobRecord['view'], startTicks: number | null, alive: () => boolean): Adoption {
  const { state, pid } = view;
  if (state === 'queued' || FINAL_STATES.has(state)) return { kind: 'wait' };
  if (pid !== null && startTicks === null) return { kind: 'lose', reason: `an earlier engine kept pid ${pid} without its start time, so it cannot be told from a process that took the pid since: not adopted` };
  if (pid === null || !alive()) return { kind: 'lose', reason: 'its process ended while no engine watched it (exit status unknown)' };
  return { kind: 'adopt', restore: PARK_STATES.has(state) };
}

/** The restore of an adopted parked job failed: it stays parked when its GPU had no room (the restore refused for memory). */
export function staysParked(error: unknown): boolean {
  return checkpointErrorName((error as ParkStepError).cause) === 'CUDA_ERROR_OUT_OF_MEMORY';
}
