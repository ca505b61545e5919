// Best-effort kernels that fit the high job's gaps (window policy 'learned'): a lower job learns its own
// kernel duration from its synchronisations and launches only while the high job's learned gaps say its
// next request is not likely to come before that kernel would end. Deterministic: asserts on the
// simulated driver's execution record and on what the jobs published, never on a latency.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import type { LaunchGate } from './launch-gate.js';
import { recordsOf, runProbe } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
const skip = useGateRig('gpushare-gate-fit-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate } = rig));

const REQUESTS = 36;
const LEARNED_AFTER = 20; // the 16 gaps the high job needs are seen by then
const BE_KERNEL_MS = 12;
/** A request: one 2 ms kernel, synchronised; then 28 ms of the program's own time. Its gaps fall in the octave [16.8, 33.6) ms. */
const requestSteps = (): string[] => ['launch:1:2000', 'sleep:28000'];

/** Best-effort kernels enqueued in the gap before high kernel `next` too late to end, at their length, before `next` was enqueued. */
const tooLate = (prev: KernelRecord, next: KernelRecord, be: KernelRecord[]): KernelRecord[] =>
  be.filter((b) => b.enqueueNs > prev.endNs && b.enqueueNs < next.enqueueNs && b.enqueueNs + BE_KERNEL_MS * 1e6 > next.enqueueNs);

describe('best-effort kernels fit the gaps', { skip }, () => {
  test('a best-effort kernel too long for what is left of the high job\'s learned gap waits: none is launched too late to end before the next request, and best-effort kernels still run early in those gaps', async () => {
    const high = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const be = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    const trainer = driver.spawnFakejob(['train', '--kernel-ms', String(BE_KERNEL_MS), '--duration', '120'], be.env);
    try {
      await trainer.ready;
      const probe = runProbe(driver, Array.from({ length: REQUESTS }, requestSteps).flat(), high.env);
      assert.equal(await probe.exited, 0, JSON.stringify(probe.steps.at(-1)));
      const highState = gate.readSlot(high.slot);
      const beState = gate.readSlot(be.slot);
      trainer.kill('SIGTERM');
      await trainer.exited;
      const log = await driver.execlog(0);
      const h = recordsOf(log, probe.pid);
      const b = recordsOf(log, trainer.pid);
      assert.equal(h.length, REQUESTS);

      const late: string[] = [];
      for (let r = LEARNED_AFTER; r < REQUESTS; r++) {
        const into = (t: number): string => `${((t - h[r - 1].endNs) / 1e6).toFixed(1)} ms`;
        for (const k of tooLate(h[r - 1], h[r], b)) late.push(`request ${r}: a best-effort kernel enqueued ${into(k.enqueueNs)} into a ${into(h[r].enqueueNs)} gap`);
      }
      // the launch decision, read from enqueue times (an executor the box delays does not count against it)
      assert.deepEqual(late, [], `once the gaps are learned, no best-effort kernel is launched too late to end, at its ${BE_KERNEL_MS} ms, before the next request`);
      let used = 0;
      for (let r = LEARNED_AFTER; r + 1 < REQUESTS; r++) if (b.some((k) => k.enqueueNs > h[r].endNs && k.enqueueNs < h[r + 1].enqueueNs)) used++;
      const gaps = REQUESTS - 1 - LEARNED_AFTER;
      assert.ok(used >= Math.ceil(gaps * 0.75), `best-effort kernels ran in ${used} of ${gaps} gaps between requests`);

      assert.ok(highState.gapSamples >= 16, `the high job learned from ${highState.gapSamples} gaps`);
      assert.ok(highState.gapHistogram[14] >= 8, `its gaps are in the octave [16.8, 33.6) ms: ${JSON.stringify(highState.gapHistogram)}`);
      assert.ok(beState.kernelNs !== null && beState.kernelNs >= BE_KERNEL_MS * 1e6, `the best-effort job learned its kernel as no shorter than the ${BE_KERNEL_MS} ms it takes (${beState.kernelNs} ns)`);
    } finally {
      trainer.kill('SIGKILL');
      gate.releaseSlot(high.slot);
      gate.releaseSlot(be.slot);
    }
  });
});
