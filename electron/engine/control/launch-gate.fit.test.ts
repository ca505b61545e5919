// Best-effort kernels that fit the high job's gaps (window policy 'learned'): a lower job learns its own
// kernel duration from its synchronisations and launches only while the high job's learned gaps say its
// next request is not likely to come before that kernel would end. Deterministic: asserts on the
// simulated driver's execution record and on what the jobs published, never on a latency.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import type { LaunchGate } from './launch-gate.js';
import { recordsOf, runProbe } from './launch-gate-sim.js';
import { useGateRig } from '../testing/gate-rig.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
const skip = useGateRig('gpushare-gate-fit-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate } = rig));

const REQUESTS = 36;
const LEARNED_AFTER = 20; // the 16 gaps the high job needs are seen by then
const BE_KERNEL_MS = 12;
/** A request: one 2 ms kernel, synchronised; then 28 ms of the program's own time. Its gaps fall in the octave [16.8, 33.6) ms. */
const requestSteps = (): string[] => ['launch:1:2000', 'sleep:28000'];

/** The best-effort kernels that ran, or were queued ahead, while high kernel h waited: h waited for them. */
const heldUpBy = (h: KernelRecord, be: KernelRecord[]): KernelRecord[] => be.filter((b) => b.startNs < h.startNs && b.endNs > h.enqueueNs);

describe('best-effort kernels fit the gaps', { skip }, () => {
  test('a best-effort kernel too long for what is left of the high job\'s learned gap waits: no high kernel waits for one, and best-effort kernels still run early in those gaps', async () => {
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

      const late = h.slice(LEARNED_AFTER).filter((k) => heldUpBy(k, b).length > 0);
      assert.deepEqual(
        late.map((k) => `request ${h.indexOf(k)} waited for a best-effort kernel ${heldUpBy(k, b).map((x) => `${(x.startNs - h[h.indexOf(k) - 1].endNs) / 1e6} ms into the gap`).join(', ')}`),
        [],
        'once the gaps are learned, no high kernel waits for a best-effort kernel',
      );
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
