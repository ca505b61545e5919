// Drops onto a GPU's MPS zone or a MIG slice: the job's sharing mode changes in the engine (a queued
// job then starts there). A refusal snaps the card back and shows the engine's message.
// Also starting and stopping the engine's MPS daemon for one GPU.
import type { JobView } from '../../../shared/jobs.js';
import { apply, gpuCardSelector } from './job-actions.js';
import { stepsToMps } from './lane-move.js';
import { engineApi } from './engine-api.js';
import { refreshMpsStatus } from '../data/mps-feed.js';
import { showNotice } from '../stores/ui-store.js';

export async function runJobUnderMps(job: JobView, gpu: number, sharePercent: number): Promise<boolean> {
  const done = await apply(job, { gpu }, stepsToMps(job, gpu, sharePercent), `${job.id} could not run under MPS on GPU ${gpu} with a ${sharePercent}% SM share`, [gpuCardSelector(gpu)]);
  if (done) void refreshMpsStatus();
  return done;
}

/** Run a queued job in a MIG slice; with a share, as a client of the slice's own MPS daemon (the first one starts it). */
export async function runJobInMigSlice(job: JobView, slice: string, mpsSharePercent: number | null = null): Promise<boolean> {
  const params = { job: job.id, mode: 'mig' as const, migSlice: slice, ...(mpsSharePercent === null ? {} : { mpsSharePercent }) };
  const refusal = `${job.id} could not run in MIG slice ${slice}${mpsSharePercent === null ? '' : ` with a ${mpsSharePercent}% SM share through MPS`}`;
  const done = await apply(job, {}, [{ method: 'jobs.setMode', params }], refusal, [`.mig-slice[data-slice="${slice}"]`]);
  if (done && mpsSharePercent !== null) void refreshMpsStatus();
  return done;
}

/** Start (on) or stop the engine's MPS daemon for a GPU; a refusal shows the engine's message. */
export async function switchMps(gpu: number, on: boolean): Promise<boolean> {
  try {
    if (on) await engineApi().call('mps.start', { gpu });
    else await engineApi().call('mps.stop', { gpu });
    return true;
  } catch (error) {
    showNotice(`MPS could not ${on ? 'start' : 'stop'} on GPU ${gpu}: ${error instanceof Error ? error.message : String(error)}`, 'error', [gpuCardSelector(gpu)]);
    return false;
  } finally {
    await refreshMpsStatus(); // a refusal may mean the state moved under us, too
  }
}
