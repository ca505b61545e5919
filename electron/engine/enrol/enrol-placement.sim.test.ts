// Where an enrolled job runs is the driver's word, not its environment's: a process enrolled with one
// CUDA_VISIBLE_DEVICES that changed it before its first CUDA call (as a Python program's os.environ does;
// /proc keeps the environment it started with) is shown, gated and counted where the driver lists it.
// Over the simulated driver (GPU 0 whole, GPU 1 in MIG mode); asserts on job views, gate slots and admission.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { enrolledGpuText, type JobView } from '../../../shared/jobs.js';
import { ensurePreloadBuilt, preloadProbePath } from '../gate/testing/launch-gate-sim.js';
import { preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { schedulerRig, socketSchedulerRig } from '../testing/scheduler-rig.js';
import { killJobProcessesOn, useSimulatedRig } from '../testing/simulated-rig.js';
import { shellLine } from './shell-line.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-enrol-place-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

const engineWithSocket = (name: string) => socketSchedulerRig({ driver, nvml, dir }, name, {}, cleanups);

/** The probe started with CUDA_VISIBLE_DEVICES=`started` from a plain shell with the library loaded, changing it to `uses` before its first CUDA call. */
function probeFromShell(socketPath: string, started: string, uses: string, steps: string[]): ChildProcess {
  const env = { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', CUDA_VISIBLE_DEVICES: started };
  const script = `${shellLine('bash', preloadLibraryPath())}\n"${preloadProbePath()}" --visible "${uses}" ${steps.join(' ')} &\nwait`; // in the background: bash would exec a last command itself, and the engine would be its parent
  const child = spawn('bash', ['-c', script], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  return child;
}

function firstLines(child: ChildProcess, n: number): Promise<Array<Record<string, unknown>>> {
  const got: Array<Record<string, unknown>> = [];
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      got.push(JSON.parse(line) as Record<string, unknown>);
      if (got.length === n) resolve(got);
    });
  });
}

/** The job once a snapshot's driver record placed it (at most 8 ticks: one sample after its first allocation is enough). */
async function placedByDriver(r: ReturnType<typeof schedulerRig>, id: string): Promise<JobView> {
  let j: JobView | undefined;
  for (let i = 0; i < 8 && j?.enrolled?.gpuFrom !== 'driver'; i++) {
    await r.tick();
    j = await r.job(id);
  }
  assert.equal(j?.enrolled?.gpuFrom, 'driver', `placed by the driver's record: ${JSON.stringify({ gpu: j?.gpu, migSlice: j?.migSlice, enrolled: j?.enrolled })}`);
  return j!;
}

const byPid = (jobs: JobView[], pid: number): JobView | undefined => jobs.find((j) => j.pid === pid && j.enrolled);

test('a process enrolled with CUDA_VISIBLE_DEVICES naming a slice of GPU 1 that allocates on GPU 0 is shown on GPU 0, its gate slot moved there, and its quota counted there', { skip }, async () => {
  const { r, gate, socketPath } = await engineWithSocket('whole');
  const slice = r.engine.sampler.sampleNow().gpus[1].migSlices[0];
  const child = probeFromShell(socketPath, slice.uuid, '0', [`alloc:${64 * MiB}`, 'sleep:60000000']);
  const [ready, alloc] = await firstLines(child, 2);
  assert.equal(alloc.code, 0, 'it allocates');
  const pid = Number(ready.pid);
  const job = await r.until('it enrolled', async () => byPid(await r.engine.call('jobs.list', {}), pid));
  const placed = await placedByDriver(r, job.id);
  assert.equal(placed.gpu, 0, 'on GPU 0, where the driver lists it');
  assert.equal(placed.migSlice, null, 'in no slice');
  assert.equal(placed.mode, 'shared', 'out of the slice its hint named');
  assert.equal(placed.usedMemory, 64 * MiB);
  const slot = gate.slotsInUse().find((s) => gate.readSlot(s).processes.some((p) => p.pid === pid))!;
  assert.equal(gate.readSlot(slot).gpu, 0, 'its gate slot is on GPU 0');
  assert.equal(gate.readSlot(slot).migSlice, null, 'in GPU 0\'s own domain');
  // its quota is spoken for on GPU 0: a job needing more than what is left there waits
  await r.engine.call('jobs.setQuota', { job: job.id, bytes: 60 * GiB });
  const queued = await r.engine.call('jobs.submit', { argv: ['/bin/sleep', '60'], cwd: dir, gpu: 0, memoryRequestBytes: 30 * GiB });
  cleanups.push(() => killJobProcessesOn(driver, queued.id)); // a managed job outlives its engine: the file ends it
  for (let i = 0; i < 3; i++) await r.tick();
  assert.equal((await r.job(queued.id))?.state, 'queued', 'GPU 0 has 81 GB less the enrolled job\'s 60 GB quota: 30 GB does not fit');
  await r.engine.call('jobs.setQuota', { job: job.id, bytes: 10 * GiB });
  await r.until('with a 10 GB quota there, 30 GB fit on GPU 0', async () => {
    await r.tick();
    return (await r.job(queued.id))?.state === 'running';
  });
});

test('a process enrolled with CUDA_VISIBLE_DEVICES=0 that allocates on a MIG slice of GPU 1 is shown on GPU 1 in that slice', { skip }, async () => {
  const { r, gate, socketPath } = await engineWithSocket('slice');
  const slice = r.engine.sampler.sampleNow().gpus[1].migSlices[1];
  const child = probeFromShell(socketPath, '0', slice.uuid, [`alloc:${32 * MiB}`, 'sleep:60000000']);
  const [ready, alloc] = await firstLines(child, 2);
  assert.equal(alloc.code, 0, 'it allocates');
  const pid = Number(ready.pid);
  const job = await r.until('it enrolled', async () => byPid(await r.engine.call('jobs.list', {}), pid));
  const placed = await placedByDriver(r, job.id);
  assert.equal(placed.gpu, 1, 'on GPU 1');
  assert.equal(placed.migSlice, slice.uuid, `in slice ${slice.profileName}`);
  assert.equal(placed.mode, 'mig', 'in a slice as a job gpushare started there is');
  const slot = gate.slotsInUse().find((s) => gate.readSlot(s).processes.some((p) => p.pid === pid))!;
  assert.equal(gate.readSlot(slot).gpu, 1, 'its gate slot is on GPU 1');
  assert.equal(gate.readSlot(slot).migSlice, slice.uuid, 'in the slice\'s own gate domain');
  const listed = await r.engine.call('jobs.list', {});
  assert.equal(listed.filter((j) => j.enrolled).length, 1, 'one job');
});

test('an enrolled job whose processes use GPU 0 and a slice of GPU 1 is shown where it holds most memory, the other beside it', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('two');
  const slice = r.engine.sampler.sampleNow().gpus[1].migSlices[2];
  const env = { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000' };
  const probe = preloadProbePath();
  // one process group: the first on GPU 0 (32 MiB), its worker in the slice (96 MiB)
  const script = `${shellLine('bash', preloadLibraryPath())}\n"${probe}" --visible 0 alloc:${32 * MiB} sleep:60000000 &\n"${probe}" --visible ${slice.uuid} alloc:${96 * MiB} sleep:60000000 &\nwait`;
  const child = spawn('bash', ['-c', script], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  const steps = await firstLines(child, 4);
  assert.deepEqual(steps.filter((s) => s.op === 'alloc').map((s) => s.code), [0, 0]);
  const job = await r.until('one job holding 128 MiB', async () => {
    const j = (await r.engine.call('jobs.list', {})).filter((v) => v.enrolled);
    return j.length === 1 && j[0].usedMemory === 128 * MiB && j[0].enrolled?.alsoOn ? j[0] : undefined;
  });
  assert.deepEqual([job.gpu, job.migSlice], [1, slice.uuid], 'where it holds 96 of its 128 MiB');
  assert.deepEqual(job.enrolled!.alsoOn, [{ gpu: 0, migSlice: null, usedMemory: 32 * MiB }]);
  assert.equal(enrolledGpuText(job), '1+0');
});
