// Batch writers for the usage store: one statement per table per flush, rows passed as one JSON array.
import type { AuditEntry, JobView } from '../../../shared/jobs.js';
import type { SlurmUsageRow } from '../../../shared/slurm.js';
import { boundedAuditEntry } from '../api/audit-summary.js';
import { addContribution, contribution, CONTRIBUTION_FIELDS, emptyContribution, NO_CONTAINER, type AccountedSample, type Contribution } from './accounting.js';
import type { SqliteDb } from './sqlite.js';
import type { UsageEvent } from './usage-store.js';


const SAMPLE_COLUMNS = ['t', 'gpu', 'pid', 'user', 'job', 'smPercent', 'usedMemory', 'dt', 'flags', 'peakJob', 'peakUser', 'peakGpu', 'container', 'gpuSJob', 'gpuSUser', 'gpuSGpu'] as const;
const ROLLUP_COLUMNS = ['bucket', 'gpu', 'user', 'job', 'samples', 'seconds', 'container', ...CONTRIBUTION_FIELDS] as const;

// jsonb_each: each row's array is parsed once, not once per column
function insertFromJson(table: string, columns: readonly string[], suffix = ''): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.map((_, i) => `value->>${i}`).join(', ')} FROM jsonb_each(?) WHERE true ${suffix}`;
}

const INSERT_SAMPLES = insertFromJson('samples', SAMPLE_COLUMNS);

export async function writeSamples(db: SqliteDb, samples: AccountedSample[]): Promise<void> {
  const CHUNK = 50_000;
  for (let i = 0; i < samples.length; i += CHUNK) {
    const rows = samples.slice(i, i + CHUNK).map((s) => SAMPLE_COLUMNS.map((c) => (c === 'container' ? (s.container ?? NO_CONTAINER) : s[c])));
    await db.run(INSERT_SAMPLES, [JSON.stringify(rows)]);
  }
}

export type RollupTable = 'usage_minute' | 'usage_hour' | 'usage_day';

export interface RollupRow extends Contribution {
  bucket: number;
  gpu: number;
  user: string;
  job: string;
  samples: number;
  seconds: number;
  /** The container its job ran in: one per job (a pid) within a bucket. */
  container: string;
}

/** Sum accounted samples into buckets of bucketMs by (gpu, user, job); a sample falls in the bucket of its time t. */
export function rollup(samples: readonly AccountedSample[], bucketMs: number): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const s of samples) {
    const bucket = Math.floor(s.t / bucketMs) * bucketMs;
    const key = `${bucket}\0${s.gpu}\0${s.user}\0${s.job}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { bucket, gpu: s.gpu, user: s.user, job: s.job, samples: 0, seconds: 0, container: s.container ?? NO_CONTAINER, ...emptyContribution() }));
    row.samples += 1;
    row.seconds += s.dt;
    addContribution(row, contribution(s));
  }
  return [...rows.values()];
}

/** Coarser buckets from finer rollup rows (minutes into hours and days). */
export function rerollup(rows: readonly RollupRow[], bucketMs: number): RollupRow[] {
  const out = new Map<string, RollupRow>();
  for (const r of rows) {
    const bucket = Math.floor(r.bucket / bucketMs) * bucketMs;
    const key = `${bucket}\0${r.gpu}\0${r.user}\0${r.job}`;
    let row = out.get(key);
    if (!row) out.set(key, (row = { bucket, gpu: r.gpu, user: r.user, job: r.job, samples: 0, seconds: 0, container: r.container, ...emptyContribution() }));
    row.samples += r.samples;
    row.seconds += r.seconds;
    addContribution(row, r);
  }
  return [...out.values()];
}

const UPSERT_ROLLUP = (table: string): string =>
  insertFromJson(
    table,
    ROLLUP_COLUMNS,
    `ON CONFLICT (bucket, gpu, user, job) DO UPDATE SET samples = samples + excluded.samples, seconds = seconds + excluded.seconds, container = excluded.container, ` +
      CONTRIBUTION_FIELDS.map((f) => (f.startsWith('peak') ? `${f} = max(${f}, excluded.${f})` : `${f} = ${f} + excluded.${f}`)).join(', '),
  );

export async function writeRollup(db: SqliteDb, table: RollupTable, rows: RollupRow[]): Promise<void> {
  const CHUNK = 50_000;
  for (let i = 0; i < rows.length; i += CHUNK) {
    const json = JSON.stringify(rows.slice(i, i + CHUNK).map((r) => ROLLUP_COLUMNS.map((c) => r[c])));
    await db.run(UPSERT_ROLLUP(table), [json]);
  }
}

export async function writeGpus(db: SqliteDb, gpus: Array<{ gpu: number; uuid: string; name: string; memoryTotal: number; at: number }>): Promise<void> {
  if (gpus.length === 0) return;
  await db.run(
    `INSERT INTO gpus (gpu, uuid, name, memoryTotal, lastSeen) SELECT value->>'gpu', value->>'uuid', value->>'name', value->>'memoryTotal', value->>'at' FROM json_each(?) WHERE true
     ON CONFLICT (gpu) DO UPDATE SET uuid = excluded.uuid, name = excluded.name, memoryTotal = excluded.memoryTotal, lastSeen = excluded.lastSeen`,
    [JSON.stringify(gpus)],
  );
}

export interface ContainerSeen {
  id: string;
  runtime: string;
  fullId: string;
  name: string | null;
  startedBy: string | null;
  at: number;
}

/** The containers seen in a batch: their names label a report by container (a name learnt later replaces none). */
export async function writeContainers(db: SqliteDb, containers: ContainerSeen[]): Promise<void> {
  if (containers.length === 0) return;
  await db.run(
    `INSERT INTO containers (id, runtime, fullId, name, startedBy, lastSeen)
     SELECT value->>'id', value->>'runtime', value->>'fullId', value->>'name', value->>'startedBy', value->>'at' FROM json_each(?) WHERE true
     ON CONFLICT (id) DO UPDATE SET runtime = excluded.runtime, fullId = excluded.fullId, name = coalesce(excluded.name, name),
       startedBy = coalesce(excluded.startedBy, startedBy), lastSeen = max(lastSeen, excluded.lastSeen)`,
    [JSON.stringify(containers)],
  );
}

export async function writeProcessJobs(db: SqliteDb, jobs: Array<{ id: string; owner: string; command: string; gpu: number; first: number; last: number }>): Promise<void> {
  if (jobs.length === 0) return;
  await db.run(
    `INSERT INTO jobs (id, managed, owner, command, gpu, state, firstSeen, lastSeen)
     SELECT value->>'id', 0, value->>'owner', value->>'command', value->>'gpu', 'running', value->>'first', value->>'last' FROM json_each(?) WHERE true
     ON CONFLICT (id) DO UPDATE SET lastSeen = max(lastSeen, excluded.lastSeen),
       owner = CASE WHEN managed = 0 THEN excluded.owner ELSE owner END, command = CASE WHEN managed = 0 THEN excluded.command ELSE command END`,
    [JSON.stringify(jobs)],
  );
}

export async function writeJobs(db: SqliteDb, jobs: JobView[]): Promise<void> {
  if (jobs.length === 0) return;
  const rows = jobs.map((j) => {
    const times = j.history.map((h) => h.at);
    return { id: j.id, managed: j.managed ? 1 : 0, owner: j.owner, command: j.argv.join(' '), gpu: j.gpu, state: j.state, first: Math.min(...times, Date.now()), last: Math.max(...times, 0), view: JSON.stringify(j) };
  });
  await db.run(
    `INSERT INTO jobs (id, managed, owner, command, gpu, state, firstSeen, lastSeen, view)
     SELECT value->>'id', value->>'managed', value->>'owner', value->>'command', value->>'gpu', value->>'state', value->>'first', value->>'last', value->>'view' FROM json_each(?) WHERE true
     ON CONFLICT (id) DO UPDATE SET managed = excluded.managed, owner = excluded.owner, command = excluded.command, gpu = excluded.gpu,
       state = excluded.state, firstSeen = min(firstSeen, excluded.firstSeen), lastSeen = max(lastSeen, excluded.lastSeen), view = excluded.view`,
    [JSON.stringify(rows)],
  );
  const states = jobs.flatMap((j) => j.history.map((h) => [j.id, h.at, h.state, h.reason]));
  await db.run(`INSERT OR IGNORE INTO job_states (job, at, state, reason) SELECT value->>0, value->>1, value->>2, value->>3 FROM json_each(?)`, [JSON.stringify(states)]);
}

/** The columns of a Slurm job's usage row, in the table's order (migration 5). */
export const SLURM_USAGE_COLUMNS = ['jobId', 'user', 'partition', 'qos', 'start', 'end', 'gpuHours', 'smHours', 'memoryGiBHours', 'peakMemoryBytes', 'gatedSeconds', 'parkedSeconds', 'account', 'gpus'] as const satisfies ReadonlyArray<keyof SlurmUsageRow>;

/** Slurm jobs' usage rows; a row already there (the same job and end: a legacy file imported again) is kept as it was. Resolves to the rows added. */
export async function writeSlurmUsage(db: SqliteDb, rows: SlurmUsageRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const { changes } = await db.run(insertFromJson('slurm_usage', SLURM_USAGE_COLUMNS, 'ON CONFLICT (jobId, end) DO NOTHING'), [JSON.stringify(rows.map((r) => SLURM_USAGE_COLUMNS.map((c) => r[c])))]);
  return changes;
}

export async function writeEvents(db: SqliteDb, events: Required<UsageEvent>[]): Promise<void> {
  if (events.length === 0) return;
  await db.run(
    `INSERT INTO events (at, kind, gpu, job, message, severity) SELECT value->>'at', value->>'kind', value->>'gpu', value->>'jobId', value->>'message', value->>'severity' FROM json_each(?)`,
    [JSON.stringify(events)],
  );
}

/**
 * Audit rows; a summary of refusals (an entry with a count) is one row, written when it first comes
 * and updated in place as its count grows: `summaries` holds each one's row id.
 */
export async function writeAudit(db: SqliteDb, entries: AuditEntry[], summaries: Pick<Map<AuditEntry, number>, 'get' | 'set'> = new Map()): Promise<void> {
  if (entries.length === 0) return;
  const row = (e: AuditEntry) => {
    // bounded again here: whatever recorded it, a row is small and serialisable, so it cannot fail the batch (and its samples)
    const b = boundedAuditEntry(e);
    return { ...b, uid: b.uid ?? null, count: b.count ?? null, until: b.until ?? null, params: b.params === undefined ? null : JSON.stringify(b.params) };
  };
  const full = entries.filter((e) => e.count === undefined);
  if (full.length > 0) {
    await db.run(
      `INSERT INTO audit (at, who, uid, what, params, result) SELECT value->>'at', value->>'who', value->>'uid', value->>'what', value->>'params', value->>'result' FROM json_each(?)`,
      [JSON.stringify(full.map(row))],
    );
  }
  for (const summary of new Set(entries.filter((e) => e.count !== undefined))) {
    const r = row(summary);
    const id = summaries.get(summary);
    if (id !== undefined) {
      await db.run('UPDATE audit SET params = ?, result = ?, count = ?, until = ? WHERE id = ?', [r.params, r.result, r.count, r.until, id]);
    } else {
      const { lastID } = await db.run('INSERT INTO audit (at, who, uid, what, params, result, count, until) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [r.at, r.who, r.uid, r.what, r.params, r.result, r.count, r.until]);
      summaries.set(summary, lastID);
    }
  }
}

/** One page of the audit log, newest first, of the rows `reader` may read (the columns as audit.list answers them). */
export async function readAudit(db: SqliteDb, page: { limit: number; before?: number }, reader: { uid: number; user: string; everyone: boolean }): Promise<AuditEntry[]> {
  const rows = await db.all<{ id: number; at: number; who: string; uid: number | null; what: string; params: string | null; result: string; count: number | null; until: number | null }>(
    `SELECT id, at, who, uid, what, params, result, count, until FROM audit
     WHERE id < ? AND (? OR uid = ? OR (uid IS NULL AND who = ?)) ORDER BY id DESC LIMIT ?`,
    [page.before ?? Number.MAX_SAFE_INTEGER, reader.everyone ? 1 : 0, reader.uid, reader.user, page.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    at: r.at,
    who: r.who,
    ...(r.uid === null ? {} : { uid: r.uid }),
    what: r.what,
    params: r.params === null ? null : (JSON.parse(r.params) as unknown),
    result: r.result,
    ...(r.count === null ? {} : { count: r.count, until: r.until ?? r.at }),
  }));
}
