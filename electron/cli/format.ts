// Plain-text tables for the terminal.

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '-';
  if (bytes >= 10 * GiB) return `${(bytes / GiB).toFixed(1)}G`;
  if (bytes >= GiB) return `${(bytes / GiB).toFixed(2)}G`;
  return `${Math.round(bytes / MiB)}M`;
}

export const formatPercent = (value: number | null): string => (value === null ? '-' : `${Math.round(value)}%`);

/** Lay out rows in columns; `right` names the columns aligned right. */
export function table(header: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : right.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** Cut a string to `max` characters with an ellipsis. */
export const clip = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, max - 1) + '…');
