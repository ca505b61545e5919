// Wire the usage store to a running engine: every tick, job change, alert and audited
// command is recorded, and `reports.query`, `reports.slurmJobs` (and `reports.export`, either as a file) answer from the store.
import { basename } from 'node:path';
import type { ReportGrouping, UsageReport } from '../../../shared/usage-report.js';
import { ApiError } from '../api/api-error.js';
import type { Caller } from '../api/dispatcher.js';
import type { KeptAlert } from '../api/need-to-know.js';
import type { Engine } from '../engine.js';
import { reportToFile, slurmReportToFile } from '../reports/export.js';
import { queryUsage } from '../reports/query.js';
import { readSlurmUsage } from '../reports/slurm-usage.js';
import type { StoreStatus } from '../../../shared/store-status.js';
import type { JobStore } from './job-store.js';
import type { SqliteDb } from './sqlite.js';
import { DAY_MS, type Attribution, type UsageStore } from './usage-store.js';

export interface AttachOptions {
  /** The scheduler's JobOwnership: a job's child processes count as the job (absent: every process is its own). */
  ownership?: Attribution | null;
  /** The job store: its trouble (job changes not written) is part of `store.status` and the 'store' event. */
  jobStore?: Pick<JobStore, 'status' | 'onStatus'> | null;
}

/** The store's database for a report; none open (it cannot be opened) is the engine's state, said as such, not an internal error. */
function openDb(store: UsageStore): SqliteDb {
  try {
    return store.db;
  } catch (error) {
    throw new ApiError('unsupported', error instanceof Error ? error.message : String(error));
  }
}

/** Returns a function that detaches the store (it does not close it). */
export function attachUsageStore(engine: Engine, store: UsageStore, options: AttachOptions = {}): () => void {
  store.useOwnership(options.ownership ?? null);
  const jobStore = options.jobStore ?? null;
  const status = (): StoreStatus => {
    const jobs = jobStore?.status() ?? null;
    return jobs ? { ...store.status(), unwrittenJobs: { problem: jobs.problem, since: jobs.since, count: jobs.unwrittenJobs } } : store.status();
  };
  const offs = [
    engine.events.on('snapshot', (snapshot) => store.ingest(snapshot)),
    engine.events.on('jobs', (jobs) => jobs.forEach((job) => store.recordJob(job))),
    // a report's events are read by anyone: the sentence without the job's log and paths
    engine.events.on('alert', (alert: KeptAlert) => store.recordAlert({ ...alert, message: alert.publicMessage ?? alert.message })),
    engine.dispatcher.onAudit((entry) => store.recordAudit(entry)),
    store.onStatus(() => engine.events.emit('store', status())), // the console's banner
    jobStore?.onStatus(() => engine.events.emit('store', status())) ?? (() => undefined),
  ];
  // audit.list pages through everything the store keeps (from memory while it cannot)
  engine.dispatcher.useAuditSource((page, reader) => store.auditPage(page, reader));
  engine.dispatcher.register('store.status', () => status());
  // a request may span what the store keeps (and a day of slack), no more: a longer one only costs time
  const bounds = { maxSpanMs: store.retention.dayMs + DAY_MS, fieldPath: 'params' };
  const report = async (params: { since: number; until?: number; by: ReportGrouping }, caller: Caller): Promise<UsageReport> => {
    const db = openDb(store);
    const usage = await queryUsage(db, { ...params, ...bounds });
    return params.by === 'job' && !(caller.admin || caller.uid === engine.owner.uid) ? withheldJobLabels(db, usage, caller.user) : usage;
  };
  engine.dispatcher.register('reports.query', (params, caller) => report(params, caller));
  // reports are lab-wide (by user lists everyone); a Slurm row holds what squeue shows every user: job id, user, partition, QOS
  const slurmJobs = async (params: { since: number; until?: number }) => readSlurmUsage(openDb(store), { ...params, ...bounds });
  engine.dispatcher.register('reports.slurmJobs', (params) => slurmJobs(params));
  engine.dispatcher.register('reports.export', async ({ format, by, ...range }, caller) =>
    by === 'slurm-job' ? slurmReportToFile(await slurmJobs(range), format) : reportToFile(await report({ ...range, by }, caller), format),
  );
  return () => {
    offs.forEach((off) => off());
    engine.dispatcher.useAuditSource(null);
    store.useOwnership(null);
  };
}

/** Another user's jobs in a report by job, as a non-administrator sees them: "owner: program", without the arguments they were started with. */
async function withheldJobLabels(db: SqliteDb, usage: UsageReport, user: string): Promise<UsageReport> {
  const keys = usage.rows.map((r) => r.key);
  const owners = new Map((await db.all<{ id: string; owner: string; command: string }>('SELECT id, owner, command FROM jobs WHERE id IN (SELECT value FROM json_each(?))', [JSON.stringify(keys)])).map((j) => [j.id, j]));
  const rows = usage.rows.map((row) => {
    const job = owners.get(row.key);
    if (!job || job.owner === user) return row;
    return { ...row, label: `${job.owner}: ${basename(job.command.split(' ')[0] ?? '')}` };
  });
  return { ...usage, rows };
}
