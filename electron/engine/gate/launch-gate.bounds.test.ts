// What a job can do to others through the one file it writes (its activity) is bounded:
// a lower job that claims to be mid-launch for ever holds a higher job back once, 1 s in all;
// a job that truncates its file (it owns it) crashes nobody who maps it.
// Deterministic: asserts on counters, exit codes and the driver's execution record.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, truncateSync, writeSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { LaunchGate } from './launch-gate.js';
import * as L from './launch-gate-layout.js';
import { preloadProbePath, readUntil, recordsOf, runProbe } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
const skip = useGateRig('gpushare-gate-bounds-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate } = rig));

/** Writes what a hostile job would into a slot's activity file (the test owns it: same user). */
function claimInLaunch(slot: number, value: number): void {
  const fd = openSync(gate.activityPath(slot), 'r+');
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value);
  writeSync(fd, b, 0, 4, L.ACTIVITY.inLaunch);
  closeSync(fd);
}

describe('a lower job stuck mid-launch', { skip }, () => {
  test('holds a higher job back once: 5 launches wait 1 s in all, not 1 s each', async () => {
    const ls = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    try {
      claimInLaunch(ls.slot, 1);
      const high = runProbe(driver, ['launch:5:0'], hs.env);
      assert.equal(await high.exited, 0);
      assert.equal(recordsOf(await driver.execlog(0), high.pid).length, 5);
      const s = gate.readSlot(hs.slot);
      assert.equal(s.stuckWaits, 1, 'one wait given up, then the stuck slot is not waited for');
      assert.ok(s.heldNs >= Number(L.GATE_HOLD_MAX_NS), `held ${s.heldNs} ns: the one bounded wait`);
    } finally {
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(ls.slot);
    }
  });

  test('the engine marks the reported slot stuck: the next process of the higher job does not wait for it at all', async () => {
    const ls = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const other = gate.allocateSlot({ gpu: 1, priority: 'best-effort' });
    try {
      claimInLaunch(ls.slot, 1);
      claimInLaunch(other.slot, 1); // another domain: never waited for, never marked
      gate.stopHeartbeat(); // the review runs when this test says
      gate.heartbeat();
      assert.deepEqual(gate.reviewStuckReports(), [], 'nothing reported yet');
      const first = runProbe(driver, ['launch:1:0'], hs.env);
      assert.equal(await first.exited, 0);
      assert.equal(gate.readSlot(hs.slot).stuckWaits, 1);
      assert.equal(gate.readSlot(ls.slot).stuck, false, 'a report alone changes nothing until the engine reviews it');
      assert.deepEqual(gate.reviewStuckReports(), [ls.slot]);
      assert.deepEqual([gate.readSlot(ls.slot).stuck, gate.readSlot(ls.slot).member], [true, true], 'stuck, and still a member: it keeps its place for lower jobs');
      const heldBefore = gate.readSlot(hs.slot).heldNs;
      const second = runProbe(driver, ['launch:5:0'], hs.env);
      assert.equal(await second.exited, 0);
      assert.equal(recordsOf(await driver.execlog(0), second.pid).length, 5);
      assert.equal(gate.readSlot(hs.slot).stuckWaits, 1, 'the new process never waited for the stuck slot');
      assert.equal(gate.readSlot(hs.slot).heldNs, heldBefore);
      assert.deepEqual(gate.reviewStuckReports(), [], 'marked once');
      gate.releaseSlot(ls.slot);
      const next = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
      assert.equal(next.slot, ls.slot);
      assert.equal(gate.readSlot(next.slot).stuck, false, 'the next job in the slot starts clean');
      assert.deepEqual(gate.reviewStuckReports(), [], 'a report of the slot’s last job is not held against the next');
    } finally {
      gate.startHeartbeat(200);
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(ls.slot);
      gate.releaseSlot(other.slot);
    }
  });

  test('a report naming a higher slot, or one in another domain, marks nothing', async () => {
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const ls = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const elsewhere = gate.allocateSlot({ gpu: 1, priority: 'best-effort' });
    try {
      const fd = openSync(gate.activityPath(ls.slot), 'r+');
      const report = Buffer.alloc(4);
      for (const [slot, generation] of [[hs.slot, hs.generation], [elsewhere.slot, elsewhere.generation]]) {
        report.writeUInt32LE(generation);
        writeSync(fd, report, 0, 4, L.ACTIVITY.stuckGen + slot * 4); // the low job "reports" the high one and a stranger
      }
      closeSync(fd);
      assert.deepEqual(gate.reviewStuckReports(), []);
      assert.deepEqual([gate.readSlot(hs.slot).stuck, gate.readSlot(elsewhere.slot).stuck], [false, false]);
    } finally {
      for (const s of [hs, ls, elsewhere]) gate.releaseSlot(s.slot);
    }
  });
});

describe('an activity file truncated by its owner', { skip }, () => {
  const cases = [
    ['a higher job that waits on it (step 3)', 'high', 'best-effort', 'other'],
    ['a lower job that checks it (step 2)', 'best-effort', 'high', 'other'],
    ['its own job', 'normal', 'normal', 'own'],
  ] as const;
  for (const [who, mine, theirs, whose] of cases) {
    test(`crashes no job that maps it, ${who}: no SIGBUS, every launch runs`, async () => {
      const me = gate.allocateSlot({ gpu: 0, priority: mine });
      const them = gate.allocateSlot({ gpu: 0, priority: theirs });
      try {
        const probe = runProbe(driver, ['launch:1:0', 'wait', 'launch:5:0'], me.env);
        await readUntil(probe, 'launch'); // its first launch mapped both activity files
        truncateSync(gate.activityPath(whose === 'own' ? me.slot : them.slot), 0);
        probe.resume();
        assert.equal(await probe.exited, 0, 'the probe was not killed');
        assert.equal(recordsOf(await driver.execlog(0), probe.pid).length, 6);
        if (whose === 'other') assert.equal(gate.readSlot(me.slot).truncatedCount, 1, 'the guard replaced the truncated page once');
        else assert.equal(gate.readSlot(me.slot).launches, 0, 'its own truncated file reads as zeros to the engine');
      } finally {
        gate.releaseSlot(me.slot);
        gate.releaseSlot(them.slot);
      }
    });
  }
});

describe('the SIGBUS guard leaves every other fault to the program', { skip }, () => {
  const probe = (steps: string[], env: Record<string, string>) =>
    spawnSync(preloadProbePath(), steps, { env: { ...process.env, ...driver.env, ...env }, encoding: 'utf8', timeout: 30_000 });

  test('a SIGBUS of the program’s own kills it, as it would without the library', () => {
    const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    try {
      const run = probe(['launch:1:0', 'bus'], env); // the launch attached the gate (and its guard)
      assert.equal(run.signal, 'SIGBUS', `exit ${run.status}: ${run.stdout}`);
      assert.match(run.stdout, /"op":"launch"/);
    } finally {
      gate.releaseSlot(slot);
    }
  });

  test('a SIGBUS handler the program installed before the gate attached gets its faults', () => {
    const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    try {
      const run = probe(['catchbus', 'launch:1:0', 'bus'], env);
      assert.equal(run.status, 7, `signal ${run.signal}: ${run.stdout}`);
      assert.match(run.stdout, /"op":"caught"/);
    } finally {
      gate.releaseSlot(slot);
    }
  });
});
