// Each user's recent GPU time, read from the usage store for the lab policy: usage decayed by
// age (fair share) and high-priority GPU time in the last 24 h. The scheduler evaluates every
// tick and must never wait on the disk, so it reads the last answer; a refresh at most once a
// minute replaces it.
import type { SqliteDb } from '../../store/sqlite.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../store/usage-store.js';

/** Usage older than this many half-lives is left out (it would weigh 1/16 or less). */
export const HALF_LIVES_READ = 4;
export const REFRESH_MS = MINUTE_MS;
/** Below this half-life the minute rollups are read (hour buckets would blur the decay). */
const MINUTE_RESOLUTION_BELOW_MS = 6 * HOUR_MS;

/** The store as the lab reads it (its database can be replaced when a damaged file is moved aside). */
export interface UsageSource {
  readonly db: SqliteDb;
}

export interface UsageFigures {
  /** GPU-seconds per user, each bucket weighted 2^(−age / half-life). */
  decayedGpuSeconds: Map<string, number>;
  /** GPU-seconds of high-priority jobs per user in the last 24 h. */
  highGpuSecondsToday: Map<string, number>;
  /** When they were read (ms); null: never. */
  asOf: number | null;
}

/** Decayed GPU-seconds per user from rollup rows (bucket start, seconds): a bucket's age is from its middle. */
export function decayedUsage(rows: ReadonlyArray<{ user: string; bucket: number; seconds: number }>, now: number, halfLifeMs: number, bucketMs: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const age = Math.max(0, now - (r.bucket + bucketMs / 2));
    out.set(r.user, (out.get(r.user) ?? 0) + r.seconds * 2 ** (-age / halfLifeMs));
  }
  return out;
}

/** Bounded queries: the last HALF_LIVES_READ half-lives of hourly (or minute) rollups, and a day of minute rollups. */
export async function readUsage(db: SqliteDb, now: number, halfLifeMs: number): Promise<Omit<UsageFigures, 'asOf'>> {
  const table = halfLifeMs < MINUTE_RESOLUTION_BELOW_MS ? 'usage_minute' : 'usage_hour';
  const bucketMs = table === 'usage_minute' ? MINUTE_MS : HOUR_MS;
  const rows = await db.all<{ user: string; bucket: number; seconds: number }>(
    `SELECT user, bucket, SUM(gpuSUser) AS seconds FROM ${table} WHERE bucket >= ? AND bucket <= ? GROUP BY user, bucket`,
    [Math.floor((now - HALF_LIVES_READ * halfLifeMs) / bucketMs) * bucketMs, now],
  );
  // a job's priority as it was last kept: a job lowered to normal before the day ends counts as normal
  const high = await db.all<{ user: string; seconds: number }>(
    `SELECT m.user AS user, SUM(m.gpuSJob) AS seconds FROM usage_minute m JOIN jobs j ON j.id = m.job
     WHERE m.bucket >= ? AND m.bucket <= ? AND j.view ->> 'priority' = 'high' GROUP BY m.user`,
    [Math.floor((now - DAY_MS) / MINUTE_MS) * MINUTE_MS, now],
  );
  return {
    decayedGpuSeconds: decayedUsage(rows, now, halfLifeMs, bucketMs),
    highGpuSecondsToday: new Map(high.map((r) => [r.user, r.seconds])),
  };
}

/** The last figures read, refreshed at most once a minute (never on the scheduler's tick itself). */
export class RecentUsage {
  private figures: UsageFigures = { decayedGpuSeconds: new Map(), highGpuSecondsToday: new Map(), asOf: null };
  private reading: Promise<void> | null = null;
  /** Why the last read failed (shown in policy.get), or null. */
  lastError: string | null = null;

  constructor(
    private readonly source: UsageSource | null,
    private readonly halfLifeMs: () => number,
    private readonly now: () => number,
  ) {}

  get current(): UsageFigures {
    return this.figures;
  }

  /** Start a read when the figures are a minute old (or never read); the scheduler calls this every tick. */
  refreshIfStale(): void {
    const asOf = this.figures.asOf;
    if (!this.source || this.reading || (asOf !== null && this.now() - asOf < REFRESH_MS)) return;
    void this.refresh();
  }

  /** Read now (one read at a time); resolves when the new figures are in place. */
  refresh(): Promise<void> {
    if (!this.source) return Promise.resolve();
    this.reading ??= (async () => {
      const at = this.now();
      const halfLifeMs = this.halfLifeMs();
      try {
        const read = await readUsage(this.source!.db, at, halfLifeMs);
        // a half-life changed during the read makes these figures stale at once: the next tick reads again
        this.figures = { ...read, asOf: halfLifeMs === this.halfLifeMs() ? at : null };
        this.lastError = null;
      } catch (error) {
        // the last figures stay; a closed or damaged store is the store's to report
        this.lastError = error instanceof Error ? error.message : String(error);
        this.figures = { ...this.figures, asOf: at };
      }
    })().finally(() => (this.reading = null));
    return this.reading;
  }

  /** The half-life changed: the figures mean something else now. */
  invalidate(): void {
    this.figures = { ...this.figures, asOf: null };
  }
}
