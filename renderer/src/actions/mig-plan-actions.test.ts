// The Plan MIG view reads typed job specs as the engine and `gpushare mig` do (shared/mig-job-spec.ts):
// 20G is 20 GiB, and a mistake is named before anything is asked of the engine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { jobMix, jobSpecOf } from './mig-plan-actions.js';

const queued = { id: 'j4', priority: 'high', memoryRequestBytes: 20 * 2 ** 30, memoryQuotaBytes: null } as unknown as JobView;

test('a queued job and typed specs make one mix; a queued job is planned by its declared GiB', () => {
  assert.equal(jobSpecOf(queued), '20GiB@high');
  assert.deepEqual(jobMix([queued], ['j4'], '19G, 10G:0.2'), { names: ['j4', '19G', '10G:0.2'], specs: ['20GiB@high', '19G', '10G:0.2'] });
});

test('a bad typed spec is refused with the engine\'s words, numbered in the whole mix', () => {
  assert.match(jobMix([queued], ['j4'], '19G,lots') as string, /^Job 3 "lots": memory "lots" is not a number with a unit such as 20G/);
  assert.match(jobMix([], [], '20') as string, /^Job 1 "20": memory "20" needs a unit, like 20G \(GiB\)/);
  assert.match(jobMix([], [], '-5G') as string, /memory must be more than 0/);
});
