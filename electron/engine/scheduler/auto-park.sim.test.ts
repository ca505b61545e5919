// Idle memory given back, on the simulated driver with the real launch gate and preload library:
// two notebooks holding 30 GiB each and a training job needing the whole 40 GiB A100 all make
// progress, by parking whoever is idle and restoring a notebook when its next cell launches.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import type { AttachSchedulerOptions } from './attach.js';

const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-autopark-', (rig) => ({ driver, nvml, dir } = rig));

const IDLE_MS = 300;

function rig(name: string, options: Partial<AttachSchedulerOptions> = {}) {
  // gate: undefined — the real launch gate and preload library (a parked job's launch is its ask)
  return schedulerRig({ driver, nvml, dir }, name, { gate: undefined, autoPark: { idleMs: IDLE_MS, wakePollMs: 10 }, ...options }, cleanups);
}

/** A notebook: 30 GiB held, a 20 ms cell every `idleMs`. With --check-memory it writes a pattern into its
 * memory at start and each cell first reads it back (its first CUDA call after a park is that copy). */
const notebook = (idleMs: number, seconds: number, ...extra: string[]) =>
  [FAKEJOB, '--mem', '30G', 'interactive', '--burst-ms', '20', '--kernel-ms', '5', '--idle-ms', String(idleMs), '--duration', String(seconds), ...extra];

const events = <T>(logPath: string, event: string) =>
  readFileSync(logPath, 'utf8').split('\n').filter((l) => l.includes(`"event":"${event}"`)).map((l) => JSON.parse(l) as T);

function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // it ended on its own
  }
}

const states = (job: JobView) => job.history.map((h) => h.state);

test('two 30 GiB notebooks and a training job needing the whole GPU (39 GiB) share a 40 GiB GPU: idle notebooks are parked, a cell waits for its restore and finds its memory intact', async (t) => {
  const r = rig('notebooks');
  const free = r.engine.sampler.tick().gpus[0].memoryFree!;
  const trainGiB = Math.floor(free / GiB); // the whole GPU: 39 of its 40 GiB (the driver reserves 256 MiB)
  const submit = (argv: string[], requestBytes: number) => r.engine.call('jobs.submit', { argv, cwd: dir, gpu: 0, memoryRequestBytes: requestBytes });
  const kill: number[] = [];
  t.after(() => kill.forEach(killIfAlive));

  const nb1 = await submit(notebook(1200, 12, '--check-memory'), 30 * GiB);
  const first = await r.until('notebook 1 holding its 30 GiB', async () => {
    const j = await r.job(nb1.id);
    return j?.state === 'running' && j.usedMemory === 30 * GiB ? j : undefined;
  });
  kill.push(first.pid!);
  // notebook 2 finds its entry points with dlsym, notebook 1 through cuGetProcAddress: the preload's copy hooks on both paths
  const nb2 = await submit(notebook(1200, 12, '--check-memory', '--resolve', 'symbol'), 30 * GiB);
  const second = await r.until('notebook 2 started once notebook 1 was parked', async () => {
    const j = await r.job(nb2.id);
    return j?.state === 'running' && j.usedMemory === 30 * GiB ? j : undefined;
  }, 80);
  kill.push(second.pid!);
  const parked1 = (await r.job(nb1.id))!;
  assert.ok(states(parked1).includes('parked'), `notebook 1 was parked for notebook 2: ${JSON.stringify(parked1.history)}`);
  assert.match(parked1.history.find((h) => h.state === 'parked')!.reason, new RegExp(`idle for over 0.3 s and ${nb2.id} is queued for 30G of GPU 0`));
  const alerts = (await r.engine.call('alerts.list', {})).filter((a) => a.kind === 'parked' || a.kind === 'resumed');
  assert.deepEqual(alerts, [], 'nobody needs to act on an automatic park: its history says it, no alert');

  const train = await submit([FAKEJOB, '--mem', `${trainGiB}G`, 'train', '--kernel-ms', '5', '--iterations', '300'], trainGiB * GiB);
  const trained = await r.until('the training job finished', async () => {
    const j = await r.job(train.id);
    return j?.state === 'finished' || j?.state === 'failed' ? j : undefined;
  }, 120);
  assert.equal(trained.state, 'finished', `${JSON.stringify(trained.history)}\n${readFileSync(trained.logPath!, 'utf8')}`);

  const both = await r.until('both notebooks finished', async () => {
    const jobs = [(await r.job(nb1.id))!, (await r.job(nb2.id))!];
    return jobs.every((j) => j.state === 'finished' || j.state === 'failed') ? jobs : undefined;
  }, 160);
  const log = await driver.execlog(0);
  const kernelsOf = (pid: number) => log.filter((k) => k.pid === pid).sort((a, b) => a.startNs - b.startNs);
  const trainKernels = kernelsOf(trained.pid!);
  assert.equal(trainKernels.length, 300, 'the training job ran every iteration');
  for (const job of both) {
    assert.equal(job.state, 'finished', `${job.id}: the program never noticed (${JSON.stringify(job.history)})`);
    const h = job.history;
    const unparkedOnCall = h.findIndex((x, i) => x.state === 'unparking' && /its program called CUDA again/.test(x.reason) && h[i + 1]?.state === 'running');
    assert.ok(unparkedOnCall > 0, `${job.id} was restored when it called CUDA again: ${JSON.stringify(h.map((x) => [x.state, x.reason]))}`);
    // a cell that waited: its kernels stop before the park and go on after the restore; training ran in that gap
    const mine = kernelsOf(job.pid!);
    const gaps = mine.slice(1).map((k, i) => ({ before: mine[i].endNs, after: k.startNs }));
    const trainedInGap = gaps.some((g) => trainKernels.some((k) => k.startNs > g.before && k.endNs < g.after));
    if (job.id === nb1.id || job.id === nb2.id) assert.ok(mine.length >= 8, `${job.id} ran cells before and after (${mine.length} kernels)`);
    assert.ok(trainedInGap || trainKernels.every((k) => k.endNs < mine[0].startNs), `${job.id}: training kernels ran while it was parked`);
    // every cell ran whole: 4 kernels of 5 ms, as many bursts as the log says
    const bursts = events<{ kernels: number; ms: number }>(job.logPath!, 'burst');
    assert.ok(bursts.length >= 2 && bursts.every((b) => b.kernels === 4), `${job.id}'s cells: ${JSON.stringify(bursts)}`);
    assert.equal(mine.length, bursts.length * 4, `${job.id}: every launched kernel of every cell ran on the GPU`);
    // its memory came back intact: every cell read back the pattern written at start, the cells after its
    // last park (those after the last gap with training kernels in it) included
    const written = events<{ bytes: number }>(job.logPath!, 'memory-written');
    const checks = events<{ ok: boolean; bytes: number }>(job.logPath!, 'memory-check');
    assert.equal(written[0]?.bytes, 121 * 64 * 1024, `${job.id} wrote 64 KiB every 256 MiB of its 30 GiB and the last 64 KiB`);
    assert.ok(checks.every((c) => c.ok && c.bytes === written[0].bytes), `${job.id}'s memory checks: ${JSON.stringify(checks)}`);
    assert.equal(checks.length, bursts.length, `${job.id}: each cell checked its memory first`);
    const lastParkGap = gaps.findLastIndex((g) => trainKernels.some((k) => k.startNs > g.before && k.endNs < g.after));
    if (lastParkGap >= 0) {
      const cellsAfterRestore = (mine.length - (lastParkGap + 1)) / 4;
      assert.ok(cellsAfterRestore >= 1 && checks.length >= cellsAfterRestore, `${job.id}: ${cellsAfterRestore} cells after its restore, ${checks.length} checks`);
    }
  }
  // the cell that waited for a restore saw the wait; the wait spans training kernels
  const waited = both.some((job) => {
    const mine = kernelsOf(job.pid!);
    return mine.slice(1).some((k, i) => trainKernels.some((tk) => tk.startNs > mine[i].endNs && tk.endNs < k.startNs));
  });
  assert.ok(waited, 'at least one notebook cell ran after training kernels that ran while it was parked');
});

test('a protected job (high priority, or keep resident) is never parked, however long it is idle', async (t) => {
  const r = rig('protected');
  const kill: number[] = [];
  t.after(() => kill.forEach(killIfAlive));
  const submit = (extra: Record<string, unknown>) => r.engine.call('jobs.submit', { argv: notebook(60_000, 60), cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB, ...extra });
  for (const [what, extra] of [['high priority', { priority: 'high' }], ['keep resident', { keepResident: true }]] as const) {
    const held = await submit(extra);
    const running = await r.until(`the ${what} notebook holding 30 GiB`, async () => {
      const j = await r.job(held.id);
      return j?.state === 'running' && j.usedMemory === 30 * GiB ? j : undefined;
    });
    kill.push(running.pid!);
    const waiting = await submit({});
    // idle many times over the threshold, with a job queued for its memory
    for (let i = 0; i < 10; i++) await r.tick(IDLE_MS / 2);
    const [h, w] = [(await r.job(held.id))!, (await r.job(waiting.id))!];
    assert.deepEqual(states(h), ['queued', 'starting', 'running'], `${what}: never parked`);
    assert.equal(w.state, 'queued', `${what}: the job that needs its memory waits`);
    assert.equal((await driver.dump()).devices[0].processes.find((p) => p.pid === running.pid)?.checkpointState, 'running');
    await r.engine.call('jobs.terminate', { job: waiting.id }); // cancels it, queued
    await r.engine.call('jobs.terminate', { job: held.id });
    await r.until(`the ${what} notebook gone`, async () => ['finished', 'failed'].includes((await r.job(held.id))!.state));
  }
});

test('a parked job whose next CUDA call is a synchronisation, not a launch, gets its memory back (the park file)', async (t) => {
  const r = rig('sync-call');
  const kill: number[] = [];
  t.after(() => kill.forEach(killIfAlive));
  // one cell, then idle until its end, where fakejob synchronises its stream before exiting
  const nb = await r.engine.call('jobs.submit', { argv: notebook(60_000, 4), cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB });
  const running = await r.until('the notebook holding 30 GiB', async () => {
    const j = await r.job(nb.id);
    return j?.state === 'running' && j.usedMemory === 30 * GiB ? j : undefined;
  });
  kill.push(running.pid!);
  const other = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '30G', 'hold', '--duration', '1'], cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB });
  await r.until('the other job started in the notebook\'s memory', async () => (await r.job(other.id))?.state === 'running');
  const parkedAt = (await r.job(nb.id))!.history.findIndex((h) => h.state === 'parked');
  assert.ok(parkedAt > 0, 'the notebook was parked for it');
  const done = await r.until('the notebook finished', async () => {
    const j = await r.job(nb.id);
    return j?.state === 'finished' || j?.state === 'failed' ? j : undefined;
  }, 80);
  assert.equal(done.state, 'finished', JSON.stringify(done.history));
  const after = done.history.slice(parkedAt + 1).map((h) => [h.state, h.reason]);
  assert.deepEqual(after[0], ['unparking', 'unparking, asked by gpushare: its program called CUDA again'], JSON.stringify(after));
  const bursts = readFileSync(done.logPath!, 'utf8').split('\n').filter((l) => l.includes('"event":"burst"'));
  assert.equal(bursts.length, 1, 'no launch after the park: its one cell ran before it');
  assert.equal((await r.job(other.id))?.state, 'finished');
});

/** A notebook idle for 10 minutes after its first cell, parked for another job; its next cell, woken by
 * SIGUSR1, first reads its memory back with `copy` (fakejob --check-copy): the first CUDA call since the
 * park. Without that copy counted in the park file, the cell waits in it for ever and this gives up. */
async function parkedCellReadsBack(r: ReturnType<typeof rig>, kill: number[], copy: string, resolve: 'symbol' | 'procaddress') {
  const argv = notebook(600_000, 600, '--check-memory', '--check-copy', copy, '--resolve', resolve);
  const nb = await r.engine.call('jobs.submit', { argv, cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB });
  const running = await r.until(`the ${copy} notebook holding 30 GiB`, async () => {
    const j = await r.job(nb.id);
    return j?.state === 'running' && j.usedMemory === 30 * GiB ? j : undefined;
  });
  kill.push(running.pid!);
  const other = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '30G', 'hold', '--duration', '0.5'], cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB });
  await r.until(`the job that took the ${copy} notebook's memory finished`, async () => (await r.job(other.id))?.state === 'finished');
  const parked = (await r.job(nb.id))!;
  const parkedAt = parked.history.findIndex((h) => h.state === 'parked');
  assert.ok(parkedAt > 0 && parked.state === 'parked', `the ${copy} notebook was parked for it and stays so while it makes no call: ${JSON.stringify(parked.history)}`);
  process.kill(running.pid!, 'SIGUSR1'); // its next cell, now: the first CUDA call since the park is the copy
  // without the copy counted in the park file, the cell waits in it for ever and this gives up
  await r.until(`the ${copy} notebook's second cell ran`, async () => events(running.logPath!, 'burst').length >= 2);
  process.kill(running.pid!, 'SIGTERM'); // the notebook ends: fakejob synchronises and exits 0
  const done = await r.until(`the ${copy} notebook finished`, async () => {
    const j = await r.job(nb.id);
    return j?.state === 'finished' || j?.state === 'failed' ? j : undefined;
  });
  assert.equal(done.state, 'finished', `${copy}: ${JSON.stringify(done.history)}\n${readFileSync(done.logPath!, 'utf8')}`);
  const after = done.history.slice(parkedAt + 1).map((h) => [h.state, h.reason]);
  assert.deepEqual(after[0], ['unparking', 'unparking, asked by gpushare: its program called CUDA again'], `${copy}: ${JSON.stringify(after)}`);
  // both cells read the pattern written at start back byte for byte, the one after the restore included
  const bursts = events<{ kernels: number }>(done.logPath!, 'burst');
  const checks = events<{ ok: boolean; bytes: number }>(done.logPath!, 'memory-check');
  const written = events<{ bytes: number }>(done.logPath!, 'memory-written');
  assert.equal(bursts.length, 2, `${copy}: one cell before the park, one after`);
  assert.equal(checks.length, 2, `${copy}: each cell read its memory back first`);
  assert.ok(checks.every((c) => c.ok && c.bytes === written[0]?.bytes), `${copy}: memory checks ${JSON.stringify(checks)}`);
  const mine = (await driver.execlog(0)).filter((k) => k.pid === done.pid);
  assert.equal(mine.length, 2 * 4, `${copy}: every kernel of both cells ran`);
}

test('a parked job whose next cell begins with an asynchronous copy (cuMemcpyDtoHAsync, and its _ptsz variant found through cuGetProcAddress) gets its memory back and reads its bytes intact', async (t) => {
  const r = rig('async-copy');
  const kill: number[] = [];
  t.after(() => kill.forEach(killIfAlive));
  // each cell's first call reads its memory back as a framework's .cpu() does; dlsym finds
  // cuMemcpyDtoHAsync_v2, cuGetProcAddress with PER_THREAD_DEFAULT_STREAM cuMemcpyDtoHAsync_v2_ptsz
  for (const [copy, resolve] of [['async', 'symbol'], ['ptsz', 'procaddress']] as const) await parkedCellReadsBack(r, kill, copy, resolve);
});

test('a parked job whose next cell begins with a 2D copy (cuMemcpy2D_v2) or a peer copy (cuMemcpyPeer) gets its memory back and reads its bytes intact', async (t) => {
  const r = rig('2d-peer-copy');
  const kill: number[] = [];
  t.after(() => kill.forEach(killIfAlive));
  // 2d: each sample read back as 16 rows into a wider host pitch; peer: each sample peer-copied within
  // the allocation, then read from there (cuGetProcAddress for one, dlsym for the other)
  for (const [copy, resolve] of [['2d', 'procaddress'], ['peer', 'symbol']] as const) await parkedCellReadsBack(r, kill, copy, resolve);
});

test('a parked job whose next cell begins with a 2D memset (cuMemsetD2D8_v2) or a batched copy (cuMemcpyBatchAsync) gets its memory back and finds its bytes intact', async (t) => {
  const r = rig('memset2d-batch-copy');
  const kill: number[] = [];
  t.after(() => kill.forEach(killIfAlive));
  // memset2d: each cell first sets a 16-row rectangle (4 KiB pitch) in the allocation's second 64 KiB to a value
  // of its own and reads that place back whole (the rows set, the gaps between them untouched), then the samples;
  // batch: each sample read back as a batch of two device-to-host copies on the job's stream, then synchronised
  for (const [copy, resolve] of [['memset2d', 'symbol'], ['batch', 'procaddress']] as const) await parkedCellReadsBack(r, kill, copy, resolve);
});
