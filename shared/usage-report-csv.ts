// A usage report as CSV (RFC 4180): a header row, CRLF line endings, fields quoted when they hold a comma,
// quote or line break. Pure, so the CLI, the engine's reports.export and the console build the same file.
import type { UsageReport, UsageRow } from './usage-report.js';

export const CSV_COLUMNS = [
  'gpu_seconds', 'sm_seconds', 'memory_gib_hours', 'peak_memory_bytes', 'queued_seconds', 'suspended_seconds', 'contention_minutes',
] as const;

const FIELDS: Record<(typeof CSV_COLUMNS)[number], keyof UsageRow> = {
  gpu_seconds: 'gpuSeconds',
  sm_seconds: 'smSeconds',
  memory_gib_hours: 'memoryGiBHours',
  peak_memory_bytes: 'peakMemoryBytes',
  queued_seconds: 'queuedSeconds',
  suspended_seconds: 'suspendedSeconds',
  contention_minutes: 'contentionMinutes',
};

export function csvField(value: string | number): string {
  const text = typeof value === 'number' ? formatNumber(value) : spreadsheetText(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A name as text a spreadsheet shows, never runs: one that starts as a formula would (= @ tab CR, + or - before more) gets a leading ' (OWASP's advice); a lone '-' (no container) stays. */
export function spreadsheetText(text: string): string {
  return /^([=@\t\r]|[+-].)/s.test(text) ? `'${text}` : text;
}

/** Plain decimal, at most 9 significant decimals, never exponent notation for report-sized figures. */
function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toFixed(9)));
}

/** One row per user, job or GPU: the key, a label, then the figures. */
export function reportToCsv(report: UsageReport): string {
  const lines = [[report.by, 'label', ...CSV_COLUMNS].map(csvField).join(',')];
  for (const row of report.rows) {
    lines.push([row.key, row.label, ...CSV_COLUMNS.map((c) => row[FIELDS[c]])].map(csvField).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
