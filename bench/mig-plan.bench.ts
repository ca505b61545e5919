// bench/mig-plan: how long the MIG planner takes for seven-job mixes on each built-in GPU, one slice per
// job and with MPS groups (searched only when a job is left out), around an empty GPU and around a layout
// with busy slices; and how many more jobs MPS places. Seeded mixes, so runs compare. Prints figures; never fails on time.
import { performance } from 'node:perf_hooks';
import type { MigInstance, MigJobNeed } from '../electron/engine/mig/layout.js';
import { planMigLayout } from '../electron/engine/mig/planner.js';
import { BUILT_IN_MIG_MODELS, builtInMigProfileTable, type MigProfileTable } from '../electron/engine/mig/profiles.js';
import { seededRandom } from '../electron/engine/testing/seeded-random.js';

const MIXES = Number(process.env.BENCH_MIXES ?? 200);
const PRIORITIES = ['high', 'normal', 'best-effort'] as const;

/** Small, seeded, reproducible: the same draws on every run. */
const prng = (seed: number): (() => number) => seededRandom(seed).next;

/** Seven jobs of 0.2-1.8 times the smallest slice's memory, half with an SM share: the mixes MPS can help. */
function mix(table: MigProfileTable, random: () => number): MigJobNeed[] {
  const smallest = Math.min(...table.profiles.map((p) => p.memoryMiB)) * 2 ** 20;
  return Array.from({ length: 7 }, (_, i) => {
    const job: MigJobNeed = { id: `j${i}`, memoryBytes: Math.round(smallest * (0.2 + random() * 1.6)), priority: PRIORITIES[Math.floor(random() * 3)] };
    if (random() < 0.5) job.smShare = Math.round((0.02 + random() * 0.2) * 100) / 100;
    return job;
  });
}

/** Today's layout: a busy 3g slice at 4 (half its memory used) and two idle 1g slices at 0 and 1. */
function busyLayout(table: MigProfileTable): MigInstance[] {
  const at = (index: number, start: number, busy: boolean): MigInstance => {
    const p = table.profiles[index];
    const instance: MigInstance = { profile: p.name, profileId: p.id, placement: { start, size: p.memorySlices }, jobId: null, gpuInstanceId: start + 1, computeInstanceIds: [0] };
    if (busy) instance.busy = { pids: [4242], memoryFreeBytes: (p.memoryMiB * 2 ** 20) / 2 };
    return instance;
  };
  return [at(0, 0, false), at(0, 1, false), at(4, 4, true)];
}

const percentile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (v: number): string => v.toFixed(2).padStart(7);

console.log(`bench/mig-plan: ${MIXES} seeded mixes of 7 jobs per model and case, Node ${process.version}`);
console.log('model        around       mps   median ms   p95 ms   worst ms   jobs placed');
for (const model of BUILT_IN_MIG_MODELS) {
  const table = builtInMigProfileTable(model)!;
  for (const [around, current] of [['empty GPU', []], ['busy 3g', busyLayout(table)]] as const) {
    for (const mps of [false, true]) {
      const random = prng(0x5eed + model.length); // the same mixes with and without MPS
      const times: number[] = [];
      let placed = 0;
      for (let m = 0; m < MIXES; m++) {
        const jobs = mix(table, random);
        const started = performance.now();
        const plan = planMigLayout(table, jobs, [...current], { mps });
        times.push(performance.now() - started);
        placed += jobs.length - plan.unplaced.length;
      }
      times.sort((a, b) => a - b);
      console.log(`${model.padEnd(12)} ${around.padEnd(11)} ${String(mps).padEnd(5)} ${ms(percentile(times, 0.5))}   ${ms(percentile(times, 0.95))}  ${ms(times[times.length - 1])}   ${placed} of ${MIXES * 7}`);
    }
  }
}
