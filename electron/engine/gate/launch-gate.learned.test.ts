// The learned window (window policy 'learned', the default): a high job holds lower jobs back only
// as long as the gaps inside its requests last, as it learned them, instead of a fixed window after
// every launch. Deterministic: asserts on the simulated driver's execution record against the hold the
// job published, never on a latency.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import { LaunchGate } from './launch-gate.js';
import * as L from './launch-gate-layout.js';
import { enqueuedUnderHigh, recordsOf, runProbe } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';

const WINDOW_MS = 30;
let driver: SimulatedDriver;
let gate: LaunchGate;
let dir: string;
const skip = useGateRig('gpushare-gate-learned-', { heartbeatIntervalMs: 200, activeWindowMs: WINDOW_MS }, (rig) => ({ driver, gate, dir } = rig));

const REQUESTS = 20;
const LEARNED_AFTER = 8; // 3 gaps a request: the 16 the job needs are seen by then
/** A request: three 2 ms kernels, each synchronised, 1 ms of the program's own work between them; 40 ms between requests. */
const requestSteps = (): string[] => ['launch:1:2000', 'sleep:1000', 'launch:1:2000', 'sleep:1000', 'launch:1:2000', 'sleep:40000'];

describe('learned window', { skip }, () => {
  test('window policy: learned by default, fixed on request, anything else refused before a file is made', () => {
    const header = (name: string): number => readFileSync(join(dir, name, 'control')).readUInt32LE(L.HEADER.windowPolicy);
    assert.equal(header('gate'), L.GATE_WINDOW_LEARNED);
    const fixed = LaunchGate.create({ dir, name: 'fixed', windowPolicy: 'fixed' });
    try {
      assert.equal(header('fixed'), L.GATE_WINDOW_FIXED);
    } finally {
      fixed.close();
    }
    assert.throws(() => LaunchGate.create({ dir, name: 'bad', windowPolicy: 'sometimes' as never }), /windowPolicy must be 'fixed' or 'learned', not "sometimes"/);
    assert.equal(existsSync(join(dir, 'bad')), false, 'a refused policy leaves no gate directory behind');
  });

  test('a high job publishes its hold after its first 8 gaps', async () => {
    const high = gate.allocateSlot({ gpu: 0, priority: 'high' });
    try {
      const probe = runProbe(driver, Array.from({ length: 9 }, () => ['launch:1:500', 'sleep:3000']).flat(), high.env);
      assert.equal(await probe.exited, 0, JSON.stringify(probe.steps.at(-1)));
      const state = gate.readSlot(high.slot);
      assert.equal(state.gapSamples, 8, 'nine requests, eight gaps between them');
      assert.ok(state.holdNs !== null, 'a hold is published after 8 gaps');
    } finally {
      gate.releaseSlot(high.slot);
    }
  });

  test('a best-effort job launches into the gaps between requests and never into a gap inside a request shorter than the hold the high job learned', async () => {
    const high = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const be = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const trainer = driver.spawnFakejob(['train', '--kernel-ms', '0.5', '--duration', '120'], be.env);
    try {
      await trainer.ready;
      const steps = Array.from({ length: REQUESTS }, requestSteps).flat();
      const probe = runProbe(driver, steps, high.env);
      assert.equal(await probe.exited, 0, JSON.stringify(probe.steps.at(-1)));
      const state = gate.readSlot(high.slot);
      trainer.kill('SIGTERM');
      await trainer.exited;
      const log = await driver.execlog(0);
      const h = recordsOf(log, probe.pid).sort((a, b) => a.enqueueNs - b.enqueueNs);
      const b = recordsOf(log, trainer.pid);
      assert.equal(h.length, 3 * REQUESTS);

      assert.ok(state.holdNs !== null, `the high job learned a hold (${state.gapSamples} gaps seen)`);
      const hold = state.holdNs;
      assert.ok(hold > 1e6 && hold < WINDOW_MS * 1e6, `its hold (${hold} ns) covers its 1 ms gaps inside a request and is shorter than the ${WINDOW_MS} ms window`);
      assert.deepEqual(enqueuedUnderHigh(h, b), [], 'no best-effort kernel was enqueued while a high kernel was queued or running');

      const enqueuedIn = (from: number, to: number): KernelRecord[] => b.filter((k) => k.enqueueNs > from && k.enqueueNs < to);
      let shortGaps = 0;
      let usedGaps = 0;
      for (let r = LEARNED_AFTER; r < REQUESTS; r++) {
        const [k0, k1, k2] = h.slice(3 * r, 3 * r + 3);
        for (const [prev, next] of [[k0, k1], [k1, k2]]) {
          if (next.enqueueNs - prev.endNs >= hold) continue; // the program took longer than its pattern: the gap was free
          shortGaps++;
          assert.deepEqual(enqueuedIn(prev.endNs, next.enqueueNs), [], `request ${r}: no best-effort kernel in a ${(next.enqueueNs - prev.endNs) / 1e6} ms gap inside it`);
        }
        const nextRequest = h[3 * r + 3];
        const windowEnd = k2.enqueueNs + WINDOW_MS * 1e6; // where a fixed window after the last launch would end
        if (nextRequest && enqueuedIn(k2.endNs, Math.min(windowEnd, nextRequest.enqueueNs)).length > 0) usedGaps++;
      }
      const gaps = REQUESTS - 1 - LEARNED_AFTER;
      assert.ok(shortGaps > 0, 'some gaps inside requests were shorter than the hold (the case under test)');
      assert.ok(usedGaps >= Math.ceil(gaps * 0.75), `best-effort work started before a fixed ${WINDOW_MS} ms window would have ended in ${usedGaps} of ${gaps} gaps between requests`);
    } finally {
      trainer.kill('SIGKILL');
      gate.releaseSlot(high.slot);
      gate.releaseSlot(be.slot);
    }
  });
});
