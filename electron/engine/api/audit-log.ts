// The audit log as the engine keeps it. Every accepted change is a row of its own. Refusals are kept
// per user and reason (the error code) over an hour: the first few in full, then one row that counts
// the rest, so a flood of refused requests costs its sender a few rows an hour and pushes nobody's
// records out of view. A user's refused requests also have a rate bound (RefusalRate).
import type { AuditEntry } from '../../../shared/jobs.js';

/** Refusals of one user for one reason kept in full per window; the rest are counted in one row. */
export const REFUSALS_IN_FULL = 5;
export const REFUSAL_WINDOW_MS = 60 * 60_000;
/** Rows the engine keeps in memory (the store keeps the rest, and audit.list pages through it). */
const KEPT_IN_MEMORY = 10_000;

export type AuditRow = Omit<AuditEntry, 'id'>;

/** Who may read which entries: everyone's (an administrator, the engine's own user) or their own. */
export interface AuditReader {
  uid: number;
  user: string;
  everyone: boolean;
}

export interface AuditPage {
  limit: number;
  before?: number;
}

export const mayRead = (reader: AuditReader, entry: AuditEntry): boolean => reader.everyone || (entry.uid === undefined ? entry.who === reader.user : entry.uid === reader.uid);

interface RefusalWindow {
  window: number;
  kept: number;
  summary: AuditEntry | null;
}

export class AuditLog {
  private readonly rows: AuditEntry[] = [];
  private seq = 0;
  private readonly windows = new Map<string, RefusalWindow>();
  private readonly listeners = new Set<(entry: AuditEntry) => void>();

  /** Hear each new row, and each change of a summary row (the same object again, its count grown). */
  onEntry(listener: (entry: AuditEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  accepted(row: AuditRow): AuditEntry {
    return this.add(row);
  }

  /** A refused request: kept in full while its user's reason has had fewer than REFUSALS_IN_FULL this window, else counted. */
  refused(row: AuditRow & { uid: number }, reason: string): AuditEntry {
    const key = `${row.uid}\0${reason}`;
    const window = Math.floor(row.at / REFUSAL_WINDOW_MS);
    let state = this.windows.get(key);
    if (!state || state.window !== window) {
      if (this.windows.size >= 4096) this.forgetBefore(window);
      this.windows.set(key, (state = { window, kept: 0, summary: null }));
    }
    if (state.kept < REFUSALS_IN_FULL) {
      state.kept++;
      return this.add(row);
    }
    const summary = state.summary;
    if (!summary) {
      state.summary = this.add({ at: row.at, until: row.at, who: row.who, uid: row.uid, what: row.what, params: { refused: { [row.what]: 1 } }, result: summaryResult(reason, 1, row.result), count: 1 });
      return state.summary;
    }
    const counts = (summary.params as { refused: Record<string, number> }).refused;
    counts[row.what] = (counts[row.what] ?? 0) + 1;
    summary.count = (summary.count ?? 0) + 1;
    summary.until = row.at;
    summary.result = summaryResult(reason, summary.count, row.result);
    this.tell(summary);
    return summary;
  }

  /** Newest first, at most `limit`, older than `before`, those `reader` may read. */
  page(query: AuditPage, reader: AuditReader): AuditEntry[] {
    const out: AuditEntry[] = [];
    for (let i = this.rows.length - 1; i >= 0 && out.length < query.limit; i--) {
      const entry = this.rows[i];
      if (query.before !== undefined && entry.id >= query.before) continue;
      if (mayRead(reader, entry)) out.push({ ...entry });
    }
    return out;
  }

  /** The last `limit` rows, newest first (tests, benchmarks). */
  last(limit: number): AuditEntry[] {
    return this.rows.slice(-limit).reverse();
  }

  private add(row: AuditRow): AuditEntry {
    const entry: AuditEntry = { id: ++this.seq, ...row };
    this.rows.push(entry);
    if (this.rows.length > KEPT_IN_MEMORY) this.rows.splice(0, this.rows.length - KEPT_IN_MEMORY);
    this.tell(entry);
    return entry;
  }

  private tell(entry: AuditEntry): void {
    for (const listener of this.listeners) listener(entry);
  }

  private forgetBefore(window: number): void {
    for (const [key, state] of this.windows) if (state.window < window) this.windows.delete(key);
  }
}

const summaryResult = (reason: string, count: number, last: string): string =>
  `${count} more ${reason} refusal${count === 1 ? '' : 's'} past the first ${REFUSALS_IN_FULL} this hour, counted, not kept; the last: ${last}`;

/** Refusals a user may have at once, and how many more each second: past them, their changes are refused unread. */
export const REFUSAL_BURST = 60;
export const REFUSALS_PER_SECOND = 1;

/** A token bucket of refusals per uid. */
export class RefusalRate {
  private readonly buckets = new Map<number, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether `uid` may have another request looked at (it has a refusal to spend). */
  allows(uid: number): boolean {
    return this.tokens(uid) >= 1;
  }

  /** Spend one refusal. */
  spend(uid: number): void {
    const tokens = this.tokens(uid);
    this.buckets.set(uid, { tokens: Math.max(0, tokens - 1), at: this.now() });
    if (this.buckets.size > 4096) for (const [key] of this.buckets) if (this.tokens(key) >= REFUSAL_BURST) this.buckets.delete(key);
  }

  /** Seconds until `uid` has a refusal to spend again. */
  waitSeconds(uid: number): number {
    return Math.max(1, Math.ceil((1 - this.tokens(uid)) / REFUSALS_PER_SECOND));
  }

  private tokens(uid: number): number {
    const bucket = this.buckets.get(uid);
    if (!bucket) return REFUSAL_BURST;
    return Math.min(REFUSAL_BURST, bucket.tokens + ((this.now() - bucket.at) / 1000) * REFUSALS_PER_SECOND);
  }
}
