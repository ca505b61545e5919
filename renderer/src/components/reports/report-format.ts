// Report figures for people: hours with two decimals, short durations in minutes or seconds.
import type { ReportGrouping, UsageRow } from '../../../../shared/usage-report.js';

export function formatDuration(seconds: number): string {
  if (seconds === 0) return '0';
  if (seconds < 60) return `${Number(seconds.toFixed(1))} s`;
  if (seconds < 3600) return `${Number((seconds / 60).toFixed(1))} min`;
  return `${(seconds / 3600).toFixed(2)} h`;
}

export const formatHours = (seconds: number): string => (seconds / 3600).toFixed(seconds >= 36 ? 2 : 4);

export const formatAmount = (value: number, digits = 2): string => (value === 0 ? '0' : value < 10 ** -digits ? value.toPrecision(2) : value.toFixed(digits));

/** The row's name in charts: the user, the job id, "GPU 0". */
export const rowName = (row: Pick<UsageRow, 'key'>, by: ReportGrouping): string => (by === 'gpu' ? `GPU ${row.key}` : row.key);

const pad = (n: number): string => String(n).padStart(2, '0');

/** ms → the value of an <input type="datetime-local"> (local time). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const dateTime = new Intl.DateTimeFormat([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
export const formatDateTime = (ms: number): string => dateTime.format(ms);
