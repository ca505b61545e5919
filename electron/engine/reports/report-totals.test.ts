// A report's totals are the box's, whatever the grouping: by user, job, GPU or container the
// summary reads the same GPU time, SM time, memory, waits and contention (the known stream).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { REPORT_GROUPINGS } from '../../../shared/usage-report.js';
import { KNOWN_T, writeKnownStream } from '../store/testing/known-stream.js';
import { queryUsage } from './query.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-totals-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the totals are the same for every grouping (waits of a job queued for "auto" or without a container included)', async () => {
  const store = await writeKnownStream(join(dir, 'usage.db'));
  try {
    const range = { since: KNOWN_T - 3_600_000, until: KNOWN_T + 3_600_000, now: KNOWN_T + 3_600_000 };
    const totals = new Map<string, unknown>();
    for (const by of REPORT_GROUPINGS) {
      const { totals: t } = await queryUsage(store.db, { ...range, by, resolution: 'raw' });
      const round = (v: number): number => Number(v.toFixed(6));
      totals.set(by, { gpu: round(t.gpuSeconds), sm: round(t.smSeconds), memory: round(t.memoryGiBHours), queued: round(t.queuedSeconds), suspended: round(t.suspendedSeconds), contention: round(t.contentionMinutes) });
    }
    const byUser = totals.get('user');
    for (const [by, t] of totals) assert.deepEqual(t, byUser, `by ${by} against by user`);
    assert.equal((byUser as { queued: number }).queued, 62, 'j1 was queued 62 s (T−60 s..T+2 s)');
  } finally {
    await store.close();
  }
});
