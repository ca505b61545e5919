// A drop on a lane is one request to the engine, so a refusal of any part leaves the job as it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobState, JobView } from '../../../shared/jobs.js';
import { stepsToLane, stepsToMps } from './lane-move.js';

const job = (state: JobState, over: Partial<JobView> = {}): JobView => ({
  id: 'j1', managed: true, owner: 'ada', uid: 1000, argv: ['python'], cwd: null, gpu: 0, gpus: [0], requestedGpu: 0, priority: 'normal', memoryQuotaBytes: null,
  memoryRequestBytes: null, mode: 'shared', mpsSharePercent: null, migSlice: null, state, suspendedBy: null, pid: 42,
  exitCode: null, signal: null, logPath: null, history: [], usedMemory: null, smPercent: null, ...over,
});

test('a job its owner paused, dropped on High, is one move: resume and raise together', () => {
  assert.deepEqual(stepsToLane(job('suspended', { suspendedBy: 'user' }), 'high'), [{ method: 'jobs.move', params: { job: 'j1', priority: 'high', action: 'resume' } }]);
});

test('a parked job dropped on another lane is one move: unpark and reprioritise together; on its own lane, only the unpark', () => {
  const parked = job('parked', { suspendedBy: 'user' });
  assert.deepEqual(stepsToLane(parked, 'best-effort'), [{ method: 'jobs.move', params: { job: 'j1', priority: 'best-effort', action: 'unpark' } }]);
  assert.deepEqual(stepsToLane(parked, 'normal'), [{ method: 'jobs.move', params: { job: 'j1', action: 'unpark' } }]);
});

test('a running job: a new lane is one priority move, Paused one suspend, its own lane nothing, the queue refused', () => {
  const running = job('running');
  assert.deepEqual(stepsToLane(running, 'high'), [{ method: 'jobs.move', params: { job: 'j1', priority: 'high' } }]);
  assert.deepEqual(stepsToLane(running, 'paused'), [{ method: 'jobs.move', params: { job: 'j1', action: 'suspend' } }]);
  assert.deepEqual(stepsToLane(running, 'normal'), []);
  assert.match(stepsToLane(running, 'queue') as string, /cannot go back to the queue/);
});

test('a queued job dropped on a GPU\'s MPS zone is one move: its GPU and its MPS share together', () => {
  const queued = job('queued', { gpu: null, requestedGpu: 'auto' });
  assert.deepEqual(stepsToMps(queued, 1, 50), [{ method: 'jobs.move', params: { job: 'j1', gpu: 1, mode: 'mps', mpsSharePercent: 50 } }]);
});
