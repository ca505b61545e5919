// Parking an enrolled job of several processes (a script and its workers: one process group) moves every
// process's GPU memory to host memory and back; a failure part-way leaves the job as it was, with the reason.
// Over the simulated driver: asserts on job states and the driver's own per-process checkpoint states.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { ensurePreloadBuilt, preloadProbePath } from '../gate/testing/launch-gate-sim.js';
import { preloadLibraryPath } from '../gate/launch-gate.js';
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import { DriverCheckpointer } from '../holds/driver-checkpointer.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { schedulerRig, socketSchedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { shellLine } from './shell-line.js';

const GiB = 1024 ** 3;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-enrol-park-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

const engineWithSocket = (name: string, checkpointer: ProcessCheckpointer) => socketSchedulerRig({ driver, nvml, dir }, name, { checkpointer }, cleanups);

/** A script from a plain shell: a first process of 1 GiB, then (one process group) a worker of 2 GiB. */
function twoProcessScript(t: TestContext, socketPath: string): { shell: ChildProcess; ready: Promise<number[]> } {
  const env = { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000' };
  const probe = preloadProbePath();
  const script = `${shellLine('bash', preloadLibraryPath())}\n"${probe}" alloc:${GiB} sleep:60000000 &\nread go\n"${probe}" alloc:${2 * GiB} sleep:60000000 &\nwait`;
  const shell = spawn('bash', ['-c', script], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => {
    try {
      process.kill(-shell.pid!, 'SIGKILL'); // its GPU memory is the next test's
    } catch {
      // gone
    }
  });
  const pids: number[] = [];
  const ready = new Promise<number[]>((resolve) => {
    createInterface({ input: shell.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const step = JSON.parse(line) as { op: string; pid?: number; code?: number };
      if (step.op === 'ready') pids.push(step.pid!);
      if (step.op === 'alloc' && pids.length === 1) shell.stdin!.write('go\n'); // the worker after the first allocated
      if (step.op === 'alloc' && pids.length === 2) resolve(pids);
    });
  });
  return { shell, ready };
}

async function checkpointStates(pids: number[]): Promise<string[]> {
  const state = await driver.dump();
  return pids.map((pid) => state.devices.flatMap((d) => d.processes).find((p) => p.pid === pid)?.checkpointState ?? 'gone');
}

async function enrolledJob(r: ReturnType<typeof schedulerRig>, pids: number[]): Promise<JobView> {
  return r.until('both processes are one enrolled job using 3 GiB', async () => {
    const job = (await r.engine.call('jobs.list', {})).find((j) => j.enrolled && j.pid === pids[0]);
    return job && job.usedMemory === 3 * GiB ? job : undefined;
  });
}

test('parking an enrolled job of two processes checkpoints both, and unparking restores both', { skip }, async (t) => {
  const { r, socketPath } = await engineWithSocket('both', DriverCheckpointer.open({ libraryPath: driver.cudaLibraryPath }));
  const pids = await twoProcessScript(t, socketPath).ready;
  const job = await enrolledJob(r, pids);
  const parked = await r.engine.call('jobs.park', { job: job.id });
  assert.equal(parked.state, 'parked');
  assert.match(parked.history.at(-1)!.reason, /3G of GPU 0 memory moved to host memory/);
  assert.deepEqual(await checkpointStates(pids), ['checkpointed', 'checkpointed'], 'the worker\'s memory left the GPU too');
  const unparked = await r.engine.call('jobs.unpark', { job: job.id });
  assert.equal(unparked.state, 'running');
  assert.deepEqual(await checkpointStates(pids), ['running', 'running']);
  await r.until('its 3 GiB are back on GPU 0', async () => ((await r.job(job.id))?.usedMemory === 3 * GiB ? true : undefined));
});

test('an unpark that fails part-way (no room for the worker) leaves both processes parked, with the reason', { skip }, async (t) => {
  const { r, socketPath } = await engineWithSocket('no-room', DriverCheckpointer.open({ libraryPath: driver.cudaLibraryPath }));
  const pids = await twoProcessScript(t, socketPath).ready;
  const job = await enrolledJob(r, pids);
  await r.engine.call('jobs.park', { job: job.id });
  const free = r.engine.sampler.sampleNow().gpus[0].memoryFree!;
  const filler = driver.spawnFakejob(['--device', '0', '--mem', String(free - 1.5 * GiB), 'hold', '--duration', '60']); // room for the 1 GiB process, not the 2 GiB one
  t.after(() => filler.kill('SIGKILL'));
  await filler.ready;
  await assert.rejects(r.engine.call('jobs.unpark', { job: job.id }), /not enough free memory to unpark on GPU 0/);
  assert.deepEqual(await checkpointStates(pids), ['checkpointed', 'checkpointed'], 'the first process, restored before the worker failed, went back to host memory');
  assert.equal((await r.job(job.id))?.state, 'parked');
  filler.kill('SIGKILL');
  await filler.exited;
  assert.equal((await r.engine.call('jobs.unpark', { job: job.id })).state, 'running', 'with room again, both come back');
  assert.deepEqual(await checkpointStates(pids), ['running', 'running']);
});

test('a park that fails part-way (the driver refuses the worker\'s checkpoint) leaves both running on the GPU, with the reason', { skip }, async (t) => {
  const real = DriverCheckpointer.open({ libraryPath: driver.cudaLibraryPath });
  let worker = -1;
  const refusing: ProcessCheckpointer = {
    supported: () => real.supported(),
    lock: (pid) => real.lock(pid),
    checkpoint: (pid) => (pid === worker ? Promise.reject(new Error('CUDA_ERROR_NOT_SUPPORTED (the test refuses it)')) : real.checkpoint(pid)),
    restore: (pid) => real.restore(pid),
    unlock: (pid) => real.unlock(pid),
  };
  const { r, socketPath } = await engineWithSocket('refused', refusing);
  const pids = await twoProcessScript(t, socketPath).ready;
  worker = pids[1];
  const job = await enrolledJob(r, pids);
  await assert.rejects(r.engine.call('jobs.park', { job: job.id }), new RegExp(`Could not park ${job.id}: pid ${worker}: CUDA_ERROR_NOT_SUPPORTED .*It keeps running on GPU 0`));
  assert.deepEqual(await checkpointStates(pids), ['running', 'running'], 'the first process\'s memory came back and both were unlocked');
  const after = await r.job(job.id);
  assert.equal(after?.state, 'running');
  assert.match(after!.history.at(-1)!.reason, /CUDA_ERROR_NOT_SUPPORTED/);
  await r.until('its 3 GiB are on GPU 0', async () => ((await r.job(job.id))?.usedMemory === 3 * GiB ? true : undefined));
});

test('a worker that exits while its job is parked does not keep the job parked: the rest are restored', { skip }, async (t) => {
  const { r, socketPath } = await engineWithSocket('worker-gone', DriverCheckpointer.open({ libraryPath: driver.cudaLibraryPath }));
  const pids = await twoProcessScript(t, socketPath).ready;
  const job = await enrolledJob(r, pids);
  await r.engine.call('jobs.park', { job: job.id });
  process.kill(pids[1], 'SIGKILL');
  await r.until('the worker is gone', async () => ((await checkpointStates([pids[1]]))[0] === 'gone' ? true : undefined));
  assert.equal((await r.engine.call('jobs.unpark', { job: job.id })).state, 'running');
  assert.deepEqual(await checkpointStates(pids), ['running', 'gone']);
});
