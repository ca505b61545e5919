// Usage per Slurm job: the rows the epilog settles (slurm/slurm-jobs.ts), one JSON line each in the daemon's
// state folder beside its store, read back by `gpushare report --by slurm-job` as CSV or JSON whose JobID
// joins `sacct -P` output. Time-integrated (GPU-hours, SM-hours, memory GiB-hours), not peaks alone.
import { appendFileSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const SLURM_USAGE_FILE = 'slurm-usage.jsonl';
const GiB = 1024 ** 3;

export interface SlurmUsageRow {
  /** Slurm's job id: the JobID column of `sacct -P`. */
  jobId: string;
  user: string;
  partition: string | null;
  qos: string | null;
  /** Milliseconds since the epoch: the prolog's call and the epilog's. */
  start: number;
  end: number;
  gpuHours: number;
  smHours: number;
  memoryGiBHours: number;
  peakMemoryBytes: number;
  gatedSeconds: number;
  parkedSeconds: number;
}

/** The rows file beside a store (the daemon's /var/lib/gpushare/usage.db → /var/lib/gpushare/slurm-usage.jsonl). */
export const slurmUsageFileFor = (dbPath: string): string => join(dirname(dbPath), SLURM_USAGE_FILE);

/** Append one settled row; the file is root's alone (0600), as the store is. */
export function appendSlurmUsage(file: string, row: SlurmUsageRow): void {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 }); // an engine whose store never opened has no state folder yet
    const fd = openSync(file, 'a', 0o600);
    fchmodSync(fd, 0o600);
    closeSync(fd);
  }
  appendFileSync(file, JSON.stringify(row) + '\n');
}

/** Rows of jobs that ended in [since, until); a line that is not a row (a torn write) is skipped. */
export function readSlurmUsage(file: string, since: number, until: number): SlurmUsageRow[] {
  if (!existsSync(file)) return [];
  const rows: SlurmUsageRow[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const row = JSON.parse(line) as SlurmUsageRow;
      if (typeof row.jobId === 'string' && typeof row.end === 'number' && row.end >= since && row.end < until) rows.push(row);
    } catch {
      // a line cut short by a crash mid-write
    }
  }
  return rows;
}

const CSV_COLUMNS = ['JobID', 'User', 'Partition', 'QOS', 'Start', 'End', 'GPUHours', 'SMHours', 'MemoryGiBHours', 'PeakMemoryGiB', 'GatedSeconds', 'ParkedSeconds'] as const;
const cell = (v: string | number | null): string => {
  const text = v === null ? '' : String(v);
  return /[",\n|]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** CSV with sacct's column name JobID first, so `join` or a spreadsheet lines it up with `sacct -P -o JobID,…`. */
export function slurmUsageCsv(rows: SlurmUsageRow[]): string {
  const lines = rows.map((r) =>
    [r.jobId, r.user, r.partition, r.qos, new Date(r.start).toISOString(), new Date(r.end).toISOString(), r.gpuHours.toFixed(6), r.smHours.toFixed(6), r.memoryGiBHours.toFixed(6), (r.peakMemoryBytes / GiB).toFixed(3), r.gatedSeconds.toFixed(3), r.parkedSeconds.toFixed(3)].map(cell).join(','),
  );
  return [CSV_COLUMNS.join(','), ...lines].join('\n') + '\n';
}
