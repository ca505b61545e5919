// What a drop on a lane or a GPU's MPS zone asks of the engine (the console's board and its keyboard moves).
import type { ApiMethod, ApiParams } from '../../../shared/api.js';
import type { JobView } from '../../../shared/jobs.js';
import { laneOf, pausedByUser } from '../data/board-jobs.js';
import type { Lane } from '../stores/jobs-store.js';

export type Step = { [M in ApiMethod]: { method: M; params: ApiParams<M> } }[ApiMethod];

/** A drop on `lane` as one request (jobs.move: the engine applies all of it or, refusing a part, none), or why it cannot move. */
export function stepsToLane(job: JobView, lane: Lane): Step[] | string {
  const current = laneOf(job);
  if (lane === current) return [];
  if (lane === 'queue') return 'A job cannot go back to the queue; drop it on Paused to stop it for now.';
  if (lane === 'paused') return [{ method: 'jobs.move', params: { job: job.id, action: 'suspend' } }];
  const action = job.state === 'suspended' && pausedByUser(job) ? 'resume' : job.state === 'parked' ? 'unpark' : undefined;
  const priority = job.priority !== lane ? lane : undefined;
  if (!action && !priority) return [];
  return [{ method: 'jobs.move', params: { job: job.id, ...(priority ? { priority } : {}), ...(action ? { action } : {}) } }];
}

/** A queued job dropped on a GPU's MPS zone with an SM share: one move, its GPU and its share together. */
export function stepsToMps(job: JobView, gpu: number, sharePercent: number): Step[] {
  return [{ method: 'jobs.move', params: { job: job.id, ...(job.gpu === gpu ? {} : { gpu }), mode: 'mps', mpsSharePercent: sharePercent } }];
}
