// Desktop notifications without floods: one per job and kind per window, and a few per burst.
// What is held back is told in one summary once the burst is over ("6 more: …"). Memory is
// bounded: at most maxKeys keys are remembered, whatever runs for however long.
import type { Alert, AlertKind } from '../../shared/jobs.js';

export const NOTIFIED_KINDS: ReadonlySet<AlertKind> = new Set(['contention', 'quota', 'out-of-memory', 'finished', 'failed', 'gpu-lost', 'idle']);

export interface DesktopNotice {
  title: string;
  body: string;
}

export interface CoalescerOptions {
  /** One notice per job (or GPU) and kind per this window. */
  perKeyMs?: number;
  /** At most `count` notices per `windowMs`; a burst ends after `windowMs` without a held alert. */
  burst?: { count: number; windowMs: number };
  /** How many keys (and held targets) are remembered at most. */
  maxKeys?: number;
  /** Whether an alert is this user's business (user-scope.ts); others' are dropped before anything is counted. */
  concerns?: (alert: Alert) => boolean;
}

const TARGETS_NAMED = 3;

interface HeldKind {
  count: number;
  /** Jobs or GPUs, first held first (at most TARGETS_NAMED + 1 kept: enough to write "a, b, c, …"). */
  targets: string[];
}

export class NotificationCoalescer {
  private readonly perKeyMs: number;
  private readonly burst: { count: number; windowMs: number };
  private readonly maxKeys: number;
  private readonly concerns: (alert: Alert) => boolean;
  /** key → when it was last shown; insertion order is age order (refreshed keys move to the end). */
  private readonly lastShown = new Map<string, number>();
  private recent: number[] = [];
  private readonly held = new Map<AlertKind, HeldKind>();
  private heldCount = 0;
  private firstHeldAt: number | null = null;
  private lastHeldAt: number | null = null;

  constructor(options: CoalescerOptions = {}) {
    this.perKeyMs = options.perKeyMs ?? 60_000;
    this.burst = options.burst ?? { count: 4, windowMs: 10_000 };
    this.maxKeys = options.maxKeys ?? 256;
    this.concerns = options.concerns ?? (() => true);
  }

  /** The notice to show for this alert now, or null when it is held for the summary. */
  offer(alert: Alert, now: number): DesktopNotice | null {
    if (!NOTIFIED_KINDS.has(alert.kind) || !this.concerns(alert)) return null;
    const target = targetOf(alert);
    const key = `${alert.kind}:${target}`;
    this.recent = this.recent.filter((t) => now - t < this.burst.windowMs);
    this.forgetOlderThan(now - this.perKeyMs);
    const last = this.lastShown.get(key);
    if ((last !== undefined && now - last < this.perKeyMs) || this.recent.length >= this.burst.count) {
      this.hold(alert.kind, target, now);
      return null;
    }
    this.lastShown.delete(key); // re-inserted last: the map stays in age order
    this.lastShown.set(key, now);
    while (this.lastShown.size > this.maxKeys) this.lastShown.delete(this.lastShown.keys().next().value!);
    this.recent.push(now);
    return { title: titleOf(alert), body: alert.message };
  }

  /** When the summary of held alerts is due (the burst quiet for its window, or a per-key window after it began); null when nothing is held. */
  summaryDueAt(): number | null {
    if (this.firstHeldAt === null || this.lastHeldAt === null) return null;
    return Math.min(this.lastHeldAt + this.burst.windowMs, this.firstHeldAt + this.perKeyMs);
  }

  /** "6 more: …" for everything held, once due; null before that or when nothing is held. */
  summary(now: number): DesktopNotice | null {
    const due = this.summaryDueAt();
    if (due === null || now < due) return null;
    const parts = [...this.held].map(([kind, h]) => {
      const named = h.targets.slice(0, TARGETS_NAMED).join(', ') + (h.targets.length > TARGETS_NAMED ? ', …' : '');
      return `${KIND_TITLES[kind] ?? kind} ×${h.count} (${named})`;
    });
    const notice = { title: `gpushare: ${this.heldCount} more notice${this.heldCount === 1 ? '' : 's'}`, body: `${this.heldCount} more: ${parts.join(', ')}` };
    this.held.clear();
    this.heldCount = 0;
    this.firstHeldAt = this.lastHeldAt = null;
    return notice;
  }

  /** Keys remembered now (bounded by maxKeys). */
  trackedKeys(): number {
    return this.lastShown.size;
  }

  private hold(kind: AlertKind, target: string, now: number): void {
    let h = this.held.get(kind);
    if (!h) this.held.set(kind, (h = { count: 0, targets: [] }));
    h.count++;
    if (h.targets.length <= TARGETS_NAMED && !h.targets.includes(target)) h.targets.push(target);
    this.heldCount++;
    this.firstHeldAt ??= now;
    this.lastHeldAt = now;
  }

  private forgetOlderThan(cutoff: number): void {
    for (const [key, at] of this.lastShown) {
      if (at > cutoff) break; // age order: the rest are newer
      this.lastShown.delete(key);
    }
  }
}

const KIND_TITLES: Partial<Record<AlertKind, string>> = {
  contention: 'GPU contention',
  quota: 'Memory quota',
  'out-of-memory': 'Out of GPU memory',
  finished: 'Job finished',
  idle: 'Holding idle GPU memory',
  failed: 'Job failed',
  'gpu-lost': 'GPU lost',
};

const targetOf = (alert: Alert): string => alert.jobId ?? (alert.gpu !== null ? `GPU ${alert.gpu}` : 'the box');

function titleOf(alert: Alert): string {
  const where = alert.jobId ? ` — ${alert.jobId}` : alert.gpu !== null ? ` — GPU ${alert.gpu}` : '';
  return `${KIND_TITLES[alert.kind] ?? alert.kind}${where}`;
}
