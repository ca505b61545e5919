// bench/sampler: one sampling tick for 8 GPUs × 64 processes, through the NVML addon
// (on the simulated driver) and through the whole sampler (addon + /proc join + snapshot).
// Prints figures; never fails on time. Budget (DESIGN.md §7): < 1 ms per tick.
import type { ChildProcess } from 'node:child_process';
import { fillBusyBox } from './busy-box.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { Sampler } from '../electron/engine/sampler/sampler.js';

const TICKS = Number(process.env.BENCH_TICKS ?? 2000);

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
  nvml.close();
} finally {
  for (const s of sleepers) s.kill('SIGKILL');
  await driver.dispose();
}
