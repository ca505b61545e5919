// Best-effort kernels beside TWO high jobs (window policy 'learned'): the GPU's idle gap ends when the
// first of them launches, so a lower kernel fits only when the chance that both stay idle until it
// ends (the product of each job's share of gaps that outlast it) is at least 1/2, not when each job
// alone would likely stay idle. Deterministic: asserts on the simulated driver's execution record and
// on the gap histograms the jobs published, never on a latency.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import type { LaunchGate } from './launch-gate.js';
import { recordsOf, runProbe } from './launch-gate-sim.js';
import { useGateRig } from '../testing/gate-rig.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
const skip = useGateRig('gpushare-gate-fit-two-', { heartbeatIntervalMs: 200 }, (rig) => ({ driver, gate } = rig));

const REQUESTS = 44;
const TRAINER_AT = 12; // the trainer starts once the high jobs' gaps are seen clean: its first kernels, run before it knows their length, delay a few requests
const LEARNED_AFTER = 22; // each job's 16 gaps and the trainer's kernel are learned by then
const PERIOD_MS = 29; // both jobs get a request together every 29 ms: gaps in the octave [16.8, 33.6) ms
const BE_KERNEL_MS = 16; // after the 5 ms hold, ~60 % of either job's gaps outlast it, ~37 % of both together

/** Of the gaps in `hist` (octave buckets, each spread evenly) that lasted `age` ns, the share that lasts `age + kernel` (1 when none lasted `age`). */
function outlasts(hist: number[], age: number, kernel: number): number {
  const longer = (x: number): number =>
    hist.reduce((n, c, b) => {
      const lo = b ? 2 ** (b + 10) : 0;
      const hi = 2 ** (b + 11);
      return n + (x < lo ? c : x < hi ? (c * (hi - x)) / (hi - lo) : 0);
    }, 0);
  const lasted = longer(age);
  return lasted > 0 ? longer(age + kernel) / lasted : 1;
}

/** The job's last kernel ended before t and none of its kernels was queued or running at t: how long it had been idle, else null. */
function idleFor(h: KernelRecord[], t: number): number | null {
  if (h.some((k) => k.enqueueNs <= t && t < k.endNs)) return null;
  const before = h.filter((k) => k.endNs < t).at(-1);
  return before ? t - before.endNs : null;
}

describe('best-effort kernels beside two high jobs', { skip }, () => {
  test('a 16 ms best-effort kernel that either high job\'s gaps alone would let in, but not both together, is not launched while both are idle', async () => {
    const highs = [gate.allocateSlot({ gpu: 0, priority: 'high' }), gate.allocateSlot({ gpu: 0, priority: 'high' })];
    const be = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    let trainer: ReturnType<SimulatedDriver['spawnFakejob']> | null = null;
    try {
      const probes = highs.map((s) => runProbe(driver, Array.from({ length: REQUESTS }, () => ['wait', 'launch:1:1000']).flat(), s.env));
      for (let r = 0; r < REQUESTS; r++) {
        if (r === TRAINER_AT) trainer = driver.spawnFakejob(['train', '--kernel-ms', String(BE_KERNEL_MS), '--duration', '120'], be.env);
        for (const p of probes) p.resume();
        await sleep(PERIOD_MS);
      }
      if (!trainer) throw new Error('the trainer was never started');
      await trainer.ready;
      for (const p of probes) assert.equal(await p.exited, 0, JSON.stringify(p.steps.at(-1)));
      const states = highs.map((s) => gate.readSlot(s.slot));
      const kernelNs = gate.readSlot(be.slot).kernelNs;
      trainer.kill('SIGTERM');
      await trainer.exited;
      const log = await driver.execlog(0);
      const h = probes.map((p) => recordsOf(log, p.pid));
      const b = recordsOf(log, trainer.pid);
      h.forEach((recs) => assert.equal(recs.length, REQUESTS));

      for (const s of states) {
        assert.ok(s.gapSamples >= 16, `each high job learned from ${s.gapSamples} gaps`);
        assert.ok(s.gapHistogram[14] >= 16, `its gaps are mostly in the octave [16.8, 33.6) ms: ${JSON.stringify(s.gapHistogram)}`);
      }
      assert.ok(kernelNs !== null && kernelNs >= BE_KERNEL_MS * 1e6, `the best-effort job learned its kernel as no shorter than the ${BE_KERNEL_MS} ms it takes (${kernelNs} ns)`);

      // the launch decision, read from enqueue times: ages read a little long (the sync returns after the kernel's
      // end, the enqueue follows the decision), so a kernel let in at 1/2 can read a little lower: 0.45 leaves room
      const learnedAt = Math.max(h[0][LEARNED_AFTER].enqueueNs, h[1][LEARNED_AFTER].enqueueNs);
      const bad: string[] = [];
      for (const k of b.filter((x) => x.enqueueNs > learnedAt)) {
        const ages = h.map((recs) => idleFor(recs, k.enqueueNs));
        if (ages.some((a) => a === null)) continue;
        const each = ages.map((a, j) => outlasts(states[j].gapHistogram, a!, kernelNs!));
        const both = each[0] * each[1];
        if (both < 0.45) bad.push(`idle ${ages.map((a) => (a! / 1e6).toFixed(1)).join(' and ')} ms: outlasts ${each.map((x) => x.toFixed(2)).join(' × ')} = ${both.toFixed(2)}`);
      }
      assert.deepEqual(bad, [], 'no best-effort kernel launched while both high jobs were idle and likely not both to stay idle until it ends');
    } finally {
      trainer?.kill('SIGKILL');
      for (const s of highs) gate.releaseSlot(s.slot);
      gate.releaseSlot(be.slot);
    }
  });
});
