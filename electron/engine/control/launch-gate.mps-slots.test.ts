// The MPS client identity in a gate slot, engine side: which daemon a job's processes are clients of (a number per
// daemon) and the client priority they started with, as the preload library reads them (gate_abi.h, "MPS clients").
// The gate's file only: no driver, no job runs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { LaunchGate, LaunchGateError, type MpsClientIdentity } from './launch-gate.js';

let dir: string;
let gate: LaunchGate;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-gate-mps-slots-'));
  gate = LaunchGate.create({ dir, name: 'gate' });
});

afterEach(() => {
  gate.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = (daemon: string, priority: number): MpsClientIdentity => ({ daemon, priority });
const identity = (g: LaunchGate, slot: number): [number, number | null] => {
  const s = g.readSlot(slot);
  return [s.mpsDaemon, s.mpsClientPriority];
};

describe('MPS clients in gate slots', () => {
  test('one number per daemon, shared by its clients, with each client priority; 0 for a job that is no client; a daemon whose last client left is numbered afresh', () => {
    const a = gate.allocateSlot({ gpu: 0, priority: 'high', mpsClient: client('gpu 0', 0) }).slot;
    const b = gate.allocateSlot({ gpu: 0, priority: 'best-effort', mpsClient: client('gpu 0', 1) }).slot;
    const c = gate.allocateSlot({ gpu: 1, priority: 'best-effort', mpsClient: client('slice MIG-1', 1) }).slot;
    const d = gate.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot;
    assert.deepEqual([identity(gate, a), identity(gate, b), identity(gate, c), identity(gate, d)], [[1, 0], [1, 1], [2, 1], [0, null]]);
    gate.releaseSlot(a);
    gate.releaseSlot(b);
    const e = gate.allocateSlot({ gpu: 2, priority: 'high', mpsClient: client('gpu 2', 0) }).slot;
    assert.deepEqual(identity(gate, e), [1, 0], 'the number of gpu 0\'s daemon, free again, goes to the next daemon');
    const f = gate.allocateSlot({ gpu: 0, priority: 'normal' }).slot;
    assert.equal(f, b, 'the best-effort client\'s slot, reused by a job that is no MPS client');
    assert.deepEqual(identity(gate, f), [0, null], 'says so, whatever the slot said before');
  });

  test('setPriority leaves the client priority the job started with', () => {
    const a = gate.allocateSlot({ gpu: 0, priority: 'normal', mpsClient: client('gpu 0', 0) }).slot;
    gate.setPriority(a, 'best-effort');
    assert.deepEqual([gate.readSlot(a).priority, ...identity(gate, a)], ['best-effort', 1, 0]);
  });

  for (const [bad, why] of [
    [{ daemon: '', priority: 0 }, /its daemon/],
    [{ daemon: 'gpu 0', priority: 2 }, /0 \(normal\) or 1 \(below normal\)/],
    [{ daemon: 'gpu 0', priority: -1 }, /0 \(normal\) or 1 \(below normal\)/],
    [{ daemon: 'gpu 0', priority: 0.5 }, /0 \(normal\) or 1 \(below normal\)/],
    [{ priority: 1 }, /its daemon/],
  ] as Array<[MpsClientIdentity, RegExp]>) {
    test(`a bad MPS client (${JSON.stringify(bad)}) is refused with the reason, and no slot is taken`, () => {
      assert.throws(() => gate.allocateSlot({ gpu: 0, priority: 'best-effort', mpsClient: bad }), (e: unknown) => e instanceof LaunchGateError && why.test(e.message));
      assert.deepEqual(gate.slotsInUse(), []);
    });
  }

  test('a resumed engine adopting MPS clients keeps the client priority each started with and gives their daemon one number, the one its new clients get too', () => {
    const first = LaunchGate.create({ dir, name: 'restart' });
    let resumed: LaunchGate | null = null;
    try {
      const high = first.allocateSlot({ gpu: 0, priority: 'high', mpsClient: client('gpu 0', 0) }).slot;
      const be = first.allocateSlot({ gpu: 0, priority: 'best-effort', mpsClient: client('gpu 0', 1) }).slot;
      const moved = first.allocateSlot({ gpu: 0, priority: 'normal', mpsClient: client('gpu 0', 0) }).slot;
      const own = first.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot;
      [high, be, moved, own].forEach((slot, i) => first.setPid(slot, 4000 + i));
      first.close({ keepFile: true });

      resumed = LaunchGate.create({ dir, name: 'restart', resume: true });
      // a new client of another daemon first: it takes number 1, which the earlier engine had given gpu 0's daemon
      const other = resumed.allocateSlot({ gpu: 1, priority: 'high', mpsClient: client('gpu 1', 0) }).slot;
      assert.deepEqual(identity(resumed, other), [1, 0]);
      assert.equal(resumed.adoptSlot(high, { pid: 4000, gpu: 0, priority: 'high', mpsDaemon: 'gpu 0' }), true);
      assert.equal(resumed.adoptSlot(be, { pid: 4001, gpu: 0, priority: 'best-effort', mpsDaemon: 'gpu 0' }), true);
      // moved to best-effort while no engine ran: its processes still connect at normal client priority
      assert.equal(resumed.adoptSlot(moved, { pid: 4002, gpu: 0, priority: 'best-effort', mpsDaemon: 'gpu 0' }), true);
      assert.equal(resumed.adoptSlot(own, { pid: 4003, gpu: 0, priority: 'best-effort' }), true);
      const [highId, beId, movedId, ownId] = [high, be, moved, own].map((s) => identity(resumed!, s));
      assert.equal(highId[0], beId[0], 'the two clients of gpu 0\'s daemon share its number');
      assert.notEqual(highId[0], 1, 'renumbered: 1 is gpu 1\'s daemon now');
      assert.deepEqual([highId[1], beId[1], movedId[1]], [0, 1, 0], 'each keeps the client priority it started with');
      assert.equal(movedId[0], highId[0]);
      assert.deepEqual(ownId, [0, null], 'a job in its own context stays no MPS client');
      const later = resumed.allocateSlot({ gpu: 0, priority: 'best-effort', mpsClient: client('gpu 0', 1) }).slot;
      assert.deepEqual(identity(resumed, later), [highId[0], 1], 'a new client of gpu 0\'s daemon gets the adopted number');
    } finally {
      resumed?.close();
      first.close();
    }
  });

  test('an adopted slot the engine sees as no MPS client is none, whatever the earlier engine wrote', () => {
    const first = LaunchGate.create({ dir, name: 'restart2' });
    let resumed: LaunchGate | null = null;
    try {
      const slot = first.allocateSlot({ gpu: 0, priority: 'best-effort', mpsClient: client('gpu 0', 1) }).slot;
      first.setPid(slot, 5000);
      first.close({ keepFile: true });
      resumed = LaunchGate.create({ dir, name: 'restart2', resume: true });
      assert.throws(() => resumed!.adoptSlot(slot, { pid: 5000, gpu: 0, priority: 'best-effort', mpsDaemon: '' }), /non-empty key/);
      assert.equal(resumed.adoptSlot(slot, { pid: 5000, gpu: 0, priority: 'best-effort', mpsDaemon: null }), true);
      assert.deepEqual(identity(resumed, slot), [0, null]);
    } finally {
      resumed?.close();
      first.close();
    }
  });
});
