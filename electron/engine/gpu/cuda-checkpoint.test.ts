// The checkpoint calls of the addon against the simulated driver's libcuda: a parked
// process's memory leaves the GPU (dump and NVML), its kernels wait, and it comes back.
import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CudaCheckpointError, openCudaCheckpoint, type CudaCheckpointBinding } from './cuda-checkpoint.js';
import { openNvml } from './nvml-addon.js';
import type { NvmlBinding } from './nvml-types.js';
import { SimulatedDriver, type FakejobHandle } from './simulated-driver.js';
import { fakejobFor } from '../testing/simulated-rig.js';

const GiB = 1024 ** 3;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let cuda: CudaCheckpointBinding;

before(async () => {
  driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath; // read by both fakes at init
  nvml = openNvml(driver.nvmlLibraryPath);
  cuda = openCudaCheckpoint(driver.cudaLibraryPath);
});

after(async () => {
  nvml?.close();
  await driver?.dispose();
});

const fakejob = (t: TestContext, args: string[]): FakejobHandle => fakejobFor(t, driver, args);

const dumpProcess = async (pid: number) => (await driver.dump()).devices[0].processes.find((p) => p.pid === pid);
const rejectsWith = (call: Promise<unknown> | (() => unknown), codeName: string) =>
  assert.rejects(typeof call === 'function' ? async () => call() : call, (e: unknown) => {
    assert.ok(e instanceof CudaCheckpointError, String(e));
    assert.equal(e.codeName, codeName, e.message);
    return true;
  });

test('the simulated driver has the calls', () => {
  assert.equal(cuda.supported(), null);
});

test('lock → checkpoint frees the GPU memory; restore → unlock brings it back', async (t) => {
  const job = fakejob(t, ['--device', '0', '--mem', '2G', 'train', '--kernel-ms', '5', '--duration', '60']);
  await job.ready;
  const before = (await driver.dump()).devices[0].memoryUsed;
  assert.equal(cuda.state(job.pid), 'running');
  assert.ok((cuda.restoreThreadId(job.pid) ?? 0) > 0);

  await cuda.lock(job.pid, 5000);
  assert.equal(cuda.state(job.pid), 'locked');
  assert.equal((await dumpProcess(job.pid))?.usedMemory, 2 * GiB, 'a lock alone keeps the memory on the GPU');
  await rejectsWith(cuda.lock(job.pid, 1000), 'CUDA_ERROR_ILLEGAL_STATE');

  await cuda.checkpoint(job.pid);
  assert.equal(cuda.state(job.pid), 'checkpointed');
  const parked = await dumpProcess(job.pid);
  assert.deepEqual([parked?.usedMemory, parked?.checkpointState, parked?.parkedMemory], [0, 'checkpointed', 2 * GiB]);
  assert.equal((await driver.dump()).devices[0].memoryUsed, before - 2 * GiB, 'dump: the GPU is freed');
  const sample = nvml.sampleDevice(0);
  assert.ok(!sample.processes.some((p) => p.pid === job.pid), 'NVML no longer lists it (device handles released)');
  assert.equal(sample.memory!.used, before - 2 * GiB - sample.memory!.reserved!, 'NVML: the GPU is freed');
  await rejectsWith(cuda.unlock(job.pid), 'CUDA_ERROR_ILLEGAL_STATE');
  await rejectsWith(cuda.checkpoint(job.pid), 'CUDA_ERROR_ILLEGAL_STATE');

  await cuda.restore(job.pid);
  assert.equal(cuda.state(job.pid), 'locked', 'restore leaves it locked');
  const back = await dumpProcess(job.pid);
  assert.deepEqual([back?.usedMemory, back?.parkedMemory], [2 * GiB, 0]);
  assert.ok(nvml.sampleDevice(0).processes.some((p) => p.pid === job.pid && p.usedMemory === 2 * GiB), 'NVML lists it again');
  await cuda.unlock(job.pid);
  assert.equal(cuda.state(job.pid), 'running');
});

test('a parked process starts no kernel; it resumes after unlock', async (t) => {
  const job = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '10', '--duration', '60']);
  await job.ready;
  await sleep(100);
  await cuda.lock(job.pid, 5000);
  const lockedAt = process.hrtime.bigint(); // CLOCK_MONOTONIC, as the execution records
  await cuda.checkpoint(job.pid);
  await sleep(400);
  await cuda.restore(job.pid);
  const unlockAt = process.hrtime.bigint();
  await cuda.unlock(job.pid);
  await sleep(300);
  const mine = (await driver.execlog(0)).filter((r) => r.pid === job.pid);
  const during = mine.filter((r) => BigInt(r.endNs) > lockedAt && BigInt(r.startNs) < unlockAt);
  assert.deepEqual(during, [], 'no kernel ran while it was locked or parked');
  assert.ok(mine.some((r) => BigInt(r.endNs) <= lockedAt), 'it ran before');
  assert.ok(mine.filter((r) => BigInt(r.startNs) >= unlockAt).length >= 5, 'and runs again after unlock');
});

test('a lock that cannot finish in time leaves the process running', async (t) => {
  const job = fakejob(t, ['--device', '0', 'train', '--kernel-ms', '3000', '--iterations', '2']);
  await job.ready;
  await sleep(200); // its first 3 s kernel is in flight
  await rejectsWith(cuda.lock(job.pid, 100), 'CUDA_ERROR_NOT_READY');
  assert.equal(cuda.state(job.pid), 'running');
});

test('restore without enough free memory fails with OUT_OF_MEMORY and stays checkpointed', async (t) => {
  const parked = fakejob(t, ['--device', '0', '--mem', '30G', 'hold', '--duration', '60']);
  await parked.ready;
  await cuda.lock(parked.pid, 5000);
  await cuda.checkpoint(parked.pid);
  const filler = fakejob(t, ['--device', '0', '--mem', '20G', 'hold', '--duration', '60']);
  await filler.ready; // fits only because the parked job's 30G left the GPU

  await rejectsWith(cuda.restore(parked.pid), 'CUDA_ERROR_OUT_OF_MEMORY');
  assert.equal(cuda.state(parked.pid), 'checkpointed');
  assert.equal((await dumpProcess(parked.pid))?.parkedMemory, 30 * GiB, 'nothing changed');

  filler.kill('SIGKILL');
  await filler.exited;
  await cuda.restore(parked.pid); // reaps the dead filler first
  await cuda.unlock(parked.pid);
  assert.equal((await dumpProcess(parked.pid))?.usedMemory, 30 * GiB);
});

test('a pid that is not a CUDA process of this driver is INVALID_VALUE', async () => {
  await rejectsWith(() => cuda.state(process.pid), 'CUDA_ERROR_INVALID_VALUE');
  await rejectsWith(cuda.lock(process.pid, 100), 'CUDA_ERROR_INVALID_VALUE');
  await rejectsWith(cuda.restore(process.pid), 'CUDA_ERROR_INVALID_VALUE');
});

test('a library without the calls is "not supported by this driver", never a crash', async () => {
  const saved = process.env.GPUSHARE_CUDA_LIB;
  process.env.GPUSHARE_CUDA_LIB = driver.nvmlLibraryPath;
  try {
    const old = openCudaCheckpoint();
    assert.match(old.supported() ?? '', /^not supported by this driver: .*libnvidia-ml\.so\.1 does not export cuCheckpointProcessLock \(needs driver 570 or newer\)$/);
    await assert.rejects(old.lock(4242, 100), (e: unknown) => e instanceof CudaCheckpointError && e.kind === 'unsupported' && /not supported by this driver/.test(e.message));
    assert.match(openCudaCheckpoint('/nonexistent/libcuda.so.1').supported() ?? '', /^not supported by this driver: could not load \/nonexistent\/libcuda\.so\.1/);
  } finally {
    if (saved === undefined) delete process.env.GPUSHARE_CUDA_LIB;
    else process.env.GPUSHARE_CUDA_LIB = saved;
    cuda = openCudaCheckpoint(driver.cudaLibraryPath); // back to the fake for anything after
  }
  assert.equal(cuda.supported(), null);
});
