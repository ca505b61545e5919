// The sampler through the real addon on the simulated driver.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { openNvml } from '../gpu/nvml-addon.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver } from '../gpu/simulated-driver.js';
import { Sampler } from './sampler.js';

const GiB = 1024 ** 3;
let driver: SimulatedDriver;
let nvml: NvmlBinding;

before(async () => {
  driver = await SimulatedDriver.create({ scenario: 'h100x8' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath;
  nvml = openNvml(driver.nvmlLibraryPath);
});

after(async () => {
  nvml?.close();
  await driver?.dispose();
});

test('a fakejob and its allocation show on the next tick, with its owner and command line', async () => {
  const sampler = new Sampler(nvml, { simulated: true, scenario: driver.scenario });
  const before = sampler.tick();
  const job = driver.spawnFakejob(['--device', '3', '--mem', '1536M', 'hold']);
  const ready = await job.ready;
  assert.equal(before.processes.some((p) => p.pid === job.pid), false);
  const snap = sampler.tick();
  const row = snap.processes.find((p) => p.pid === job.pid);
  assert.ok(row, `pid ${job.pid} listed`);
  assert.equal(row.gpuIndex, 3);
  assert.equal(row.usedMemory, ready.allocated);
  assert.equal(row.usedMemory, 1.5 * GiB);
  assert.equal(row.command, 'fakejob');
  assert.equal(row.uid, process.getuid!());
  assert.deepEqual(row.argv.slice(1), ['--device', '3', '--mem', '1536M', 'hold']);
  assert.equal(snap.gpus[3].uuid, (await driver.dump()).devices[3].uuid);
  job.kill('SIGKILL');
  await job.exited;
});

test('a process that exits between the driver list and /proc does not break the tick', async () => {
  const sampler = new Sampler(nvml, { simulated: true });
  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
  await driver.attach({ device: 0, pid: sleeper.pid!, mem: GiB });
  sleeper.kill('SIGKILL');
  await new Promise((r) => sleeper.once('exit', r));
  // the driver may still list the pid for up to its reap interval; /proc no longer has it
  const snap = sampler.tick();
  const row = snap.processes.find((p) => p.pid === sleeper.pid);
  if (row) assert.equal(row.user, null);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(sampler.tick().processes.some((p) => p.pid === sleeper.pid), false, 'gone within a second');
});

test('a lost GPU is marked lost while the others keep updating', async () => {
  const sampler = new Sampler(nvml, { simulated: true });
  await driver.fault(['--device', '0', '--lost', 'on']);
  try {
    const job = driver.spawnFakejob(['--device', '1', '--mem', '256M', 'hold']);
    await job.ready;
    const snap = sampler.tick();
    assert.equal(snap.gpus[0].lost, true);
    assert.match(snap.gpus[0].errors.join(' '), /GPU_IS_LOST/);
    assert.equal(snap.gpus.filter((g) => g.lost).length, 1);
    assert.equal(snap.processes.find((p) => p.pid === job.pid)?.gpuIndex, 1);
    job.kill('SIGKILL');
    await job.exited;
  } finally {
    await driver.fault(['--device', '0', '--lost', 'off']);
  }
  assert.equal(sampler.tick().gpus[0].lost, false);
});
