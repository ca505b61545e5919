// The Slurm job table's columns, order and cells: what `gpushare report --by slurm-job` writes,
// in figures for people. DOM-free, so its unit test runs in Node.
import type { SlurmUsageReport, SlurmUsageRow } from '../../../../shared/slurm.js';
import { slurmGpusCell } from '../../../../shared/slurm-usage-report.js';
import { MIG_GPU_HOURS_NOTE } from '../../../../shared/usage-report.js';
import { formatBytes } from '../../format.js';
import type { SlurmSortKey } from '../../stores/reports-store.js';
import { formatAmount, formatDateTime, formatDuration, formatHours } from './report-format.js';

/** Rows drawn at most: a month of a busy cluster's jobs would be thousands; the exports hold them all. */
export const SLURM_ROWS_SHOWN = 500;

export interface SlurmColumn {
  key: SlurmSortKey;
  title: string;
  /** What the column means, on its header. */
  hint?: string;
  numeric?: boolean;
  cell: (row: SlurmUsageRow) => string;
}

const orNone = (text: string | null): string => text ?? '–';

export const SLURM_COLUMNS: readonly SlurmColumn[] = [
  { key: 'jobId', title: 'Slurm job', hint: "Slurm's job id: sacct's JobIDRaw", cell: (r) => r.jobId },
  { key: 'user', title: 'User', cell: (r) => r.user },
  { key: 'account', title: 'Account', hint: 'The Slurm account it was billed to; – not recorded (a job that ended before gpushare kept it)', cell: (r) => orNone(r.account) },
  { key: 'partition', title: 'Partition', cell: (r) => orNone(r.partition) },
  { key: 'qos', title: 'QOS', cell: (r) => orNone(r.qos) },
  { key: 'gpus', title: 'GPUs', hint: 'The GPUs and MIG slices its processes ran on; – not recorded (an older row)', cell: (r) => slurmGpusCell(r.gpus) },
  { key: 'start', title: 'Start', hint: "The prolog's call", cell: (r) => formatDateTime(r.start) },
  { key: 'end', title: 'End', hint: "The epilog's call", cell: (r) => formatDateTime(r.end) },
  { key: 'gpuHours', title: 'GPU-h', hint: `A GPU or MIG slice with the job's processes on it, per tick. ${MIG_GPU_HOURS_NOTE}`, numeric: true, cell: (r) => formatHours(r.gpuHours * 3600) },
  { key: 'smHours', title: 'SM-h', hint: 'SM utilisation × time: one fully busy GPU for an hour = 1', numeric: true, cell: (r) => formatHours(r.smHours * 3600) },
  { key: 'memoryGiBHours', title: 'Mem GiB·h', numeric: true, cell: (r) => formatAmount(r.memoryGiBHours) },
  { key: 'peakMemoryBytes', title: 'Peak mem', numeric: true, cell: (r) => formatBytes(r.peakMemoryBytes) },
  { key: 'gatedSeconds', title: 'Gated', hint: 'Time its launches waited at the launch gate', numeric: true, cell: (r) => formatDuration(r.gatedSeconds) },
  { key: 'parkedSeconds', title: 'Parked', hint: 'Time its memory was checkpointed to the host', numeric: true, cell: (r) => formatDuration(r.parkedSeconds) },
];

/** Slurm's ids are digits: a longer one is a later job, so 999 sorts before 1000. */
const compareIds = (a: string, b: string): number => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

function compare(a: SlurmUsageRow, b: SlurmUsageRow, key: SlurmSortKey): number {
  if (key === 'jobId') return compareIds(a.jobId, b.jobId);
  const x = a[key];
  const y = b[key];
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (x === y) return 0;
  if (x === null) return 1; // no partition, QOS, account or GPUs recorded: last either way
  if (y === null) return -1;
  return String(x).localeCompare(String(y));
}

/** The rows in the order asked; ties by end, then job id, so a refresh never shuffles them. */
export function sortSlurmRows(rows: readonly SlurmUsageRow[], sort: { key: SlurmSortKey; descending: boolean }): SlurmUsageRow[] {
  const direction = sort.descending ? -1 : 1;
  const nullsLast = (a: SlurmUsageRow, b: SlurmUsageRow): boolean => (a[sort.key] === null) !== (b[sort.key] === null);
  return [...rows].sort((a, b) => (nullsLast(a, b) ? compare(a, b, sort.key) : compare(a, b, sort.key) * direction) || (a.end - b.end) * direction || compareIds(a.jobId, b.jobId) * direction);
}

/** A header clicked: the same column turns round; a new one starts largest or latest first, names A to Z. */
export function nextSlurmSort(current: { key: SlurmSortKey; descending: boolean }, key: SlurmSortKey): { key: SlurmSortKey; descending: boolean } {
  if (current.key === key) return { key, descending: !current.descending };
  return { key, descending: !['jobId', 'user', 'account', 'partition', 'qos', 'gpus'].includes(key) };
}

/** What the table draws: the sorted rows up to SLURM_ROWS_SHOWN, and how many it leaves to the exports. */
export function slurmTableRows(report: SlurmUsageReport, sort: { key: SlurmSortKey; descending: boolean }): { rows: SlurmUsageRow[]; notShown: number } {
  const sorted = sortSlurmRows(report.rows, sort);
  return { rows: sorted.slice(0, SLURM_ROWS_SHOWN), notShown: Math.max(0, sorted.length - SLURM_ROWS_SHOWN) };
}
