// MIG through the engine on the simulated driver (two H100s, GPU 1 in MIG mode): the layout as the API
// shows it, refusals that say what blocks a change, a plan applied to the driver's layout, and a job
// bound to a new slice running there.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { Engine } from '../engine.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { attachScheduler } from '../scheduler/attach.js';
import { DryRunMigExecutor, SimulatedMigExecutor, toFakegpu, type MigExecutor } from './executor.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { simulatedBackend } from '../gpu/gpu-backend.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-mig-', (rig) => ({ driver, nvml, dir } = rig));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rig(name: string, migExecutor?: MigExecutor) {
  const engine = new Engine(simulatedBackend(driver, nvml, () => undefined));
  const attached = attachScheduler(engine, {
    gate: null,
    migExecutor,
    stateDir: join(dir, name, 'state'),
    runtimeDir: join(dir, name, 'run'),
    guardian: false,
  });
  cleanups.push(() => attached.stop());
  const tick = async (ms = 100) => {
    await sleep(ms);
    engine.sampler.sampleNow();
  };
  return { engine, tick };
}

/** Killed processes leave the simulated NVML within ~100 ms (its reap is rate-limited). */
async function gone(engine: Engine, pid: number): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const layout = await engine.call('mig.layout', { gpu: 1 });
    if (!layout.slices.some((s) => s.processes.some((p) => p.pid === pid))) return;
    await sleep(20);
  }
  throw new Error(`pid ${pid} stays listed`);
}

const refused = (code: string, message: RegExp) => (e: Error & { code?: string }) => {
  assert.equal(e.code, code, e.message);
  assert.match(e.message, message);
  return true;
};

test('the layout shows instances with real profile ids, placements and the processes in each slice', async () => {
  const { engine } = rig('layout');
  const layout = await engine.call('mig.layout', { gpu: 1 });
  assert.equal(layout.migEnabled, true);
  assert.deepEqual(
    layout.slices.map((s) => `${s.profile}/${s.profileId}@${s.placement.start}:${s.placement.size} gi${s.gpuInstanceId}`),
    ['1g.10gb/19@0:1 gi4', '1g.10gb/19@1:1 gi3', '2g.20gb/14@2:2 gi2', '3g.40gb/9@4:4 gi1'],
  );
  assert.deepEqual(layout.freeMemorySlices, [], '0-7 are all taken… except none: 1+1+2+4 = 8');
  assert.equal(layout.profiles?.find((p) => p.name === '1g.20gb')?.id, 15, 'the 1g.2x-mem profile is offered');
  const sliceMemory = layout.slices.find((s) => s.profile === '3g.40gb')!.memoryTotal;
  assert.equal(sliceMemory, 40448 * 2 ** 20, 'sizes match the built-in H100-80GB table');

  const job = driver.spawnFakejob(['--mem', '1G', 'hold', '--duration', '30'], { CUDA_VISIBLE_DEVICES: layout.slices[3].uuids[0] });
  cleanups.push(() => job.kill('SIGKILL'));
  await job.ready;
  const busy = await engine.call('mig.layout', { gpu: 1 });
  assert.deepEqual(busy.slices[3].processes.map((p) => p.pid), [job.pid]);
  assert.match(busy.slices[3].processes[0].command ?? '', /fakejob/);
  job.kill('SIGKILL');
  await job.exited;
  await gone(engine, job.pid);
  assert.equal((await engine.call('mig.layout', { gpu: 0 })).migEnabled, false);
});

test('refusals say what blocks the change: MIG mode off, a profile the GPU lacks, a busy slice, not root', async () => {
  const { engine } = rig('refusals');
  await assert.rejects(
    engine.call('mig.apply', { gpu: 0, jobs: '30G' }),
    refused('conflict', /MIG mode is off on GPU 0: enable it with `sudo nvidia-smi -i 0 -mig 1` \(needs an idle GPU and may need a reset\)/),
  );
  await assert.rejects(
    engine.call('mig.apply', { gpu: 1, layout: ['4g.20gb'] }),
    refused('invalid-request', /profile 4g\.20gb does not exist on NVIDIA H100 80GB HBM3/),
  );

  const holder = driver.spawnFakejob(['--mem', '1G', 'hold', '--duration', '30'], {
    CUDA_VISIBLE_DEVICES: (await engine.call('mig.layout', { gpu: 1 })).slices.find((s) => s.gpuInstanceId === 1)!.uuids[0],
  });
  cleanups.push(() => holder.kill('SIGKILL'));
  await holder.ready;
  await assert.rejects(
    engine.call('mig.apply', { gpu: 1, layout: ['7g.80gb'] }),
    refused('conflict', new RegExp(`GPU 1 slice 3g\\.40gb \\(GI 1\\) is in use by pid ${holder.pid} \\(\\S+: \\S*fakejob --mem 1G hold`)),
  );
  holder.kill('SIGKILL');
  await holder.exited;
  await gone(engine, holder.pid);

  const user = rig('not-root', new SimulatedMigExecutor({ statePath: driver.statePath, euid: 1000 }));
  await assert.rejects(
    user.engine.call('mig.apply', { gpu: 1, layout: ['7g.80gb'] }),
    refused('forbidden', /^needs root: run the engine as root or apply the printed commands with sudo$/),
  );
  const dry = await user.engine.call('mig.apply', { gpu: 1, layout: ['7g.80gb'], dryRun: true });
  assert.equal(dry.applied, false);
  assert.deepEqual(dry.blockers, ['needs root: run the engine as root or apply the printed commands with sudo']);
  assert.equal(dry.commands.at(-1), 'nvidia-smi mig -i 1 -cgi 0:0 -C');
  assert.equal((await engine.call('mig.layout', { gpu: 1 })).slices.length, 4, 'nothing changed');
});

test('a plan applied changes the layout, and a job bound to a new slice runs there', async () => {
  const { engine, tick } = rig('apply');
  const result = await engine.call('mig.apply', { gpu: 1, jobs: '35G,35G' });
  assert.equal(result.applied, true, JSON.stringify(result));
  assert.deepEqual(result.unplaced, []);
  const described = nvml.describeDevice(1).migDevices.map((m) => `${m.profileName}/${m.profileId}@${m.placement!.start}`).sort();
  assert.deepEqual(described, ['3g.40gb/9@0', '3g.40gb/9@4']);
  assert.deepEqual(result.layout!.slices.map((s) => `${s.profile}@${s.placement.start}`), ['3g.40gb@0', '3g.40gb@4']);
  const kept = result.layout!.slices.find((s) => s.placement.start === 4)!;
  assert.equal(kept.gpuInstanceId, 1, 'the 3g.40gb that existed is kept, not recreated');

  const slice = result.layout!.slices.find((s) => s.placement.start === 0)!;
  await tick(); // the snapshot learns the new slices
  const submitted = await engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '2G', 'hold', '--duration', '30'], cwd: dir, gpu: 'auto', mode: 'mig', migSlice: slice.uuids[0] });
  assert.equal(submitted.requestedGpu, 1);
  let job: JobView | undefined;
  for (let i = 0; i < 40 && !job?.usedMemory; i++) {
    await tick();
    job = (await engine.call('jobs.list', {})).find((j) => j.id === submitted.id);
  }
  assert.equal(job?.state, 'running');
  const proc = (await driver.dump()).devices[1].processes.find((p) => p.pid === job!.pid);
  assert.deepEqual({ gi: proc?.gpuInstanceId, ci: proc?.computeInstanceId, mem: proc?.usedMemory }, { gi: slice.gpuInstanceId, ci: 0, mem: 2 * 2 ** 30 });
  const seen = engine.sampler.latest!.processes.find((p) => p.pid === job!.pid);
  assert.equal(seen?.gpuInstanceId, slice.gpuInstanceId);

  await assert.rejects(
    engine.call('mig.apply', { gpu: 1, layout: ['7g.80gb'] }),
    refused('conflict', new RegExp(`slice 3g\\.40gb \\(GI ${slice.gpuInstanceId}\\) is in use by pid ${job!.pid}`)),
  );
  await assert.rejects(engine.call('jobs.setMode', { job: submitted.id, mode: 'shared' }), refused('conflict', /out of its MIG slice while it runs/));
  await engine.call('jobs.terminate', { job: submitted.id });
});

test('nvidia-smi mig lines map onto fakegpu mig calls; a dry run prints them', async () => {
  assert.deepEqual(toFakegpu(['nvidia-smi', 'mig', '-dci', '-i', '1', '-gi', '2', '-ci', '0']), ['--device', '1', 'destroy-ci', '2', '0']);
  assert.deepEqual(toFakegpu(['nvidia-smi', 'mig', '-dgi', '-i', '1', '-gi', '2']), ['--device', '1', 'destroy-gi', '2']);
  assert.deepEqual(toFakegpu(['nvidia-smi', 'mig', '-i', '1', '-cgi', '9:0', '-C']), ['--device', '1', 'create-gi', '9:0', '-C']);
  const printed = await new DryRunMigExecutor().run([{ argv: ['nvidia-smi', 'mig', '-i', '0', '-cgi', '9:4', '-C'], why: '' }]);
  assert.deepEqual(printed.output, ['nvidia-smi mig -i 0 -cgi 9:4 -C']);
});

test('planning beside a busy 3g.40gb: its running work and the memory it uses now are read, the slice is kept, the idle ones take the jobs', async () => {
  const { engine } = rig('busy');
  // the scenario's shape, whatever the tests before changed, once their jobs have left
  for (let i = 0; i < 250 && (await engine.call('mig.layout', { gpu: 1 })).slices.some((s) => s.processes.length > 0); i++) await sleep(20);
  const layout = (await engine.call('mig.apply', { gpu: 1, layout: ['1g.10gb@0', '1g.10gb@1', '2g.20gb@2', '3g.40gb@4'] })).layout!;
  const gi = Object.fromEntries(layout.slices.map((s) => [`${s.profile}@${s.placement.start}`, s.gpuInstanceId]));
  const holder = driver.spawnFakejob(['--mem', '31G', 'hold', '--duration', '30'], { CUDA_VISIBLE_DEVICES: layout.slices.find((s) => s.placement.start === 4)!.uuids[0] });
  cleanups.push(() => holder.kill('SIGKILL'));
  await holder.ready;

  const fits = await engine.call('mig.apply', { gpu: 1, jobs: '9G,9G,19G', dryRun: true });
  assert.deepEqual(fits.commands, [], 'today\'s idle 1g.10gb, 1g.10gb and 2g.20gb hold them as they are');
  assert.deepEqual(fits.blockers, []);
  assert.deepEqual(fits.planned.map((p) => `${p.profile}@${p.placement.start}: ${p.jobId ?? 'idle'}`), ['1g.10gb@0: job1', '1g.10gb@1: job2', '2g.20gb@2: job3', '3g.40gb@4: idle']);
  assert.deepEqual(fits.planned.map((p) => p.gpuInstanceId), [gi['1g.10gb@0'], gi['1g.10gb@1'], gi['2g.20gb@2'], gi['3g.40gb@4']]);
  assert.deepEqual(fits.planned[3].busy, { pids: [holder.pid], memoryFreeBytes: 40448 * 2 ** 20 - 31 * 2 ** 30 });

  const crowded = await engine.call('mig.apply', { gpu: 1, jobs: '10G,10G,20G', dryRun: true });
  assert.deepEqual(crowded.blockers, [], 'nothing busy is in the way');
  const busyGi = gi['3g.40gb@4'];
  assert.ok(!crowded.commands.some((c) => c.includes(` -gi ${busyGi} `) || c.endsWith(` -gi ${busyGi}`)), crowded.commands.join('\n'));
  assert.equal(crowded.planned.find((p) => p.gpuInstanceId === busyGi)?.jobId, null, 'the 20G job is not put beside 31G of running work');
  assert.match(crowded.unplaced.find((u) => u.jobId === 'job3')?.reason ?? '', new RegExp(`busy slices are kept as they are: 3g\\.40gb at 4 \\(GI ${busyGi}, pid ${holder.pid}, 8\\.5G free now\\)`));
  holder.kill('SIGKILL');
  await holder.exited;
});

test('the layout shows each slice\'s SM % (GPM): the slice a trainer computes in above 0, an idle one 0', async () => {
  const { engine } = rig('activity');
  const before = await engine.call('mig.layout', { gpu: 1 });
  const busy = before.slices.find((s) => s.placement.start === 2)!;
  const trainer = driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '30'], { CUDA_VISIBLE_DEVICES: busy.uuids[0] });
  cleanups.push(() => trainer.kill('SIGKILL'));
  await trainer.ready;
  const since = process.hrtime.bigint(); // CLOCK_MONOTONIC, the driver's clock
  await engine.call('mig.layout', { gpu: 1 });
  for (let i = 0; i < 500 && !(await driver.execlog(1)).some((k) => k.pid === trainer.pid && BigInt(Math.round(k.startNs)) > since && k.endNs > k.startNs); i++) await sleep(20);
  const after = await engine.call('mig.layout', { gpu: 1 });
  const sm = (start: number) => after.slices.find((s) => s.placement.start === start)?.smPercent;
  assert.ok((sm(2) ?? 0) > 0, JSON.stringify(after.slices.map((s) => [s.profile, s.smPercent])));
  assert.equal(sm(0), 0);
  trainer.kill('SIGKILL');
  await trainer.exited;
});
