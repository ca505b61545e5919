// A job you can trust, on the simulated driver: one start per job even when a start fails
// inside an evaluation, a parked job stays parked whatever the policies decide, and jobs
// outlive the engine (ids never reused, queued jobs wait on, running ones are re-adopted).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Priority } from '../../../shared/jobs.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { JobStore } from '../store/job-store.js';
import { UsageStore } from '../store/usage-store.js';
import { jobProcessesOn, killJobProcessesOn, useSimulatedRig } from '../testing/simulated-rig.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import type { AttachSchedulerOptions } from './attach.js';
import type { LaunchGate } from '../gate/launch-gate.js';
import type { GateSlot, GateSlotRequest, JobGate } from './job-gate.js';

const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-trust-', (rig) => ({ driver, nvml, dir } = rig));
const processesOf = (jobId: string) => jobProcessesOn(driver, jobId);
const killAll = (jobId: string) => killJobProcessesOn(driver, jobId);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A launch gate that only records what it is asked (jobs run without the preload library). */
class RecordingGate {
  readonly allocations: GateSlotRequest[] = [];
  readonly calls: string[] = [];
  private next = 0;
  constructor(private readonly refuse: (request: GateSlotRequest) => string | null = () => null) {}
  allocateSlot(request: GateSlotRequest): GateSlot {
    this.allocations.push(request);
    const refusal = this.refuse(request);
    if (refusal) throw new Error(refusal);
    return { slot: this.next++, env: {} };
  }
  setPid(slot: number, pid: number): void {
    this.calls.push(`pid ${slot} ${pid}`);
  }
  setPriority(slot: number, priority: Priority): void {
    this.calls.push(`priority ${slot} ${priority}`);
  }
  setPaused(slot: number, paused: boolean): void {
    this.calls.push(`paused ${slot} ${paused}`);
  }
  setQuota(slot: number, bytes: number | null): void {
    this.calls.push(`quota ${slot} ${bytes}`);
  }
  setMember(slot: number, member: boolean): void {
    this.calls.push(`member ${slot} ${member}`);
  }
  releaseSlot(slot: number): void {
    this.calls.push(`release ${slot}`);
  }
  close(): void {
    this.calls.push('close');
  }
}

const rig = (name: string, options: Partial<AttachSchedulerOptions> = {}) => schedulerRig({ driver, nvml, dir }, name, options, cleanups);



const train = (seconds: number, mem = '1G') => [FAKEJOB, '--mem', mem, 'train', '--kernel-ms', '5', '--duration', String(seconds)];

test('a job that cannot start inside an evaluation does not make the next queued job start twice', async (t) => {
  const gate = new RecordingGate((request) => (request.jobId === 'j1' ? 'no gate slot left for j1' : null));
  const r = rig('reentry', { gate: gate as unknown as JobGate });
  t.after(() => killAll('j2'));
  // both wait queued behind a process holding most of the GPU, so the evaluation after it leaves plans both
  const hog = driver.spawnFakejob(['--device', '0', '--mem', '30G', 'hold', '--duration', '60']);
  t.after(() => hog.kill('SIGKILL'));
  await hog.ready;
  await r.tick();
  for (let i = 0; i < 2; i++) await r.engine.call('jobs.submit', { argv: train(30), cwd: dir, gpu: 0, memoryRequestBytes: 15 * GiB });
  await r.tick();
  assert.deepEqual([(await r.job('j1'))?.state, (await r.job('j2'))?.state], ['queued', 'queued']);
  hog.kill('SIGKILL');
  await hog.exited;
  const second = await r.until('j2 running', async () => ((await r.job('j2'))?.state === 'running' ? true : undefined));
  assert.ok(second);
  await r.tick();
  assert.equal((await r.job('j1'))?.state, 'failed');
  assert.match((await r.job('j1'))!.history.at(-1)!.reason, /could not start: no gate slot left for j1/);
  assert.deepEqual(
    gate.allocations.map((a) => a.jobId),
    ['j1', 'j2'],
    'each job asked for one slot: j2 was started once',
  );
  assert.equal(processesOf('j2').length, 1, 'one process for j2');
});

test('a parked job stays parked while the policies run, and comes back when unparked', async (t) => {
  const gate = new RecordingGate();
  const r = rig('park-gated', { gate: gate as unknown as JobGate });
  // a process gpushare did not start, made high priority: the gate cannot see it, so the engine pauses j1's slot for it
  const high = driver.spawnFakejob(['--device', '0', '--mem', '2G', 'train', '--kernel-ms', '5', '--duration', '60']);
  t.after(() => {
    high.kill('SIGKILL');
    killAll('j1');
  });
  await high.ready;
  await r.tick();
  await r.engine.call('jobs.setPriority', { job: `p${high.pid}`, priority: 'high' });
  await r.engine.call('jobs.submit', { argv: train(60, '3G'), cwd: dir, gpu: 0, priority: 'best-effort' });
  // on the GPU first (its memory seen): a job held back before its first CUDA call has nothing a park could lock
  await r.until('j1 on the GPU, held back behind the high process', async () => {
    const j1 = await r.job('j1');
    return j1?.state === 'gated' && (j1.usedMemory ?? 0) > 0;
  });
  const parked = await r.engine.call('jobs.park', { job: 'j1' });
  assert.equal(parked.state, 'parked');
  for (let i = 0; i < 4; i++) await r.tick(); // the high job stays active: the policies run on every tick
  const still = (await r.job('j1'))!;
  assert.equal(still.state, 'parked', `still parked, not released: ${still.history.map((h) => h.state).join(' → ')}`);
  assert.ok(gate.calls.includes('member 0 false'), 'a parked job leaves its gate domain');
  assert.equal((await driver.dump()).devices[0].processes.find((p) => p.pid === still.pid)?.checkpointState, 'checkpointed');
  const back = await r.engine.call('jobs.unpark', { job: 'j1' });
  assert.ok(back.state === 'running' || back.state === 'gated', `unparked into ${back.state}`);
  assert.equal((await driver.dump()).devices[0].processes.find((p) => p.pid === still.pid)?.checkpointState, 'running');
});

test('jobs outlive the engine: ids continue, a queued job waits on, a running job is re-adopted, a gone one is lost', async (t) => {
  const dbPath = join(dir, 'outlive.db');
  const open = async () => {
    const usage = await UsageStore.open({ path: dbPath });
    const jobStore = await JobStore.open(dbPath);
    return { usage, jobStore, close: async () => (await jobStore.close(), await usage.close()) };
  };
  const first = await open();
  const a = rig('outlive', { jobStore: first.jobStore });
  t.after(() => ['j1', 'j2', 'j3', 'j4'].forEach(killAll));
  await a.attached.ready;
  await a.engine.call('jobs.submit', { argv: train(60), cwd: dir, gpu: 0 });
  await a.engine.call('jobs.submit', { argv: train(60), cwd: dir, gpu: 0 });
  // once both hold their memory: before they allocate, the GPU looks empty and a 39G job fits
  const running = await a.until('j1 and j2 running, holding their memory', async () => {
    const [j1, j2] = [await a.job('j1'), await a.job('j2')];
    return j1?.state === 'running' && j2?.state === 'running' && (j1.usedMemory ?? 0) >= GiB && (j2.usedMemory ?? 0) >= GiB ? { j1, j2 } : undefined;
  });
  await a.engine.call('jobs.submit', { argv: train(60), cwd: dir, gpu: 0, memoryRequestBytes: 39 * GiB }); // more than is free: stays queued
  await a.tick();
  assert.equal((await a.job('j3'))?.state, 'queued');
  const left = await a.stop();
  assert.deepEqual(left, []);
  assert.deepEqual(processesOf('j1'), [running.j1.pid], 'stopping the engine leaves j1 running');
  assert.deepEqual(processesOf('j2'), [running.j2.pid]);
  await first.close();
  process.kill(running.j2.pid!, 'SIGKILL'); // j2 ends while no engine watches
  await sleep(200);

  const second = await open();
  t.after(() => second.close());
  const b = rig('outlive', { jobStore: second.jobStore });
  await b.attached.ready;
  const adopted = (await b.job('j1'))!;
  assert.equal(adopted.state, 'running');
  assert.equal(adopted.pid, running.j1.pid, 'the same process');
  assert.equal(adopted.managed, true);
  assert.match(adopted.history.at(-1)!.reason, /re-adopted by a new engine/);
  assert.equal((await b.job('j2'))?.state, 'lost');
  assert.equal((await b.job('j3'))?.state, 'queued', 'the queued job waits on');
  const next = await b.engine.call('jobs.submit', { argv: train(60), cwd: dir, gpu: 0 });
  assert.equal(next.id, 'j4', 'ids are never reused');
  await b.until('j1 seen on the GPU by the new engine', async () => ((await b.job('j1'))?.usedMemory ?? 0) >= GiB);
  process.kill(running.j1.pid!, 'SIGKILL');
  await b.until('j1 lost once its process ends', async () => (await b.job('j1'))?.state === 'lost');
  await b.stop();
});

test('jobs parked when their engine stopped are taken back one after another: the first restored while there is room, the next still parked', async (t) => {
  const dbPath = join(dir, 'parked-outlive.db');
  const open = async () => {
    const usage = await UsageStore.open({ path: dbPath });
    const jobStore = await JobStore.open(dbPath);
    return { jobStore, close: async () => (await jobStore.close(), await usage.close()) };
  };
  t.after(() => ['j1', 'j2'].forEach(killAll));
  const first = await open();
  const a = rig('parked-outlive', { jobStore: first.jobStore });
  await a.attached.ready;
  for (let i = 0; i < 2; i++) await a.engine.call('jobs.submit', { argv: train(120, '3G'), cwd: dir, gpu: 0 });
  const jobs = await a.until('j1 and j2 on the GPU', async () => {
    const [j1, j2] = [await a.job('j1'), await a.job('j2')];
    return j1?.state === 'running' && j2?.state === 'running' && (j1.usedMemory ?? 0) >= 3 * GiB && (j2.usedMemory ?? 0) >= 3 * GiB ? { j1, j2 } : undefined;
  });
  for (const job of ['j1', 'j2']) assert.equal((await a.engine.call('jobs.park', { job })).state, 'parked');
  await a.tick();
  const free = a.attached.scheduler.snapshot().gpus[0].memoryFree!;
  const jobMemory = Math.max(jobs.j1.usedMemory!, jobs.j2.usedMemory!);
  // the engine stops with less free than either job holds: neither is restored, both stay parked
  const full = driver.spawnFakejob(['--device', '0', '--mem', String(free - 2 * GiB), 'hold', '--duration', '120']);
  t.after(() => full.kill('SIGKILL'));
  await full.ready;
  assert.deepEqual((await a.stop()).sort(), ['j1', 'j2']);
  await first.close();
  full.kill('SIGKILL');
  await full.exited;
  // room for one of them, not both
  const room = driver.spawnFakejob(['--device', '0', '--mem', String(free - jobMemory - GiB), 'hold', '--duration', '120']);
  t.after(() => room.kill('SIGKILL'));
  await room.ready;

  const second = await open();
  t.after(() => second.close());
  const b = rig('parked-outlive', { jobStore: second.jobStore });
  await b.attached.ready;
  const [j1, j2] = [(await b.job('j1'))!, (await b.job('j2'))!];
  assert.equal(j1.state, 'running', `j1 restored first: ${j1.history.map((h) => h.state).join(' → ')}`);
  assert.match(j1.history.at(-1)!.reason, /re-adopted by a new engine \(pid \d+\)/);
  assert.equal(j2.state, 'parked', `j2 found no room after j1: ${j2.history.map((h) => h.state).join(' → ')}`);
  assert.match(j2.history.at(-1)!.reason, /re-adopted by a new engine, still parked \(not enough free memory on GPU 0\)/);
  const dump = (await driver.dump()).devices[0].processes;
  assert.equal(dump.find((p) => p.pid === j1.pid)?.checkpointState, 'running');
  assert.equal(dump.find((p) => p.pid === j2.pid)?.checkpointState, 'checkpointed');
  await b.stop();
});

test('the engine asks the gate to take a job stopped from outside out of its domain, and to put it back when it runs again', async (t) => {
  const gate = new RecordingGate();
  const r = rig('outside-stop', { gate: gate as unknown as JobGate });
  t.after(() => killAll('j1'));
  await r.engine.call('jobs.submit', { argv: train(60), cwd: dir, gpu: 0, priority: 'best-effort' });
  const job = await r.until('j1 running', async () => {
    const j = await r.job('j1');
    return j?.state === 'running' ? j : undefined;
  });
  process.kill(job.pid!, 'SIGSTOP'); // Ctrl-Z in its terminal, or a debugger: it may be stopped inside a launch
  await r.until('out of the gate', async () => gate.calls.includes('member 0 false'));
  assert.ok(!gate.calls.includes('member 0 true'));
  process.kill(job.pid!, 'SIGCONT');
  await r.until('back in the gate', async () => gate.calls.includes('member 0 true'));
  assert.deepEqual(
    gate.calls.filter((c) => c.startsWith('member')),
    ['member 0 false', 'member 0 true'],
  );
});

test('allocations refused over a job quota raise one out-of-memory alert per job, whether it keeps running or ends', async (t) => {
  const r = rig('oom', { gate: undefined }); // the real launch gate and preload library
  t.after(() => ['j1', 'j2'].forEach(killAll));
  assert.equal(r.attached.gateMissing, null, 'the preload library is built');
  const alloc = (count: number, hold: boolean) => [FAKEJOB, 'alloc', '--chunk', '512M', '--count', String(count), ...(hold ? ['--hold'] : [])];
  await r.engine.call('jobs.submit', { argv: alloc(4, true), cwd: dir, gpu: 0, memoryQuotaBytes: GiB }); // 2 of 4 refused, then it holds on
  await r.engine.call('jobs.submit', { argv: alloc(3, false), cwd: dir, gpu: 0, memoryQuotaBytes: GiB }); // 1 of 3 refused, then it exits
  await r.until('j2 ended', async () => (await r.job('j2'))?.state === 'finished');
  const oom = async () => (await r.engine.call('alerts.list', {})).filter((a) => a.kind === 'out-of-memory');
  await r.until('an alert for j1', async () => (await oom()).some((a) => a.jobId === 'j1'));
  for (let i = 0; i < 3; i++) await r.tick(); // it stays over: no second alert
  const alerts = await oom();
  assert.deepEqual(alerts.map((a) => a.jobId).sort(), ['j1', 'j2']);
  assert.match(alerts.find((a) => a.jobId === 'j1')!.message, /^j1 \(fakejob, \S+\) ran out of GPU memory over its 1G quota: 2 allocations were refused so far/);
  assert.match(alerts.find((a) => a.jobId === 'j2')!.message, /1 allocation was refused so far/);
});

test('a re-adopted job gets its gate slot back and obeys the new engine: a pause stops its launches, a resume lets them go on', async (t) => {
  const dbPath = join(dir, 'gate-again.db');
  const open = async () => {
    const usage = await UsageStore.open({ path: dbPath });
    const jobStore = await JobStore.open(dbPath);
    return { jobStore, close: async () => (await jobStore.close(), await usage.close()) };
  };
  t.after(() => killAll('j1'));
  const first = await open();
  const a = rig('gate-again', { gate: undefined, jobStore: first.jobStore });
  await a.attached.ready;
  await a.engine.call('jobs.submit', { argv: train(120), cwd: dir, gpu: 0 });
  await a.until('j1 running', async () => (await a.job('j1'))?.state === 'running');
  const slot = a.attached.scheduler.table.get('j1')!.slot;
  assert.notEqual(slot, null);
  await a.stop();
  await first.close();

  const second = await open();
  t.after(() => second.close());
  const b = rig('gate-again', { gate: undefined, jobStore: second.jobStore });
  await b.attached.ready;
  assert.equal(b.attached.scheduler.table.get('j1')!.slot, slot, 'the same slot');
  const gate = b.attached.scheduler.act.options.gate as LaunchGate;
  const launches = () => gate.readSlot(slot!).launches;
  const settled = async (moving: boolean) => {
    let last = launches();
    return b.until(moving ? 'launches going on' : 'launches stopped', async () => {
      await sleep(200);
      const now = launches();
      const result = moving ? now > last : now === last;
      last = now;
      return result;
    });
  };
  await settled(true);
  await b.engine.call('jobs.suspend', { job: 'j1' }); // through the gate: a paused slot
  assert.equal(gate.readSlot(slot!).paused, true);
  await settled(false);
  await b.engine.call('jobs.resume', { job: 'j1' });
  await settled(true);
  await b.stop();
});
