// bench/sampler: one sampling tick for 8 GPUs × 64 processes, through the NVML addon
// (on the simulated driver) and through the whole sampler (addon + /proc join + snapshot).
// Prints figures; never fails on time. Budget (DESIGN.md §7): < 1 ms per tick.
// Then the same box with 30 processes whose command lines are 5.5 MB (issue 24, finding 8): the snapshot's size and ticks.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fillBusyBox } from './busy-box.js';
import { paddedExec } from '../electron/engine/testing/padded-exec.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { Sampler } from '../electron/engine/sampler/sampler.js';

const TICKS = Number(process.env.BENCH_TICKS ?? 2000);
const HOSTILE = 30;
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function measure(label: string, fn: () => unknown): void {
  for (let i = 0; i < 50; i++) fn(); // warm-up
  const micros: number[] = [];
  for (let i = 0; i < TICKS; i++) {
    const start = process.hrtime.bigint();
    fn();
    micros.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  micros.sort((a, b) => a - b);
  const fmt = (v: number) => v.toFixed(0).padStart(6);
  console.log(`${label.padEnd(44)} median ${fmt(percentile(micros, 50))} µs   p99 ${fmt(percentile(micros, 99))} µs   (${TICKS} ticks)`);
}

const driver = await SimulatedDriver.create({ scenario: 'h100x8' });
const sleepers: ChildProcess[] = [];
try {
  sleepers.push(...(await fillBusyBox(driver)));
  const nvml = openNvml(driver.nvmlLibraryPath);
  const sampler = new Sampler(nvml, { simulated: true, scenario: 'h100x8' });
  const first = sampler.tick();
  console.log(`bench/sampler: ${first.gpus.length} simulated GPUs, ${first.processes.length} GPU processes, Node ${process.version}`);
  await new Promise((r) => setTimeout(r, 1000)); // let the trainers fill the execution record
  measure('addon sampleAll (8 GPUs × 64 processes)', () => nvml.sampleAll());
  measure('sampler tick (addon + /proc join + snapshot)', () => sampler.tick());
  // a process's first tick reads its /proc identity and context (cgroup, environ, loginuid); later ticks read neither
  const cold: number[] = [];
  for (let i = 0; i < 20; i++) {
    const fresh = new Sampler(nvml, { simulated: true, scenario: 'h100x8' });
    const start = process.hrtime.bigint();
    fresh.tick();
    cold.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  cold.sort((x, y) => x - y);
  console.log(`${'first tick, every process new (/proc + context)'.padEnd(44)} median ${percentile(cold, 50).toFixed(1).padStart(6)} ms   (20 fresh samplers, ${first.processes.length} processes)`);
  console.log(`${'snapshot size'.padEnd(44)} ${jsonBytes(sampler.tick())} bytes of JSON`);

  // 30 more processes, 1 MB of GPU memory each, behind 5.5 MB command lines
  const { argv, env } = paddedExec([`${driver.libDir}/fakejob`, '--device', '0', '--mem', '1M', 'hold', '--'], { argBytes: 5.5 * 1024 * 1024 });
  for (let i = 0; i < HOSTILE; i++) {
    const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...driver.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    sleepers.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`padded fakejob exited (${code})`)));
      createInterface({ input: child.stdout! }).on('line', (line) => line.includes('"event":"ready"') && resolve());
    });
  }
  const start = process.hrtime.bigint();
  const hostile = sampler.tick();
  const firstMs = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`with ${HOSTILE} processes of 5.5 MB command lines: ${hostile.processes.length} GPU processes listed, snapshot ${jsonBytes(hostile)} bytes of JSON`);
  console.log(`${'  their first tick (reads each one through)'.padEnd(44)} ${firstMs.toFixed(1).padStart(6)} ms`);
  measure('  addon sampleAll, then', () => nvml.sampleAll());
  measure('  sampler tick, then', () => sampler.tick());
  nvml.close();
} finally {
  for (const s of sleepers) s.kill('SIGKILL');
  await driver.dispose();
}
