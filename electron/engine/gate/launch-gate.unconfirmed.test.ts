// A slot the engine marks unconfirmed (the driver never confirmed the activity its job claims) holds
// nobody back: a best-effort job beside a high slot that claims to be mid-launch for ever launches while
// the mark is set, and is held again once it goes. Deterministic: the claim is bytes in the high slot's
// activity file, written by the test as a job would; asserts on the gate's counters and the execution record.
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import { test } from 'node:test';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import type { LaunchGate } from './launch-gate.js';
import * as L from './launch-gate-layout.js';
import { recordsOf } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';
import { untilWith } from '../../testing/until.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
const skip = useGateRig('gpushare-gate-unconfirmed-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate } = rig));

const until = untilWith({ timeoutMs: 15_000, intervalMs: 25 });

/** What a job that claims to be launching for ever writes in its own activity file: in_launch = 1. */
function claimMidLaunch(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    const one = Buffer.alloc(4);
    one.writeUInt32LE(1);
    writeSync(fd, one, 0, 4, L.ACTIVITY.inLaunch);
  } finally {
    closeSync(fd);
  }
}

test('a high slot marked unconfirmed holds the best-effort job back no more, and holds it again once the mark goes', { skip }, async () => {
  const high = gate.allocateSlot({ gpu: 0, priority: 'high' });
  const be = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
  claimMidLaunch(gate.activityPath(high.slot));
  const trainer = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '120'], be.env);
  try {
    await trainer.ready;
    await until('the best-effort job held by the claim', () => gate.readSlot(be.slot).gatedNs > 50e6);
    assert.equal(gate.readSlot(be.slot).launches, 0, 'trusted, the claim holds the best-effort job back');
    assert.equal(gate.readSlot(high.slot).unconfirmed, false);

    gate.setUnconfirmed(high.slot, true);
    assert.equal(gate.readSlot(high.slot).unconfirmed, true);
    await until('the best-effort job launching beside the unconfirmed claim', () => gate.readSlot(be.slot).launches >= 50);
    const ran = recordsOf(await driver.execlog(0), trainer.pid);
    assert.ok(ran.length >= 50, `the driver ran ${ran.length} of its kernels`);

    gate.setUnconfirmed(high.slot, false);
    const gated = gate.readSlot(be.slot).gatedNs;
    await until('the best-effort job held again', () => gate.readSlot(be.slot).gatedNs > gated + 50e6);
    const launches = gate.readSlot(be.slot).launches;
    await until('held a while longer', () => gate.readSlot(be.slot).gatedNs > gated + 150e6);
    assert.ok(gate.readSlot(be.slot).launches <= launches + 1, 'held: at most the launch already past the check went on');
  } finally {
    trainer.kill('SIGKILL');
    await trainer.exited;
    gate.releaseSlot(high.slot);
    gate.releaseSlot(be.slot);
  }
});

test('a slot given back and taken again starts trusted: the mark is per allocation', { skip }, () => {
  const a = gate.allocateSlot({ gpu: 0, priority: 'high' });
  gate.setUnconfirmed(a.slot, true);
  gate.releaseSlot(a.slot);
  const b = gate.allocateSlot({ gpu: 0, priority: 'high' });
  assert.equal(b.slot, a.slot);
  assert.equal(gate.readSlot(b.slot).unconfirmed, false);
  assert.throws(() => gate.setUnconfirmed(b.slot, 1 as unknown as boolean), /setUnconfirmed needs true or false/);
  gate.releaseSlot(b.slot);
  assert.throws(() => gate.setUnconfirmed(b.slot, true), /not allocated/);
});
