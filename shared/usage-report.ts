// A usage report: what `gpushare report --format json` writes and `reports.query` returns.
// Described for readers in electron/engine/reports/README.md; bump the schema name on any breaking change.

export const REPORT_GROUPINGS = ['user', 'job', 'gpu', 'container'] as const;
export type ReportGrouping = (typeof REPORT_GROUPINGS)[number];
/** Every way a report groups usage: reports.query's groupings, and per Slurm job (reports.slurmJobs, shared/slurm.ts). */
export const ALL_REPORT_GROUPINGS = [...REPORT_GROUPINGS, 'slurm-job'] as const;
export type AnyReportGrouping = (typeof ALL_REPORT_GROUPINGS)[number];

export const USAGE_REPORT_SCHEMA = 'gpushare.usage-report/1';

/** Said wherever GPU-hours are shown (reports' notes, the console's summaries): how a MIG slice counts. */
export const MIG_GPU_HOURS_NOTE = 'GPU-hours: a MIG slice counts its share of its GPU (its compute slices of the GPU\'s: 3/7 for a 3g slice of an A100 or H100).';

/** What `reports.export` writes: PDF stays with the CLI and the desktop app (it needs a browser to print). */
export const REPORT_EXPORT_FORMATS = ['html', 'csv', 'json'] as const;
export type ReportExportFormat = (typeof REPORT_EXPORT_FORMATS)[number];

/** "gpushare-usage-by-user-2025-11-21.csv", "gpushare-usage-by-slurm-job-…": the grouping and the day the range ends (UTC). */
export function reportFileName(report: { by: AnyReportGrouping; until: number }, format: ReportExportFormat): string {
  return `gpushare-usage-by-${report.by}-${new Date(report.until).toISOString().slice(0, 10)}.${format}`;
}

/** A report as a file, for a client to save. */
export interface ReportFile {
  /** e.g. "gpushare-usage-by-user-2025-11-21.html". */
  fileName: string;
  mimeType: string;
  /** The file's text, or its bytes in base64 where `encoding` says so (the desktop app's PDF: the bridge carries JSON). */
  content: string;
  encoding?: 'base64';
}

/** The usage of one user, job or GPU over the report's range. */
export interface UsageRow {
  /** The user name, the job id ("j12", "p4242") or the GPU index as text. */
  key: string;
  /** For people: the user, "owner: command line" of a job, "GPU 0 · NVIDIA A100…". */
  label: string;
  /** Seconds in which it had any use of a GPU (memory held or kernels running), per GPU. */
  gpuSeconds: number;
  /** SM-seconds: Σ SM% × seconds / 100 (one fully busy GPU for an hour = 3600). */
  smSeconds: number;
  /** Memory GiB-hours (GiB = 2^30 bytes): Σ memory held × time. */
  memoryGiBHours: number;
  /** The most memory it held on one GPU at one sample, in bytes. */
  peakMemoryBytes: number;
  /** Seconds its jobs spent queued. */
  queuedSeconds: number;
  /** Seconds its jobs spent suspended or parked. */
  suspendedSeconds: number;
  /** Minutes it ran kernels on a GPU where another job ran kernels too. */
  contentionMinutes: number;
}

/** The box's figures, the same whatever the grouping: contention in GPU-minutes with ≥ 2 jobs busy, every wait counted. */
export type UsageTotals = Omit<UsageRow, 'key' | 'label'>;

/** One point of a chart: usage in [start, start + bucketMs) for each key. */
export interface UsageSeriesPoint {
  start: number;
  /** Average GPUs' worth of SMs busy (SM-seconds / bucket seconds), per key. */
  smBusy: Record<string, number>;
  /** Average memory held in GiB, per key. */
  memoryGiB: Record<string, number>;
}

export interface UsageEventRow {
  at: number;
  kind: string;
  gpu: number | null;
  jobId: string | null;
  message: string;
  severity: 'info' | 'warning' | 'error';
}

export interface UsageReport {
  schema: typeof USAGE_REPORT_SCHEMA;
  /** Milliseconds since the epoch, as all times here. */
  generatedAt: number;
  since: number;
  until: number;
  by: ReportGrouping;
  /** Where the figures come from: "raw" samples, "minute", "hour" or "day" rollups, or "mixed" (coarse in the middle, finer at the edges). */
  resolution: 'raw' | 'minute' | 'hour' | 'day' | 'mixed';
  /** Rows sorted by SM-seconds, largest first. */
  rows: UsageRow[];
  totals: UsageTotals;
  /** For charts: the top keys over time (bucketMs apart); keys beyond the top ones are summed as "others". */
  series: { bucketMs: number; keys: string[]; points: UsageSeriesPoint[] };
  /** Engine events (alerts) in the range, newest last, at most 500. */
  events: UsageEventRow[];
}
