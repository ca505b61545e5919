// Jobs sharing a MIG slice through MPS, end to end on the simulated driver (two H100s, GPU 1 in MIG mode:
// GI 1 is a 3g.40gb, GI 2 a 2g.20gb): mode mig with an MPS share starts the slice's own daemon with the
// first such job, its jobs overlap on the slice while a job in another slice runs beside them, the daemon
// stops when the last one ends; mig apply keeps a slice whose daemon runs; bad requests are refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import * as wait from '../../testing/until.js';
import type { JobView } from '../../../shared/jobs.js';
import { Engine } from '../engine.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { attachScheduler } from '../scheduler/attach.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const FAKEGPU = join(fakegpuBuildDir(), 'fakegpu');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-mig-mps-jobs-', (rig) => ({ driver, nvml, dir } = rig));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sliceUuid = (gi: number): string => nvml.describeDevice(1).migDevices.find((m) => m.gpuInstanceId === gi)!.uuid;

interface SliceDaemon {
  gpuInstanceId: number;
  running: boolean;
  user: string;
  pipeDir: string;
  clients: Array<{ pid: number; share: number }>;
}
const sliceDaemon = (gi: number): SliceDaemon =>
  (JSON.parse(execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, 'status'], { encoding: 'utf8' })) as Array<{ instances: SliceDaemon[] }>)[1].instances.find((i) => i.gpuInstanceId === gi)!;

function rig(name: string) {
  const engine = new Engine({ nvml, simulated: driver, close: () => undefined });
  const attached = attachScheduler(engine, { backend: { simulated: driver }, gate: null, stateDir: join(dir, name, 'state'), runtimeDir: join(dir, name, 'run'), guardian: false, terminateGraceMs: 500 });
  cleanups.push(() => attached.stop());
  const tick = async (ms = 50) => {
    await sleep(ms);
    attached.scheduler.evaluate(engine.sampler.tick());
  };
  const jobs = async (): Promise<JobView[]> => engine.call('jobs.list', { includeFinished: true });
  // one scheduler tick before each look, at most 300
  const until = (what: string, done: (all: JobView[]) => boolean): Promise<JobView[]> =>
    wait.until(
      what,
      async () => {
        await tick();
        const all = await jobs();
        return done(all) ? all : undefined;
      },
      { tries: 300, intervalMs: 0, detail: async () => JSON.stringify((await jobs()).map((j) => [j.id, j.state, j.history.at(-1)?.reason])) },
    );
  return { engine, tick, jobs, until, runDir: join(dir, name, 'run') };
}

const train = (iterations: number) => [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '10', '--iterations', String(iterations)];
const overlaps = (a: KernelRecord[], b: KernelRecord[]): boolean => a.some((x) => b.some((y) => x.startNs < y.endNs && y.startNs < x.endNs));
const state = (all: JobView[], id: string) => all.find((j) => j.id === id)!.state;

test('two jobs share a slice through MPS at 50 %: the slice daemon starts with the first, they overlap there, a job in another slice runs beside them, and the daemon stops with the last', async () => {
  const r = rig('pair');
  const slice = sliceUuid(1);
  const submit = (argv: string[], extra: object) => r.engine.call('jobs.submit', { argv, cwd: dir, gpu: 1, mode: 'mig', memoryQuotaBytes: 2 * 2 ** 30, ...extra });
  assert.equal(sliceDaemon(1).running, false, 'no daemon before the first job');
  const long = await submit([FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '10', '--duration', '60'], { migSlice: slice, mpsSharePercent: 50 });
  assert.equal(long.mpsSharePercent, 50);
  assert.equal(long.migSlice, slice);
  // the others come once the long one computes, so they all run at once however loaded the machine is
  const running = await r.until('the long one runs', (all) => state(all, long.id) === 'running');
  const longPid = running.find((j) => j.id === long.id)!.pid!;
  for (let i = 0; i < 200 && !(await driver.execlog(1, 1)).some((k) => k.pid === longPid); i++) await sleep(25);
  assert.equal(sliceDaemon(1).running, true, 'the first job started the slice daemon');
  const short = await submit(train(20), { migSlice: slice, mpsSharePercent: 50 });
  const beside = await submit(train(20), { migSlice: sliceUuid(2) });

  await r.until('all three started', (all) => [short, long, beside].every((j) => state(all, j.id) !== 'queued' && state(all, j.id) !== 'starting'));
  const daemon = sliceDaemon(1);
  assert.equal(daemon.pipeDir, join(r.runDir, 'mps', 'gpu1-gi1', 'pipe'), "the slice's own pipe directory");
  assert.equal(sliceDaemon(2).running, false, 'a slice without MPS jobs gets no daemon');
  const [gpu1] = (await r.engine.call('mps.status', {})).filter((s) => s.gpu === 1);
  assert.deepEqual(gpu1.slices?.map((s) => [s.gpuInstanceId, s.uuid, s.state]), [[1, slice, 'ours']], 'mps.status shows the slice daemon');

  let all = await r.until('the short one ends', (all) => state(all, short.id) === 'finished');
  assert.equal(state(all, long.id), 'running');
  assert.equal(sliceDaemon(1).running, true, 'another job still shares the slice: its daemon runs on');
  const pids = [short, long].map((j) => all.find((x) => x.id === j.id)!.pid!);
  assert.deepEqual(sliceDaemon(1).clients.map((c) => [c.pid, c.share]).sort(), pids.map((pid) => [pid, 50]).sort(), 'both were clients of the slice daemon, each at 50 %');
  const records = await driver.execlog(1, 1);
  assert.ok(overlaps(records.filter((k) => k.pid === pids[0]), records.filter((k) => k.pid === pids[1])), 'their kernels overlapped on the slice');

  all = await r.until('the job in slice 2 ends', (all) => FINALS.has(state(all, beside.id)));
  assert.equal(state(all, beside.id), 'finished');
  const besidePid = all.find((x) => x.id === beside.id)!.pid!;
  const slice2 = (await driver.execlog(1, 2)).filter((k) => k.pid === besidePid);
  assert.equal(slice2.length, 20);
  assert.ok(overlaps(slice2, records.filter((k) => pids.includes(k.pid))), 'the other slice ran while the pair did');

  await r.engine.call('jobs.terminate', { job: long.id });
  await r.until('the long one ends', (all) => FINALS.has(state(all, long.id)));
  assert.equal(sliceDaemon(1).running, false, 'the last job gone, the slice daemon is stopped');
  const [after] = (await r.engine.call('mps.status', {})).filter((s) => s.gpu === 1);
  assert.equal(after.slices, undefined);
});
const FINALS = new Set(['finished', 'failed', 'lost']);

test('mig apply keeps a slice whose MPS daemon runs, even with no client in it; mps.stop with its GPU instance stops it', async () => {
  const r = rig('keep');
  // two 35G jobs: the second needs a 3g.40gb at 0, where the idle 2g.20gb (GI 2) and both 1g.10gb are
  const before = await r.engine.call('mig.apply', { gpu: 1, jobs: '35G,35G', dryRun: true });
  assert.ok(!before.planned.some((p) => p.gpuInstanceId === 2), `without a daemon the idle GI 2 is replaced: ${JSON.stringify(before.planned)}`);
  execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, '--device', '1', '--gi', '2', 'start', '--pipe-dir', join(dir, 'keep', 'pipe')]);
  try {
    const kept = await r.engine.call('mig.apply', { gpu: 1, jobs: '35G,35G', dryRun: true });
    assert.ok(kept.planned.some((p) => p.gpuInstanceId === 2), `GI 2 is kept: ${JSON.stringify(kept.planned)}`);
    assert.equal(kept.unplaced.length, 1, 'so the second 35G job has no room');
    await assert.rejects(r.engine.call('mig.apply', { gpu: 1, layout: ['3g.40gb@4', '3g.40gb@0'], dryRun: false }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'conflict', e.message);
      assert.match(e.message, /slice 2g\.20gb \(GI 2\) has an MPS daemon running \(user [^)]+\): stop it first/);
      return true;
    });
    assert.equal(nvml.describeDevice(1).migDevices.length, 4, 'nothing was destroyed');
    await assert.rejects(r.engine.call('mps.stop', { gpu: 1, gpuInstanceId: 9 }), /GPU 1 has no MIG slice with GPU instance 9/);
    const stopped = await r.engine.call('mps.stop', { gpu: 1, gpuInstanceId: 2 }); // started as this engine's user: ours to stop
    assert.equal(stopped.state, 'off');
    assert.equal(sliceDaemon(2).running, false);
    const freed = await r.engine.call('mig.apply', { gpu: 1, jobs: '35G,35G', dryRun: true });
    assert.ok(!freed.planned.some((p) => p.gpuInstanceId === 2), 'stopped, it is idle again');
  } finally {
    execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, '--device', '1', '--gi', '2', 'stop']);
  }
});

test('an MPS share in a slice is checked: out of range, not a whole number, with mode shared, changed while it runs', async () => {
  const r = rig('refusals');
  const slice = sliceUuid(1);
  const submit = (extra: object) => r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], cwd: dir, gpu: 1, ...extra });
  const cases: Array<[string, Promise<unknown>, RegExp]> = [
    ['share 0', submit({ mode: 'mig', migSlice: slice, mpsSharePercent: 0 }), /mpsSharePercent: must be at least 1/],
    ['share 101', submit({ mode: 'mig', migSlice: slice, mpsSharePercent: 101 }), /mpsSharePercent: must be at most 100/],
    ['share 12.5', submit({ mode: 'mig', migSlice: slice, mpsSharePercent: 12.5 }), /mpsSharePercent/],
    ['unknown slice', submit({ mode: 'mig', migSlice: 'MIG-00000000-0000-0000-0000-000000000000', mpsSharePercent: 50 }), /No MIG slice MIG-0{8}/],
    ['share, mode shared', submit({ mode: 'shared', mpsSharePercent: 50 }), /An MPS share applies to mode mps \(a GPU\) or mig \(a slice shared through MPS\) only/],
  ];
  for (const [what, call, message] of cases) {
    await assert.rejects(call, (e: Error) => {
      assert.match(e.message, message, `${what}: ${e.message}`);
      return true;
    });
  }
  assert.equal((await r.jobs()).length, 0, 'nothing was submitted');

  const job = await submit({ mode: 'mig', migSlice: slice, mpsSharePercent: 30, argv: [FAKEJOB, '--mem', '256M', 'hold'] });
  await r.until('it runs', (all) => state(all, job.id) === 'running');
  await assert.rejects(r.engine.call('jobs.setMode', { job: job.id, mode: 'mig', migSlice: slice, mpsSharePercent: 60 }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'conflict');
    assert.match(e.message, /MPS share of its slice while it runs: the MPS share is fixed when a client starts/);
    return true;
  });
  assert.equal((await r.engine.call('jobs.setMode', { job: job.id, mode: 'mig', migSlice: slice, mpsSharePercent: 30 })).mpsSharePercent, 30, 'the same share is no change');
  await r.engine.call('jobs.terminate', { job: job.id });
  await r.until('it ends', (all) => FINALS.has(state(all, job.id)));
  assert.equal(sliceDaemon(1).running, false);
});
