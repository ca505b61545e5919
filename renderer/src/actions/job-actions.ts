// What a drop (or its keyboard equivalent) asks of the engine. The card shows the new
// place at once; a refusal puts it back and shows the engine's own message.
import { mpsPriorityNote, type JobView } from '../../../shared/jobs.js';
import { LANES } from '../data/board-jobs.js';
import { stepsToLane, type Step } from './lane-move.js';
import { refreshJobs } from '../data/feed.js';
import { formatBytes } from '../format.js';
import { alertsStore } from '../stores/alerts-store.js';
import { jobsStore, setPending, type Lane, type PendingChange } from '../stores/jobs-store.js';
import { showNotice } from '../stores/ui-store.js';
import { engineApi } from './engine-api.js';

export type { Step } from './lane-move.js';

const laneTitle = (lane: Lane): string => LANES.find((l) => l.lane === lane)?.title ?? lane;

/** The job's card on the board and a GPU's card: what a notice about them must not cover. */
export const jobCardSelector = (id: string): string => `.job-card[data-job="${id}"]`;
export const gpuCardSelector = (gpu: number): string => `.gpu-card[data-gpu="${gpu}"]`;

/**
 * Run the steps in order, showing the job at its new place meanwhile; a refusal snaps it back with the engine's message.
 * `about`: the drop target's selectors besides the job's own card (the notice leaves them in sight).
 */
export async function apply(job: JobView, pending: PendingChange, steps: Step[], refusal: string, about: string[] = []): Promise<boolean> {
  setPending(job.id, pending);
  try {
    let updated: JobView | null = null;
    for (const step of steps) updated = (await engineApi().call(step.method, step.params as never)) as JobView;
    if (updated) {
      const view = updated;
      jobsStore.setState((s) => ({ jobs: s.jobs.map((j) => (j.id === view.id ? view : j)) }));
    }
    setPending(job.id, null);
    void refreshJobs(engineApi());
    return true;
  } catch (error) {
    setPending(job.id, null); // snap back
    showNotice(`${refusal}: ${error instanceof Error ? error.message : String(error)}`, 'error', [jobCardSelector(job.id), ...about]);
    return false;
  }
}

export function moveJobToLane(job: JobView, lane: Lane): Promise<boolean> {
  const steps = stepsToLane(job, lane);
  if (typeof steps === 'string') {
    showNotice(`${job.id} stays where it is: ${steps}`, 'error', [jobCardSelector(job.id), `.lane[data-lane="${lane}"]`]);
    return Promise.resolve(false);
  }
  if (steps.length === 0) return Promise.resolve(true);
  return apply(job, { lane }, steps, `${job.id} could not move to ${laneTitle(lane)}`).then((moved) => {
    const view = moved ? jobsStore.getState().jobs.find((j) => j.id === job.id) : undefined;
    const note = view ? mpsPriorityNote(view) : null; // the drop moved its lane, but not what its MPS clients started with
    if (note) showNotice(note, 'info', [jobCardSelector(job.id)]);
    return moved;
  });
}

export function setJobQuota(job: JobView, bytes: number | null): Promise<boolean> {
  if (bytes === job.memoryQuotaBytes) return Promise.resolve(true);
  const what = bytes === null ? 'have its memory quota removed' : `get a ${formatBytes(bytes)} memory quota`;
  return apply(job, { memoryQuotaBytes: bytes }, [{ method: 'jobs.setQuota', params: { job: job.id, bytes } }], `${job.id} could not ${what}`);
}

/** How long to wait for the scheduler's word on why a placed job waits (it decides on its next tick). */
const WAIT_REASON_MS = 5000;

export async function placeJob(job: JobView, gpu: number): Promise<boolean> {
  const placed = await apply(job, { gpu }, [{ method: 'jobs.place', params: { job: job.id, gpu } }], `${job.id} could not be placed on GPU ${gpu}`, [gpuCardSelector(gpu)]);
  if (placed) void explainWait(job.id, gpu);
  return placed;
}

/** A placed job that stays queued (an exclusive job on a busy GPU) would look like a drop that did nothing: say why it waits. */
async function explainWait(id: string, gpu: number): Promise<void> {
  const stillQueued = (): boolean => jobsStore.getState().jobs.find((j) => j.id === id)?.state === 'queued';
  const reason = (): string | undefined => alertsStore.getState().conditions.find((c) => c.kind === 'waiting' && c.jobId === id)?.message;
  const message = reason() ?? (await new Promise<string | undefined>((resolve) => {
    const stop = alertsStore.subscribe(() => {
      if (reason()) done(reason());
    });
    const timer = setTimeout(() => done(undefined), WAIT_REASON_MS);
    function done(found: string | undefined): void {
      stop();
      clearTimeout(timer);
      resolve(found);
    }
  }));
  if (!stillQueued()) return; // it started meanwhile: the card says so
  showNotice(`${id} is placed on GPU ${gpu} but does not start yet: ${message ?? 'it waits in the queue until the scheduler admits it.'}`, 'info', [jobCardSelector(id), gpuCardSelector(gpu)]);
}

/** Park: the job's GPU memory goes to host memory and its GPU is free until it is unparked. */
export function parkJob(job: JobView): Promise<boolean> {
  return apply(job, { lane: 'paused' }, [{ method: 'jobs.park', params: { job: job.id } }], `${job.id} could not be parked`);
}

export function unparkJob(job: JobView): Promise<boolean> {
  return apply(job, { lane: job.priority }, [{ method: 'jobs.unpark', params: { job: job.id } }], `${job.id} could not be unparked`);
}
