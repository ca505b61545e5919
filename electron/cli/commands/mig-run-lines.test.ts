// What `mig apply` tells a user to run: a `gpushare run --mig-slice …` line for every job the plan placed,
// in a slice of its own or sharing one through MPS, with the slice's UUID once it exists.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MigLayoutView, MigPlannedSlice } from '../../../shared/spatial.js';
import { runLines } from './mig.js';

const slice = (profile: string, start: number, gpuInstanceId: number, uuid: string) =>
  ({ profile, placement: { start }, gpuInstanceId, uuids: [uuid] }) as unknown as MigLayoutView['slices'][number];
const planned = (profile: string, start: number, jobId: string | null, gpuInstanceId: number | null, mps?: MigPlannedSlice['mps']): MigPlannedSlice =>
  ({ profile, profileId: 0, placement: { start, size: 1 }, jobId, gpuInstanceId, ...(mps ? { mps } : {}) });

test('after apply: one run line per placed job with its own slice, and one per job sharing a slice through MPS', () => {
  const layout = { gpu: 1, applied: true, slices: [slice('1g.10gb', 0, 4, 'MIG-aaa'), slice('2g.20gb', 2, 2, 'MIG-bbb'), slice('3g.40gb', 4, 1, 'MIG-ccc')] };
  const lines = runLines([planned('1g.10gb', 0, 'job2', 4), planned('2g.20gb', 2, null, 2), planned('3g.40gb', 4, 'job1', null, [{ jobId: 'job1', activeThreadPercentage: 50 }, { jobId: 'job3', activeThreadPercentage: 50 }])], layout);
  assert.deepEqual(lines.filter((l) => l.includes('gpushare run')).map((l) => l.trim()), [
    'job2: gpushare run --mig-slice MIG-aaa -- COMMAND',
    'job1: gpushare run --mig-slice MIG-ccc --mps-share 50 -- COMMAND',
    'job3: gpushare run --mig-slice MIG-ccc --mps-share 50 -- COMMAND',
  ]);
});

test('a dry run names the slices that exist today and says where the UUID of a slice still to be made comes from', () => {
  const layout = { gpu: 1, applied: false, slices: [slice('1g.10gb', 0, 4, 'MIG-aaa')] };
  const lines = runLines([planned('1g.10gb', 0, 'job1', 4), planned('1g.10gb', 5, 'job2', null)], layout);
  assert.ok(lines.includes('    job1: gpushare run --mig-slice MIG-aaa -- COMMAND'), lines.join('\n'));
  assert.ok(lines.includes('    job2: gpushare run --mig-slice MIG-UUID -- COMMAND'), lines.join('\n'));
  assert.ok(lines.some((l) => /MIG-UUID: the 1g\.10gb slice's once it is created; gpushare mig layout --gpu 1 lists it/.test(l)), lines.join('\n'));
});

test('an offline plan (no box) prints run lines only for jobs sharing a slice through MPS', () => {
  assert.deepEqual(runLines([planned('1g.10gb', 0, 'job1', null)], null), []);
});
