// A report over any range the CLI or the API lets through costs a bounded number of chart points.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { UsageStore } from '../store/usage-store.js';
import { queryUsage, seriesBucketMs } from './query.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-query-bounds-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a thirty-year report has at most 60 chart points (its buckets grow past a week)', async () => {
  const store = await UsageStore.open({ path: join(dir, 'usage.db'), readOnly: false });
  after(() => store.close());
  const since = Date.UTC(2000, 0, 1);
  const until = Date.UTC(2030, 0, 1);
  const report = await queryUsage(store.db, { since, until, by: 'user', now: until });
  assert.ok(report.series.points.length <= 60, `${report.series.points.length} points`);
  assert.equal(report.series.points[0].start <= since, true, 'the first bucket covers the start');
  const last = report.series.points.at(-1)!;
  assert.ok(last.start + report.series.bucketMs >= until, 'the last bucket covers the end');
});

test('chart buckets stay the usual ones (a minute to a week) for ranges they fit', () => {
  const HOUR = 3_600_000;
  assert.equal(seriesBucketMs(0, 24 * HOUR), HOUR);
  assert.equal(seriesBucketMs(0, 300 * 24 * HOUR), 7 * 24 * HOUR);
});

test('a report whose end is not after its start is refused naming both', async () => {
  const store = await UsageStore.open({ path: join(dir, 'usage-2.db') });
  after(() => store.close());
  await assert.rejects(queryUsage(store.db, { since: Date.UTC(2026, 0, 2), until: Date.UTC(2026, 0, 1), by: 'user' }), {
    name: 'ValidationError',
    message: /^until: must be after since \(2026-01-02T00:00:00\.000Z\), got 2026-01-01T00:00:00\.000Z/,
  });
});
