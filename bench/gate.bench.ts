// bench/gate: what the preload library and its launch gate cost and buy, on the
// simulated driver. Prints figures; never fails on time. Budgets (DESIGN.md §7):
// gate < 1 µs per uncontended launch; best-effort stops < 1 ms after a high job
// asks (plus its queued work); high-priority p99 next to best-effort ≤ 1.10× alone.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SimulatedDriver, type KernelRecord } from '../electron/engine/gpu/simulated-driver.js';
import { LaunchGate, preloadLibraryPath } from '../electron/engine/control/launch-gate.js';
import { ensurePreloadBuilt, preloadBuildDir, recordsOf } from '../electron/engine/control/launch-gate-sim.js';

const INFER_KERNEL_MS = 2;
const BE_KERNEL_MS = 1;
const RUN_S = Number(process.env.BENCH_RUN_S ?? 1.5);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LOADS = [0.3, 0.5, 0.7];

if (!ensurePreloadBuilt()) {
  console.log('native/preload is not built and could not be built (make -C native/preload): nothing to measure.');
  process.exit(0);
}

const pct = (values: number[], p: number): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const f = (v: number, digits = 2): string => (Number.isFinite(v) ? v.toFixed(digits) : '—');

interface Setup {
  driver: SimulatedDriver;
  gate: LaunchGate | null;
  dir: string;
}

async function setup(windowMs: number | null): Promise<Setup> {
  const driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-gate-bench-'));
  const gate = windowMs === null ? null : LaunchGate.create({ dir, activeWindowMs: windowMs, heartbeatIntervalMs: 200 });
  return { driver, gate, dir };
}

async function teardown(s: Setup): Promise<void> {
  s.gate?.close();
  await s.driver.dispose();
  rmSync(s.dir, { recursive: true, force: true });
}

const envFor = (s: Setup, priority: 'high' | 'best-effort'): Record<string, string> =>
  s.gate ? s.gate.allocateSlot({ gpu: 0, priority }).env : {};

// ---- 1. cost per launch ----

interface LaunchCost {
  nsPerLaunchMedian: number;
  nsPerKernelWithSyncMedian: number;
}

function launchBench(s: Setup, env: Record<string, string>): Promise<LaunchCost> {
  return new Promise((resolve, reject) => {
    execFile(join(preloadBuildDir(), 'launch_bench'), ['20000', '7'], { env: { ...process.env, ...s.driver.env, ...env } }, (error, stdout) => {
      if (error) return reject(error);
      resolve(JSON.parse(stdout) as LaunchCost);
    });
  });
}

async function launchCost(): Promise<void> {
  console.log('\n1. Cost per cuLaunchKernel (0-µs kernel, resolved through cuGetProcAddress; median of 7 × 20000, in batches of 512, under the driver’s queue bound)');
  const rows: Array<[string, (s: Setup) => Record<string, string>, number | null]> = [
    ['no preload library', () => ({}), null],
    ['preload, no gate (quota only)', () => ({ LD_PRELOAD: preloadLibraryPath() }), null],
    ['preload + gate, high job alone on its GPU', (s) => envFor(s, 'high'), 20],
    ['preload + gate, high job, idle best-effort slot on its GPU', (s) => (envFor(s, 'best-effort'), envFor(s, 'high')), 20],
    ['preload + gate, best-effort alone (with its short syncs)', (s) => envFor(s, 'best-effort'), 20],
  ];
  console.log(`   ${''.padEnd(60)} ${'launch call'.padStart(16)} ${'launch + run + sync'.padStart(22)}`);
  let base = NaN;
  for (const [label, env, windowMs] of rows) {
    const s = await setup(windowMs);
    try {
      const cost = await launchBench(s, env(s));
      const ns = cost.nsPerLaunchMedian;
      if (Number.isNaN(base)) base = ns;
      console.log(
        `   ${label.padEnd(60)} ${f(ns, 0).padStart(6)} ns (+${f(ns - base, 0).padStart(3)})` +
          ` ${f(cost.nsPerKernelWithSyncMedian / 1000, 1).padStart(13)} µs/kernel`,
      );
    } finally {
      await teardown(s);
    }
  }
}

// ---- shared runs: a best-effort trainer with a high-priority job arriving ----

interface SharedRun {
  high: KernelRecord[];
  be: KernelRecord[];
  p99Ms: number;
}

async function shared(s: Setup, highArgs: string[], withBe: boolean): Promise<SharedRun> {
  const beEnv = envFor(s, 'best-effort');
  const highEnv = envFor(s, 'high');
  const be = withBe ? s.driver.spawnFakejob(['train', '--kernel-ms', String(BE_KERNEL_MS), '--duration', '120'], beEnv) : null;
  if (be) {
    await be.ready;
    await sleep(300);
  }
  const high = s.driver.spawnFakejob(highArgs, highEnv);
  const latency = await high.waitFor('latency').catch((error: Error) => {
    throw new Error(`${error.message}; last event: ${JSON.stringify(high.events.at(-1))}`);
  });
  await high.exited;
  be?.kill('SIGKILL');
  await be?.exited;
  const log = await s.driver.execlog(0);
  return { high: recordsOf(log, high.pid), be: be ? recordsOf(log, be.pid) : [], p99Ms: latency.p99Ms as number };
}

// ---- 2. how fast best-effort yields ----

async function yieldTime(): Promise<void> {
  console.log(`\n2. A high job arrives next to a best-effort trainer (${BE_KERNEL_MS} ms kernels): 40 arrivals, ≥ 50 ms apart`);
  for (const [label, windowMs] of [['without gate', null], ['with gate', 20]] as const) {
    const s = await setup(windowMs);
    try {
      const run = await shared(s, ['infer', '--rate', '15', '--kernel-ms', '1', '--requests', '40', '--seed', '7'], true);
      const lateNs: number[] = [];
      const waitNs: number[] = [];
      let prevEnd = -Infinity;
      for (const h of run.high) {
        if (h.enqueueNs - prevEnd > 20e6) {
          // an arrival: the last best-effort enqueue before this kernel ended, relative to the high enqueue
          const lastBe = run.be.filter((b) => b.enqueueNs < h.endNs).at(-1);
          if (lastBe) lateNs.push(lastBe.enqueueNs - h.enqueueNs);
          waitNs.push(h.startNs - h.enqueueNs);
        }
        prevEnd = h.endNs;
      }
      const after = lateNs.filter((d) => d > 0).length;
      console.log(
        `   ${label.padEnd(14)} best-effort enqueues after the high job's first launch: ${after}/${lateNs.length} arrivals;` +
          ` last one at p50 ${f(pct(lateNs, 50) / 1e3, 0)} µs, p99 ${f(pct(lateNs, 99) / 1e3, 0)} µs (negative = before)`,
      );
      console.log(
        `   ${''.padEnd(14)} high's first kernel waits for queued best-effort work: p50 ${f(pct(waitNs, 50) / 1e6)} ms, p99 ${f(pct(waitNs, 99) / 1e6)} ms`,
      );
    } finally {
      await teardown(s);
    }
  }
}

// ---- 3. the table ----

const median = (v: number[]): number => pct(v, 50);

async function table(): Promise<void> {
  const capacity = 1000 / INFER_KERNEL_MS;
  console.log(
    `\n3. High-priority infer (${INFER_KERNEL_MS} ms kernels, capacity ${capacity} req/s, ${RUN_S} s runs) next to a best-effort train (${BE_KERNEL_MS} ms kernels);` +
      `\n   median over ${REPEATS} repeats, each against an alone run taken just before it.` +
      `\n   p99 ×alone: as the job measured it (arrival to synchronise) / on the GPU only (kernel enqueue to end)`,
  );
  const alone = await setup(null);
  let beAloneRate: number;
  try {
    const be = alone.driver.spawnFakejob(['train', '--kernel-ms', String(BE_KERNEL_MS), '--duration', String(RUN_S)]);
    await be.exited;
    const recs = recordsOf(await alone.driver.execlog(0), be.pid);
    beAloneRate = recs.length / ((recs.at(-1)!.endNs - recs[0].enqueueNs) / 1e9);
  } finally {
    await teardown(alone);
  }
  const configs: Array<[string, number | null]> = [['shared, no gate', null], ['gate, 5 ms (default)', 5], ['gate, 2 ms window', 2], ['gate, 20 ms window', 20]];
  const W = 28;
  console.log(`   best-effort alone: ${f(beAloneRate, 0)} kernels/s`);
  console.log(`   ${'load'.padEnd(6)}${'p99 alone'.padStart(16)}${configs.map(([l]) => l.padStart(W)).join('')}`);
  console.log(`   ${''.padEnd(6)}${'job / GPU'.padStart(16)}${configs.map(() => 'p99 ×alone    BE kept'.padStart(W)).join('')}`);
  const gpuP99 = (recs: KernelRecord[]): number => pct(recs.map((r) => (r.endNs - r.enqueueNs) / 1e6), 99);
  for (const load of LOADS) {
    const args = ['infer', '--rate', String(load * capacity), '--kernel-ms', String(INFER_KERNEL_MS), '--duration', String(RUN_S), '--seed', '11'];
    const aloneJob: number[] = [];
    const aloneGpu: number[] = [];
    const ratios = configs.map(() => ({ job: [] as number[], gpu: [] as number[], kept: [] as number[] }));
    for (let r = 0; r < REPEATS; r++) {
      const s0 = await setup(null);
      let base: SharedRun;
      try {
        base = await shared(s0, args, false);
      } finally {
        await teardown(s0);
      }
      aloneJob.push(base.p99Ms);
      aloneGpu.push(gpuP99(base.high));
      for (let c = 0; c < configs.length; c++) {
        const s = await setup(configs[c][1]);
        try {
          const run = await shared(s, args, true);
          const from = run.high[0].enqueueNs;
          const to = run.high.at(-1)!.endNs;
          const beRate = run.be.filter((b) => b.enqueueNs >= from && b.enqueueNs <= to).length / ((to - from) / 1e9);
          ratios[c].job.push(run.p99Ms / base.p99Ms);
          ratios[c].gpu.push(gpuP99(run.high) / gpuP99(base.high));
          ratios[c].kept.push((100 * beRate) / beAloneRate);
        } finally {
          await teardown(s);
        }
      }
    }
    const cells = ratios.map((x) => `${f(median(x.job))}× / ${f(median(x.gpu))}×  ${f(median(x.kept), 0).padStart(4)} %`);
    console.log(`   ${f(load, 1).padEnd(6)}${`${f(median(aloneJob), 1)} / ${f(median(aloneGpu), 1)} ms`.padStart(16)}${cells.map((c) => c.padStart(W)).join('')}`);
  }
}

const t0 = Date.now();
await launchCost();
await yieldTime();
await table();
console.log(`\n(bench took ${f((Date.now() - t0) / 1000, 0)} s)`);
