// `gpushare run --gpu 0,1` (a job on two GPUs, as torchrun starts one process per GPU) through the engine with its
// launch gate on a simulated box of three GPUs. Asserts the simulated driver's execution record and job states:
// no kernel of the job on either GPU before both were free, kernels on both once they were, and a higher job on
// one of its GPUs holds it back there. Then two two-GPU jobs on three GPUs: one starts, the other waits holding
// nothing, and starts when the first ends (no deadlock, no half-started job).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { LaunchGate } from '../gate/launch-gate.js';
import { enqueuedUnderHigh, ensurePreloadBuilt, preloadProbePath, recordsOf } from '../gate/testing/launch-gate-sim.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { spawn } from 'node:child_process';
import { preloadLibraryPath } from '../gate/launch-gate.js';
import { shellLine } from '../enrol/shell-line.js';
import { schedulerRig, socketSchedulerRig } from '../testing/scheduler-rig.js';
import { jobProcessesOn, killJobProcessesOn, useSimulatedRig } from '../testing/simulated-rig.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const scenarioDir = mkdtempSync(join(tmpdir(), 'gpushare-three-gpus-'));
const SCENARIO = join(scenarioDir, 'three.scn');
writeFileSync(
  SCENARIO,
  ['driver 550.54.15', 'cuda 12040', ...[0, 1, 2].map((i) => `gpu model="NVIDIA A100-SXM4-40GB" memory=40960MiB sm=108 sm_clock=1410 mem_clock=1215 power_limit=400W pci=00000000:0${i + 1}:00.0`), ''].join('\n'),
);
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig(SCENARIO, 'gpushare-multi-gpu-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

const train = (seconds: number, device = 0) => [FAKEJOB, '--device', String(device), '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', String(seconds)];
/** One process per GPU of the job, as torchrun starts them: device i of its CUDA_VISIBLE_DEVICES. */
const perGpu = (seconds: number, gpus: number) => ['/bin/sh', '-c', `${[...Array(gpus).keys()].map((d) => train(seconds, d).join(' ')).join(' & ')} & wait`];
const environOf = (pid: number): Map<string, string> => new Map(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
const ofPids = (log: KernelRecord[], pids: readonly number[]): KernelRecord[] => log.filter((k) => pids.includes(k.pid)).sort((a, b) => a.enqueueNs - b.enqueueNs);

test('a job on GPUs 0,1 starts when both are free, runs kernels on both, and a high job on GPU 1 holds it back there', { skip }, async () => {
  const gate = LaunchGate.create({ dir: join(dir, 'two'), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, 'two', { gate }, cleanups);
  const ids: string[] = [];
  try {
    const blocker = await r.engine.call('jobs.submit', { argv: train(3), cwd: dir, gpu: 1, mode: 'exclusive' });
    ids.push(blocker.id);
    await r.until('the exclusive job runs on GPU 1', async () => (await r.job(blocker.id))?.state === 'running');
    const blockerPid = (await r.job(blocker.id))!.pid!;
    const both = await r.engine.call('jobs.submit', { argv: perGpu(30, 2), cwd: dir, gpu: [0, 1] });
    ids.push(both.id);
    assert.deepEqual([both.requestedGpus, both.gpuCount, both.gpus], [[0, 1], 2, [0, 1]]);
    for (let i = 0; i < 3; i++) await r.tick();
    const waiting = (await r.job(both.id))!;
    assert.equal(waiting.state, 'queued', 'GPU 0 is free, GPU 1 is not: it starts on neither');
    assert.deepEqual(await driver.execlog(0), [], 'nothing ran on GPU 0 while the job waited for GPU 1');
    await r.until('the exclusive job finished', async () => (await r.job(blocker.id))?.state === 'finished', 80);
    const running = await r.until('the two-GPU job runs', async () => {
      const job = await r.job(both.id);
      return job?.state === 'running' && jobProcessesOn(driver, both.id).length >= 3 ? job : undefined;
    });
    assert.deepEqual([running.gpu, running.gpus], [0, [0, 1]], 'gpu stays its first GPU for readers of one');
    assert.match(running.history.find((h) => h.state === 'running')!.reason, /started on GPUs 0,1 as pid/);
    const pids = jobProcessesOn(driver, both.id);
    const uuids = (await r.engine.call('snapshot.latest', {}))!.gpus.map((g) => g.uuid);
    assert.equal(environOf(running.pid!).get('CUDA_VISIBLE_DEVICES'), `${uuids[0]},${uuids[1]}`, 'its GPUs in order, by UUID as for one GPU');
    for (let i = 0; i < 4; i++) await r.tick();
    const blockerKernels = recordsOf(await driver.execlog(1), blockerPid);
    const [on0, on1] = [ofPids(await driver.execlog(0), pids), ofPids(await driver.execlog(1), pids)];
    assert.ok(on0.length > 0 && on1.length > 0, `kernels on both GPUs (${on0.length} on GPU 0, ${on1.length} on GPU 1)`);
    const blockerEnd = Math.max(...blockerKernels.map((k) => k.endNs));
    assert.ok(blockerKernels.length > 0 && on0[0].enqueueNs > blockerEnd && on1[0].enqueueNs > blockerEnd, 'none of its kernels before the exclusive job on GPU 1 was done');

    const high = await r.engine.call('jobs.submit', { argv: train(30), cwd: dir, gpu: 1, priority: 'high' });
    ids.push(high.id);
    await r.until('the high job runs on GPU 1', async () => (await r.job(high.id))?.state === 'running');
    const states: string[] = [];
    for (let i = 0; i < 15; i++) {
      await r.tick();
      states.push((await r.job(both.id))!.state);
    }
    assert.ok(states.includes('gated'), `the two-GPU job is gated while the high job runs on one of its GPUs: ${states.join(' ')}`);
    const highPid = (await r.job(high.id))!.pid!;
    const highKernels = recordsOf(await driver.execlog(1), highPid);
    assert.ok(highKernels.length > 0, 'the high job ran kernels on GPU 1');
    const ourKernelsOn1 = ofPids(await driver.execlog(1), pids);
    assert.deepEqual(enqueuedUnderHigh(highKernels, ourKernelsOn1), [], 'no kernel of the two-GPU job enqueued on GPU 1 while a high kernel was queued or running');
    const gatedNs = gate.readSlot(gate.slotsInUse().find((s) => gate.readSlot(s).pid === running.pid)!).gatedNs;
    assert.ok(gatedNs > 0, 'its launches waited at the gate');
  } finally {
    await r.stop();
    for (const id of ids) killJobProcessesOn(driver, id);
  }
});

test('two jobs of two GPUs on three GPUs: one starts on two, the other waits holding none, then starts when the first ends', { skip }, async () => {
  const r = schedulerRig({ driver, nvml, dir }, 'deadlock', {}, cleanups);
  const ids: string[] = [];
  try {
    const first = await r.engine.call('jobs.submit', { argv: perGpu(2, 2), cwd: dir, gpu: 'auto', gpuCount: 2, mode: 'exclusive' });
    const second = await r.engine.call('jobs.submit', { argv: perGpu(2, 2), cwd: dir, gpu: 'auto', gpuCount: 2, mode: 'exclusive' });
    ids.push(first.id, second.id);
    const seen: Array<[JobView, JobView]> = [];
    const started = await r.until('the first runs', async () => {
      const pair = [(await r.job(first.id))!, (await r.job(second.id))!] as [JobView, JobView];
      seen.push(pair);
      return pair[0].state === 'running' ? pair : undefined;
    });
    assert.equal(started[0].gpus.length, 2);
    assert.equal(started[1].state, 'queued');
    assert.deepEqual(started[1].gpus, [], 'the waiting job holds no GPU');
    assert.match(started[1].history.at(-1)!.reason, /submitted/);
    const done = await r.until('the second runs after the first', async () => {
      const pair = [(await r.job(first.id))!, (await r.job(second.id))!] as [JobView, JobView];
      seen.push(pair);
      return pair[1].state === 'running' || pair[1].state === 'finished' ? pair : undefined;
    }, 120);
    assert.equal(done[0].state, 'finished', 'the second started only once the first had ended');
    assert.equal(done[1].gpus.length, 2);
    for (const [a, b] of seen) assert.ok(!(b.gpus.length > 0 && b.gpus.length < 2) && !(a.gpus.length > 0 && a.gpus.length < 2), 'never a job on part of its GPUs');
    for (const [a, b] of seen) if (a.state === 'running' && b.state === 'running') assert.fail('both ran at once on three GPUs, exclusively');
  } finally {
    await r.stop();
    for (const id of ids) killJobProcessesOn(driver, id);
  }
});

test('an enrolled job whose processes the driver lists on GPUs 1 and 0 is gated on both: a high job on GPU 0 holds it back there', { skip }, async () => {
  const { r, socketPath } = await socketSchedulerRig({ driver, nvml, dir }, 'enrolled', {}, cleanups);
  const env = { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000' };
  const rank = (device: number, mem: string) => [FAKEJOB, '--device', String(device), '--mem', mem, 'train', '--kernel-ms', '2', '--duration', '30'].join(' ');
  // one process group started outside gpushare, with the library: less memory on GPU 0 than on GPU 1
  const script = `${shellLine('bash', preloadLibraryPath())}\n${rank(0, '256M')} &\n${rank(1, '1G')} &\nwait`;
  const child = spawn('bash', ['-c', script], { env, detached: true, stdio: 'ignore' });
  const killGroup = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  };
  cleanups.push(killGroup);
  const enrolled = await r.until('one enrolled job on GPUs 1 and 0', async () => {
    const j = (await r.engine.call('jobs.list', {})).filter((v) => v.enrolled);
    return j.length === 1 && j[0].gpus.length === 2 ? j[0] : undefined;
  });
  assert.deepEqual([enrolled.gpu, enrolled.gpus], [1, [1, 0]], 'first where it holds most memory');
  assert.ok(enrolled.history.some((h) => /gated on GPUs 1,0/.test(h.reason)), enrolled.history.map((h) => h.reason).join(' | '));
  const high = await r.engine.call('jobs.submit', { argv: train(30), cwd: dir, gpu: 0, priority: 'high' });
  try {
    await r.until('the high job runs on GPU 0', async () => (await r.job(high.id))?.state === 'running');
    const states: string[] = [];
    for (let i = 0; i < 15; i++) {
      await r.tick();
      states.push((await r.job(enrolled.id))!.state);
    }
    assert.ok(states.includes('gated'), `the enrolled job is gated while the high job runs on GPU 0: ${states.join(' ')}`);
    const log0 = await driver.execlog(0);
    const highKernels = recordsOf(log0, (await r.job(high.id))!.pid!);
    const ours = log0.filter((k) => !highKernels.includes(k));
    assert.ok(highKernels.length > 0 && ours.length > 0, 'both ran kernels on GPU 0');
    assert.deepEqual(enqueuedUnderHigh(highKernels, ours), [], 'no kernel of the enrolled job enqueued on GPU 0 while a high kernel was queued or running');
  } finally {
    await r.stop();
    killJobProcessesOn(driver, high.id);
    killGroup(); // its GPUs are the next tests'
  }
});

test('parking a job on two GPUs moves its memory off both and says so; unparking brings it back on both; suspend stops it on both', { skip }, async () => {
  const r = schedulerRig({ driver, nvml, dir }, 'park', {}, cleanups);
  const used = () => r.engine.sampler.tick().gpus.map((g) => g.memoryUsed!);
  const GiB = 1024 ** 3;
  const both = await r.engine.call('jobs.submit', { argv: perGpu(60, 2), cwd: dir, gpu: [0, 2] });
  try {
    const running = await r.until('both processes hold their memory', async () => {
      const job = await r.job(both.id);
      return job?.state === 'running' && job.usedMemory === 2 * GiB ? job : undefined;
    });
    const before = used();
    const parked = await r.engine.call('jobs.park', { job: running.id });
    assert.equal(parked.state, 'parked');
    assert.match(parked.history.at(-1)!.reason, /^parked by \S+: 2G of GPUs 0,2 memory moved to host memory$/);
    assert.deepEqual(used(), [before[0] - GiB, before[1], before[2] - GiB], 'a GiB off each of its GPUs');
    const unparked = await r.engine.call('jobs.unpark', { job: running.id });
    assert.equal(unparked.state, 'running');
    assert.match(unparked.history.at(-1)!.reason, /on GPUs 0,2$/);
    assert.deepEqual(used(), before, 'back on both');
    const pids = jobProcessesOn(driver, both.id);
    const suspended = await r.engine.call('jobs.suspend', { job: both.id });
    assert.equal(suspended.state, 'suspended');
    await new Promise((done) => setTimeout(done, 200)); // a launch already past the gate may still finish
    const since = process.hrtime.bigint();
    await new Promise((done) => setTimeout(done, 400));
    const after = async (gpu: number) => ofPids(await driver.execlog(gpu), pids).filter((k) => BigInt(k.enqueueNs) > since).length;
    assert.deepEqual([await after(0), await after(2)], [0, 0], 'suspended: no kernel enqueued on either of its GPUs');
    await r.engine.call('jobs.resume', { job: both.id });
    const resumedAt = process.hrtime.bigint();
    await r.until('kernels on both GPUs again', async () => {
      const again = async (gpu: number) => ofPids(await driver.execlog(gpu), pids).some((k) => BigInt(k.enqueueNs) > resumedAt);
      return (await again(0)) && (await again(2));
    });
  } finally {
    await r.stop();
    killJobProcessesOn(driver, both.id);
  }
});

test('each process of a job on two GPUs with --mem 1G is told 1G on its GPU, less what it holds there', { skip }, async () => {
  const gate = LaunchGate.create({ dir: join(dir, 'told'), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, 'told', { gate }, cleanups);
  const GiB = 1024 ** 3;
  const probe = preloadProbePath();
  // rank 0 only looks; rank 1 holds half a GiB first
  const script = `"${probe}" --device 0 meminfo totalmem & "${probe}" --device 1 alloc:${GiB / 2} meminfo & wait`;
  try {
    const job = await r.engine.call('jobs.submit', { argv: ['/bin/sh', '-c', script], cwd: dir, gpu: [0, 1], memoryQuotaBytes: GiB });
    const done = await r.until('the job finished', async () => {
      const j = await r.job(job.id);
      return j?.state === 'finished' ? j : undefined;
    });
    const lines = readFileSync(done.logPath!, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { op: string; free?: number; total?: number; code: number });
    const told = lines.filter((l) => l.op === 'meminfo').map((l) => [l.total, l.free]).sort((a, b) => b[1]! - a[1]!);
    assert.deepEqual(told, [[GiB, GiB], [GiB, GiB / 2]], `one GPU's share each (not the job's 2G): ${JSON.stringify(lines)}`);
    assert.deepEqual(lines.filter((l) => l.op === 'totalmem').map((l) => l.total), [GiB]);
    assert.deepEqual(lines.filter((l) => l.op === 'alloc').map((l) => l.code), [0]);
  } finally {
    await r.stop();
  }
});

test('the API refuses a bad request for several GPUs with a sentence and changes nothing; a queued job on two GPUs is not moved to one', { skip }, async () => {
  const r = schedulerRig({ driver, nvml, dir }, 'refusals', {}, cleanups);
  try {
    const submit = (over: Record<string, unknown>) => r.engine.call('jobs.submit', { argv: train(1), cwd: dir, gpu: 'auto', ...over } as never);
    const refused = async (over: Record<string, unknown>, message: RegExp) => assert.rejects(submit(over), (e: Error) => message.test(e.message));
    await refused({ gpu: [0, 0] }, /GPU 0 is named twice in 0,0/);
    await refused({ gpuCount: 4 }, /asks for 4 GPUs, and there are only 3 GPUs on this box/);
    await refused({ gpu: [0, 1], gpuCount: 2 }, /either by index \(0,1\) or by count \(2\), not both/);
    await refused({ gpu: 1, gpuCount: 2 }, /A GPU count \(2\) goes with gpu "auto"/);
    await refused({ gpu: [0, 5] }, /GPU 5 does not exist: this box has GPUs 0-2/);
    await refused({ gpuCount: 2, mode: 'mps', mpsSharePercent: 50 }, /A job on 2 GPUs runs on whole GPUs: mode mps/);
    await refused({ gpu: [0, 1], memoryQuotaBytes: 41 * 1024 ** 3 }, /The memory quota 41G is more than GPU 0 has \(40G\)/);
    assert.deepEqual((await r.engine.call('jobs.list', { includeFinished: true })).filter((j) => j.managed), [], 'nothing was submitted'); // the enrolled test's processes may still run
    const blocker = await submit({ gpu: 1, mode: 'exclusive', argv: train(30) });
    const queued = await submit({ gpu: [0, 1] });
    await r.until('the blocker runs', async () => (await r.job(blocker.id))?.state === 'running');
    await assert.rejects(r.engine.call('jobs.place', { job: queued.id, gpu: 2 }), /Cannot move j2 to GPU 2: it asked for 2 GPUs \(0,1\)/);
    await assert.rejects(r.engine.call('jobs.setMode', { job: queued.id, mode: 'mps', mpsSharePercent: 50 }), /runs on 2 whole GPUs/);
    assert.deepEqual((await r.job(queued.id))!.gpus, [0, 1], 'unchanged');
    await r.engine.call('jobs.terminate', { job: queued.id });
    await r.engine.call('jobs.terminate', { job: blocker.id });
  } finally {
    await r.stop();
    killJobProcessesOn(driver, 'j1');
  }
});
