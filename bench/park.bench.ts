// bench/park: idle memory given back, on the simulated driver. (1) Park (lock + checkpoint) and
// restore (restore + unlock) time against the bytes moved, through the engine's checkpoint binding.
// The simulated driver keeps device memory contents in a memfd and moves every byte written
// (between memfds, host memory to host memory): allocations with nothing written move only their
// accounting (the calls' own cost), filled ones (fakejob hold --fill) their bytes too; a real GPU
// moves them across PCIe instead. (2) The wait a notebook cell sees: two 30 GiB notebooks (each
// cell first reads back its --check-memory pattern) on a 40 GiB A100 take turns (each cell parks
// the other, idle one and restores its own), against the same cells with nothing parked. Prints
// figures; never fails on time.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobView } from '../shared/jobs.js';
import { openCudaCheckpoint } from '../electron/engine/gpu/cuda-checkpoint.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../electron/engine/paths.js';
import { schedulerRig } from '../electron/engine/testing/scheduler-rig.js';

const GiB = 1024 ** 3;
const REPS = Number(process.env.BENCH_REPS ?? 30);
const CELLS = Number(process.env.BENCH_CELLS ?? 8);
const TICK_MS = Number(process.env.BENCH_TICK_MS ?? 1000); // the engine samples once a second by default
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (v: number) => v.toFixed(2).padStart(8);
const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;
const MiB = 1024 ** 2;

/** Bytes the simulated driver holds for pid in its `which` memfd (its allocated pages). */
function memfdBytes(pid: number, which: 'device' | 'host'): number {
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const path = `/proc/${pid}/fd/${fd}`;
    try {
      if (readlinkSync(path).startsWith(`/memfd:fakegpu-${which}-slot`)) return statSync(path).blocks * 512;
    } catch {
      // a descriptor closed meanwhile
    }
  }
  return 0;
}

const driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath; // the fake libcuda in this process reads it
const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-park-'));
const cleanups: Array<() => unknown> = [];
try {
  console.log(`bench/park: simulated A100-40GB, Node ${process.version}; ${REPS} park/restore cycles per size`);
  console.log('(1) park = lock + checkpoint, restore = restore + unlock, per call of the engine\'s binding; "bytes moved" is what the job\'s host memfd held once parked');
  const ckpt = openCudaCheckpoint(driver.cudaLibraryPath);
  const FILLS_MIB = (process.env.BENCH_FILL_MIB ?? '64,256,1024').split(',').map(Number);
  const cases = [...[1, 4, 16, 32].map((gib) => ({ gib, fillMiB: 0 })), ...FILLS_MIB.map((fillMiB) => ({ gib: Math.max(1, Math.ceil(fillMiB / 1024)), fillMiB }))];
  for (const { gib, fillMiB } of cases) {
    const fill = fillMiB ? ['--fill', `${fillMiB}M`] : [];
    const job = driver.spawnFakejob(['--device', '0', '--mem', `${gib}G`, 'hold', '--duration', '600', ...fill]);
    await job.ready; // after its fill: ready comes once the content is written
    const park: number[] = [];
    const restore: number[] = [];
    let moved = -1;
    for (let i = 0; i < REPS; i++) {
      let t = process.hrtime.bigint();
      await ckpt.lock(job.pid, 0);
      await ckpt.checkpoint(job.pid);
      park.push(ms(t));
      if (moved < 0) moved = memfdBytes(job.pid, 'host');
      t = process.hrtime.bigint();
      await ckpt.restore(job.pid);
      await ckpt.unlock(job.pid);
      restore.push(ms(t));
    }
    job.kill('SIGKILL');
    await job.exited;
    park.sort((a, b) => a - b);
    restore.sort((a, b) => a - b);
    const rate = (t: number) => (moved > 0 ? `${(moved / MiB / t).toFixed(2).padStart(6)} MiB/ms` : '     -      ');
    console.log(
      `  ${String(gib).padStart(2)} GiB held, ${String(Math.round(moved / MiB)).padStart(5)} MiB moved   park median ${fmt(pct(park, 50))} ms  p99 ${fmt(pct(park, 99))} ms (${rate(pct(park, 50))})` +
        `   restore median ${fmt(pct(restore, 50))} ms  p99 ${fmt(pct(restore, 99))} ms (${rate(pct(restore, 50))})`,
    );
  }

  console.log(`(2) a notebook cell (reads back 7.5 MiB of its 30 GiB, then 4 kernels, 20 ms of GPU work) as its program sees it; the engine samples every ${TICK_MS} ms`);
  const nvml = openNvml(driver.nvmlLibraryPath);
  cleanups.push(() => nvml.close());
  const notebook = (idleMs: number) => [FAKEJOB, '--mem', '30G', 'interactive', '--burst-ms', '20', '--kernel-ms', '5', '--idle-ms', String(idleMs), '--duration', String(((CELLS + 1) * idleMs) / 1000), '--check-memory'];
  const cellsOf = (logPath: string) =>
    readFileSync(logPath, 'utf8').split('\n').filter((l) => l.includes('"event":"burst"')).map((l) => (JSON.parse(l) as { ms: number }).ms);
  const run = async (name: string, count: number, idleMs: number): Promise<{ cells: number[]; parks: number }> => {
    const r = schedulerRig({ driver, nvml, dir }, name, { gate: undefined, autoPark: { idleMs: 200 } }, cleanups);
    const ticker = setInterval(() => r.engine.sampler.sampleNow(), TICK_MS);
    try {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        ids.push((await r.engine.call('jobs.submit', { argv: notebook(idleMs), cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB })).id);
        await new Promise((res) => setTimeout(res, idleMs / count)); // cells of the two interleave
      }
      const jobs: JobView[] = [];
      for (;;) {
        const all = await r.engine.call('jobs.list', { includeFinished: true });
        jobs.splice(0, jobs.length, ...all.filter((j) => ids.includes(j.id)));
        if (jobs.every((j) => j.state === 'finished' || j.state === 'failed')) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      const failed = jobs.filter((j) => j.state !== 'finished');
      if (failed.length) throw new Error(`${failed.map((j) => j.id).join(', ')} did not finish: ${JSON.stringify(failed.map((j) => j.history.at(-1)))}`);
      const cells = jobs.flatMap((j) => cellsOf(j.logPath!).slice(1)); // a notebook's first cell ran before anything was parked
      const parks = jobs.reduce((n, j) => n + j.history.filter((h) => h.state === 'parked').length, 0);
      return { cells: cells.sort((a, b) => a - b), parks };
    } finally {
      clearInterval(ticker);
      await r.stop();
    }
  };
  const alone = await run('alone', 1, 800);
  const turns = await run('turns', 2, 800);
  const line = (label: string, x: { cells: number[]; parks: number }) =>
    console.log(`  ${label.padEnd(44)} median ${fmt(pct(x.cells, 50))} ms  p90 ${fmt(pct(x.cells, 90))} ms  max ${fmt(x.cells.at(-1)!)} ms   (${x.cells.length} cells, ${x.parks} parks)`);
  line('one notebook, nothing parked', alone);
  line('two 30 GiB notebooks taking turns on 40 GiB', turns);
  console.log(`  wait added by a restore (median): ${fmt(pct(turns.cells, 50) - pct(alone.cells, 50))} ms`);
} finally {
  for (const c of cleanups.reverse()) await c();
  await driver.dispose();
  rmSync(dir, { recursive: true, force: true });
}
