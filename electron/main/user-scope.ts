// Whose business an alert or condition is: each user's tray and notifications cover their own jobs
// and contention on the GPUs they use, not every event of a shared box.
import type { AlertKind, JobView } from '../../shared/jobs.js';
import { FINAL_STATES } from '../../shared/jobs.js';

/** The person at this desktop, as the engine knows them (session.whoami: the kernel's word). */
export interface Viewer {
  uid: number;
  /** Administers the box: a lost GPU is theirs to see to wherever it is. */
  admin: boolean;
}

/** What an alert and an active condition both say about where they apply. */
export interface Concern {
  kind: AlertKind;
  gpu: number | null;
  jobId: string | null;
}

/** Kinds that touch everyone on their GPU, not only the job they name. */
const GPU_WIDE: ReadonlySet<AlertKind> = new Set(['contention', 'gpu-lost']);

/** Does this GPU run something of the viewer's now (a managed job not yet ended, or a process)? */
export function usesGpu(viewer: Viewer, jobs: readonly JobView[], gpu: number): boolean {
  return jobs.some((job) => job.uid === viewer.uid && job.gpu === gpu && !FINAL_STATES.has(job.state));
}

/**
 * Does `item` concern the viewer? Their own job's alerts (by the job's owner in `jobs`, which
 * holds managed jobs and GPU processes); contention or a lost GPU where they run something;
 * a lost GPU anywhere for an admin; and what names neither job nor GPU (the whole box).
 */
export function concernsViewer(viewer: Viewer, jobs: readonly JobView[], item: Concern): boolean {
  const job = item.jobId === null ? undefined : jobs.find((j) => j.id === item.jobId);
  if (job?.uid === viewer.uid) return true;
  if (item.gpu === null) return item.jobId === null;
  if (GPU_WIDE.has(item.kind) && usesGpu(viewer, jobs, item.gpu)) return true;
  return item.kind === 'gpu-lost' && viewer.admin;
}
