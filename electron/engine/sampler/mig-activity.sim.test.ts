// SM activity per MIG slice through GPM (nvmlGpmMigSampleGet) on the simulated driver: the addon reads it per
// slice, the sampler shows it per slice and per process where one process runs in a slice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { gpuShareOfSlice, Sampler } from './sampler.js';

let driver: SimulatedDriver;
let nvml: NvmlBinding;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-gpm-', (rig) => ({ driver, nvml } = rig));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Started on the MIG slice with this GPU instance id of GPU 1, killed when the file's tests end. */
async function onSlice(gpuInstanceId: number, args: string[]) {
  const uuid = nvml.describeDevice(1).migDevices.find((m) => m.gpuInstanceId === gpuInstanceId)!.uuid;
  const job = driver.spawnFakejob(args, { CUDA_VISIBLE_DEVICES: uuid });
  cleanups.push(async () => {
    job.kill('SIGKILL');
    await job.exited;
  });
  await job.ready;
  return job;
}

/** Until the driver's execution record shows a kernel of pid that started after `since` (CLOCK_MONOTONIC ns) and ended. */
async function ranKernelSince(pid: number, since: bigint): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const log = await driver.execlog(1);
    if (log.some((k) => k.pid === pid && BigInt(Math.round(k.startNs)) > since && k.endNs > k.startNs)) return;
    await sleep(20);
  }
  throw new Error(`pid ${pid} ran no kernel after ${since}`);
}

test('the addon reads SM activity per MIG slice: none on the first sample, then the busy slice above 0 and the idle ones exactly 0', async () => {
  const trainer = await onSlice(1, ['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '30']);
  const since = process.hrtime.bigint(); // the driver's clock too (CLOCK_MONOTONIC)
  const first = nvml.sampleDevice(1);
  assert.equal(first.migDevices.length, 4);
  for (const slice of first.migDevices) assert.equal(slice.smUtil ?? null, null, `GI ${slice.gpuInstanceId}: a GPM reading needs two samples`);
  await ranKernelSince(trainer.pid, since);
  const second = nvml.sampleDevice(1);
  const sm = Object.fromEntries(second.migDevices.map((m) => [m.gpuInstanceId, m.smUtil]));
  assert.ok((sm[1] ?? 0) > 0, `GI 1 computes: ${JSON.stringify(sm)}`);
  assert.ok((sm[1] ?? 0) <= 100);
  assert.deepEqual([sm[2], sm[3], sm[4]], [0, 0, 0], 'no kernel ran in the other slices');
  assert.equal(second.migDevices.find((m) => m.gpuInstanceId === 1)?.smOccupancy, sm[1], 'simulated kernels fill their slice: occupancy = SM busy');
  assert.deepEqual(nvml.sampleDevice(0).migDevices, [], 'GPU 0 is not in MIG mode');
});

test('a snapshot shows SM % per slice, and a MIG process alone in its slice gets it; two in one busy slice stay unknown', async () => {
  const sampler = new Sampler(nvml, { simulated: true });
  const alone = await onSlice(2, ['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '30']);
  const pairA = await onSlice(3, ['--mem', '512M', 'train', '--kernel-ms', '5', '--duration', '30']);
  const pairB = await onSlice(3, ['--mem', '512M', 'hold', '--duration', '30']);
  const idle = await onSlice(4, ['--mem', '256M', 'hold', '--duration', '30']);
  const since = process.hrtime.bigint();
  sampler.tick();
  await ranKernelSince(alone.pid, since);
  await ranKernelSince(pairA.pid, since);
  const snap = sampler.tick();
  const slices = Object.fromEntries(snap.gpus[1].migSlices.map((s) => [s.gpuInstanceId, s.smPercent]));
  const row = (pid: number) => snap.processes.find((p) => p.pid === pid)!;
  assert.ok((slices[2] ?? 0) > 0 && (slices[3] ?? 0) > 0, JSON.stringify(slices));
  assert.equal(slices[4], 0);
  const slice2 = snap.gpus[1].migSlices.find((s) => s.gpuInstanceId === 2)!;
  assert.equal(row(alone.pid).smPercent, gpuShareOfSlice(slices[2]!, slice2.smCount!, snap.gpus[1].smCount!), 'alone in its slice: the slice\'s SM %, as a share of the GPU');
  assert.ok(row(alone.pid).smPercent! < slices[2]!, `a 2g slice is ${slice2.smCount} of ${snap.gpus[1].smCount} SMs`);
  assert.equal(row(pairA.pid).smPercent, null, 'GPM cannot split a slice between processes');
  assert.equal(row(pairB.pid).smPercent, null);
  assert.equal(row(idle.pid).smPercent, 0, 'an idle slice: every process in it is idle');
  assert.equal(row(alone.pid).memPercent, null);
});

test('a driver whose GPM answers NOT_SUPPORTED (as before Hopper): slices without SM %, MIG processes\' SM % unknown, no error', async () => {
  const sampler = new Sampler(nvml, { simulated: true });
  await onSlice(2, ['--mem', '512M', 'train', '--kernel-ms', '5', '--duration', '30']);
  await driver.fault(['--call', 'nvmlGpmMigSampleGet', '--code', '3', '--device', '1']);
  try {
    sampler.tick();
    await sleep(30);
    const snap = sampler.tick();
    assert.deepEqual(snap.gpus[1].migSlices.map((s) => s.smPercent), [null, null, null, null]);
    assert.ok(snap.processes.filter((p) => p.gpuIndex === 1).every((p) => p.smPercent === null));
    assert.deepEqual(snap.gpus[1].errors, [], 'NOT_SUPPORTED is not an error');
  } finally {
    await driver.fault(['--call', 'nvmlGpmMigSampleGet', '--code', '0', '--device', '1']);
  }
});
