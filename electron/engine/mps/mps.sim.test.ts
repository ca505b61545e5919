// MPS on the simulated driver through the engine: two jobs at 50 % run concurrently and finish sooner
// than the same two time-sliced; another user's daemon holds MPS; shares are checked; a client is
// terminate_client'ed before it is killed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { Engine } from '../engine.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver, type KernelRecord } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { attachScheduler, type AttachedScheduler } from '../scheduler/attach.js';
import type { MpsControl } from './mps-control.js';
import { SimulatedMpsControl } from './simulated-mps-control.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { simulatedBackend } from '../gpu/gpu-backend.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const FAKEGPU = join(fakegpuBuildDir(), 'fakegpu');
const TRAIN = [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '10', '--iterations', '40'];
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-mps-', (rig) => ({ driver, nvml, dir } = rig));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const me = { uid: userInfo().uid, user: userInfo().username };

function rig(name: string, mps?: MpsControl) {
  const engine = new Engine(simulatedBackend(driver, nvml, () => undefined));
  const attached: AttachedScheduler = attachScheduler(engine, {
    gate: null,
    mps: mps ?? new SimulatedMpsControl({ statePath: driver.statePath, runtimeDir: join(dir, name, 'run'), identity: me }),
    stateDir: join(dir, name, 'state'),
    runtimeDir: join(dir, name, 'run'),
    guardian: false,
    terminateGraceMs: 500,
  });
  cleanups.push(() => attached.stop());
  const tick = async (ms = 100) => {
    await sleep(ms);
    engine.sampler.sampleNow();
  };
  const jobs = async (): Promise<JobView[]> => engine.call('jobs.list', { includeFinished: true });
  const finished = async (ids: string[]): Promise<JobView[]> => {
    for (let i = 0; i < 100; i++) {
      await tick();
      const all = (await jobs()).filter((j) => ids.includes(j.id));
      if (all.every((j) => j.state === 'finished' || j.state === 'failed')) return all;
    }
    throw new Error(`jobs ${ids.join(', ')} did not finish: ${JSON.stringify((await jobs()).map((j) => [j.id, j.state]))}`);
  };
  return { engine, attached, tick, jobs, finished };
}

const fakegpuMps = (...args: string[]): string => execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, ...args], { encoding: 'utf8' });

/** Wall time from the first kernel to the last of these pids, and whether their kernels overlapped. */
function shape(records: KernelRecord[], pids: number[]): { wallMs: number; overlapped: boolean; kernels: number } {
  const mine = records.filter((r) => pids.includes(r.pid));
  const wallMs = (Math.max(...mine.map((r) => r.endNs)) - Math.min(...mine.map((r) => r.startNs))) / 1e6;
  const [a, b] = pids.map((pid) => mine.filter((r) => r.pid === pid));
  const overlapped = a.some((x) => b.some((y) => x.startNs < y.endNs && y.startNs < x.endNs));
  return { wallMs, overlapped, kernels: mine.length };
}

test('two MPS jobs at 50 % overlap and finish sooner than the same two time-sliced', async () => {
  const r = rig('speed');
  const run = async (mode: 'shared' | 'mps') => {
    const extra = mode === 'mps' ? { mode, mpsSharePercent: 50 } : { mode };
    const a = await r.engine.call('jobs.submit', { argv: TRAIN, cwd: dir, gpu: 0, memoryQuotaBytes: 2 * 2 ** 30, ...extra });
    const b = await r.engine.call('jobs.submit', { argv: TRAIN, cwd: dir, gpu: 0, memoryQuotaBytes: 2 * 2 ** 30, ...extra });
    const done = await r.finished([a.id, b.id]);
    for (const j of done) assert.equal(j.state, 'finished', `${j.id}: ${JSON.stringify(j.history)}`);
    return shape(await driver.execlog(0), done.map((j) => j.pid!));
  };
  const sliced = await run('shared');
  const mps = await run('mps');
  assert.equal(sliced.kernels, 80);
  assert.equal(mps.kernels, 80);
  assert.equal(sliced.overlapped, false, 'time-sliced kernels never overlap');
  assert.equal(mps.overlapped, true, 'MPS clients run concurrently');
  assert.ok(mps.wallMs < sliced.wallMs * 0.8, `MPS ${mps.wallMs.toFixed(0)} ms vs time-sliced ${sliced.wallMs.toFixed(0)} ms`);
  assert.equal((await r.engine.call('mps.status', {}))[0].state, 'off', 'the daemon the jobs started stopped with the last one');
});

test('an MPS job is an MPS client of its job, with its share and its quota as the pinned limit', async () => {
  const r = rig('client');
  const job = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '512M', 'train', '--kernel-ms', '5', '--duration', '30'], cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 30, memoryQuotaBytes: 2 ** 30 });
  let seen: JobView | undefined;
  for (let i = 0; i < 30 && !(seen && seen.usedMemory); i++) {
    await r.tick(150);
    seen = (await r.jobs()).find((j) => j.id === job.id);
  }
  assert.equal(seen?.state, 'running');
  assert.equal(seen.mode, 'mps');
  assert.equal(seen.mpsSharePercent, 30);
  assert.equal(seen.usedMemory, 512 * 2 ** 20, 'the MPS process is attributed to its job');
  const listed = (await driver.dump()).devices[0].processes.find((p) => p.pid === seen!.pid);
  assert.equal(listed?.type, 'mps', 'NVML lists it as an MPS client');
  const clients = JSON.parse(fakegpuMps('status'))[0].clients as Array<{ pid: number; share: number }>;
  assert.equal(clients.find((c) => c.pid === seen!.pid)?.share, 30);

  await assert.rejects(r.engine.call('jobs.setMode', { job: job.id, mode: 'mps', mpsSharePercent: 60 }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'conflict');
    assert.match(e.message, /the MPS share is fixed when a client starts: terminate and resubmit/);
    return true;
  });
  await r.engine.call('jobs.terminate', { job: job.id });
  const [ended] = await r.finished([job.id]);
  // fakejob ends its profile on SIGTERM (exit 0), or exits 1 when terminate_client failed its next launch first
  assert.match(ended.history.at(-1)!.reason, /terminated by/);
  await r.engine.call('mps.stop', { gpu: 0 });
});

test('terminate_client goes to the MPS server before any signal', async () => {
  const calls: string[] = [];
  const inner = new SimulatedMpsControl({ statePath: driver.statePath, runtimeDir: join(dir, 'order', 'run'), identity: me });
  const recording: MpsControl = {
    kind: 'simulated',
    status: (g) => inner.status(g),
    start: (g) => inner.start(g),
    stop: (g) => inner.stop(g),
    clientEnv: (g) => inner.clientEnv(g),
    sliceStatus: (s) => inner.sliceStatus(s),
    startSlice: (s) => inner.startSlice(s),
    stopSlice: (s) => inner.stopSlice(s),
    sliceClientEnv: (s) => inner.sliceClientEnv(s),
    terminateSliceClient: (s, pid) => inner.terminateSliceClient(s, pid),
    ownServerPids: () => inner.ownServerPids(),
    terminateClient: (gpu, pid) => {
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      calls.push(`terminate_client ${pid} ${alive ? 'alive' : 'gone'}`);
      return inner.terminateClient(gpu, pid);
    },
  };
  const r = rig('order', recording);
  const job = await r.engine.call('jobs.submit', { argv: [FAKEJOB, 'train', '--kernel-ms', '5', '--duration', '30'], cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 50 });
  for (let i = 0; i < 30 && (await r.jobs()).find((j) => j.id === job.id)?.state !== 'running'; i++) await r.tick();
  await sleep(300); // its context exists
  await r.engine.call('jobs.terminate', { job: job.id });
  await r.finished([job.id]);
  assert.equal(calls.length, 1);
  assert.match(calls[0], /^terminate_client \d+ alive$/, 'sent while the client still lived, i.e. before SIGTERM/SIGKILL');
  await r.engine.call('mps.stop', { gpu: 0 });
});

test("another user's MPS daemon holds the box: MPS jobs queue, starting one is refused, the console is told", async () => {
  const r = rig('held');
  fakegpuMps('--device', '0', 'start', '--user', 'alice', '--uid', '4242', '--pipe-dir', '/tmp/nvidia-mps');
  try {
    const [status] = await r.engine.call('mps.status', {});
    assert.equal(status.state, 'held');
    assert.equal(status.heldBy, 'alice');
    assert.match(status.message, /MPS held by user alice/);
    await assert.rejects(r.engine.call('mps.start', { gpu: 0 }), /MPS held by user alice/);
    const job = await r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold', '--duration', '1'], cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 50 });
    await r.tick();
    assert.equal((await r.jobs()).find((j) => j.id === job.id)?.state, 'queued');
    const alerts = await r.engine.call('alerts.list', {});
    assert.ok(alerts.some((a) => a.jobId === job.id && /MPS held by user alice/.test(a.message)), JSON.stringify(alerts.map((a) => a.message)));
    await r.engine.call('jobs.terminate', { job: job.id });
  } finally {
    fakegpuMps('--device', '0', 'stop');
  }
});

test('MPS requests are checked: a share outside 1-100, a missing share, a share without mode mps', async () => {
  const r = rig('refusals');
  const cases: Array<[string, Promise<unknown>, RegExp]> = [
    ['share 0', r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 0 }), /mpsSharePercent: must be at least 1/],
    ['share 101', r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 101 }), /mpsSharePercent: must be at most 100/],
    ['no share', r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], cwd: dir, gpu: 0, mode: 'mps' }), /Mode mps needs an MPS share/],
    ['share without mps', r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], cwd: dir, gpu: 0, mpsSharePercent: 50 }), /An MPS share applies to mode mps \(a GPU\) or mig \(a slice shared through MPS\) only/],
  ];
  for (const [what, call, message] of cases) {
    await assert.rejects(call, (e: Error & { code?: string }) => {
      assert.equal(e.code ?? 'invalid-request', 'invalid-request', what);
      assert.match(e.message, message, `${what}: ${e.message}`);
      return true;
    });
  }
  assert.equal((await r.jobs()).length, 0, 'nothing was submitted');
});
