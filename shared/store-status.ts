// Whether the engine is recording usage, and if not why: the console's banner, `gpushare status`
// and the engine's stderr all say the same sentence from this.

export interface StoreStatus {
  /** The usage database, or null when none was given. */
  path: string | null;
  /** False while nothing reaches the database (it could not be opened, or writes fail). */
  recording: boolean;
  /** Why not, in words (SQLite's error, the path's problem); null while recording. */
  problem: string | null;
  /** When the trouble began (ms since the epoch); null while recording. */
  since: number | null;
  /** Samples held in memory to be written when the database takes writes again. */
  keptSamples: number;
  /** Samples given up for good since the engine started: the oldest, once the kept ones passed their bound. */
  droppedSamples: number;
  /** Managed jobs whose latest change is not on disk yet (the job store's writes fail; retried until written); absent or null: all written. */
  unwrittenJobs?: { problem: string; since: number; count: number } | null;
}

/** The one sentence for a store in trouble, or null when usage is being recorded. */
export function storeTrouble(status: StoreStatus | null | undefined): string | null {
  if (!status || status.recording) return null;
  const kept = status.keptSamples > 0 ? ` ${status.keptSamples} samples are kept in memory to be written when it recovers.` : '';
  const dropped = status.droppedSamples > 0 ? ` ${status.droppedSamples} older samples were dropped.` : '';
  return `Usage is not being recorded: ${status.problem ?? 'the database cannot be written'}, ${status.path ?? 'no database'}.${kept}${dropped}`;
}

/** The one sentence for job changes not yet on disk, or null when every change is written. */
export function jobsTrouble(status: StoreStatus | null | undefined): string | null {
  const jobs = status?.unwrittenJobs;
  if (!jobs) return null;
  const many = jobs.count === 1 ? '1 job is' : `${jobs.count} jobs are`;
  return `Job changes are not being written: ${jobs.problem}, ${status.path ?? 'no database'}. The latest change of ${many} kept in memory and retried until written; a restart now would bring them back as they were last written.`;
}

/** Every store trouble in one text (the console's banner): usage not recorded, job changes not written. */
export function storeTroubles(status: StoreStatus | null | undefined): string | null {
  const all = [storeTrouble(status), jobsTrouble(status)].filter((t): t is string => t !== null);
  return all.length > 0 ? all.join(' ') : null;
}
