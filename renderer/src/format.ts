// Numbers for people: sizes in GiB/MiB, percents, durations, clock times.
const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '–';
  if (bytes >= 100 * GIB) return `${Math.round(bytes / GIB)} GiB`;
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)} GiB`;
  return `${Math.round(bytes / MIB)} MiB`;
}

/** Bytes rounded as formatBytes shows them: lists sort by what a person sees, so rows do not
 * swap places over differences no one can read (and a redraw is not spent on them). */
export function shownBytes(bytes: number | null | undefined): number {
  if (bytes === null || bytes === undefined) return -1;
  if (bytes >= 100 * GIB) return Math.round(bytes / GIB) * GIB;
  if (bytes >= GIB) return Math.round(bytes / (GIB / 10)) * (GIB / 10);
  return Math.round(bytes / MIB) * MIB;
}

export const formatGib = (bytes: number): string => (bytes / GIB).toFixed(bytes >= 10 * GIB ? 0 : 1);

export function formatPercent(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${Math.round(value)}%`;
}

const clock = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** One formatter for every label: building one per call costs milliseconds per chart. */
export function formatClock(ms: number): string {
  return clock.format(ms);
}

export function formatAgo(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  return `${Math.floor(s / 3600)}h ago`;
}

/** The command a person recognises: the program name and its first arguments. */
export function shortCommand(argv: readonly string[], command: string | null): string {
  if (argv.length === 0) return command ?? '?';
  const program = argv[0].split('/').pop() ?? argv[0];
  return [program, ...argv.slice(1)].join(' ');
}

export const QUOTA_STEP_BYTES = 256 * MIB;
export const GIB_BYTES = GIB;
