// Wire the usage store to a running engine: every tick, job change, alert and audited
// command is recorded, and `reports.query` (and `reports.export`, the same as a file) answer from the store.
import { ApiError } from '../api/api-error.js';
import type { Engine } from '../engine.js';
import { reportToFile } from '../reports/export.js';
import { queryUsage } from '../reports/query.js';
import type { SqliteDb } from './sqlite.js';
import { DAY_MS, type Attribution, type UsageStore } from './usage-store.js';

export interface AttachOptions {
  /** The scheduler's JobOwnership: a job's child processes count as the job (absent: every process is its own). */
  ownership?: Attribution | null;
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
  const offs = [
    engine.events.on('snapshot', (snapshot) => store.ingest(snapshot)),
    engine.events.on('jobs', (jobs) => jobs.forEach((job) => store.recordJob(job))),
    engine.events.on('alert', (alert) => store.recordAlert(alert)),
    engine.dispatcher.onAudit((entry) => store.recordAudit(entry)),
    store.onStatus((status) => engine.events.emit('store', status)), // the console's banner
  ];
  // audit.list pages through everything the store keeps (from memory while it cannot)
  engine.dispatcher.useAuditSource((page, reader) => store.auditPage(page, reader));
  engine.dispatcher.register('store.status', () => store.status());
  // a request may span what the store keeps (and a day of slack), no more: a longer one only costs time
  const bounds = { maxSpanMs: store.retention.dayMs + DAY_MS, fieldPath: 'params' };
  engine.dispatcher.register('reports.query', ({ since, until, by }) => queryUsage(openDb(store), { since, until, by, ...bounds }));
  engine.dispatcher.register('reports.export', async ({ since, until, by, format }) => reportToFile(await queryUsage(openDb(store), { since, until, by, ...bounds }), format));
  return () => {
    offs.forEach((off) => off());
    engine.dispatcher.useAuditSource(null);
    store.useOwnership(null);
  };
}
