// `gpushare report`: usage by user, job, GPU or container from the usage store, as CSV, JSON, HTML or PDF.
import { existsSync, writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import { REPORT_GROUPINGS, type ReportGrouping } from '../../../shared/usage-report.js';
import { reportToCsv } from '../../engine/reports/csv.js';
import { reportToHtml } from '../../engine/reports/html.js';
import { htmlToPdf } from '../../engine/reports/pdf.js';
import { queryUsage } from '../../engine/reports/query.js';
import { defaultUsageDbPath, UsageStore } from '../../engine/store/usage-store.js';
import { parseFlags, UsageError } from '../args.js';
import { readSlurmUsage, slurmUsageCsv, slurmUsageFileFor } from '../../engine/reports/slurm-usage.js';
import { DAEMON_DB } from '../../engine/daemon/daemon-paths.js';

const FORMATS = ['csv', 'json', 'html', 'pdf'] as const;
type Format = (typeof FORMATS)[number];

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** "90m", "12h", "7d" (that long before now), "now", or an ISO date; ms since the epoch. */
export function parseTime(flag: string, text: string, now: number): number {
  const duration = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (duration) return Math.round(now - Number(duration[1]) * UNIT_MS[duration[2]]);
  if (text.trim() === 'now') return now;
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim())) {
    const t = Date.parse(text.trim());
    if (Number.isFinite(t)) return t;
  }
  throw new UsageError(`${flag} must be a duration like 90m, 12h or 7d, or an ISO date like 2026-11-01 or 2026-11-01T09:00Z; got "${text}".`);
}

/** `--by slurm-job`: the rows the epilogs settled, beside the store (root's alone on a box: run it as root). */
function slurmJobReport(values: { format?: string; output?: string; db?: string }, since: number, until: number): number {
  const format = values.format ?? formatFromName(values.output) ?? 'csv';
  if (format !== 'csv' && format !== 'json') throw new UsageError(`--by slurm-job writes csv or json; got "${format}".`);
  const db = values.db ?? (existsSync(DAEMON_DB) ? DAEMON_DB : defaultUsageDbPath());
  const file = slurmUsageFileFor(db);
  if (!existsSync(file)) throw new Error(`No Slurm job's usage recorded yet: ${file} does not exist. The box daemon writes a row there at each Slurm job's end (gpushare slurm epilog)${values.db ? '' : '; --db PATH names another store'}.`);
  const rows = readSlurmUsage(file, since, until);
  const text = format === 'json' ? JSON.stringify({ by: 'slurm-job', since, until, rows }, null, 2) + '\n' : slurmUsageCsv(rows);
  if (values.output) writeFileSync(values.output, text);
  else process.stdout.write(text);
  return 0;
}

export async function reportCommand(argv: string[], now = Date.now()): Promise<number> {
  const { values, positionals } = parseFlags(argv, {
    since: { type: 'string' },
    until: { type: 'string' },
    by: { type: 'string' },
    format: { type: 'string' },
    output: { type: 'string', short: 'o' },
    db: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`gpushare report takes no arguments, got "${positionals[0]}".`);
  const since = parseTime('--since', values.since ?? '7d', now);
  const until = values.until === undefined ? now : parseTime('--until', values.until, now);
  if (since >= until) throw new UsageError(`--since (${new Date(since).toISOString()}) must be before --until (${new Date(until).toISOString()}).`);
  if (values.by === 'slurm-job') return slurmJobReport(values, since, until);
  const by = (values.by ?? 'user') as ReportGrouping;
  if (!REPORT_GROUPINGS.includes(by)) throw new UsageError(`--by must be one of ${REPORT_GROUPINGS.join(', ')}; got "${values.by}".`);
  const format = (values.format ?? formatFromName(values.output) ?? 'csv') as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${values.format}".`);
  if (format === 'pdf' && !values.output) throw new UsageError('--format pdf needs -o FILE.');

  const path = values.db ?? defaultUsageDbPath();
  if (!existsSync(path)) {
    throw new Error(`No usage recorded yet: ${path} does not exist. The engine records usage while it runs (gpushare serve or the console)${values.db ? '' : '; --db PATH reads another database'}.`);
  }
  const store = await UsageStore.open({ path, onCorrupt: 'fail', readOnly: true });
  let report;
  try {
    report = await queryUsage(store.db, { since, until, by, now });
  } finally {
    await store.close();
  }

  if (format === 'pdf') {
    await htmlToPdf(reportToHtml(report), values.output!);
  } else {
    const text = format === 'csv' ? reportToCsv(report) : format === 'json' ? JSON.stringify(report, null, 2) + '\n' : reportToHtml(report);
    if (values.output) writeFileSync(values.output, text);
    else process.stdout.write(text);
  }
  if (values.output) process.stderr.write(`Wrote ${values.output}: ${report.rows.length} ${by === 'gpu' ? 'GPU' : by}${report.rows.length === 1 ? '' : 's'}, ${new Date(since).toISOString()} to ${new Date(until).toISOString()}.\n`);
  return 0;
}

function formatFromName(name: string | undefined): Format | undefined {
  const ext = name ? extname(name).slice(1).toLowerCase() : '';
  return (FORMATS as readonly string[]).includes(ext) ? (ext as Format) : ext === 'htm' ? 'html' : undefined;
}
