// Managed jobs kept in the usage database (table managed_jobs, migration 2), so they outlive the
// engine: ids are never reused, queued jobs wait on, and a restarted engine re-adopts the ones
// still running. Its own connection to the database: a failed usage flush never rolls a job back.
import { FINAL_STATES, placeOnGpus, type JobView } from '../../../shared/jobs.js';
import type { Account } from '../accounts.js';
import type { ParkedJob } from '../scheduler/job-table.js';
import { SqliteDb } from './sqlite.js';
import { StatusListeners } from './status-listeners.js';

/** What a new engine needs of a managed job: what it is, how to start it, how to know its process again. */
export interface KeptJob {
  view: JobView;
  executable: string | null;
  launchEnv: Record<string, string>;
  /** The whole argv where the view shows it cut; absent or null: the view's is whole. */
  launchArgv?: string[] | null;
  runAs: Account | null;
  startTicks: number | null;
  slot: number | null;
  parked: ParkedJob | null;
  originalNice: number | null;
}

export interface JobStoreOptions {
  /** Sentences a person should read (writes that fail, and that work again); default stderr. */
  onNotice?: (message: string) => void;
  /** Test seam: while it returns an error, each batch fails with it, as a full disk would. */
  writeFault?: () => Error | null;
  /** The first retry after a failed write (ms; default 1000), doubling to a minute. */
  retryMs?: number;
}

/** Why job changes are not reaching the disk, since when, and how many jobs' latest changes wait in memory. */
export interface JobStoreTrouble {
  problem: string;
  since: number;
  unwrittenJobs: number;
}

const MAX_RETRY_MS = 60_000;

/**
 * Managed jobs on disk. Changes are written in batches; a batch that fails is kept (each job's latest
 * version, a newer one winning) and retried, doubling the wait to a minute, until it is written. The
 * trouble is said once and its end once. A job's first version is the exception: a submission whose
 * first write fails is refused to its submitter, so it is never written later.
 */
export class JobStore {
  /** The latest version of each job not yet written, by id. */
  private pending = new Map<string, KeptJob>();
  /** Versions a failed batch could not write, retried with the next. */
  private unwritten = new Map<string, KeptJob>();
  /** Jobs on disk (written, or loaded from it): a failed write of theirs is retried, where a new job's first is refused. */
  private readonly onDisk = new Set<string>();
  private writing: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs: number;
  private trouble: { problem: string; since: number } | null = null;
  private readonly statusListeners = new StatusListeners<JobStoreTrouble | null>('job store');
  private closed = false;

  private constructor(
    private readonly db: SqliteDb,
    readonly path: string,
    private readonly options: JobStoreOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1000;
  }

  /** The usage database at `path`, already migrated by UsageStore.open. */
  static async open(path: string, options: JobStoreOptions = {}): Promise<JobStore> {
    const db = await SqliteDb.open(path);
    await db.exec('PRAGMA busy_timeout = 5000');
    const table = await db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'managed_jobs'");
    if (!table) {
      await db.close();
      throw new Error(`The database ${path} has no managed_jobs table: open it with UsageStore.open first (it migrates the schema).`);
    }
    return new JobStore(db, path, options);
  }

  /** Keep this version of the job; resolves once it (or a later version) is on disk, rejects when its batch failed (it is retried unless it was the job's first). */
  save(job: KeptJob): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`Job ${job.view.id} was not kept: the job store is closed.`));
    const first = this.pending.size === 0;
    this.pending.set(job.view.id, structuredClone(job));
    if (first) this.writing = this.writing.catch(() => undefined).then(() => this.writePending()); // a failed batch does not stop later ones
    return this.writing;
  }

  /** Null while every change is on disk; else why not, and what waits. */
  status(): JobStoreTrouble | null {
    return this.trouble ? { ...this.trouble, unwrittenJobs: this.unwritten.size + this.pending.size } : null;
  }

  /** Hear each change of trouble (it begins, it ends). Returns the unsubscribe. */
  onStatus(listener: (trouble: JobStoreTrouble | null) => void): () => void {
    return this.statusListeners.add(listener);
  }

  private async writePending(): Promise<void> {
    const batch = new Map([...this.unwritten, ...this.pending]); // the older versions first, a newer one replacing its job's
    this.pending = new Map();
    this.unwritten = new Map();
    const jobs = [...batch.values()];
    const rows = jobs.map((j) => ({ number: jobNumber(j.view.id), id: j.view.id, state: j.view.state, record: JSON.stringify(j) }));
    try {
      const fault = this.options.writeFault?.();
      if (fault) throw fault;
      await this.db.run(
        `INSERT INTO managed_jobs (number, id, state, record) SELECT value->>'number', value->>'id', value->>'state', value->>'record' FROM json_each(?) WHERE true
         ON CONFLICT (number) DO UPDATE SET state = excluded.state, record = excluded.record`,
        [JSON.stringify(rows)],
      );
    } catch (error) {
      this.failed(error, batch);
      throw error;
    }
    for (const j of jobs) {
      if (FINAL_STATES.has(j.view.state)) this.onDisk.delete(j.view.id); // written for the last time
      else this.onDisk.add(j.view.id);
    }
    if (this.trouble) this.recovered(batch.size);
  }

  /** Keep what was on disk before for the next try (a newer version pending wins); a new job's first version is refused, not kept. */
  private failed(error: unknown, batch: Map<string, KeptJob>): void {
    for (const [id, job] of batch) if (this.onDisk.has(id) && !this.pending.has(id)) this.unwritten.set(id, job);
    if (this.unwritten.size > 0) this.scheduleRetry();
    if (this.trouble || this.unwritten.size === 0) return;
    this.trouble = { problem: error instanceof Error ? error.message : String(error), since: Date.now() };
    const n = this.unwritten.size;
    this.notice(
      `Job changes are not being written to ${this.path}: ${this.trouble.problem}. The latest change of ${n} job${n === 1 ? ' is' : 's are'} kept in memory and retried until written; were the daemon to stop now, those jobs would come back as they were last written.`,
    );
    this.emitStatus();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.unwritten.size === 0) return;
      this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
      this.writing = this.writing.catch(() => undefined).then(() => this.writePending());
      this.writing.catch(() => undefined); // said once already; the next retry is scheduled
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private recovered(written: number): void {
    this.trouble = null;
    this.retryMs = this.options.retryMs ?? 1000;
    this.notice(`Job changes are written to ${this.path} again: the kept change${written === 1 ? ' of 1 job is' : `s of ${written} jobs are`} written.`);
    this.emitStatus();
  }

  private emitStatus(): void {
    this.statusListeners.emit(this.status());
  }


  private notice(message: string): void {
    if (this.options.onNotice) this.options.onNotice(message);
    else process.stderr.write(`gpushare: ${message}\n`);
  }

  /** Jobs that have not ended, oldest first. */
  async loadLive(): Promise<KeptJob[]> {
    const rows = await this.db.all<{ record: string }>(`SELECT record FROM managed_jobs WHERE state NOT IN ('finished', 'failed', 'lost') ORDER BY number`);
    const jobs = rows.map((row) => JSON.parse(row.record) as KeptJob);
    for (const j of jobs) {
      if (!Array.isArray(j.view.gpus)) placeOnGpus(j.view, j.view.gpu === null ? [] : [j.view.gpu]); // kept before jobs had several GPUs
      this.onDisk.add(j.view.id);
    }
    return jobs;
  }

  /** The highest job number ever given ("j12" → 12), 0 when none. */
  async highestJobNumber(): Promise<number> {
    const row = await this.db.get<{ highest: number | null }>('SELECT max(number) AS highest FROM managed_jobs');
    return row?.highest ?? 0;
  }

  /** Writes what is pending (and tries once more what failed), then closes its connection; what still cannot be written is said. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.writing.catch(() => undefined);
    if (this.unwritten.size > 0) await this.writePending().catch(() => undefined);
    if (this.unwritten.size > 0) {
      const ids = [...this.unwritten.keys()];
      this.notice(`${ids.length} job change${ids.length === 1 ? '' : 's'} could not be written to ${this.path} before the engine stopped (${this.trouble?.problem ?? 'writes failed'}): ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''} come back as they were last written.`);
    }
    await this.db.close();
  }
}

function jobNumber(id: string): number {
  const match = /^j(\d+)$/.exec(id);
  if (!match) throw new Error(`Only managed jobs ("j12") are kept, not ${id}.`);
  return Number(match[1]);
}
