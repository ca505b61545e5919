// `gpushare report`: usage by user, job, GPU, container or Slurm job from the usage store, as CSV, JSON, HTML or PDF:
// a store this user reads, or the box daemon's (root's alone) through the daemon's API.
import { accessSync, constants, existsSync, statSync, writeFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import type { SlurmUsageReport } from '../../../shared/slurm.js';
import { REPORT_GROUPINGS, type ReportGrouping, type UsageReport } from '../../../shared/usage-report.js';
import { reportToCsv } from '../../engine/reports/csv.js';
import { reportToHtml } from '../../engine/reports/html.js';
import { htmlToPdf } from '../../engine/reports/pdf.js';
import { slurmReportToHtml } from '../../engine/reports/slurm-html.js';
import { queryUsage } from '../../engine/reports/query.js';
import { defaultUsageDbPath, UsageStore } from '../../engine/store/usage-store.js';
import { parseFlags, UsageError } from '../args.js';
import { readSlurmUsage } from '../../engine/reports/slurm-usage.js';
import { slurmUsageCsv } from '../../../shared/slurm-usage-report.js';
import { DAEMON_DB, daemonSocketPath } from '../../engine/daemon/daemon-paths.js';
import { callWithin, connectToEngine, type EngineClient } from '../engine-client.js';

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

/** Where a report is read: a store file this user can read, or the box daemon's store through its API (root's alone, 0600). */
type ReportSource = { kind: 'file'; path: string } | { kind: 'daemon'; client: EngineClient; path: string };

const readable = (path: string): boolean => {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};

/** One file by two names (a link, a relative path): stat needs no read permission on it. */
const sameFile = (a: string, b: string): boolean => {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
};

/** The box daemon, when one answers here, and the store it keeps; null: none answers. */
async function boxDaemon(): Promise<{ client: EngineClient; storePath: string | null } | null> {
  let client: EngineClient;
  try {
    client = await connectToEngine(daemonSocketPath());
  } catch {
    return null;
  }
  try {
    return { client, storePath: (await callWithin(client, 'store.status', {})).path };
  } catch {
    client.close();
    return null;
  }
}

/**
 * --db PATH, else the box daemon's store where a daemon answers, else (none answers) the daemon's store file for
 * --by slurm-job when it is there and your own store otherwise. A store you may not read (the daemon's, root's
 * alone) is asked of the daemon, which answers as it answers the console: reports are lab-wide.
 */
async function reportSource(db: string | undefined, slurm: boolean): Promise<ReportSource> {
  const daemon = await boxDaemon();
  const path = db !== undefined ? resolve(db) : (daemon?.storePath ?? (slurm && existsSync(DAEMON_DB) ? DAEMON_DB : defaultUsageDbPath()));
  const unreadable = existsSync(path) && !readable(path);
  if (daemon && unreadable && daemon.storePath !== null && sameFile(daemon.storePath, path)) return { kind: 'daemon', client: daemon.client, path };
  daemon?.client.close();
  if (!existsSync(path)) {
    const hint = db !== undefined ? '' : slurm ? '; --db PATH names another store' : '; --db PATH reads another database';
    throw new Error(
      slurm
        ? `No Slurm job's usage recorded yet: ${path} does not exist. The box daemon records a row in its store at each Slurm job's end (gpushare slurm epilog)${hint}.`
        : `No usage recorded yet: ${path} does not exist. The engine records usage while it runs (gpushare serve or the console)${hint}.`,
    );
  }
  if (unreadable) {
    const why = daemon ? `the box daemon answering at ${daemonSocketPath()} keeps ${daemon.storePath ?? 'no store'}, not this one` : `no box daemon answers at ${daemonSocketPath()} to ask instead`;
    throw new Error(`You (uid ${process.getuid?.()}) may not read ${path}, and ${why}. The box daemon's store is root's alone: run the report as root, or while the daemon runs.`);
  }
  return { kind: 'file', path };
}

/** `--by slurm-job`: the rows the epilogs settled in the store, as CSV or JSON whose JobID joins sacct's JobIDRaw, or the HTML or PDF report. */
async function slurmJobReport(values: { format?: string; output?: string; db?: string }, since: number, until: number, now: number): Promise<number> {
  const format = (values.format ?? formatFromName(values.output) ?? 'csv') as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${values.format}".`);
  if (format === 'pdf' && !values.output) throw new UsageError('--format pdf needs -o FILE.');
  const source = await reportSource(values.db, true);
  let report: SlurmUsageReport;
  if (source.kind === 'daemon') {
    try {
      report = await source.client.call('reports.slurmJobs', { since, until });
    } finally {
      source.client.close();
    }
  } else {
    const store = await UsageStore.open({ path: source.path, onCorrupt: 'fail', readOnly: true });
    try {
      report = await readSlurmUsage(store.db, { since, until, now });
    } finally {
      await store.close();
    }
  }
  if (report.leftOut > 0) process.stderr.write(`gpushare: ${report.leftOut} older Slurm jobs of the range are left out (at most ${report.rows.length} rows at once): a later --since lists them.\n`);
  if (format === 'pdf') {
    await htmlToPdf(slurmReportToHtml(report), values.output!);
    return 0;
  }
  const text = format === 'json' ? JSON.stringify(report, null, 2) + '\n' : format === 'html' ? slurmReportToHtml(report) : slurmUsageCsv(report.rows);
  if (values.output) writeFileSync(values.output, text);
  else process.stdout.write(text);
  return 0;
}

/** A usage report from the store this user reads, or from the box daemon (whose store is root's alone). */
async function usageReport(db: string | undefined, query: { since: number; until: number; by: ReportGrouping; now: number }): Promise<UsageReport> {
  const source = await reportSource(db, false);
  if (source.kind === 'daemon') {
    try {
      return await source.client.call('reports.query', { since: query.since, until: query.until, by: query.by });
    } finally {
      source.client.close();
    }
  }
  const store = await UsageStore.open({ path: source.path, onCorrupt: 'fail', readOnly: true });
  try {
    return await queryUsage(store.db, query);
  } finally {
    await store.close();
  }
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
  if (values.by === 'slurm-job') return slurmJobReport(values, since, until, now);
  const by = (values.by ?? 'user') as ReportGrouping;
  if (!REPORT_GROUPINGS.includes(by)) throw new UsageError(`--by must be one of ${REPORT_GROUPINGS.join(', ')}; got "${values.by}".`);
  const format = (values.format ?? formatFromName(values.output) ?? 'csv') as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${values.format}".`);
  if (format === 'pdf' && !values.output) throw new UsageError('--format pdf needs -o FILE.');

  const report = await usageReport(values.db, { since, until, by, now });

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
