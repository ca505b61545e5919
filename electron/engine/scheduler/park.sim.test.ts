// Park and unpark through the engine's API on the simulated driver: the job's GPU memory
// leaves the GPU and comes back on the same GPU; every refusal leaves everything as it was.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { Caller } from '../api/dispatcher.js';
import { DriverCheckpointer } from '../holds/driver-checkpointer.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver, type FakejobHandle } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import type { AttachSchedulerOptions } from './attach.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { fakejobFor, useSimulatedRig } from '../testing/simulated-rig.js';

const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-park-', (rig) => ({ driver, nvml, dir } = rig));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rig(name: string, options: Partial<AttachSchedulerOptions> = {}) {
  const r = schedulerRig({ driver, nvml, dir }, name, options, cleanups);
  return { ...r, gpuUsed: () => r.engine.sampler.tick().gpus[0].memoryUsed! };
}

const fakejob = (t: TestContext, args: string[]): FakejobHandle => fakejobFor(t, driver, args);

const kernelsOf = async (pid: number) => (await driver.execlog(0)).filter((k) => k.pid === pid);

test('parking a process gpushare did not start frees its GPU memory; unparking brings it back on the same GPU', async (t) => {
  const r = rig('unmanaged');
  const train = fakejob(t, ['--device', '0', '--mem', '2G', 'train', '--kernel-ms', '5', '--duration', '60']);
  await train.ready;
  const id = `p${train.pid}`;
  await r.until('the process computing', async () => ((await r.job(id))?.smPercent ?? 0) > 0);
  const usedBefore = r.gpuUsed();

  const parked = await r.engine.call('jobs.park', { job: id });
  assert.equal(parked.state, 'parked');
  assert.equal(parked.usedMemory, 0);
  assert.match(parked.history.at(-1)!.reason, /^parked by \S+: 2G of GPU 0 memory moved to host memory$/);
  assert.equal(r.gpuUsed(), usedBefore - 2 * GiB, 'the GPU has its memory back');
  const alert = (await r.engine.call('alerts.list', {})).find((a) => a.kind === 'parked');
  assert.equal(alert?.jobId, id);
  assert.match(alert!.message, /is parked: its 2G on GPU 0 moved to host memory/);

  await r.tick();
  await r.tick();
  const still = await r.job(id);
  assert.equal(still?.state, 'parked', 'off the driver\'s process list, it is still a job');
  assert.equal(still?.usedMemory, 0);
  const since = process.hrtime.bigint();
  await sleep(300);
  assert.equal((await kernelsOf(train.pid)).filter((k) => BigInt(k.startNs) > since).length, 0, 'no kernels while parked');

  const unparked = await r.engine.call('jobs.unpark', { job: id });
  assert.equal(unparked.state, 'running');
  assert.equal(unparked.gpu, 0);
  assert.match(unparked.history.at(-1)!.reason, /^unparked by \S+ on GPU 0$/);
  assert.deepEqual(unparked.history.map((h) => h.state), ['running', 'parking', 'parked', 'unparking', 'running']);
  const back = await r.until('its memory and SM time back', async () => {
    const j = await r.job(id);
    return j && j.usedMemory === 2 * GiB && (j.smPercent ?? 0) > 0 ? j : undefined;
  });
  assert.equal(back.state, 'running');
  assert.equal(r.gpuUsed(), usedBefore);
});

test('a managed job parks and unparks; unparking waits for room and refusals change nothing', async (t) => {
  const r = rig('managed');
  const submitted = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '24G', 'train', '--kernel-ms', '5', '--duration', '60'], cwd: dir, gpu: 0 });
  const started = await r.until('the job running with its memory', async () => {
    const j = await r.job(submitted.id);
    return j?.state === 'running' && j.usedMemory === 24 * GiB ? j : undefined;
  });
  t.after(() => {
    if (started.pid) process.kill(started.pid, 'SIGKILL');
  });
  await r.engine.call('jobs.park', { job: submitted.id });

  // another process takes the freed memory: the parked job cannot come back yet
  const filler = fakejob(t, ['--device', '0', '--mem', '20G', 'hold', '--duration', '60']);
  await filler.ready;
  await r.tick();
  const stranger: Caller = { uid: 4242, gid: 4242, groups: [], user: 'alice', pid: null, admin: false, via: 'socket' };
  // the driver refuses the restore: it stays parked, and its history says it was tried
  await assert.rejects(r.engine.call('jobs.unpark', { job: submitted.id }), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'conflict');
    assert.match(error.message, /^Cannot unpark j1: not enough free memory to unpark on GPU 0 \(it needs 24G, [\d.]+G is free\) — try later\. It stays parked\.$/);
    return true;
  });
  const refused = (await r.job(submitted.id))!;
  assert.equal(refused.state, 'parked');
  assert.deepEqual(refused.history.slice(-2).map((h) => h.state), ['unparking', 'parked']);
  const before = JSON.stringify(await r.engine.call('jobs.list', { includeFinished: true }));
  const refusals: Array<[string, () => Promise<unknown>, string, RegExp]> = [
    ['already parked', () => r.engine.call('jobs.park', { job: submitted.id }), 'conflict', /j1 is already parked/],
    ['resume is not unpark', () => r.engine.call('jobs.resume', { job: submitted.id }), 'conflict', /j1 is parked, not suspended; unpark it/],
    ['suspend while parked', () => r.engine.call('jobs.suspend', { job: submitted.id }), 'conflict', /j1 is parked; unpark it first/],
    ["another user's job", () => r.engine.call('jobs.unpark', { job: submitted.id }, stranger), 'forbidden', /Cannot unpark j1: it belongs to/],
    ['a job that does not exist', () => r.engine.call('jobs.park', { job: 'j99' }), 'not-found', /No job j99/],
  ];
  for (const [what, call, code, message] of refusals) {
    await assert.rejects(call(), (error: Error & { code?: string }) => {
      assert.equal(error.code, code, `${what}: ${error.message}`);
      assert.match(error.message, message, what);
      return true;
    });
  }
  assert.equal(JSON.stringify(await r.engine.call('jobs.list', { includeFinished: true })), before, 'the jobs are as they were');
  assert.equal((await driver.dump()).devices[0].processes.find((p) => p.pid === started.pid)?.checkpointState, 'checkpointed');

  filler.kill('SIGKILL');
  await filler.exited;
  const unparked = await r.engine.call('jobs.unpark', { job: submitted.id });
  assert.equal(unparked.state, 'running');
  await r.until('its memory back', async () => (await r.job(submitted.id))?.usedMemory === 24 * GiB);
  const after = process.hrtime.bigint();
  await r.until('kernels again', async () => (await kernelsOf(started.pid!)).some((k) => BigInt(k.startNs) > after));
});

test('a suspended job is not parked; a driver without the calls refuses with the reason', async (t) => {
  const r = rig('refusals', { checkpointer: DriverCheckpointer.open({ libraryPath: driver.nvmlLibraryPath }) });
  const train = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  await train.ready;
  const id = `p${train.pid}`;
  await r.until('listed', async () => r.job(id));
  const before = JSON.stringify(await r.engine.call('jobs.list', { includeFinished: true }));
  await assert.rejects(r.engine.call('jobs.park', { job: id }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'unsupported');
    assert.match(e.message, /^Cannot park p\d+: not supported by this driver: .*libnvidia-ml\.so\.1 does not export cuCheckpointProcessLock \(needs driver 570 or newer\)$/);
    return true;
  });
  assert.equal(JSON.stringify(await r.engine.call('jobs.list', { includeFinished: true })), before);

  const ok = rig('suspended');
  await ok.until('listed', async () => ok.job(id));
  await ok.engine.call('jobs.suspend', { job: id });
  await assert.rejects(ok.engine.call('jobs.park', { job: id }), /Cannot park p\d+: it is suspended; resume it first/);
  assert.equal((await ok.job(id))?.state, 'suspended');
  await ok.engine.call('jobs.resume', { job: id });
});
