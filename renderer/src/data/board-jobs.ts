// The jobs the board and the table show: the engine's list, or — while the engine has no
// scheduler — the GPU processes of the last snapshot as read-only "p<pid>" entries.
import { FINAL_STATES, type JobView } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { Lane, PendingChange } from '../stores/jobs-store.js';

export const LANES: ReadonlyArray<{ lane: Lane; title: string; hint: string }> = [
  { lane: 'high', title: 'High', hint: 'runs first; others yield' },
  { lane: 'normal', title: 'Normal', hint: 'fair time-slicing' },
  { lane: 'best-effort', title: 'Best-effort', hint: 'only when the GPU is idle' },
  { lane: 'paused', title: 'Paused', hint: 'suspended, memory kept' },
  { lane: 'queue', title: 'Queue', hint: 'waiting; drop on a GPU to place' },
];

/** The lanes a card can be moved between with the keyboard (the queue is not a target). */
export const MOVABLE_LANES: readonly Lane[] = ['high', 'normal', 'best-effort', 'paused'];

/** Paused by a person (jobs.suspend, jobs.park), not by the scheduler yielding to a higher priority or a quota. */
export function pausedByUser(job: JobView): boolean {
  return (job.state === 'suspended' || job.state === 'parked') && job.suspendedBy === 'user';
}

export function laneOf(job: JobView, pending?: PendingChange): Lane | null {
  if (pending?.lane) return pending.lane;
  if (FINAL_STATES.has(job.state)) return null;
  if (job.state === 'queued') return 'queue';
  if (pausedByUser(job)) return 'paused';
  return job.priority;
}

/** What a card's Park control offers now: park a managed job that runs (or is held), unpark a parked one, or nothing. */
export function parkActionOf(job: JobView): 'park' | 'unpark' | null {
  if (!job.managed) return null;
  if (job.state === 'parked') return 'unpark';
  if (job.state === 'running' || job.state === 'gated' || job.state === 'suspended') return 'park';
  return null; // queued, on its way (starting, parking, unparking) or ended
}

/** One list per snapshot: the board and the table both ask for it on every tick. */
const jobsOfSnapshot = new WeakMap<Snapshot, JobView[]>();

export function processesAsJobs(snapshot: Snapshot | null): JobView[] {
  if (!snapshot) return [];
  let jobs = jobsOfSnapshot.get(snapshot);
  if (!jobs) jobsOfSnapshot.set(snapshot, (jobs = snapshotProcessesAsJobs(snapshot)));
  return jobs;
}

function snapshotProcessesAsJobs(snapshot: Snapshot): JobView[] {
  return snapshot.processes.map((p) => ({
    id: `p${p.pid}`,
    managed: false,
    owner: p.user ?? '?',
    uid: p.uid ?? -1,
    argv: p.argv.length > 0 ? p.argv : [p.command ?? '?'],
    cwd: null,
    gpu: p.gpuIndex,
    gpus: [p.gpuIndex],
    requestedGpu: p.gpuIndex,
    priority: 'normal',
    memoryQuotaBytes: null,
    memoryRequestBytes: null,
    mode: 'shared',
    mpsSharePercent: null,
    migSlice: null,
    state: 'running',
    suspendedBy: null,
    pid: p.pid,
    exitCode: null,
    signal: null,
    logPath: null,
    history: [],
    usedMemory: p.usedMemory,
    smPercent: p.smPercent,
  }));
}
