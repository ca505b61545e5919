// Each user's tray and notifications: their own jobs, and contention on the GPUs they use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../shared/jobs.js';
import { concernsViewer, usesGpu, type Concern } from './user-scope.js';

const ALICE = { uid: 1001, admin: false };
const ADMIN = { uid: 0, admin: true };

const job = (id: string, uid: number, gpu: number | null, state: JobView['state'] = 'running'): JobView => ({
  id, managed: id.startsWith('j'), owner: `u${uid}`, uid, argv: ['train'], cwd: null, gpu, gpus: gpu === null ? [] : [gpu], requestedGpu: gpu ?? 'auto', priority: 'normal',
  memoryQuotaBytes: null, memoryRequestBytes: null, mode: 'shared', mpsSharePercent: null, migSlice: null, state, suspendedBy: null,
  pid: 100, exitCode: null, signal: null, logPath: null, history: [], usedMemory: null, smPercent: null,
});

// alice runs j1 on GPU 0 and an unmanaged process p500 on GPU 1; bob (1002) runs j2 on GPU 0 and j3 on GPU 2
const jobs = [job('j1', 1001, 0), job('p500', 1001, 1), job('j2', 1002, 0), job('j3', 1002, 2), job('j4', 1001, 3, 'finished')];
const about = (kind: Concern['kind'], gpu: number | null, jobId: string | null): Concern => ({ kind, gpu, jobId });

test('a user\'s own jobs and processes concern them, whatever the kind', () => {
  for (const kind of ['quota', 'out-of-memory', 'finished', 'failed', 'waiting', 'suspended', 'parked', 'contention'] as const) {
    assert.equal(concernsViewer(ALICE, jobs, about(kind, 0, 'j1')), true, `${kind} of j1`);
  }
  assert.equal(concernsViewer(ALICE, jobs, about('quota', 1, 'p500')), true, 'her unmanaged process');
  assert.equal(concernsViewer(ALICE, jobs, about('finished', 3, 'j4')), true, 'her job that has just ended');
});

test('another user\'s job concerns them only when it is contention on a GPU they use', () => {
  assert.equal(concernsViewer(ALICE, jobs, about('contention', 0, 'j2')), true, 'bob\'s high job shares GPU 0 with j1');
  assert.equal(concernsViewer(ALICE, jobs, about('contention', 2, 'j3')), false, 'GPU 2 runs nothing of hers');
  for (const kind of ['quota', 'out-of-memory', 'finished', 'failed', 'waiting'] as const) {
    assert.equal(concernsViewer(ALICE, jobs, about(kind, 0, 'j2')), false, `bob's ${kind} on her GPU is his`);
  }
});

test('GPU-wide conditions: memory pressure and a lost GPU concern those who use it; a lost GPU every admin', () => {
  assert.equal(concernsViewer(ALICE, jobs, about('contention', 1, null)), true, 'memory pressure where her process runs');
  assert.equal(concernsViewer(ALICE, jobs, about('contention', 2, null)), false);
  assert.equal(concernsViewer(ALICE, jobs, about('contention', 3, null)), false, 'her job there has ended');
  assert.equal(concernsViewer(ALICE, jobs, about('gpu-lost', 0, null)), true);
  assert.equal(concernsViewer(ALICE, jobs, about('gpu-lost', 2, null)), false);
  assert.equal(concernsViewer(ADMIN, jobs, about('gpu-lost', 2, null)), true, 'the admin sees to the box');
  assert.equal(concernsViewer(ADMIN, jobs, about('contention', 2, 'j3')), false, 'an admin is not told of every contention');
});

test('what names neither job nor GPU is the whole box\'s; a job nobody knows is nobody\'s', () => {
  assert.equal(concernsViewer(ALICE, jobs, about('failed', null, null)), true);
  assert.equal(concernsViewer(ALICE, jobs, about('finished', null, 'j99')), false);
  assert.equal(concernsViewer(ALICE, [], about('contention', 0, 'j2')), false, 'before the first job list nothing is hers');
});

test('usesGpu counts running jobs and processes, not ended ones', () => {
  assert.deepEqual([0, 1, 2, 3].map((gpu) => usesGpu(ALICE, jobs, gpu)), [true, true, false, false]);
});
