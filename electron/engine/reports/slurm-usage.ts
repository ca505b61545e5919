// Usage per Slurm job: the rows the epilog settles (slurm/slurm-jobs.ts), kept in the usage store's
// slurm_usage table, read back by `gpushare report --by slurm-job` (and `reports.slurmJobs`); its CSV is
// shared/slurm-usage-report.ts, whose JobID joins `sacct -P` output on JobIDRaw. Time-integrated (GPU-hours, SM-hours, memory GiB-hours), not peaks alone.
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SLURM_REPORT_MAX_ROWS, type SlurmUsageReport, type SlurmUsageRow } from '../../../shared/slurm.js';
import type { SqliteDb } from '../store/sqlite.js';
import { SLURM_USAGE_COLUMNS } from '../store/writers.js';
import { checkReportRange } from './query.js';

export type { SlurmUsageRow } from '../../../shared/slurm.js';

/** Where the rows were kept before the store held them: one JSON line each, beside the store. */
export const LEGACY_SLURM_USAGE_FILE = 'slurm-usage.jsonl';

/** The legacy rows file beside a store (the daemon's /var/lib/gpushare/usage.db → /var/lib/gpushare/slurm-usage.jsonl). */
export const legacySlurmUsageFileFor = (dbPath: string): string => join(dirname(dbPath), LEGACY_SLURM_USAGE_FILE);

/**
 * The rows of jobs that ended in [since, until), oldest end first: at most `maxRows`, the newest kept, the
 * rest counted. The range is checked as a usage report's (checkReportRange: after 2000, at most a day ahead, within maxSpanMs).
 */
export async function readSlurmUsage(db: SqliteDb, query: { since: number; until?: number; now?: number; maxSpanMs?: number; fieldPath?: string; maxRows?: number }): Promise<SlurmUsageReport> {
  const now = query.now ?? Date.now();
  const { since } = query;
  const until = query.until ?? now + 1; // up to now, this millisecond's ends included: an epilog just before
  checkReportRange(since, until, now, query.maxSpanMs, query.fieldPath);
  const maxRows = query.maxRows ?? SLURM_REPORT_MAX_ROWS;
  const newest = await db.all<SlurmUsageRow>(`SELECT ${SLURM_USAGE_COLUMNS.join(', ')} FROM slurm_usage WHERE end >= ? AND end < ? ORDER BY end DESC, jobId DESC LIMIT ?`, [since, until, maxRows]);
  const leftOut = newest.length < maxRows ? 0 : ((await db.get<{ n: number }>('SELECT count(*) AS n FROM slurm_usage WHERE end >= ? AND end < ?', [since, until]))?.n ?? 0) - newest.length;
  return { by: 'slurm-job', since, until, rows: newest.reverse(), leftOut };
}

const isRow = (v: unknown): v is SlurmUsageRow => {
  const r = v as Record<string, unknown> | null;
  if (!r || typeof r !== 'object' || typeof r.jobId !== 'string' || typeof r.user !== 'string') return false;
  const numbers = ['start', 'end', 'gpuHours', 'smHours', 'memoryGiBHours', 'peakMemoryBytes', 'gatedSeconds', 'parkedSeconds'];
  const texts = ['partition', 'qos', 'account', 'gpus'];
  return numbers.every((k) => typeof r[k] === 'number' && Number.isFinite(r[k])) && texts.every((k) => r[k] === null || r[k] === undefined || typeof r[k] === 'string');
};

/** The legacy file's rows (they predate account and GPUs: null); a line that is not a row (a torn write at a crash) is counted, not kept. */
export function parseLegacySlurmUsage(text: string): { rows: SlurmUsageRow[]; skipped: number } {
  const rows: SlurmUsageRow[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = null;
    }
    if (isRow(value)) rows.push(Object.fromEntries(SLURM_USAGE_COLUMNS.map((c) => [c, value[c] ?? null])) as unknown as SlurmUsageRow);
    else skipped++;
  }
  return { rows, skipped };
}

/**
 * An upgrade: the rows an earlier gpushare appended to `file` go into the store once, then the file is renamed
 * aside (`….imported`), so nothing is lost and nothing is counted twice (a row already in the store is kept).
 * Returns the sentence for the log, or null when there was no file.
 */
export async function importLegacySlurmUsage(store: { importSlurmUsage(rows: SlurmUsageRow[]): Promise<number> }, file: string): Promise<string | null> {
  if (!existsSync(file)) return null;
  const { rows, skipped } = parseLegacySlurmUsage(readFileSync(file, 'utf8'));
  const added = await store.importSlurmUsage(rows); // throws (file left in place, tried at the next start) if the store cannot take them
  let aside = `${file}.imported`;
  for (let n = 2; existsSync(aside); n++) aside = `${file}.imported.${n}`;
  renameSync(file, aside);
  const unread = skipped > 0 ? `; ${skipped} line${skipped === 1 ? ' was' : 's were'} not a row (cut short) and ${skipped === 1 ? 'was' : 'were'} left out` : '';
  return `Imported ${added} Slurm job usage row${added === 1 ? '' : 's'} from ${file} into the usage store (${rows.length - added} already there${unread}); the file is kept as ${aside}.`;
}
