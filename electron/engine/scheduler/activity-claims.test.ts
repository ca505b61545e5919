// The rule for a job's claims on the launch gate, tick by tick: a claim holds others back only while
// the driver confirms it within CLAIM_CONFIRM_MS; claiming on and off gains nothing; the driver's
// confirmation (SM use, memory growth) trusts the job again; a driver that cannot tell takes its word.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Snapshot } from '../../../shared/snapshot.js';
import { ActivityClaims, CLAIM_CONFIRM_MS, driverBlind, driverEvidence, type DriverEvidence, type GateClaim } from './activity-claims.js';

const idle: DriverEvidence = { computed: false, usedMemory: 0 };
const launching = (lastLaunchNs = 0n): GateClaim => ({ inLaunch: 1, lastLaunchNs, idleSinceNs: 0n });
const quiet = (lastLaunchNs = 0n, idleSinceNs = 0n): GateClaim => ({ inLaunch: 0, lastLaunchNs, idleSinceNs });

/** Runs ticks every 1 s from 0; returns the mark after each. */
function run(claims: ActivityClaims, ticks: Array<[GateClaim, DriverEvidence]>): boolean[] {
  return ticks.map(([claim, driver], i) => claims.observe('j1', claim, driver, i * 1000).unconfirmed);
}

test('a job that claims to be launching and never computes is unconfirmed once the bound has passed, and stays so', () => {
  assert.equal(CLAIM_CONFIRM_MS, 3000);
  const marks = run(new ActivityClaims(), Array.from({ length: 8 }, () => [launching(), idle]));
  assert.deepEqual(marks, [false, false, false, true, true, true, true, true]);
});

test('launching just now, again and again (its last launch moving), counts as a claim too', () => {
  const marks = run(new ActivityClaims(), Array.from({ length: 6 }, (_, i) => [quiet(BigInt(i + 1)), idle]));
  assert.deepEqual(marks, [false, false, false, false, true, true], 'from the first launch seen after the first look');
});

test('going idle just now, again and again (what learned windows and the fit rule count from), counts as a claim too', () => {
  const marks = run(new ActivityClaims(), Array.from({ length: 6 }, (_, i) => [quiet(7n, BigInt(i + 1)), idle]));
  assert.deepEqual(marks, [false, false, false, false, true, true]);
});

test('claiming on and off does not start the bound afresh: only the driver does', () => {
  const ticks: Array<[GateClaim, DriverEvidence]> = [
    [launching(), idle],
    [quiet(), idle],
    [quiet(), idle],
    [launching(), idle],
    [quiet(), idle],
    [launching(), idle],
  ];
  assert.deepEqual(run(new ActivityClaims(), ticks), [false, false, false, true, true, true]);
});

test('the driver confirms by SM use or memory growth: the mark goes at once, and a new claim gets the whole bound again', () => {
  const claims = new ActivityClaims();
  const ticks: Array<[GateClaim, DriverEvidence]> = [
    [launching(), idle],
    [launching(), idle],
    [launching(), idle],
    [launching(), idle], // unconfirmed
    [launching(), { computed: true, usedMemory: 0 }], // it computes: trusted
    [launching(), idle],
    [launching(), idle],
    [launching(), idle],
    [launching(), idle], // unconfirmed again, 3 s after the claim the driver did not confirm
    [launching(), { computed: false, usedMemory: 1 << 30 }], // its memory grew: trusted
    [launching(), { computed: false, usedMemory: 1 << 30 }],
  ];
  const seen = ticks.map(([claim, driver], i) => claims.observe('j1', claim, driver, i * 1000));
  assert.deepEqual(seen.map((s) => s.unconfirmed), [false, false, false, true, false, false, false, false, true, false, false]);
  assert.deepEqual(seen.flatMap((s, i) => (s.changed ? [i] : [])), [3, 4, 8, 9], 'a change is reported once, so the gate is written only then');
});

test('a job that claims nothing is never marked, however idle it is', () => {
  assert.deepEqual(run(new ActivityClaims(), Array.from({ length: 6 }, () => [quiet(), idle])), [false, false, false, false, false, false]);
  assert.deepEqual(run(new ActivityClaims(), Array.from({ length: 6 }, () => [quiet(5n), idle])), [false, false, false, false, false, false], 'a launch long ago is no claim');
});

test('where the driver cannot tell (no per-process SM), the claim holds as the job wrote it', () => {
  assert.deepEqual(run(new ActivityClaims(), Array.from({ length: 6 }, () => [launching(), { computed: null, usedMemory: 0 }])), [false, false, false, false, false, false]);
});

test('jobs are judged apart, and a forgotten job starts afresh', () => {
  const claims = new ActivityClaims(1000);
  assert.equal(claims.observe('j1', launching(), idle, 0).unconfirmed, false);
  assert.equal(claims.observe('j2', quiet(), idle, 0).unconfirmed, false);
  assert.equal(claims.observe('j1', launching(), idle, 1000).unconfirmed, true);
  assert.equal(claims.observe('j2', quiet(), idle, 1000).unconfirmed, false);
  assert.deepEqual([claims.unconfirmed('j1'), claims.unconfirmed('j2'), claims.unconfirmed('j9')], [true, false, false]);
  claims.forget('j1');
  assert.equal(claims.observe('j1', launching(), idle, 2000).unconfirmed, false);
});

test('the driver\'s evidence: SM use; inside a MIG slice, the slice possibly busy; for an MPS client, its server computing; no reading, no say', () => {
  const none = { sliceBusy: false, mpsServerBusy: false, blind: false };
  const evidence = (smPercent: number | null, seen = none) => driverEvidence({ smPercent, usedMemory: 3 }, seen);
  assert.deepEqual(evidence(12), { computed: true, usedMemory: 3 });
  assert.deepEqual(evidence(0), { computed: false, usedMemory: 3 }, 'on the GPU and idle, or not on it at all (the scheduler reads 0 for a managed job it does not see)');
  assert.deepEqual(evidence(null), { computed: null, usedMemory: 3 }, 'the driver has no per-process SM for it');
  assert.equal(evidence(null, { ...none, sliceBusy: true }).computed, true);
  assert.equal(evidence(0, { ...none, mpsServerBusy: true }).computed, true, 'an MPS client whose work the driver credits to the server');
  assert.equal(evidence(0, { ...none, blind: true }).computed, null, 'a driver that could not list the GPU\'s processes says nothing of its absence');
  assert.equal(evidence(40, { ...none, blind: true }).computed, true);
});

test('the driver is blind to a GPU whose process list failed, or that computed with no process credited; not to one with other errors', () => {
  const gpu = (errors: string[], utilizationGpu: number) => ({ index: 0, errors, utilizationGpu }) as Snapshot['gpus'][number];
  const listed = [{ gpuIndex: 0, smPercent: 35 }] as Snapshot['processes'];
  assert.equal(driverBlind({ gpus: [gpu([], 0)], processes: [] }, 0), false, 'idle, nothing listed: nothing runs');
  assert.equal(driverBlind({ gpus: [gpu([], 60)], processes: listed }, 0), false);
  assert.equal(driverBlind({ gpus: [gpu([], 60)], processes: [] }, 0), true, 'computing, yet nobody listed');
  assert.equal(driverBlind({ gpus: [gpu([], 60)], processes: [{ gpuIndex: 0, smPercent: 0 }] as Snapshot['processes'] }, 0), true, 'computing, yet no process credited (no per-process SM here)');
  assert.equal(driverBlind({ gpus: [gpu(['nvmlDeviceGetComputeRunningProcesses_v3 failed on GPU 0: NO_PERMISSION (4)'], 0)], processes: [] }, 0), true);
  assert.equal(driverBlind({ gpus: [gpu(['nvmlDeviceGetPowerUsage failed on GPU 0: NO_PERMISSION (4)'], 0)], processes: listed }, 0), false);
  assert.equal(driverBlind({ gpus: [gpu([], 0)], processes: [] }, 3), true, 'a GPU the snapshot does not have');
});
