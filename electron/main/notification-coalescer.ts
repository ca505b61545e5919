// Desktop notifications without floods: one per job and kind per window; what arrives
// in between is counted and told in the next one ("…and 3 more like it").
import type { Alert, AlertKind } from '../../shared/jobs.js';

export const NOTIFIED_KINDS: ReadonlySet<AlertKind> = new Set(['contention', 'quota', 'out-of-memory', 'finished', 'failed']);

export interface DesktopNotice {
  title: string;
  body: string;
}

export class NotificationCoalescer {
  private readonly lastShown = new Map<string, number>();
  private readonly held = new Map<string, number>();
  private recent: number[] = [];

  constructor(
    private readonly perKeyMs = 60_000,
    private readonly burst = { count: 4, windowMs: 10_000 },
  ) {}

  /** The notice to show for this alert now, or null when it is coalesced. */
  offer(alert: Alert, now = Date.now()): DesktopNotice | null {
    if (!NOTIFIED_KINDS.has(alert.kind)) return null;
    const key = `${alert.kind}:${alert.jobId ?? `gpu${alert.gpu ?? '-'}`}`;
    this.recent = this.recent.filter((t) => now - t < this.burst.windowMs);
    const last = this.lastShown.get(key);
    if ((last !== undefined && now - last < this.perKeyMs) || this.recent.length >= this.burst.count) {
      this.held.set(key, (this.held.get(key) ?? 0) + 1);
      return null;
    }
    this.lastShown.set(key, now);
    this.recent.push(now);
    const more = this.held.get(key) ?? 0;
    this.held.delete(key);
    return {
      title: titleOf(alert),
      body: more > 0 ? `${alert.message} (and ${more} more like it)` : alert.message,
    };
  }
}

function titleOf(alert: Alert): string {
  const where = alert.jobId ? ` — ${alert.jobId}` : alert.gpu !== null ? ` — GPU ${alert.gpu}` : '';
  const what: Record<string, string> = { contention: 'GPU contention', quota: 'Memory quota', 'out-of-memory': 'Out of GPU memory', finished: 'Job finished', failed: 'Job failed' };
  return `${what[alert.kind] ?? alert.kind}${where}`;
}
