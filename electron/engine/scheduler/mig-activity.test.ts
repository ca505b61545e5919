// MIG jobs are active to the policies: a slice's GPM SM % goes to its one job not held back, and several
// jobs in a computing slice each count as active, so a high job there holds best-effort back and is alerted on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { GpuView, MigSliceView, Snapshot } from '../../../shared/snapshot.js';
import { JobTable, newJobView, type JobRecord } from './job-table.js';
import { sliceActivity, sliceKey } from './mig-activity.js';
import { decidePriority, detectContention } from './policies.js';

const G = 1024 ** 3;

function slice(gi: number, smPercent: number | null): MigSliceView {
  return { uuid: `MIG-${gi}`, name: `MIG ${gi}`, profileName: '3g.40gb', gpuInstanceId: gi, computeInstanceId: 0, smCount: 60, placement: { start: gi * 4 - 4, size: 4 }, memoryTotal: 40 * G, memoryUsed: G, smPercent };
}

function snapshotWith(slices: MigSliceView[]): Snapshot {
  const gpu: GpuView = {
    index: 1, uuid: 'GPU-1', name: 'NVIDIA H100 80GB HBM3', pciBusId: '', lost: false, memoryTotal: 80 * G, memoryUsed: 2 * G, memoryFree: 78 * G,
    utilizationGpu: 40, utilizationMemory: 10, temperatureC: null, powerWatts: null, powerLimitWatts: null, smClockMHz: null, memClockMHz: null,
    smCount: 132, computeMode: null, migEnabled: true, migPending: false, migSlices: slices, errors: [],
  };
  return { seq: 1, takenAt: 10_000, intervalMs: 1000, nominalIntervalMs: 1000, driver: null, gpus: [gpu], processes: [] } as unknown as Snapshot;
}

function job(table: JobTable, id: string, fields: Partial<JobView>): JobRecord {
  return table.add(newJobView({ id, managed: false, owner: 'ann', uid: 1000, argv: ['serve.py'], gpu: 1, requestedGpu: 1, pid: 100 + table.live().length, ...fields }, 'running', 'test', 0));
}

test('two jobs in a computing MIG slice both count as active: the high one holds best-effort back and is alerted on', () => {
  const t = new JobTable();
  const high = job(t, 'p1', { priority: 'high', migSlice: 'MIG-1' });
  const low = job(t, 'p2', { priority: 'best-effort', migSlice: 'MIG-1' });
  const elsewhere = job(t, 'p3', { priority: 'best-effort', migSlice: 'MIG-2' });
  const snapshot = snapshotWith([slice(1, 80), slice(2, 0)]);
  const activity = sliceActivity(snapshot, new Map([[sliceKey(1, 1), new Set([high, low])], [sliceKey(1, 2), new Set([elsewhere])]]));
  assert.deepEqual([...activity].map(([r, a]) => [r.view.id, a]), [['p1', 'possibly'], ['p2', 'possibly']], 'an idle slice makes nobody active');

  // what the scheduler does with 'possibly': active within the hold window, SM % still unknown
  for (const [r] of activity) r.lastActiveAt = snapshot.takenAt;
  const decision = decidePriority(t.live(), snapshot.takenAt, { gateFor: () => false });
  assert.deepEqual([...decision.hold], [['p2', 'p1']], 'best-effort in the high job\'s slice is held; the one in slice 2 is not');
  const alerts = detectContention(snapshot.gpus, t.live(), new Map(), snapshot.takenAt).filter((c) => c.key.startsWith('shared-high'));
  assert.deepEqual(alerts.map((c) => c.message), ['High-priority p1 (serve.py, ann) shares GPU 1 (slice MIG-1) with 1 other active job.']);
});

test('with the best-effort job held back, the slice\'s SM % is the high job\'s own', () => {
  const t = new JobTable();
  const high = job(t, 'p1', { priority: 'high', migSlice: 'MIG-1' });
  const low = job(t, 'p2', { priority: 'best-effort', migSlice: 'MIG-1' });
  low.holds.add('priority');
  const activity = sliceActivity(snapshotWith([slice(1, 64.5)]), new Map([[sliceKey(1, 1), new Set([high, low])]]));
  assert.deepEqual([...activity].map(([r, a]) => [r.view.id, a]), [['p1', 29.3]], 'its slice\'s 64.5 % of 60 SMs is 29.3 % of the GPU\'s 132');
  // and a slice with no GPM reading (before Hopper) tells nothing
  assert.equal(sliceActivity(snapshotWith([slice(1, null)]), new Map([[sliceKey(1, 1), new Set([high, low])]])).size, 0);
});
