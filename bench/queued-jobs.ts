// bench/daemon's queue row: a daemon-kind engine with its scheduler and job store on one simulated
// A100, QUEUED jobs waiting (submitted by root, as an admin may past the per-user cap), then job
// commands through the dispatcher as root: their time, and the engine's CPU per second while idle.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../electron/engine/engine.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { attachScheduler } from '../electron/engine/scheduler/attach.js';
import { newJobView } from '../electron/engine/scheduler/job-table.js';
import { JobStore } from '../electron/engine/store/job-store.js';
import { UsageStore } from '../electron/engine/store/usage-store.js';
import { simulatedBackend } from '../electron/engine/gpu/gpu-backend.js';

const GiB = 1024 ** 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export interface QueueRow {
  queued: number;
  fillS: number;
  commandMs: { median: number; p99: number; max: number; count: number; slowest: string };
  idleCpuMsPerS: number;
}

/** `queued` jobs that wait for memory behind one running sleeper; `commands` commands timed one at a time. */
export async function benchQueuedJobs(queued: number, commands = 60, idleSeconds = 5): Promise<QueueRow> {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-queue-'));
  try {
    return await measure(dir, queued, commands, idleSeconds);
  } finally {
    rmSync(dir, { recursive: true, force: true }); // also when the box could not be set up
  }
}

async function measure(dir: string, queued: number, commands: number, idleSeconds: number): Promise<QueueRow> {
  const driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath;
  const nvml = openNvml(driver.nvmlLibraryPath);
  const usage = await UsageStore.open({ path: join(dir, 'usage.db'), onNotice: () => undefined });
  const jobStore = await JobStore.open(usage.path);
  const engine = new Engine(simulatedBackend(driver, nvml, () => undefined), { rateHz: 1, kind: 'daemon' });
  const options = { gate: null, guardian: false, jobStore, stateDir: join(dir, 'state'), runtimeDir: join(dir, 'run'), maxQueuedPerUser: queued + commands };
  const attached = attachScheduler(engine, options);
  const scheduler = attached.scheduler;
  try {
    await attached.ready;
    // one sleeper holds 30 GiB of declared need: every queued job (20 GiB) waits for it
    await engine.call('jobs.submit', { argv: ['/bin/sleep', '3600'], gpu: 0, cwd: dir, memoryRequestBytes: 30 * GiB });
    const t0 = process.hrtime.bigint();
    const submitted: Array<Promise<unknown>> = [];
    for (let i = 0; i < queued; i++) {
      const id = scheduler.table.nextManagedId();
      const view = newJobView({ id, managed: true, owner: 'root', uid: 0, argv: ['/bin/sleep', '3600'], cwd: dir, requestedGpu: 0, gpu: 0, memoryRequestBytes: 20 * GiB }, 'queued', 'submitted by root');
      submitted.push(scheduler.submit(view, { executable: '/bin/sleep', launchEnv: { PATH: '/usr/bin:/bin' }, runAs: null }));
    }
    await Promise.all(submitted);
    const fillS = Number(process.hrtime.bigint() - t0) / 1e9;
    engine.start();
    await sleep(2500); // past the first ticks
    const ids = scheduler.table.live().filter((r) => r.view.state === 'queued').map((r) => r.view.id);
    const times: number[] = [];
    let slowest = { ms: 0, what: '' };
    const timed = async (call: () => Promise<unknown>, what: string): Promise<void> => {
      const s = process.hrtime.bigint();
      await call();
      const ms = Number(process.hrtime.bigint() - s) / 1e6;
      times.push(ms);
      if (ms > slowest.ms) slowest = { ms, what };
    };
    for (let i = 0; i < commands; i++) {
      const job = ids[i % ids.length];
      if (i % 3 === 0) await timed(() => engine.call('jobs.setPriority', { job, priority: i % 2 ? 'normal' : 'best-effort' }), 'setPriority');
      else if (i % 3 === 1) await timed(() => engine.call('jobs.terminate', { job: ids[ids.length - 1 - i] }), 'cancel');
      else await timed(() => engine.call('jobs.submit', { argv: ['/bin/sleep', '3600'], gpu: 0, cwd: dir, memoryRequestBytes: 20 * GiB }), 'submit');
    }
    times.sort((a, b) => a - b);
    await sleep(1000);
    const cpu0 = process.cpuUsage();
    const w0 = process.hrtime.bigint();
    await sleep(idleSeconds * 1000);
    const cpu = process.cpuUsage(cpu0);
    const idleCpuMsPerS = (cpu.user + cpu.system) / 1000 / (Number(process.hrtime.bigint() - w0) / 1e9);
    return { queued, fillS, commandMs: { median: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1)!, count: times.length, slowest: slowest.what }, idleCpuMsPerS };
  } finally {
    for (const r of scheduler.table.live()) if (r.view.pid) process.kill(r.view.pid, 'SIGKILL');
    await attached.stop();
    engine.stop();
    await jobStore.close();
    await usage.close();
    nvml.close();
    await driver.dispose();
  }
}

export function queueRowText(row: QueueRow): string {
  const c = row.commandMs;
  return `${String(row.queued).padStart(7)} queued   filled in ${row.fillS.toFixed(1)} s   job command median / p99 / max ${c.median.toFixed(2)} / ${c.p99.toFixed(2)} / ${c.max.toFixed(2)} ms (${c.count} commands, slowest a ${c.slowest})   idle engine ${row.idleCpuMsPerS.toFixed(1)} ms CPU/s`;
}
