// A Slurm job whose task runs on a MIG slice, on the simulated driver: its epilog's usage row, written into the
// usage store, counts the slice's work (GPM per slice, as the whole GPU's share: the slice's SMs of the GPU's)
// against the driver's execution record within one sampling interval; `report --by slurm-job` reads it there.
// Its GPU-hours, and the usage store's by user, job and GPU, are the slice's compute slices of the GPU's (3/7) of its time.
// Slurm is emulated by the pid → job answer slurmd gives (`scontrol pidinfo`): the task's session is the job's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensurePreloadBuilt, recordsOf } from '../gate/testing/launch-gate-sim.js';
import { LaunchGate, preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { builtInMigProfileTable, fullGpuSmCount } from '../mig/profiles.js';
import { fakegpuBuildDir } from '../paths.js';
import { queryUsage } from '../reports/query.js';
import { readSlurmUsage } from '../reports/slurm-usage.js';
import { listenOnSocket } from '../server/socket-server.js';
import { tickSeconds } from '../store/accounting.js';
import { UsageStore } from '../store/usage-store.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { sessionOf } from '../../testing/proc-session.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const TICK_MS = 250;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-slurm-mig-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';


test("a Slurm job's task on a MIG slice: the epilog's row in the usage store counts the slice's work as its share of the GPU, within one sampling interval of the execution record", { skip }, async (t) => {
  let jobSession = -1;
  const store = await UsageStore.open({ path: join(dir, 'usage.db') });
  cleanups.push(() => store.close());
  const gate = LaunchGate.create({ dir: join(dir, 'gate'), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, 'mig', { gate, slurmUsage: store, slurmPidInfo: (pid) => (sessionOf(pid) === jobSession ? '93' : null) }, cleanups);
  const socketPath = join(dir, 'mig', 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  const gpu = nvml.describeDevice(1);
  const slice = gpu.migDevices.find((m) => m.gpuInstanceId === 1)!;
  const gpuSms = gpu.smCount ?? fullGpuSmCount(builtInMigProfileTable(gpu.name, gpu.memoryTotal)!); // in MIG mode NVML gives none: the profile table's full GPU, as the sampler takes it
  assert.ok(gpu.migMode?.current && slice.smCount && gpuSms, 'GPU 1 is in MIG mode, and its slice and the GPU have SMs');
  await r.engine.call('slurm.prolog', { jobId: '93', uid: process.getuid!(), gpus: [1], partition: 'gpu', node: 'n1' });

  const task = spawn('sh', ['-c', '"$0" "$@" & wait', FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '3'], {
    env: { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, CUDA_VISIBLE_DEVICES: slice.uuid, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: socketPath },
    detached: true,
    stdio: 'ignore',
  });
  jobSession = task.pid!; // detached: the shell leads a session of its own
  cleanups.push(() => {
    try {
      process.kill(-task.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  const exited = new Promise((resolve) => task.once('exit', resolve));
  let done = false;
  void exited.then(() => (done = true));
  const enrolled = await r.until("the task enrolled as Slurm job 93's", async () => (await r.engine.call('jobs.list', {})).find((j) => j.enrolled?.slurm?.jobId === '93' && j.pid !== null));
  while (!done) await r.tick(TICK_MS); // the sampler's ticks, as a daemon at 4 Hz takes them
  await r.tick(TICK_MS); // its exit seen
  const ended = await r.engine.call('slurm.epilog', { jobId: '93' });

  const busyS = recordsOf(await driver.execlog(1, slice.gpuInstanceId), enrolled.pid!).reduce((s, k) => s + (k.endNs - k.startNs), 0) / 1e9;
  const share = slice.smCount! / gpuSms;
  const { rows } = await readSlurmUsage(store.db, { since: Date.now() - 3_600_000 });
  assert.equal(rows.length, 1, 'the epilog wrote its row into the store before it answered');
  const [row] = rows;
  t.diagnostic(`row: ${(row.smHours * 3600).toFixed(3)} SM-s, ${(row.gpuHours * 3600).toFixed(3)} GPU-s, peak ${row.peakMemoryBytes} B; execution record: ${busyS.toFixed(3)} s busy on a slice of ${slice.smCount} of ${gpuSms} SMs (${(busyS * share).toFixed(3)} GPU SM-s)`);
  assert.deepEqual([row.jobId, row.partition, row.smHours], ['93', 'gpu', ended.usage.smSeconds / 3600]);
  assert.ok(busyS > 1, `the task computed on its slice: ${busyS} s`);
  assert.ok(Math.abs(row.smHours * 3600 - busyS * share) <= (TICK_MS / 1000) * share + 0.02, `SM-seconds ${row.smHours * 3600} against ${busyS} s on its slice × ${share.toFixed(3)} of the GPU: within one sampling interval`);
  assert.equal(row.peakMemoryBytes, 1024 ** 3, 'its 1 GiB on the slice');
  assert.ok(row.memoryGiBHours > 0 && row.gpuHours > 0);
});


test("GPU-hours on a MIG slice are its share of its GPU: a task on a 3g slice of a 7-slice H100 for T seconds gets 3/7·T GPU-seconds, in its Slurm row (which names its account and slice) and by user, job and GPU", { skip }, async () => {
  let jobSession = -1;
  const store = await UsageStore.open({ path: join(dir, 'usage-share.db') });
  cleanups.push(() => store.close());
  const gate = LaunchGate.create({ dir: join(dir, 'gate-share'), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, 'mig-share', { gate, slurmUsage: store, slurmPidInfo: (pid) => (sessionOf(pid) === jobSession ? '94' : null) }, cleanups);
  const socketPath = join(dir, 'mig-share', 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  const slice = nvml.describeDevice(1).migDevices.find((m) => m.gpuInstanceId === 1)!;
  assert.equal(slice.profileName, '3g.40gb', "GPU 1's GPU instance 1 is a 3g slice of its 7");
  const ticks: Array<{ pids: number[]; slurmS: number; storeS: number }> = []; // each tick's processes and seconds, as a Slurm job's usage and the usage store take them
  const unsubscribe = r.engine.sampler.onSnapshot((s) => {
    store.ingest(s);
    ticks.push({ pids: s.processes.map((p) => p.pid), slurmS: (s.intervalMs ?? s.nominalIntervalMs) / 1000, storeS: tickSeconds(s.intervalMs, s.nominalIntervalMs) });
  });
  cleanups.push(unsubscribe);
  await r.engine.call('slurm.prolog', { jobId: '94', uid: process.getuid!(), gpus: [1], partition: 'gpu', account: 'vision-lab', node: 'n1' });
  const task = spawn('sh', ['-c', '"$0" "$@" & wait', FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '2'], {
    env: { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, CUDA_VISIBLE_DEVICES: slice.uuid, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: socketPath },
    detached: true,
    stdio: 'ignore',
  });
  jobSession = task.pid!;
  cleanups.push(() => {
    try {
      process.kill(-task.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  let done = false;
  task.once('exit', () => (done = true));
  const enrolled = await r.until("the task enrolled as Slurm job 94's", async () => (await r.engine.call('jobs.list', {})).find((j) => j.enrolled?.slurm?.jobId === '94' && j.pid !== null));
  const taskPid = enrolled.pid!;
  while (!done) await r.tick(TICK_MS);
  await r.tick(TICK_MS);
  await r.engine.call('slurm.epilog', { jobId: '94' });
  unsubscribe();
  await store.flush();
  const listed = ticks.filter((k) => k.pids.includes(taskPid));
  const slurmT = listed.reduce((sum, k) => sum + k.slurmS, 0);
  const storeT = listed.reduce((sum, k) => sum + k.storeS, 0);
  assert.ok(slurmT > 1, `the task was listed on its slice for ${slurmT} s`);

  const [row] = (await readSlurmUsage(store.db, { since: Date.now() - 3_600_000 })).rows;
  assert.deepEqual([row.account, row.gpus], ['vision-lab', 'GPU 1 · 3g.40gb'], 'its row says the account the prolog read and the slice its task ran on');
  assert.ok(Math.abs(row.gpuHours * 3600 - (3 / 7) * slurmT) < 1e-9, `the Slurm row's ${row.gpuHours * 3600} GPU-s are 3/7 of the ${slurmT} s on the slice`);
  const range = { since: Date.now() - 3_600_000, until: Date.now() + 1000 };
  for (const by of ['user', 'job', 'gpu'] as const) {
    const report = await queryUsage(store.db, { ...range, by });
    const keys = by === 'gpu' ? ['1'] : by === 'user' ? [enrolled.owner] : [enrolled.id, `p${taskPid}`]; // a job by its id, or its pid where the store has no owner for it
    const found = report.rows.find((x) => keys.includes(x.key));
    assert.ok(found, `a row for ${keys.join(' or ')} by ${by}: ${report.rows.map((x) => x.key).join(', ')}`);
    assert.ok(Math.abs(found.gpuSeconds - (3 / 7) * storeT) < 1e-9, `by ${by}: ${found.gpuSeconds} GPU-s are 3/7 of the ${storeT} s on the slice`);
  }
});
