// MIG jobs through the engine on the simulated driver (two H100s, GPU 1 in MIG mode): two processes share
// a computing slice, so GPM cannot split its SM %; the high one counts as active there and the
// best-effort one beside it is suspended, while a best-effort process in another slice runs on.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { Engine } from '../engine.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { gpuShareOfSlice } from '../sampler/sampler.js';
import { attachScheduler } from './attach.js';
import { simulatedBackend } from '../gpu/gpu-backend.js';

let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-mig-activity-', (rig) => ({ driver, nvml, dir } = rig));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a high process and a best-effort one in one computing MIG slice: best-effort is suspended, alerted on; another slice is left alone', async () => {
  const engine = new Engine(simulatedBackend(driver, nvml, () => undefined));
  const attached = attachScheduler(engine, { gate: null, stateDir: join(dir, 'state'), runtimeDir: join(dir, 'run'), guardian: false });
  cleanups.push(() => attached.stop());
  const slices = nvml.describeDevice(1).migDevices;
  const uuid = (gi: number) => slices.find((m) => m.gpuInstanceId === gi)!.uuid;
  const start = async (gi: number, args: string[]) => {
    const job = driver.spawnFakejob(args, { CUDA_VISIBLE_DEVICES: uuid(gi) });
    cleanups.push(async () => {
      job.kill('SIGKILL');
      await job.exited;
    });
    await job.ready;
    return job;
  };
  const server = await start(1, ['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  const batch = await start(1, ['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  const other = await start(2, ['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);

  const jobOf = async (pid: number): Promise<JobView> => {
    for (let i = 0; i < 100; i++) {
      engine.sampler.sampleNow();
      const found = (await engine.call('jobs.list', {})).find((j) => j.pid === pid);
      if (found) return found;
      await sleep(20);
    }
    throw new Error(`pid ${pid} is not seen as a job`);
  };
  const high = await jobOf(server.pid);
  const low = await jobOf(batch.pid);
  const elsewhere = await jobOf(other.pid);
  assert.equal(high.migSlice, uuid(1));
  // commands share evaluations (a little later): evaluate after each, so the high job is seen sharing its slice before the others change
  await engine.call('jobs.setPriority', { job: high.id, priority: 'high' });
  attached.scheduler.requestEvaluation('now');
  await engine.call('jobs.setPriority', { job: low.id, priority: 'best-effort' });
  attached.scheduler.requestEvaluation('now');
  await engine.call('jobs.setPriority', { job: elsewhere.id, priority: 'best-effort' });
  attached.scheduler.requestEvaluation('now');

  // until a tick sees slice GI 1 computing (GPM needs two samples), and the scheduler acts on it
  let jobs: JobView[] = [];
  for (let i = 0; i < 200; i++) {
    await sleep(25);
    engine.sampler.sampleNow(); // published: the scheduler's step follows
    jobs = await engine.call('jobs.list', {});
    if (jobs.find((j) => j.id === low.id)?.state === 'suspended') break;
  }
  const state = (id: string) => jobs.find((j) => j.id === id)?.state;
  assert.equal(state(low.id), 'suspended', 'best-effort beside the active high job is held');
  assert.equal(state(high.id), 'running');
  assert.equal(state(elsewhere.id), 'running', 'another slice is another domain');
  const alerts = await engine.call('alerts.list', {});
  assert.ok(alerts.some((a) => a.message.includes(`shares GPU 1 (slice ${uuid(1)}) with`)), JSON.stringify(alerts));

  // (it was suspended while GPM could not split the slice between the two; now stopped, the slice's SM % is the high job's own)
  for (let i = 0; i < 200; i++) {
    await sleep(25);
    const snapshot = engine.sampler.sampleNow(); // published: the scheduler's step follows
    const seen = (await engine.call('jobs.list', {})).find((j) => j.id === high.id)!;
    if (seen.smPercent === null) continue;
    const slice = snapshot.gpus[1].migSlices.find((m) => m.gpuInstanceId === 1)!;
    assert.equal(seen.smPercent, gpuShareOfSlice(slice.smPercent!, slice.smCount!, snapshot.gpus[1].smCount!), 'the slice\'s SM %, as a share of the GPU');
    return;
  }
  assert.fail('the high job never got its slice\'s SM %');
});
