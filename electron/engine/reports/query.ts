// A usage report from the store: usage by user, job or GPU over [since, until).
// Whole days come from the day rollups, whole hours at the edges from the hour rollups,
// whole minutes from the minute rollups and the seconds at the very edges from the raw
// samples: the same figures as summing the raw samples, from a few thousand rows per day.
import { REPORT_EARLIEST } from '../../../shared/api.js';
import { ValidationError } from '../../../shared/schema.js';
import { USAGE_REPORT_SCHEMA, type ReportGrouping, type UsageEventRow, type UsageReport, type UsageRow, type UsageSeriesPoint, type UsageTotals } from '../../../shared/usage-report.js';
import { CONTRIBUTION_SQL, FIGURES_BY, NO_CONTAINER, type Contribution } from '../store/accounting.js';
import type { SqliteDb } from '../store/sqlite.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../store/usage-store.js';

export type Resolution = 'raw' | 'minute' | 'hour' | 'day';

export interface UsageQuery {
  since: number;
  until?: number;
  by: ReportGrouping;
  /** Read only this table (tests; the range is widened to its buckets); default: the plan above. */
  resolution?: Resolution;
  /** Keys drawn separately in charts; the rest are "others". */
  seriesKeys?: number;
  /** At most this many chart points (default 60); fewer points let more of the range come from coarse rollups. */
  seriesPoints?: number;
  now?: number;
  /** Refuse a range longer than this (the API: what the store keeps); default: any. */
  maxSpanMs?: number;
  /** How errors name the fields ("params" for an API request: "params.until: …"). */
  fieldPath?: string;
}

interface Piece {
  table: 'samples' | 'usage_minute' | 'usage_hour' | 'usage_day';
  from: number;
  to: number;
}

const TABLE: Record<Resolution, Piece['table']> = { raw: 'samples', minute: 'usage_minute', hour: 'usage_hour', day: 'usage_day' };
const STEP: Record<Resolution, number> = { raw: 1, minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };
/** Coarsest first. */
const LEVELS: Resolution[] = ['day', 'hour', 'minute', 'raw'];
const SERIES_BUCKETS = [MINUTE_MS, 5 * MINUTE_MS, 15 * MINUTE_MS, HOUR_MS, 6 * HOUR_MS, 24 * HOUR_MS, 7 * 24 * HOUR_MS];
const MAX_POINTS = 60;
const EVENTS_KEPT = 500;

const floorTo = (t: number, step: number): number => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number): number => Math.ceil(t / step) * step;

/** Split [since, until) into pieces, each from the coarsest table whose buckets fit whole; no bucket coarser than bucketMs. */
export function planPieces(since: number, until: number, bucketMs: number): Piece[] {
  const pieces: Piece[] = [];
  const fill = (a: number, b: number, level: number): void => {
    if (a >= b) return;
    const resolution = LEVELS[level];
    if (resolution === 'raw') return void pieces.push({ table: 'samples', from: a, to: b });
    const step = STEP[resolution];
    const from = ceilTo(a, step);
    const to = floorTo(b, step);
    if (bucketMs % step !== 0 || from >= to) return fill(a, b, level + 1);
    fill(a, from, level + 1);
    pieces.push({ table: TABLE[resolution], from, to });
    fill(to, b, level + 1);
  };
  fill(since, until, 0);
  return pieces.sort((x, y) => x.from - y.from);
}

export function seriesBucketMs(since: number, until: number, atLeast = MINUTE_MS, maxPoints = MAX_POINTS): number {
  const fits = SERIES_BUCKETS.find((b) => b >= atLeast && (until - since) / b <= maxPoints);
  if (fits) return fits;
  // past a week a bucket, whole weeks: a chart of decades has as few points as one of days (and cannot exhaust memory)
  const week = SERIES_BUCKETS[SERIES_BUCKETS.length - 1];
  return Math.ceil((until - since) / Math.max(1, maxPoints - 1) / week) * week;
}

const DAY_AHEAD_MS = DAY_MS;
const when = (t: number): string => (Math.abs(t) <= 8.64e15 ? new Date(t).toISOString() : String(t));

/**
 * A report's range, checked before anything is read: after 2000-01-01, ending after it starts and at
 * most a day from now, no longer than maxSpanMs. Throws a ValidationError naming the field and the bound.
 */
export function checkReportRange(since: number, until: number, now: number, maxSpanMs = Infinity, fieldPath = ''): void {
  const field = (name: string): string => (fieldPath ? `${fieldPath}.${name}` : name);
  if (!Number.isFinite(since) || since < REPORT_EARLIEST) throw new ValidationError(field('since'), `must be at least ${REPORT_EARLIEST} ms since the epoch (2000-01-01), got ${when(since)}`);
  if (!Number.isFinite(until) || !(until > since)) throw new ValidationError(field('until'), `must be after ${field('since')} (${when(since)}), got ${when(until)}`);
  if (until > now + DAY_AHEAD_MS) throw new ValidationError(field('until'), `must be at most a day from now (${when(now + DAY_AHEAD_MS)}), got ${when(until)}`);
  if (until - since > maxSpanMs) {
    const days = (ms: number): number => Math.ceil(ms / DAY_MS);
    throw new ValidationError(fieldPath, `the range spans ${days(until - since)} days; at most ${days(maxSpanMs)} days (what the usage store keeps) may be asked at once`);
  }
}

interface Figures {
  gpuSeconds: number;
  smSeconds: number;
  memoryGiBHours: number;
  peakMemoryBytes: number;
  contentionSeconds: number;
}

const emptyFigures = (): Figures => ({ gpuSeconds: 0, smSeconds: 0, memoryGiBHours: 0, peakMemoryBytes: 0, contentionSeconds: 0 });

function addFigures(into: Figures, f: Figures): void {
  into.gpuSeconds += f.gpuSeconds;
  into.smSeconds += f.smSeconds;
  into.memoryGiBHours += f.memoryGiBHours;
  into.peakMemoryBytes = Math.max(into.peakMemoryBytes, f.peakMemoryBytes);
  into.contentionSeconds += f.contentionSeconds;
}

export async function queryUsage(db: SqliteDb, query: UsageQuery): Promise<UsageReport> {
  const now = query.now ?? Date.now();
  const until = query.until ?? now;
  const since = query.since;
  checkReportRange(since, until, now, query.maxSpanMs, query.fieldPath);
  const by = query.by;

  let pieces: Piece[];
  let bucketMs: number;
  if (query.resolution) {
    const step = Math.max(MINUTE_MS, STEP[query.resolution]);
    bucketMs = seriesBucketMs(since, until, step, query.seriesPoints);
    const from = query.resolution === 'raw' ? since : floorTo(since, step);
    const to = query.resolution === 'raw' ? until : ceilTo(until, step);
    pieces = [{ table: TABLE[query.resolution], from, to }];
  } else {
    bucketMs = seriesBucketMs(since, until, MINUTE_MS, query.seriesPoints);
    pieces = planPieces(since, until, bucketMs);
  }

  // one scan per piece, grouped by chart bucket and key: rows and chart come from the same figures
  const cells = new Map<number, Map<string, Figures>>();
  for (const piece of pieces) {
    for (const r of await scanPiece(db, piece, by, bucketMs)) {
      let row = cells.get(r.sb);
      if (!row) cells.set(r.sb, (row = new Map()));
      const figures = row.get(r.k) ?? emptyFigures();
      addFigures(figures, r);
      row.set(r.k, figures);
    }
  }
  const byKey = new Map<string, Figures>();
  for (const row of cells.values()) {
    for (const [k, f] of row) {
      const total = byKey.get(k) ?? emptyFigures();
      addFigures(total, f);
      byKey.set(k, total);
    }
  }

  const waits = await waitingSeconds(db, by, since, until, now);
  for (const k of waits.byKey.keys()) if (!byKey.has(k)) byKey.set(k, emptyFigures());
  const labels = await labelsFor(db, by, [...byKey.keys()]);
  const rows: UsageRow[] = [...byKey].map(([key, f]) => ({
    key,
    label: labels.get(key) ?? key,
    gpuSeconds: f.gpuSeconds,
    smSeconds: f.smSeconds,
    memoryGiBHours: f.memoryGiBHours,
    peakMemoryBytes: f.peakMemoryBytes,
    queuedSeconds: waits.byKey.get(key)?.queued ?? 0,
    suspendedSeconds: waits.byKey.get(key)?.suspended ?? 0,
    contentionMinutes: f.contentionSeconds / 60,
  }));
  rows.sort((a, b) => b.smSeconds - a.smSeconds || b.gpuSeconds - a.gpuSeconds || a.key.localeCompare(b.key, 'en', { numeric: true }));

  return {
    schema: USAGE_REPORT_SCHEMA,
    generatedAt: now,
    since,
    until,
    by,
    resolution: pieces.length === 1 ? resolutionOf(pieces[0].table) : 'mixed',
    rows,
    totals: await boxTotals(db, pieces, waits.all),
    series: seriesOf(cells, rows, bucketMs, since, until, query.seriesKeys ?? 6),
    events: await eventsIn(db, since, until),
  };
}

const resolutionOf = (table: Piece['table']): Resolution => LEVELS.find((r) => TABLE[r] === table)!;

async function scanPiece(db: SqliteDb, piece: Piece, by: ReportGrouping, bucketMs: number) {
  const f = FIGURES_BY[by];
  const raw = piece.table === 'samples';
  // raw rows hold readings and flags: their contributions are computed as accounting.ts defines; rollups hold them
  const c = (field: keyof Contribution): string => (raw ? CONTRIBUTION_SQL[field] : field);
  const time = raw ? 't' : 'bucket';
  const sql = `SELECT (${time} / ${bucketMs}) * ${bucketMs} AS sb, ${by === 'gpu' ? 'CAST(gpu AS TEXT)' : by} AS k,
      SUM(${c(f.gpuS)}) AS gpuSeconds, SUM(${c('smS')}) AS smSeconds, SUM(${c('memGiBH')}) AS memoryGiBHours,
      MAX(${c(f.peak)}) AS peakMemoryBytes, SUM(${c(f.contS)}) AS contentionSeconds
    FROM ${piece.table} WHERE ${time} >= ? AND ${time} < ? GROUP BY sb, k`;
  return db.all<Figures & { sb: number; k: string }>(sql, [piece.from, piece.to]);
}

/**
 * The box's figures, the same whatever the grouping: each GPU's time in use, memory held, the largest
 * memory a GPU held, contention as GPU-seconds with ≥ 2 jobs busy (summing rows would count a contended
 * second once per job by job, once per user by user), and every wait (also those no row shows:
 * a job queued for "auto" by GPU, any job by container).
 */
async function boxTotals(db: SqliteDb, pieces: Piece[], waits: { queued: number; suspended: number }): Promise<UsageTotals> {
  const box = emptyFigures();
  const f = FIGURES_BY.gpu;
  for (const piece of pieces) {
    const raw = piece.table === 'samples';
    const c = (field: keyof Contribution): string => (raw ? CONTRIBUTION_SQL[field] : field);
    const time = raw ? 't' : 'bucket';
    const [row] = await db.all<Figures>(
      `SELECT COALESCE(SUM(${c(f.gpuS)}), 0) AS gpuSeconds, COALESCE(SUM(${c('smS')}), 0) AS smSeconds, COALESCE(SUM(${c('memGiBH')}), 0) AS memoryGiBHours,
        COALESCE(MAX(${c(f.peak)}), 0) AS peakMemoryBytes, COALESCE(SUM(${c(f.contS)}), 0) AS contentionSeconds
      FROM ${piece.table} WHERE ${time} >= ? AND ${time} < ?`,
      [piece.from, piece.to],
    );
    if (row) addFigures(box, row);
  }
  return {
    gpuSeconds: box.gpuSeconds,
    smSeconds: box.smSeconds,
    memoryGiBHours: box.memoryGiBHours,
    peakMemoryBytes: box.peakMemoryBytes,
    queuedSeconds: waits.queued,
    suspendedSeconds: waits.suspended,
    contentionMinutes: box.contentionSeconds / 60,
  };
}

function seriesOf(cells: Map<number, Map<string, Figures>>, rows: UsageRow[], bucketMs: number, since: number, until: number, top: number): UsageReport['series'] {
  const drawn = rows.filter((r) => r.smSeconds > 0 || r.memoryGiBHours > 0).slice(0, top).map((r) => r.key);
  const others = rows.length > drawn.length && rows.slice(top).some((r) => r.smSeconds > 0 || r.memoryGiBHours > 0);
  const keys = others ? [...drawn, 'others'] : drawn;
  const points: UsageSeriesPoint[] = [];
  const seconds = bucketMs / 1000;
  for (let start = floorTo(since, bucketMs); start < until; start += bucketMs) {
    const point: UsageSeriesPoint = { start, smBusy: {}, memoryGiB: {} };
    for (const k of keys) {
      point.smBusy[k] = 0;
      point.memoryGiB[k] = 0;
    }
    for (const [k, f] of cells.get(start) ?? []) {
      const key = drawn.includes(k) ? k : 'others';
      if (!(key in point.smBusy)) continue;
      point.smBusy[key] += f.smSeconds / seconds;
      point.memoryGiB[key] += f.memoryGiBHours / (seconds / 3600);
    }
    points.push(point);
  }
  return { bucketMs, keys, points };
}

/** Seconds each key's jobs spent queued and suspended or parked within [since, until). */
async function waitingSeconds(db: SqliteDb, by: ReportGrouping, since: number, until: number, now: number) {
  const changes = await db.all<{ job: string; at: number; state: string; owner: string; gpu: number | null; gpus: string | null }>(
    `SELECT s.job, s.at, s.state, j.owner, j.gpu, j.view ->> '$.gpus' AS gpus FROM job_states s JOIN jobs j ON j.id = s.job
     WHERE j.firstSeen < ? AND (j.lastSeen >= ? OR j.state NOT IN ('finished', 'failed', 'lost'))
     ORDER BY s.job, s.at`,
    [until, since],
  );
  const out = new Map<string, { queued: number; suspended: number }>();
  const all = { queued: 0, suspended: 0 };
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i];
    const next = changes[i + 1]?.job === c.job ? changes[i + 1].at : Math.min(until, now);
    const kind = c.state === 'queued' ? 'queued' : c.state === 'suspended' || c.state === 'parked' ? 'suspended' : null;
    const seconds = (Math.min(next, until) - Math.max(c.at, since)) / 1000;
    if (!kind || seconds <= 0) continue;
    all[kind] += seconds; // the box's total counts every wait, shown in a row or not
    // a job waiting has no process yet, so no container: waits are not shown by container
    const onGpus = c.gpu === null ? [] : c.gpus ? (JSON.parse(c.gpus) as number[]) : [c.gpu]; // a job on several GPUs waits on each
    const keys = by === 'user' ? [c.owner] : by === 'job' ? [c.job] : by === 'container' ? [] : onGpus.map(String); // queued for "auto": not yet on any GPU
    for (const key of keys) {
      const entry = out.get(key) ?? { queued: 0, suspended: 0 };
      entry[kind] += seconds;
      out.set(key, entry);
    }
  }
  return { byKey: out, all };
}

async function labelsFor(db: SqliteDb, by: ReportGrouping, keys: string[]): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  if (by === 'user') return labels;
  if (by === 'gpu') {
    for (const g of await db.all<{ gpu: number; name: string }>('SELECT gpu, name FROM gpus')) labels.set(String(g.gpu), `GPU ${g.gpu} · ${g.name}`);
    for (const k of keys) if (!labels.has(k)) labels.set(k, `GPU ${k}`);
    return labels;
  }
  if (by === 'container') return containerLabels(db, keys);
  const jobs = await db.all<{ id: string; owner: string; command: string }>(
    `SELECT id, owner, command FROM jobs WHERE id IN (SELECT value FROM json_each(?))`,
    [JSON.stringify(keys)],
  );
  for (const j of jobs) labels.set(j.id, `${j.owner}: ${j.command}`);
  return labels;
}

async function containerLabels(db: SqliteDb, keys: string[]): Promise<Map<string, string>> {
  const labels = new Map<string, string>([
    [NO_CONTAINER, 'not in a container'],
    ['?', 'recorded before gpushare kept containers'],
  ]);
  const known = await db.all<{ id: string; runtime: string; name: string | null; startedBy: string | null }>(
    `SELECT id, runtime, name, startedBy FROM containers WHERE id IN (SELECT value FROM json_each(?))`,
    [JSON.stringify(keys)],
  );
  for (const c of known) labels.set(c.id, `${c.runtime} ${c.name ?? '(no name known)'}${c.startedBy ? ` · started by ${c.startedBy}` : ''}`);
  return labels;
}

async function eventsIn(db: SqliteDb, since: number, until: number): Promise<UsageEventRow[]> {
  const rows = await db.all<{ at: number; kind: string; gpu: number | null; job: string | null; message: string; severity: UsageEventRow['severity'] }>(
    'SELECT at, kind, gpu, job, message, severity FROM events WHERE at >= ? AND at < ? ORDER BY at DESC, id DESC LIMIT ?',
    [since, until, EVENTS_KEPT],
  );
  return rows.reverse().map((r) => ({ at: r.at, kind: r.kind, gpu: r.gpu, jobId: r.job, message: r.message, severity: r.severity }));
}
