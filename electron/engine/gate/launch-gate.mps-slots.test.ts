// What a gate slot says of MPS: nothing. Its bytes 52..59 are reserved and zero (gate_abi.h, "MPS clients"), also
// where an engine from d15dbcb on wrote an MPS client identity there, whose preload library let a below-normal
// client skip the gate: a job such an engine started and this one adopts is gated. The gate's file only: no job runs.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { LaunchGate } from './launch-gate.js';
import * as L from './launch-gate-layout.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-gate-mps-slots-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const reservedAt = (slot: number): number => L.GATE_SLOT_OFFSET + slot * L.GATE_SLOT_SIZE + L.SLOT.reserved;
const RESERVED = L.SLOT.unconfirmed - L.SLOT.reserved;

/** An earlier engine's MPS client identity in `slot`: daemon 1, client priority 1 (below normal), as d15dbcb wrote it. */
function writeMpsIdentity(gate: LaunchGate, slot: number): void {
  const fd = openSync(gate.controlPath, 'r+');
  try {
    const bytes = Buffer.alloc(8);
    bytes.writeUInt32LE(1, 0);
    bytes.writeUInt32LE(1, 4);
    writeSync(fd, bytes, 0, 8, reservedAt(slot));
  } finally {
    closeSync(fd);
  }
}

function reserved(gate: LaunchGate, slot: number): number[] {
  const fd = openSync(gate.controlPath, 'r');
  try {
    const bytes = Buffer.alloc(RESERVED);
    readSync(fd, bytes, 0, RESERVED, reservedAt(slot));
    return [...bytes];
  } finally {
    closeSync(fd);
  }
}

const zeros = Array.from({ length: RESERVED }, () => 0);

describe('MPS in gate slots', () => {
  test('a slot adopted from an engine that named its MPS daemon and client priority is cleared, so the library in that job gates it', () => {
    const first = LaunchGate.create({ dir, name: 'restart' });
    let resumed: LaunchGate | null = null;
    try {
      const slot = first.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot;
      first.setPid(slot, 4001);
      writeMpsIdentity(first, slot);
      first.close({ keepFile: true });
      resumed = LaunchGate.create({ dir, name: 'restart', resume: true });
      assert.notDeepEqual(reserved(resumed, slot), zeros, 'the earlier engine\'s bytes are there until adoption');
      assert.equal(resumed.adoptSlot(slot, { pid: 4001, gpu: 0, priority: 'best-effort' }), true);
      assert.deepEqual(reserved(resumed, slot), zeros);
    } finally {
      resumed?.close();
      first.close();
    }
  });

  test('a slot handed out again after such an engine is zero there too', () => {
    const first = LaunchGate.create({ dir, name: 'reuse' });
    let resumed: LaunchGate | null = null;
    try {
      const slot = first.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot;
      writeMpsIdentity(first, slot);
      first.releaseSlot(slot);
      first.close({ keepFile: true });
      resumed = LaunchGate.create({ dir, name: 'reuse', resume: true });
      const again = resumed.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot;
      assert.equal(again, slot);
      assert.deepEqual(reserved(resumed, again), zeros);
    } finally {
      resumed?.close();
      first.close();
    }
  });
});
