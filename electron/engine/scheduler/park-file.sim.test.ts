// The park file counts every copy, memset and prefetch a parked program may make first (2D/3D, peer,
// batched and array copies and 2D memsets too): synchronous or asynchronous, on the legacy or the per-thread default stream, found by dlsym or through
// cuGetProcAddress (with PER_THREAD_DEFAULT_STREAM for the _ptds/_ptsz variants). A variant the
// preload library does not hook would leave a parked job waiting in it for ever.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { until } from '../../testing/until.js';
import { DriverCheckpointer } from '../holds/driver-checkpointer.js';
import { preloadLibraryPath } from '../gate/launch-gate.js';
import { ensurePreloadBuilt, runProbe } from '../gate/testing/launch-gate-sim.js';
import { SimulatedDriver, simulatedDriverBuilt } from '../gpu/simulated-driver.js';
import { ParkRequests } from './park-requests.js';

const MiB = 1024 * 1024;
const COPIES = [
  'cuMemcpyHtoD_v2', 'cuMemcpyHtoD_v2_ptds', 'cuMemcpyDtoH_v2', 'cuMemcpyDtoH_v2_ptds', 'cuMemcpyDtoD_v2', 'cuMemcpyDtoD_v2_ptds',
  'cuMemcpy', 'cuMemcpy_ptds', 'cuMemcpyAsync', 'cuMemcpyAsync_ptsz',
  'cuMemcpyHtoDAsync_v2', 'cuMemcpyHtoDAsync_v2_ptsz', 'cuMemcpyDtoHAsync_v2', 'cuMemcpyDtoHAsync_v2_ptsz',
  'cuMemcpyDtoDAsync_v2', 'cuMemcpyDtoDAsync_v2_ptsz',
  'cuMemsetD8_v2', 'cuMemsetD8_v2_ptds', 'cuMemsetD32_v2', 'cuMemsetD32_v2_ptds',
  'cuMemsetD8Async', 'cuMemsetD8Async_ptsz', 'cuMemsetD32Async', 'cuMemsetD32Async_ptsz',
  'cuMemcpy2D_v2', 'cuMemcpy2D_v2_ptds', 'cuMemcpy2DUnaligned_v2', 'cuMemcpy2DUnaligned_v2_ptds',
  'cuMemcpy2DAsync_v2', 'cuMemcpy2DAsync_v2_ptsz', 'cuMemcpy3D_v2', 'cuMemcpy3D_v2_ptds', 'cuMemcpy3DAsync_v2', 'cuMemcpy3DAsync_v2_ptsz',
  'cuMemcpyPeer', 'cuMemcpyPeer_ptds', 'cuMemcpyPeerAsync', 'cuMemcpyPeerAsync_ptsz',
  'cuMemcpy3DPeer', 'cuMemcpy3DPeer_ptds', 'cuMemcpy3DPeerAsync', 'cuMemcpy3DPeerAsync_ptsz',
  'cuMemPrefetchAsync', 'cuMemPrefetchAsync_ptsz', 'cuMemPrefetchAsync_v2', 'cuMemPrefetchAsync_v2_ptsz',
  'cuMemsetD16_v2', 'cuMemsetD16_v2_ptds', 'cuMemsetD16Async', 'cuMemsetD16Async_ptsz',
  'cuMemsetD2D8_v2', 'cuMemsetD2D8_v2_ptds', 'cuMemsetD2D8Async', 'cuMemsetD2D8Async_ptsz',
  'cuMemsetD2D16_v2', 'cuMemsetD2D16_v2_ptds', 'cuMemsetD2D16Async', 'cuMemsetD2D16Async_ptsz',
  'cuMemsetD2D32_v2', 'cuMemsetD2D32_v2_ptds', 'cuMemsetD2D32Async', 'cuMemsetD2D32Async_ptsz',
  'cuMemcpyBatchAsync', 'cuMemcpyBatchAsync_ptsz', 'cuMemcpyBatchAsync_v2', 'cuMemcpyBatchAsync_v2_ptsz',
  'cuMemcpy3DBatchAsync', 'cuMemcpy3DBatchAsync_ptsz', 'cuMemcpy3DBatchAsync_v2', 'cuMemcpy3DBatchAsync_v2_ptsz',
  'cuMemcpyDtoA_v2', 'cuMemcpyDtoA_v2_ptds', 'cuMemcpyAtoD_v2', 'cuMemcpyAtoD_v2_ptds',
  'cuMemcpyHtoA_v2', 'cuMemcpyHtoA_v2_ptds', 'cuMemcpyAtoH_v2', 'cuMemcpyAtoH_v2_ptds',
  'cuMemcpyAtoA_v2', 'cuMemcpyAtoA_v2_ptds', 'cuMemcpyHtoAAsync_v2', 'cuMemcpyHtoAAsync_v2_ptsz',
  'cuMemcpyAtoHAsync_v2', 'cuMemcpyAtoHAsync_v2_ptsz',
];
// The simulated driver has no 3D batches and keeps no contents in CUDA arrays: these answer NOT_SUPPORTED
// (after waiting while the process is locked, as every copy does), through the hook all the same.
const NOT_SUPPORTED = 801;
const unsupported = (name: string): boolean => name.startsWith('cuMemcpy3DBatchAsync') || /^cuMemcpy(DtoA|AtoD|HtoA|AtoH|AtoA)/.test(name);

const ready = simulatedDriverBuilt() && ensurePreloadBuilt();
const skip = ready ? false : 'the simulated driver or the preload library is not built (npm run build:native; make -C native/preload)';
let driver: SimulatedDriver;
let dir: string;
let requests: ParkRequests;
before(async () => {
  if (!ready) return;
  driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath; // the checkpoint calls of this process reach the same box
  dir = mkdtempSync(join(tmpdir(), 'gpushare-parkfile-'));
  requests = new ParkRequests(join(dir, 'park'), false);
});
after(async () => {
  if (!ready) return;
  await driver.dispose();
  rmSync(dir, { recursive: true, force: true });
});

for (const [i, resolve] of ['symbol', 'procaddress'].entries()) {
  test(`--resolve ${resolve}: each of the ${COPIES.length} copy, memset and prefetch entry points is the preload's hook, gets the driver's answer (NOT_SUPPORTED for 3D batches and array copies here), and counts once in the park file`, { skip }, async () => {
    const job = `j${i + 1}`;
    const env = { LD_PRELOAD: preloadLibraryPath(), GPUSHARE_PARK_FILE: requests.create(job, null) };
    const probe = runProbe(driver, ['--resolve', resolve, `alloc:${MiB}`, 'array:4096', 'array:4096', 'wait', 'copies:0', 'wait'], env);
    assert.equal((await probe.next()).op, 'ready');
    assert.equal((await probe.next()).code, 0, 'the allocation the copies use');
    assert.equal((await probe.next()).code, 0, 'the array the array copies use');
    assert.equal((await probe.next()).code, 0, 'and the other one (cuMemcpyAtoA)');
    const before = requests.read(job)!; // the probe waits for a line on stdin now
    probe.resume();
    assert.equal((await probe.next()).op, 'wait');
    const copies = [];
    let step = await probe.next();
    for (; step.op === 'copy'; step = await probe.next()) copies.push(step);
    assert.equal(step.op, 'copies');
    assert.deepEqual(copies.map((c) => c.name), COPIES, 'every variant, in order');
    for (const c of copies) {
      const want = unsupported(String(c.name)) ? NOT_SUPPORTED : 0;
      assert.deepEqual([c.name, c.code, c.from], [c.name, want, 'libgpushare-preload.so'], `${String(c.name)} through the hook`);
    }
    const afterCopies = requests.read(job)!; // waiting again: every copy has returned
    assert.equal(afterCopies.calls - before.calls, COPIES.length, 'one park-file call per copy, memset or prefetch');
    assert.equal(afterCopies.inCall, 0, 'no thread left inside a call');
    assert.ok(afterCopies.lastCallNs > before.lastCallNs, 'the last call time moved on');
    probe.resume();
    assert.equal((await probe.next()).op, 'wait');
    assert.equal(await probe.exited, 0);
    requests.remove(job);
  });
}

test('a checkpointed process whose next call is a copy into a CUDA array (cuMemcpyDtoA_v2) shows in the park file while it waits, and gets the driver\'s answer only after the restore', { skip }, async () => {
  const job = 'j3';
  const env = { LD_PRELOAD: preloadLibraryPath(), GPUSHARE_PARK_FILE: requests.create(job, null) };
  const probe = runProbe(driver, ['--resolve', 'symbol', `alloc:${MiB}`, 'array:4096', 'wait', 'dtoa:0', 'wait'], env);
  assert.equal((await probe.next()).op, 'ready');
  assert.equal((await probe.next()).code, 0, 'the allocation the copy reads');
  assert.equal((await probe.next()).code, 0, 'the array it writes');
  const checkpointer = DriverCheckpointer.open({ libraryPath: driver.cudaLibraryPath });
  await checkpointer.lock(probe.pid);
  await checkpointer.checkpoint(probe.pid);
  assert.equal(checkpointer.state(probe.pid), 'checkpointed', 'parked: its memory is in host memory');
  const before = requests.read(job)!;
  probe.resume(); // its next CUDA call is the array copy
  assert.equal((await probe.next()).op, 'wait');
  // the engine restores a parked job when its park file shows a thread inside a call: wait for that to show
  const waiting = await until('a thread inside a call in the park file', () => {
    const now = requests.read(job)!;
    return now.inCall > 0 ? now : undefined;
  }, { timeoutMs: 5_000, intervalMs: 10 });
  assert.equal(waiting.inCall, 1, 'the parked copy shows in the park file (without its hook it waits in the driver unseen)');
  assert.equal(waiting.calls - before.calls, 1);
  await new Promise((r) => setTimeout(r, 100)); // room for a wrongly early answer to arrive
  assert.equal(probe.steps.at(-1)?.op, 'wait', 'and it has not returned: it waits for the restore');
  await checkpointer.restore(probe.pid);
  await checkpointer.unlock(probe.pid);
  const copy = await probe.next();
  assert.deepEqual([copy.op, copy.code, copy.from], ['dtoa', NOT_SUPPORTED, 'libgpushare-preload.so'], 'answered after the restore: arrays hold no contents here');
  assert.equal(requests.read(job)!.inCall, 0, 'no thread left inside a call');
  probe.resume();
  assert.equal((await probe.next()).op, 'wait');
  assert.equal(await probe.exited, 0);
  requests.remove(job);
});
