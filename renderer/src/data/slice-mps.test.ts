// A MIG slice's MPS daemon as the console words it (its clients and their shares), and the SM share a person types.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JOB_STATES, type JobState, type JobView } from '../../../shared/jobs.js';
import { clientShares, daemonStateText, mpsClientKey, narrowSliceMpsMark, parseSmShare, sliceMpsClients, sliceMpsSentence, startedForHint, uuidTail } from './slice-mps.js';

const SLICE = 'MIG-5b1c0d2e-7f3a-5c9d-8e1f-0a2b3c4d5e6f';
const job = (id: string, over: Partial<JobView> = {}): JobView => ({
  id, managed: true, owner: 'ada', uid: 1000, argv: ['python'], cwd: null, gpu: 1, gpus: [1], requestedGpu: 1, priority: 'normal', memoryQuotaBytes: null,
  memoryRequestBytes: null, mode: 'mig', mpsSharePercent: 50, migSlice: SLICE, state: 'running', suspendedBy: null, pid: 4000 + Number(id.slice(1)),
  exitCode: null, signal: null, logPath: null, history: [], usedMemory: null, smPercent: null, ...over,
});

test("a slice's clients are its started, live jobs in mode mig with a share, in job order (j2 before j10)", () => {
  const jobs = [
    job('j10', { mpsSharePercent: 30 }),
    job('j2'),
    job('j3', { mpsSharePercent: null }), // in the slice without MPS
    job('j4', { migSlice: 'MIG-other' }),
    job('j5', { mode: 'mps', migSlice: null }),
    job('j6', { state: 'queued', pid: null }),
    job('j7', { state: 'finished' }),
  ];
  assert.deepEqual(sliceMpsClients(jobs, SLICE), [
    { jobId: 'j2', pid: 4002, sharePercent: 50 },
    { jobId: 'j10', pid: 4010, sharePercent: 30 },
  ]);
  const clientIn = (state: JobState): boolean => sliceMpsClients([job('j1', { state })], SLICE).length === 1;
  assert.deepEqual(JOB_STATES.filter(clientIn), ['starting', 'running', 'gated', 'suspended', 'parking', 'parked', 'unparking'], 'every state between start and end');
});

test('the summary: shares for the tile, a sentence for its label, a count where the tile is one memory slice wide', () => {
  const two = sliceMpsClients([job('j3'), job('j4', { mpsSharePercent: 30 })], SLICE);
  assert.equal(clientShares(two), 'j3 50% · j4 30%');
  assert.equal(sliceMpsSentence(two), 'MPS daemon with 2 clients: j3 50 %, j4 30 % of its SMs');
  assert.equal(narrowSliceMpsMark(two), 'MPS 2');
  const one = sliceMpsClients([job('j9', { mpsSharePercent: 25 })], SLICE);
  assert.equal(sliceMpsSentence(one), 'MPS daemon with 1 client: j9 25 % of its SMs');
  assert.equal(clientShares([]), '');
  assert.equal(sliceMpsSentence([]), 'MPS daemon with no clients now');
  assert.equal(narrowSliceMpsMark([]), 'MPS 0');
});

test("a slice's UUID tail and a daemon's state in words, with why the engine's own runs", () => {
  assert.equal(uuidTail(SLICE), '…3c4d5e6f');
  assert.equal(daemonStateText({ state: 'off', user: null }), 'off');
  assert.equal(daemonStateText({ state: 'ours', user: 'ada' }), 'on, ours (ada)', 'an engine that does not say why');
  assert.equal(daemonStateText({ state: 'ours', user: 'ada', startedFor: 'jobs' }), 'on, ours (ada), for jobs');
  assert.equal(daemonStateText({ state: 'ours', user: 'ada', startedFor: 'request' }), 'on, ours (ada), on request');
  assert.equal(startedForHint('jobs'), 'Started for its jobs: it stops when the last one ends.');
  assert.equal(startedForHint('request'), 'Started on request: it runs until someone stops it.');
  assert.equal(startedForHint(undefined), null);
  assert.equal(daemonStateText({ state: 'held', user: 'bob', heldBy: 'carol' }), 'held by user carol');
  assert.equal(daemonStateText({ state: 'held', user: 'bob' }), 'held by user bob');
});

test('an SM share is a whole percentage from 1 to 100; anything else is named, with what to give', () => {
  assert.deepEqual(parseSmShare('50'), { share: 50, error: null });
  assert.deepEqual(parseSmShare(' 1 '), { share: 1, error: null });
  assert.deepEqual(parseSmShare('100%'), { share: 100, error: null });
  assert.deepEqual(parseSmShare('30 %'), { share: 30, error: null });
  const refused: Array<[string, string]> = [
    ['0', 'SM share 0 % is out of range: give a whole percentage from 1 to 100.'],
    ['101', 'SM share 101 % is out of range: give a whole percentage from 1 to 100.'],
    ['-5', 'SM share -5 % is out of range: give a whole percentage from 1 to 100.'],
    ['12.5', 'SM share 12.5 % is not a whole number: give a whole percentage from 1 to 100.'],
    ['half', 'SM share "half" is not a number: give a whole percentage from 1 to 100.'],
    ['5e1', 'SM share "5e1" is not a number: give a whole percentage from 1 to 100.'],
    ['0x20', 'SM share "0x20" is not a number: give a whole percentage from 1 to 100.'],
    ['', 'SM share is empty: give a whole percentage from 1 to 100.'],
    ['  %', 'SM share is empty: give a whole percentage from 1 to 100.'],
  ];
  for (const [text, error] of refused) assert.deepEqual(parseSmShare(text), { share: null, error }, JSON.stringify(text));
});

test("the MPS client key changes when a client starts or ends, whole-GPU or in a slice, and not for other jobs' changes", () => {
  const queued = [job('j1', { state: 'queued', pid: null }), job('j2', { mode: 'mps', migSlice: null, gpu: 0, state: 'queued', pid: null }), job('j3', { mode: 'shared', mpsSharePercent: null, migSlice: null })];
  assert.equal(mpsClientKey(queued), '');
  const started = [job('j1', { state: 'starting' }), job('j2', { mode: 'mps', migSlice: null, gpu: 0, state: 'running' }), job('j3', { mode: 'shared', mpsSharePercent: null, migSlice: null, state: 'suspended' })];
  assert.equal(mpsClientKey(started), 'j1 j2');
  assert.equal(mpsClientKey([started[1], started[0], started[2]]), 'j1 j2', 'in any order');
  assert.equal(mpsClientKey([job('j1', { state: 'running' }), ...started.slice(1)]), 'j1 j2', 'starting to running is no change');
  assert.equal(mpsClientKey([job('j1', { state: 'finished' }), ...started.slice(1)]), 'j2');
  assert.equal(mpsClientKey([job('j1', { mpsSharePercent: null })]), '', 'a slice without a share is no MPS client');
});
