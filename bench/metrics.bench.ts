// bench/metrics: the time to render the metrics endpoint's text (what one scrape costs the engine)
// for 8 simulated GPUs × 64 processes, each process a job of the scheduler, and the text's size.
// Prometheus text format and OpenMetrics, median and p95 over N renders. Prints figures; never fails on time.
// Budget (DESIGN.md §7): < 5 ms per render.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillBusyBox, GPUS, PROCESSES_PER_GPU } from './busy-box.js';
import { Engine } from '../electron/engine/engine.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { engineMetricsSources } from '../electron/engine/metrics/attach-metrics.js';
import { GpushareMetrics, type MetricsFormat } from '../electron/engine/metrics/gpushare-metrics.js';
import { attachScheduler } from '../electron/engine/scheduler/attach.js';
import { simulatedBackend } from '../electron/engine/gpu/gpu-backend.js';

const RENDERS = Number(process.env.BENCH_RENDERS ?? 500);
const WARMUP = 50;

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-metrics-'));
const driver = await SimulatedDriver.create({ scenario: 'h100x8' });
const holders: ChildProcess[] = [];
try {
  holders.push(...(await fillBusyBox(driver)));
  const nvml = openNvml(driver.nvmlLibraryPath);
  const engine = new Engine(simulatedBackend(driver, nvml), { rateHz: 1, kind: 'daemon' });
  const attached = attachScheduler(engine, { gate: null, guardian: false, stateDir: join(dir, 'state'), runtimeDir: join(dir, 'run') });
  await attached.ready;
  engine.sampler.sampleNow(); // every process becomes a job, as on a running box
  const snapshot = engine.sampler.latest!;
  const sources = engineMetricsSources(engine, attached.scheduler);
  console.log(`bench/metrics: ${GPUS} simulated GPUs × ${PROCESSES_PER_GPU} processes (${snapshot.processes.length} in the snapshot, ${attached.scheduler.table.all().length} jobs), ${RENDERS} renders after ${WARMUP} warm-up, Node ${process.version}`);
  console.log('format        median    p95       max       size');
  for (const format of ['prometheus', 'openmetrics'] as MetricsFormat[]) {
    const metrics = new GpushareMetrics(sources, format);
    let text = '';
    for (let i = 0; i < WARMUP; i++) text = await metrics.render();
    const times: number[] = [];
    for (let i = 0; i < RENDERS; i++) {
      const start = process.hrtime.bigint();
      text = await metrics.render();
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    times.sort((a, b) => a - b);
    const ms = (v: number): string => `${v.toFixed(2)} ms`.padEnd(10);
    console.log(`${format.padEnd(14)}${ms(percentile(times, 50))}${ms(percentile(times, 95))}${ms(times.at(-1)!)}${Buffer.byteLength(text)} bytes (${text.split('\n').filter((l) => l && !l.startsWith('#')).length} series)`);
  }
  sources.stop();
  await attached.stop();
  engine.stop();
  nvml.close();
} finally {
  for (const h of holders) h.kill('SIGKILL');
  await driver.dispose();
  rmSync(dir, { recursive: true, force: true });
}
