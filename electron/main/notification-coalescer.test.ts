import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Alert } from '../../shared/jobs.js';
import { NotificationCoalescer } from './notification-coalescer.js';
import { trayState } from './tray-state.js';

const alert = (id: number, kind: Alert['kind'], jobId: string | null, at = 0, severity: Alert['severity'] = 'warning'): Alert => ({ id, kind, at, gpu: 0, jobId, message: `alert ${id}`, severity });

test('one job cannot flood the desktop: repeats within a minute are held and counted', () => {
  const coalescer = new NotificationCoalescer();
  assert.equal(coalescer.offer(alert(1, 'quota', 'j1'), 0)?.body, 'alert 1');
  for (let i = 2; i <= 20; i++) assert.equal(coalescer.offer(alert(i, 'quota', 'j1'), i * 100), null);
  assert.equal(coalescer.offer(alert(21, 'quota', 'j1'), 61_000)?.body, 'alert 21 (and 19 more like it)');
});

test('different jobs still get their own notice, within a burst limit', () => {
  const coalescer = new NotificationCoalescer(60_000, { count: 3, windowMs: 10_000 });
  const shown = [1, 2, 3, 4, 5].map((i) => coalescer.offer(alert(i, 'finished', `j${i}`), i));
  assert.deepEqual(shown.map((n) => n !== null), [true, true, true, false, false]);
  assert.equal(coalescer.offer(alert(9, 'resumed', 'j9'), 20_000), null, 'kinds that are not for the desktop are never shown');
});

test('the tray shows alert over contention over all well, for recent alerts only', () => {
  assert.equal(trayState([], 0), 'ok');
  assert.equal(trayState([alert(1, 'contention', null, 1000)], 2000), 'contention');
  assert.equal(trayState([alert(1, 'contention', null, 0), alert(2, 'out-of-memory', 'j2', 0, 'error')], 1000), 'alert');
  assert.equal(trayState([alert(1, 'out-of-memory', 'j2', 0, 'error')], 10 * 60_000), 'ok');
});
