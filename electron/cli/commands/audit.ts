// `gpushare audit`: the changes asked of the engine (by whom, when, and what came of them), newest
// first, read page by page (audit.list answers at most AUDIT_PAGE_MAX entries at once). A user reads
// their own entries; an administrator everyone's.
import { AUDIT_PAGE_MAX, type GpushareApi } from '../../../shared/api.js';
import type { AuditEntry } from '../../../shared/jobs.js';
import { parseFlags, UsageError } from '../args.js';
import { clip, table } from '../format.js';
import { withEngine } from './jobs.js';
import { AUDIT_DEFAULT_COUNT } from '../usage.js';

/** The newest `count` entries (Infinity: all), following audit.list's pages from the newest. */
export async function readAuditPages(api: Pick<GpushareApi, 'call'>, count: number): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let before: number | undefined;
  while (entries.length < count) {
    const limit = Math.min(AUDIT_PAGE_MAX, count - entries.length);
    const page = await api.call('audit.list', before === undefined ? { limit } : { limit, before });
    entries.push(...page);
    if (page.length < limit) break; // the oldest page
    before = page[page.length - 1].id;
  }
  return entries;
}

export async function auditCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' }, all: { type: 'boolean' }, count: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`gpushare audit takes no arguments, got "${positionals[0]}".`);
  if (values.all && values.count !== undefined) throw new UsageError('Give --count N or --all, not both.');
  const count = values.all ? Infinity : values.count === undefined ? AUDIT_DEFAULT_COUNT : Number(values.count);
  if (!(count === Infinity || (Number.isInteger(count) && count >= 1))) throw new UsageError(`--count must be a whole number of entries, at least 1; got "${values.count}".`);
  const entries = await withEngine((engine) => readAuditPages(engine, count));
  process.stdout.write(values.json ? JSON.stringify(entries, null, 2) + '\n' : renderAudit(entries, process.stdout.columns ?? 120) + '\n');
  return 0;
}

export function renderAudit(entries: readonly AuditEntry[], width = 120): string {
  if (entries.length === 0) return 'No audit entries.';
  const rows = entries.map((e) => [
    new Date(e.at).toISOString().replace('T', ' ').slice(0, 19),
    e.who,
    e.count === undefined ? e.what : `${Object.keys((e.params as { refused?: object } | null)?.refused ?? { [e.what]: 1 }).join(',')} ×${e.count}`,
    e.result,
  ]);
  const header = ['WHEN', 'WHO', 'WHAT', 'RESULT'];
  const fixed = table(header.slice(0, -1), rows.map((r) => r.slice(0, -1))).split('\n')[0].length + 2;
  return table(header, rows.map((r) => [...r.slice(0, -1), clip(r[r.length - 1], Math.max(30, width - fixed))]));
}
