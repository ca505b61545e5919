// Which lane a card is in and what its Park control offers, for every job state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JOB_STATES, type JobState, type JobView } from '../../../shared/jobs.js';
import { laneOf, parkActionOf } from './board-jobs.js';

const job = (state: JobState, over: Partial<JobView> = {}): JobView => ({
  id: 'j1', managed: true, owner: 'ada', uid: 1000, argv: ['python'], cwd: null, gpu: 0, gpus: [0], requestedGpu: 0, priority: 'normal', memoryQuotaBytes: null,
  memoryRequestBytes: null, mode: 'shared', mpsSharePercent: null, migSlice: null, state, suspendedBy: state === 'parked' ? 'user' : null, pid: 42,
  exitCode: null, signal: null, logPath: null, history: [], usedMemory: null, smPercent: null, ...over,
});

test('Park is offered on running, gated and suspended managed jobs, Unpark on parked ones, nothing otherwise', () => {
  const offered = Object.fromEntries(JOB_STATES.map((s) => [s, parkActionOf(job(s))]));
  assert.deepEqual(offered, {
    queued: null, starting: null, running: 'park', gated: 'park', suspended: 'park', parking: null, parked: 'unpark', unparking: null, finished: null, failed: null, lost: null,
  });
  assert.equal(parkActionOf(job('running', { managed: false, id: 'p42' })), null, 'not on a process gpushare did not start');
});

test('ended jobs (finished, failed, lost) have no lane; a job a person parked is in Paused', () => {
  for (const state of ['finished', 'failed', 'lost'] as const) assert.equal(laneOf(job(state)), null, state);
  assert.equal(laneOf(job('parked')), 'paused');
  assert.equal(laneOf(job('queued')), 'queue');
  assert.equal(laneOf(job('running', { priority: 'high' })), 'high');
});
