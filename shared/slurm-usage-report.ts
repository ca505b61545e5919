// Usage per Slurm job (reports.slurmJobs) as a file and as totals. Pure, so the CLI, the engine's
// reports.export and the console write the same CSV, whose JobID joins `sacct -P -o JobIDRaw,…`.
import type { SlurmUsageRow } from './slurm.js';
import { spreadsheetText } from './usage-report-csv.js';

const GiB = 1024 ** 3;

export const SLURM_CSV_COLUMNS = ['JobID', 'User', 'Partition', 'QOS', 'Start', 'End', 'GPUHours', 'SMHours', 'MemoryGiBHours', 'PeakMemoryGiB', 'GatedSeconds', 'ParkedSeconds', 'Account', 'GPUs'] as const;

const cell = (v: string | number | null): string => {
  const text = v === null ? '' : String(v);
  return /[",\n|]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};
/** A name (an account may be the job's submitter's choice where Slurm enforces none): text, never a formula. */
const name = (v: string | null): string => cell(v === null ? null : spreadsheetText(v));

/**
 * CSV with sacct's column name JobID first, so `join` or a spreadsheet lines it up with `sacct -P -o JobIDRaw,…`.
 * Account and GPUs came later: they are the last columns, so a parser of the first twelve still reads them; empty where not recorded.
 */
export function slurmUsageCsv(rows: readonly SlurmUsageRow[]): string {
  const lines = rows.map((r) =>
    [
      ...[r.jobId, r.user, r.partition, r.qos].map(name),
      ...[new Date(r.start).toISOString(), new Date(r.end).toISOString(), r.gpuHours.toFixed(6), r.smHours.toFixed(6), r.memoryGiBHours.toFixed(6), (r.peakMemoryBytes / GiB).toFixed(3), r.gatedSeconds.toFixed(3), r.parkedSeconds.toFixed(3)].map(cell),
      ...[r.account, r.gpus].map(name),
    ].join(','),
  );
  return [SLURM_CSV_COLUMNS.join(','), ...lines].join('\n') + '\n';
}

/** A row's GPUs for people: "–" not recorded (an older row), "none" where no process of the job was on a GPU. */
export const slurmGpusCell = (gpus: string | null): string => (gpus === null ? '–' : gpus === '' ? 'none' : gpus);

/** The rows' sums (peak memory: their largest), for a report's summary. */
export type SlurmUsageTotals = { jobs: number } & Pick<SlurmUsageRow, 'gpuHours' | 'smHours' | 'memoryGiBHours' | 'peakMemoryBytes' | 'gatedSeconds' | 'parkedSeconds'>;

export function slurmUsageTotals(rows: readonly SlurmUsageRow[]): SlurmUsageTotals {
  const totals: SlurmUsageTotals = { jobs: rows.length, gpuHours: 0, smHours: 0, memoryGiBHours: 0, peakMemoryBytes: 0, gatedSeconds: 0, parkedSeconds: 0 };
  for (const r of rows) {
    totals.gpuHours += r.gpuHours;
    totals.smHours += r.smHours;
    totals.memoryGiBHours += r.memoryGiBHours;
    totals.peakMemoryBytes = Math.max(totals.peakMemoryBytes, r.peakMemoryBytes);
    totals.gatedSeconds += r.gatedSeconds;
    totals.parkedSeconds += r.parkedSeconds;
  }
  return totals;
}

/** Said in place of an empty table (`range`: when, in the reader's words): no Slurm job ended here then, and where rows come from. */
export const noSlurmUsageSentence = (range: string): string =>
  `No Slurm job's usage recorded yet ${range}: the box daemon records a row at each Slurm job's end (gpushare slurm epilog), and this report lists the jobs that ended in its range.`;
