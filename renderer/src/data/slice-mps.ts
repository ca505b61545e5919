// MPS inside MIG slices as the console words it: a slice daemon's clients (the jobs sharing the slice,
// each with its SM share) for the slice's tile and the GPU's MPS list, and the share a person types.
import { FINAL_STATES, type JobView } from '../../../shared/jobs.js';
import type { MpsGpuStatus, MpsStartedFor } from '../../../shared/spatial.js';

export interface SliceMpsClient {
  jobId: string;
  pid: number | null;
  /** Its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: the part of the slice's SMs it may use. */
  sharePercent: number;
}

const jobNumber = (id: string): number => Number(id.replace(/^\D+/, '')) || 0;

/** The jobs sharing slice `uuid` through its MPS daemon: started (a queued one is no client yet) and not ended, j2 before j10. */
export function sliceMpsClients(jobs: readonly JobView[], uuid: string): SliceMpsClient[] {
  return jobs
    .filter((j) => j.mode === 'mig' && j.migSlice === uuid && j.mpsSharePercent !== null && j.state !== 'queued' && !FINAL_STATES.has(j.state))
    .map((j) => ({ jobId: j.id, pid: j.pid, sharePercent: j.mpsSharePercent! }))
    .sort((a, b) => jobNumber(a.jobId) - jobNumber(b.jobId) || a.jobId.localeCompare(b.jobId));
}

/** The started, live MPS clients (whole-GPU or in a slice), "j3 j4": when it changes, a daemon has started or may have stopped. */
export function mpsClientKey(jobs: readonly JobView[]): string {
  const clients = jobs.filter((j) => (j.mode === 'mps' || (j.mode === 'mig' && j.mpsSharePercent !== null)) && j.state !== 'queued' && !FINAL_STATES.has(j.state));
  return clients.map((j) => j.id).sort().join(' ');
}

/** "j3 50% · j4 30%": short enough for a slice's tile. */
export const clientShares = (clients: readonly SliceMpsClient[]): string => clients.map((c) => `${c.jobId} ${c.sharePercent}%`).join(' · ');

/** The sentence a screen reader and a tooltip give: "MPS daemon with 2 clients: j3 50 %, j4 30 % of its SMs". */
export function sliceMpsSentence(clients: readonly SliceMpsClient[]): string {
  if (clients.length === 0) return 'MPS daemon with no clients now';
  const shares = clients.map((c) => `${c.jobId} ${c.sharePercent} %`).join(', ');
  return `MPS daemon with ${clients.length} client${clients.length === 1 ? '' : 's'}: ${shares} of its SMs`;
}

/** What a one-memory-slice tile has room for: "MPS 2" (the clients counted; the sentence is in its tooltip). */
export const narrowSliceMpsMark = (clients: readonly SliceMpsClient[]): string => `MPS ${clients.length}`;

/** A MIG UUID's last 8 characters, enough to tell a box's slices apart: "…3f9a01bc". */
export const uuidTail = (uuid: string): string => `…${uuid.slice(-8)}`;

/** Why the engine's daemon runs, in words: it stops with its last job, or runs until someone stops it. */
const STARTED_FOR: Record<MpsStartedFor, string> = { jobs: 'for jobs', request: 'on request' };

/** A daemon's state in a few words: "off", "on, ours (ada), for jobs", "held by user bob". */
export function daemonStateText(status: Pick<MpsGpuStatus, 'state' | 'user' | 'heldBy' | 'startedFor'>): string {
  if (status.state === 'off') return 'off';
  if (status.state === 'held') return `held by user ${status.heldBy ?? status.user ?? '?'}`;
  return `on, ours (${status.user ?? '?'})${status.startedFor ? `, ${STARTED_FOR[status.startedFor]}` : ''}`;
}

/** What the tooltip adds on why it runs: when it will stop. */
export function startedForHint(startedFor: MpsStartedFor | undefined): string | null {
  if (startedFor === 'jobs') return 'Started for its jobs: it stops when the last one ends.';
  if (startedFor === 'request') return 'Started on request: it runs until someone stops it.';
  return null;
}

export type ShareInput = { share: number; error: null } | { share: null; error: string };

const RANGE = 'give a whole percentage from 1 to 100';

/** The SM share a person typed ("50", "50 %"), or why it cannot be one: the prompt says so and applies nothing. */
export function parseSmShare(text: string): ShareInput {
  const typed = text.trim().replace(/\s*%$/, '');
  if (typed === '') return { share: null, error: `SM share is empty: ${RANGE}.` };
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(typed)) return { share: null, error: `SM share "${text.trim()}" is not a number: ${RANGE}.` };
  const share = Number(typed);
  if (!Number.isInteger(share)) return { share: null, error: `SM share ${share} % is not a whole number: ${RANGE}.` };
  if (share < 1 || share > 100) return { share: null, error: `SM share ${share} % is out of range: ${RANGE}.` };
  return { share, error: null };
}
