// Desktop notices without floods, on an injected clock: bursts end with a summary, memory stays bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Alert } from '../../shared/jobs.js';
import { NotificationCoalescer } from './notification-coalescer.js';

const alert = (id: number, kind: Alert['kind'], jobId: string | null, severity: Alert['severity'] = 'warning'): Alert => ({ id, kind, at: 0, gpu: 0, jobId, message: `alert ${id}`, severity });

test('one job cannot flood the desktop: repeats are held, then told in one summary when the burst ends', () => {
  const coalescer = new NotificationCoalescer({ perKeyMs: 60_000, burst: { count: 4, windowMs: 10_000 } });
  assert.equal(coalescer.offer(alert(1, 'quota', 'j1'), 0)?.body, 'alert 1');
  for (let i = 2; i <= 20; i++) assert.equal(coalescer.offer(alert(i, 'quota', 'j1'), i * 100), null);
  assert.equal(coalescer.summaryDueAt(), 2000 + 10_000, 'due once the burst has been quiet for its window');
  assert.equal(coalescer.summary(11_999), null, 'not before');
  const summary = coalescer.summary(12_000);
  assert.equal(summary?.body, '19 more: Memory quota ×19 (j1)');
  assert.equal(coalescer.summaryDueAt(), null);
  assert.equal(coalescer.summary(99_000), null, 'told once');
  assert.equal(coalescer.offer(alert(21, 'quota', 'j1'), 61_000)?.body, 'alert 21', 'what the summary told is not told again');
});

test('a burst of different jobs: the first few are shown, the rest end in "6 more: …"', () => {
  const coalescer = new NotificationCoalescer({ perKeyMs: 60_000, burst: { count: 4, windowMs: 10_000 } });
  const shown = Array.from({ length: 10 }, (_, i) => coalescer.offer(alert(i + 1, i < 8 ? 'finished' : 'failed', `j${i + 1}`), i));
  assert.deepEqual(shown.map((n) => n !== null), [true, true, true, true, false, false, false, false, false, false]);
  const summary = coalescer.summary(9 + 10_000);
  assert.equal(summary?.title, 'gpushare: 6 more notices');
  assert.equal(summary?.body, '6 more: Job finished ×4 (j5, j6, j7, …), Job failed ×2 (j9, j10)');
  assert.equal(coalescer.offer(alert(30, 'resumed', 'j30'), 20_000), null, 'kinds that are not for the desktop are never shown');
});

test('a stream that never goes quiet still gets its summary, at most one per-key window after it began', () => {
  const coalescer = new NotificationCoalescer({ perKeyMs: 60_000, burst: { count: 4, windowMs: 10_000 } });
  coalescer.offer(alert(1, 'contention', null), 0);
  const told: Array<[number, string]> = [];
  for (let t = 1000; t <= 120_000; t += 1000) {
    const notice = coalescer.offer(alert(t, 'contention', null), t); // every second, for two minutes
    if (notice) told.push([t, notice.body]);
    const due = coalescer.summaryDueAt();
    const summary = due !== null && due <= t ? coalescer.summary(t) : null;
    if (summary) told.push([t, summary.body]);
  }
  // held from 1 s on: the summary is due 60 s after that, though the alerts never stopped
  assert.deepEqual(told, [[60_000, 'alert 60000'], [61_000, '60 more: GPU contention ×60 (GPU 0)'], [120_000, 'alert 120000']]);
});

test('memory stays bounded: ten thousand distinct jobs are tracked in at most maxKeys entries and all counted', () => {
  const coalescer = new NotificationCoalescer({ perKeyMs: 60_000, burst: { count: 4, windowMs: 10_000 }, maxKeys: 64 });
  let shown = 0;
  for (let i = 0; i < 10_000; i++) if (coalescer.offer(alert(i, 'finished', `j${i}`), i)) shown++;
  assert.ok(coalescer.trackedKeys() <= 64, `${coalescer.trackedKeys()} keys tracked`);
  const summary = coalescer.summary(10_000 + 10_000);
  assert.match(summary!.body, new RegExp(`^${10_000 - shown} more: Job finished ×${10_000 - shown} \\(`));
  for (let i = 0; i < 100_000; i += 7) coalescer.offer(alert(i, 'failed', `j${i}`), 100_000 + i * 1000); // spread out: each shown
  assert.ok(coalescer.trackedKeys() <= 64, `${coalescer.trackedKeys()} keys tracked after a long run`);
});

test('alerts that are not this user\'s are never shown, never use up a burst, and are not in the summary', () => {
  const mine = new Set(['j1', 'j2', 'j3']);
  const coalescer = new NotificationCoalescer({ burst: { count: 2, windowMs: 10_000 }, concerns: (a) => a.jobId !== null && mine.has(a.jobId) });
  for (let i = 0; i < 10; i++) assert.equal(coalescer.offer(alert(i + 1, 'finished', `j${100 + i}`), i), null, 'another user\'s job');
  assert.equal(coalescer.summaryDueAt(), null, 'nothing held for a summary');
  assert.equal(coalescer.offer(alert(20, 'finished', 'j1'), 20)?.body, 'alert 20', 'her first notice still shows: the burst was not spent on others');
  assert.equal(coalescer.offer(alert(21, 'failed', 'j2'), 21)?.body, 'alert 21');
  assert.equal(coalescer.offer(alert(22, 'failed', 'j3'), 22), null, 'her third within the burst is held');
  assert.equal(coalescer.offer(alert(23, 'failed', 'j104'), 23), null);
  assert.equal(coalescer.summary(22 + 10_000)?.body, '1 more: Job failed ×1 (j3)');
});

test('a job holding GPU memory idle is told on the desktop (the lab policy notifies its owner)', () => {
  const coalescer = new NotificationCoalescer({ perKeyMs: 60_000, burst: { count: 4, windowMs: 10_000 } });
  const notice = coalescer.offer(alert(1, 'idle', 'j7'), 0);
  assert.equal(notice?.title, 'Holding idle GPU memory — j7');
});
