// Managed jobs kept in the usage database (table managed_jobs, migration 2), so they outlive the
// engine: ids are never reused, queued jobs wait on, and a restarted engine re-adopts the ones
// still running. Its own connection to the database: a failed usage flush never rolls a job back.
import type { JobView } from '../../../shared/jobs.js';
import type { Account } from '../accounts.js';
import type { ParkedJob } from '../scheduler/parking.js';
import { SqliteDb } from './sqlite.js';

/** What a new engine needs of a managed job: what it is, how to start it, how to know its process again. */
export interface KeptJob {
  view: JobView;
  executable: string | null;
  launchEnv: Record<string, string>;
  runAs: Account | null;
  startTicks: number | null;
  slot: number | null;
  parked: ParkedJob | null;
  originalNice: number | null;
}

export class JobStore {
  /** The latest version of each job not yet written, by id. */
  private pending = new Map<string, KeptJob>();
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(private readonly db: SqliteDb) {}

  /** The usage database at `path`, already migrated by UsageStore.open. */
  static async open(path: string): Promise<JobStore> {
    const db = await SqliteDb.open(path);
    await db.exec('PRAGMA busy_timeout = 5000');
    const table = await db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'managed_jobs'");
    if (!table) {
      await db.close();
      throw new Error(`The database ${path} has no managed_jobs table: open it with UsageStore.open first (it migrates the schema).`);
    }
    return new JobStore(db);
  }

  /** Keep this version of the job; resolves once it (or a later version) is on disk. */
  save(job: KeptJob): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`Job ${job.view.id} was not kept: the job store is closed.`));
    const first = this.pending.size === 0;
    this.pending.set(job.view.id, structuredClone(job));
    if (first) this.writing = this.writing.catch(() => undefined).then(() => this.writePending()); // a failed batch does not stop later ones
    return this.writing;
  }

  private async writePending(): Promise<void> {
    const jobs = [...this.pending.values()];
    this.pending = new Map();
    const rows = jobs.map((j) => ({ number: jobNumber(j.view.id), id: j.view.id, state: j.view.state, record: JSON.stringify(j) }));
    await this.db.run(
      `INSERT INTO managed_jobs (number, id, state, record) SELECT value->>'number', value->>'id', value->>'state', value->>'record' FROM json_each(?) WHERE true
       ON CONFLICT (number) DO UPDATE SET state = excluded.state, record = excluded.record`,
      [JSON.stringify(rows)],
    );
  }

  /** Jobs that have not ended, oldest first. */
  async loadLive(): Promise<KeptJob[]> {
    const rows = await this.db.all<{ record: string }>(`SELECT record FROM managed_jobs WHERE state NOT IN ('finished', 'failed', 'lost') ORDER BY number`);
    return rows.map((row) => JSON.parse(row.record) as KeptJob);
  }

  /** The highest job number ever given ("j12" → 12), 0 when none. */
  async highestJobNumber(): Promise<number> {
    const row = await this.db.get<{ highest: number | null }>('SELECT max(number) AS highest FROM managed_jobs');
    return row?.highest ?? 0;
  }

  /** Writes what is pending, then closes its connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writing.catch(() => undefined);
    await this.db.close();
  }
}

function jobNumber(id: string): number {
  const match = /^j(\d+)$/.exec(id);
  if (!match) throw new Error(`Only managed jobs ("j12") are kept, not ${id}.`);
  return Number(match[1]);
}
