// Which managed job a GPU process belongs to: its own pid, or an ancestor's, on a scripted process tree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProcStatus } from '../proc/proc-status.js';
import { JobOwnership, OWNERSHIP_GRACE_MS } from './ownership.js';

/** A scripted /proc: pid → [ppid, startTicks]; counts the reads. */
function tree(entries: Record<number, [ppid: number, startTicks: number]>) {
  const procs = new Map(Object.entries(entries).map(([pid, [ppid, startTicks]]) => [Number(pid), { ppid, startTicks }]));
  let reads = 0;
  const readStatus = (pid: number): ProcStatus | null => {
    reads++;
    const p = procs.get(pid);
    return p ? { pid, uid: 1000, state: 'R', ppid: p.ppid, startTicks: p.startTicks } : null;
  };
  return { procs, readStatus, reads: () => reads };
}

test('a claimed pid and its descendants (a wrapper script\'s child, grandchild) are the job\'s; others are nobody\'s', () => {
  // 500 the job's main process (bash wrapper) → 501 python → 502 a DataLoader worker; 600 an unrelated process
  const t = tree({ 1: [0, 1], 500: [1, 50], 501: [500, 51], 502: [501, 52], 600: [1, 60] });
  const own = new JobOwnership(t.readStatus);
  own.claim('j7', 'alice', 500, 50);
  assert.deepEqual(own.jobOf(500), { jobId: 'j7', owner: 'alice' });
  assert.deepEqual(own.jobOf(501), { jobId: 'j7', owner: 'alice' });
  assert.deepEqual(own.jobOf(502), { jobId: 'j7', owner: 'alice' });
  assert.equal(own.jobOf(600), null);
  assert.equal(own.jobOf(999), null, 'a pid that does not exist');
});

test('the walk stops after 32 ancestors', () => {
  const entries: Record<number, [number, number]> = { 1000: [1, 1] };
  for (let i = 1; i <= 40; i++) entries[1000 + i] = [1000 + i - 1, 1000 + i];
  const own = new JobOwnership(tree(entries).readStatus);
  own.claim('j1', 'bob', 1000, 1);
  assert.deepEqual(own.jobOf(1032), { jobId: 'j1', owner: 'bob' }, '32 levels up: found');
  assert.equal(own.jobOf(1033), null, '33 levels up: not followed');
});

test('lineage is cached per pid and start time: one /proc read per lookup, and a reused pid is walked afresh', () => {
  const t = tree({ 1: [0, 1], 500: [1, 50], 501: [500, 51], 502: [501, 52], 700: [1, 70] });
  const own = new JobOwnership(t.readStatus);
  own.claim('j7', 'alice', 500, 50);
  assert.equal(own.jobOf(502)?.jobId, 'j7');
  const afterWalk = t.reads();
  assert.equal(own.jobOf(502)?.jobId, 'j7');
  assert.equal(t.reads() - afterWalk, 1, 'a cached pid costs one read (its start time)');
  t.procs.set(502, { ppid: 700, startTicks: 99 }); // pid 502 exited and was reused under another parent
  assert.equal(own.jobOf(502), null);
});

test('a pid first seen with no owner is found once its job is claimed (a job re-adopted after the child was seen)', () => {
  const own = new JobOwnership(tree({ 1: [0, 1], 500: [1, 50], 501: [500, 51] }).readStatus);
  own.claim('j2', 'carol', 900, null); // some claim, so lookups walk
  assert.equal(own.jobOf(501), null);
  own.claim('j7', 'alice', 500, 50);
  assert.equal(own.jobOf(501)?.jobId, 'j7');
});

test('a released job keeps its processes for a grace period after its end (samples taken before the exit was seen), then not', () => {
  const own = new JobOwnership(tree({ 1: [0, 1], 500: [1, 50], 501: [500, 51] }).readStatus);
  own.claim('j7', 'alice', 500, 50);
  own.release('j7', 10_000);
  assert.equal(own.jobOf(501, 9_000)?.jobId, 'j7', 'a sample from before the end');
  assert.equal(own.jobOf(501, 10_000 + OWNERSHIP_GRACE_MS)?.jobId, 'j7', 'within the grace');
  assert.equal(own.jobOf(501, 10_001 + OWNERSHIP_GRACE_MS), null, 'after the grace: the pid is no longer the job\'s');
  assert.equal(own.jobOf(500), null, 'without a time: only jobs that have not ended');
});

test('a new claim of the same pid (the pid reused by another job) replaces the old one', () => {
  const own = new JobOwnership(tree({ 1: [0, 1], 500: [1, 80] }).readStatus); // /proc shows the new process
  own.claim('j7', 'alice', 500, 50);
  own.release('j7', 1_000);
  own.claim('j9', 'bob', 500, 80);
  assert.deepEqual(own.jobOf(500, 2_000), { jobId: 'j9', owner: 'bob' });
});

test('with no claims, lookups read nothing from /proc', () => {
  const t = tree({ 1: [0, 1], 501: [1, 51] });
  const own = new JobOwnership(t.readStatus);
  assert.equal(own.jobOf(501), null);
  assert.equal(t.reads(), 0);
});

test('with the snapshot\'s start time, a cached pid costs no /proc read; a different start time is a new process', () => {
  const t = tree({ 1: [0, 1], 500: [1, 50], 501: [500, 51], 700: [1, 70] });
  const own = new JobOwnership(t.readStatus);
  own.claim('j7', 'alice', 500, 50);
  assert.equal(own.jobOf(501, undefined, 1_000_051)?.jobId, 'j7');
  const reads = t.reads();
  for (let i = 0; i < 5; i++) assert.equal(own.jobOf(501, undefined, 1_000_051)?.jobId, 'j7');
  assert.equal(t.reads(), reads, 'no reads while the snapshot says it is the same process');
  t.procs.set(501, { ppid: 700, startTicks: 99 }); // exited; the pid now names another process
  assert.equal(own.jobOf(501, undefined, 1_000_099), null);
});

test('a member that exits and whose pid another process takes is no longer the job\'s (nor is a main process\'s pid reused)', () => {
  const t = tree({ 1: [0, 1], 500: [1, 50], 800: [1, 80] });
  const own = new JobOwnership(t.readStatus);
  own.claim('j7', 'alice', 500, 50);
  own.member('j7', 800, 80); // an enrolled job's member from outside the main process's tree
  assert.equal(own.jobOf(800, undefined, 1_000_080)?.jobId, 'j7');
  const reads = t.reads();
  assert.equal(own.jobOf(800, undefined, 1_000_080)?.jobId, 'j7');
  assert.equal(t.reads(), reads, 'no read while the snapshot says it is the same process');
  t.procs.set(800, { ppid: 1, startTicks: 95 }); // the member exited; another user's process has its pid
  assert.equal(own.jobOf(800, undefined, 1_000_095), null, 'with a new snapshot start time');
  t.procs.set(500, { ppid: 1, startTicks: 97 });
  assert.equal(own.jobOf(500), null, 'without one: /proc is read');
});

test("a claimed pid another process took since is no process's ancestor in the job: its children are not the job's", () => {
  // an enrolled job's first process 500 (and its member 800) exited while the job lives on through other members;
  // another user's processes took both pids, and their GPU children (501, 801) must not be parked or counted with it
  const t = tree({ 1: [0, 1], 500: [1, 50], 800: [1, 80], 900: [1, 90] });
  const own = new JobOwnership(t.readStatus);
  own.claim('j7', 'alice', 500, 50);
  own.member('j7', 800, 80);
  own.member('j7', 900, 90); // the member that keeps the job alive
  t.procs.set(500, { ppid: 1, startTicks: 150 });
  t.procs.set(800, { ppid: 1, startTicks: 180 });
  t.procs.set(501, { ppid: 500, startTicks: 151 });
  t.procs.set(801, { ppid: 800, startTicks: 181 });
  t.procs.set(901, { ppid: 900, startTicks: 191 });
  assert.equal(own.jobOf(501), null, "a child of the process that took the main process's pid");
  assert.equal(own.jobOf(801), null, "a child of the process that took a member's pid");
  assert.equal(own.jobOf(901)?.jobId, 'j7', 'a child of a live member still is');
});
