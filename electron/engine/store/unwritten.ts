// What a failed flush could not write (a full disk, a read-only or missing file): kept in memory and
// written with the next flush, within a bound; past it the oldest samples go first, and are counted.
import type { AuditEntry, JobView } from '../../../shared/jobs.js';
import type { SlurmUsageRow } from '../../../shared/slurm.js';
import type { AccountedSample } from './accounting.js';
import type { ContainerSeen } from './writers.js';

/** One flush's rows, in the order they were recorded. */
export interface StoreBatch {
  samples: AccountedSample[];
  gpus: Array<{ gpu: number; uuid: string; name: string; memoryTotal: number; at: number }>;
  processJobs: Array<{ id: string; owner: string; command: string; gpu: number; first: number; last: number }>;
  containers: ContainerSeen[];
  jobs: JobView[];
  events: Array<{ at: number; kind: string; gpu: number | null; jobId: string | null; message: string; severity: 'info' | 'warning' | 'error' }>;
  audits: AuditEntry[];
  /** Slurm jobs' usage as their epilogs settled it. */
  slurmUsage: SlurmUsageRow[];
}

/** About 200 bytes a sample in memory: 200,000 is some 40 MB, over 6 minutes of a busy 8 × 64 box at 1 Hz. */
export const DEFAULT_KEPT_SAMPLES = 200_000;
/** Events and audit rows are few; a bound all the same. */
const KEPT_ROWS = 20_000;

/** older's rows, then newer's: one batch that writes both (jobs and GPUs by key, the newer view winning). */
export function combineBatches(older: StoreBatch, newer: StoreBatch): StoreBatch {
  const processJobs = new Map(older.processJobs.map((j) => [j.id, { ...j }]));
  for (const j of newer.processJobs) {
    const known = processJobs.get(j.id);
    if (known) known.last = Math.max(known.last, j.last);
    else processJobs.set(j.id, { ...j });
  }
  return {
    samples: older.samples.concat(newer.samples),
    gpus: [...new Map([...older.gpus, ...newer.gpus].map((g) => [g.gpu, g])).values()],
    processJobs: [...processJobs.values()],
    containers: [...new Map([...older.containers, ...newer.containers].map((c) => [c.id, c])).values()],
    jobs: [...new Map([...older.jobs, ...newer.jobs].map((j) => [j.id, j])).values()],
    events: older.events.concat(newer.events),
    audits: older.audits.concat(newer.audits),
    slurmUsage: older.slurmUsage.concat(newer.slurmUsage),
  };
}

/** Cut a batch to the bound, oldest first; returns how many samples (and other rows) went. */
export function boundBatch(batch: StoreBatch, keptSamples: number): { samples: number; rows: number } {
  const samples = Math.max(0, batch.samples.length - keptSamples);
  if (samples > 0) batch.samples.splice(0, samples);
  const events = Math.max(0, batch.events.length - KEPT_ROWS);
  if (events > 0) batch.events.splice(0, events);
  const audits = Math.max(0, batch.audits.length - KEPT_ROWS);
  if (audits > 0) batch.audits.splice(0, audits);
  const slurm = Math.max(0, batch.slurmUsage.length - KEPT_ROWS);
  if (slurm > 0) batch.slurmUsage.splice(0, slurm);
  return { samples, rows: events + audits + slurm };
}

export const emptyBatch = (): StoreBatch => ({ samples: [], gpus: [], processJobs: [], containers: [], jobs: [], events: [], audits: [], slurmUsage: [] });
