// The scheduler in an engine on the simulated driver, ticks driven by the test:
// suspend/resume of a process gpushare did not start, priority holds, bad input, the queue, and which
// process named nvidia-cuda-mps-server is our MPS server (no job) and which is a user's process like any other.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { parentWithChildren } from '../../testing/parent-with-children.js';
import { untilWith } from '../../testing/until.js';
import type { Alert, JobView } from '../../../shared/jobs.js';
import type { Caller } from '../api/dispatcher.js';
import { Engine } from '../engine.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver, type FakejobHandle } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { readProcStatus } from '../proc/proc-status.js';
import { fakejobFor, useSimulatedRig } from '../testing/simulated-rig.js';
import { mpsDirectories } from '../mps/mps-control.js';
import { RealMpsControl } from '../mps/real-mps-control.js';
import { attachScheduler, type AttachedScheduler, type AttachSchedulerOptions } from './attach.js';
import { simulatedBackend } from '../gpu/gpu-backend.js';

const GiB = 1024 ** 3;
const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-sched-', (rig) => ({ driver, nvml, dir } = rig));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Rig {
  engine: Engine;
  attached: AttachedScheduler;
  /** One sampler tick through the scheduler, after `waitMs` of GPU time. */
  tick(waitMs?: number): Promise<void>;
  job(id: string): Promise<JobView | undefined>;
}

function rig(name: string, options: Partial<AttachSchedulerOptions> = {}): Rig {
  const engine = new Engine(simulatedBackend(driver, nvml, () => undefined));
  const attached = attachScheduler(engine, {
    ...options,
    gate: null,
    stateDir: join(dir, name, 'state'),
    runtimeDir: join(dir, name, 'run'),
    guardian: false,
  });
  cleanups.push(() => attached.stop());
  return {
    engine,
    attached,
    async tick(waitMs = 250) {
      await sleep(waitMs);
      engine.sampler.sampleNow();
    },
    job: async (id) => (await engine.call('jobs.list', { includeFinished: true })).find((j) => j.id === id),
  };
}

const fakejob = (t: TestContext, args: string[]): FakejobHandle => fakejobFor(t, driver, args);

// each step ticks the scheduler itself: 20 ticks, no pause between
const until = untilWith({ tries: 20, intervalMs: 0 });

const procState = (pid: number): string | undefined => readProcStatus(pid)?.state;

test('suspending a process gpushare did not start stops its GPU work; resuming restores it', async (t) => {
  const r = rig('suspend');
  const train = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  await train.ready;
  const id = `p${train.pid}`;
  const seen = await until('the process computing', async () => {
    await r.tick();
    const j = await r.job(id);
    return j && (j.smPercent ?? 0) > 0 ? j : undefined;
  });
  assert.equal(seen.managed, false);
  assert.equal(seen.gpu, 0);
  assert.equal(seen.usedMemory, GiB);
  assert.equal(seen.uid, process.getuid!());

  const suspended = await r.engine.call('jobs.suspend', { job: id });
  assert.equal(suspended.state, 'suspended');
  assert.equal(suspended.suspendedBy, 'user');
  // a signal is delivered when the process next runs: on 2 busy cores /proc may say R for a moment after kill() returned
  await until('the process stopped (T in /proc)', () => procState(train.pid) === 'T', { intervalMs: 10 });
  await r.tick();
  await r.tick();
  assert.equal((await r.job(id))!.smPercent, 0, 'no SM time by the second tick after SIGSTOP');
  assert.equal((await r.job(id))!.usedMemory, GiB, 'memory stays allocated while suspended');

  const resumed = await r.engine.call('jobs.resume', { job: id });
  assert.equal(resumed.state, 'running');
  assert.equal(resumed.suspendedBy, null);
  await until('the process continued (not T in /proc)', () => procState(train.pid) !== 'T', { intervalMs: 10 });
  await until('SM time again', async () => {
    await r.tick();
    return ((await r.job(id))?.smPercent ?? 0) > 0;
  });
  assert.deepEqual(
    (await r.job(id))!.history.map((h) => h.state),
    ['running', 'suspended', 'running'],
  );
  const audit = await r.engine.call('audit.list', {});
  assert.deepEqual(audit.map((a) => [a.what, a.result]).reverse(), [
    ['jobs.suspend', 'ok'],
    ['jobs.resume', 'ok'],
  ]);
});

test('what the guardian let go of while the engine was hung is taken in by the loop: the job runs, its history says why, and no hold is put back', async (t) => {
  const r = rig('guardian-released');
  const train = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  await train.ready;
  const id = `p${train.pid}`;
  await until('the process seen', async () => {
    await r.tick();
    return r.job(id);
  });
  assert.equal((await r.engine.call('jobs.suspend', { job: id })).state, 'suspended');
  process.kill(train.pid, 'SIGCONT'); // what the guardian does for a hung engine, then tells it (Freezer's onGuardianReleased)
  r.attached.scheduler.guardianReleased([{ jobId: id }]);
  const back = (await r.job(id))!;
  assert.equal(back.state, 'running');
  assert.equal(back.history.at(-1)!.reason, 'resumed by the guardian while the engine was stopped');
  await r.tick();
  assert.equal((await r.job(id))!.state, 'running', 'no hold is left to put back');
  assert.deepEqual((await r.job(id))!.history.map((h) => h.state), ['running', 'suspended', 'running']);
});

test('a best-effort process is suspended while a high-priority job computes on its GPU, and resumed after it leaves', async (t) => {
  const r = rig('priority');
  const alerts: Alert[] = [];
  r.engine.events.on('alert', (a) => alerts.push(a));
  const high = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  const low = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  await Promise.all([high.ready, low.ready]);
  const [hi, lo] = [`p${high.pid}`, `p${low.pid}`];
  await until('both listed', async () => {
    await r.tick();
    return (await r.job(hi)) && (await r.job(lo));
  });
  await r.engine.call('jobs.setPriority', { job: lo, priority: 'best-effort' });
  await r.engine.call('jobs.setPriority', { job: hi, priority: 'high' });
  const held = await until('the best-effort process held', async () => {
    await r.tick();
    const j = await r.job(lo);
    return j?.state === 'suspended' ? j : undefined;
  });
  await until('the process stopped (T in /proc)', () => procState(low.pid) === 'T', { intervalMs: 10 }); // a signal lands when the process next runs
  assert.match(held.history.at(-1)!.reason, new RegExp(`${hi} \\(higher priority\\) is active on GPU 0`));
  assert.equal(held.suspendedBy, 'priority');
  await r.tick();
  await r.tick();
  assert.equal((await r.job(lo))!.state, 'suspended', 'stays held while the high job computes');
  const heldAlerts = alerts.filter((a) => a.jobId === lo && a.kind === 'contention');
  assert.equal(heldAlerts.length, 1, 'one alert per onset, not one per tick');

  high.kill('SIGKILL');
  await high.exited;
  const back = await until('the best-effort process resumed', async () => {
    await r.tick();
    const j = await r.job(lo);
    return j?.state === 'running' ? j : undefined;
  });
  await until('the process continued (not T in /proc)', () => procState(low.pid) !== 'T', { intervalMs: 10 });
  assert.equal(await r.job(hi), undefined, 'the high process left with its process');
  assert.deepEqual(back.history.map((h) => h.state), ['running', 'suspended', 'running']);
});

test('a process that calls itself nvidia-cuda-mps-server is no MPS server of ours: it is listed as its owner\'s and held behind a high-priority job', async (t) => {
  const r = rig('mps-server-name');
  const high = fakejob(t, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  // what `exec -a nvidia-cuda-mps-server python train.py` makes: no gpushare MPS daemon started it
  const disguised = fakejobFor(t, driver, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60'], 'nvidia-cuda-mps-server');
  await Promise.all([high.ready, disguised.ready]);
  assert.match(readFileSync(`/proc/${disguised.pid}/cmdline`, 'latin1'), /^nvidia-cuda-mps-server\0/);
  const [hi, lo] = [`p${high.pid}`, `p${disguised.pid}`];
  const listed = await until('the disguised process listed as a job', async () => {
    await r.tick();
    return (await r.job(hi)) && (await r.job(lo));
  });
  assert.equal(listed.managed, false);
  assert.equal(listed.uid, process.getuid!(), 'its owner is the user who ran it');
  assert.equal(listed.usedMemory, GiB, 'its GPU memory counts as its owner\'s');
  await r.engine.call('jobs.setPriority', { job: lo, priority: 'best-effort' });
  await r.engine.call('jobs.setPriority', { job: hi, priority: 'high' });
  const held = await until('the disguised best-effort process held', async () => {
    await r.tick();
    const j = await r.job(lo);
    return j?.state === 'suspended' ? j : undefined;
  });
  assert.equal(held.suspendedBy, 'priority');
  await until('the disguised process stopped (T in /proc)', () => procState(disguised.pid) === 'T', { intervalMs: 10 });
});

/** A process `argv0` whose child is `sleep`, run as `exec -a nvidia-cuda-mps-server` with this pipe directory: the child's pid. */
async function serverUnder(t: TestContext, argv0: string, pipeDir: string): Promise<number> {
  const children = parentWithChildren(t, argv0, 'exec -a nvidia-cuda-mps-server sleep 60 & wait', { env: { ...process.env, CUDA_MPS_PIPE_DIRECTORY: pipeDir } });
  return until('the server process started', () => children().find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('nvidia-cuda-mps-server\0')), { tries: 200, intervalMs: 10 });
}

test('the server our own MPS control daemon started is no job; a process of that name under anyone else is listed as its owner\'s', async (t) => {
  const name = 'mps-server-own';
  const runtimeDir = join(dir, name, 'run');
  const me = userInfo();
  const mps = new RealMpsControl({ runtimeDir, identity: { uid: me.uid, user: me.username } }); // this box's own /proc
  const r = rig(name, { mps });
  const ourPipe = mpsDirectories(runtimeDir, 0).pipeDir;
  const own = await serverUnder(t, 'nvidia-cuda-mps-control', ourPipe); // what our `nvidia-cuda-mps-control -d` forks
  const forged = await serverUnder(t, 'bash', ourPipe); // our pipe copied, its parent no control daemon of ours
  for (const pid of [own, forged]) await driver.attach({ device: 0, pid, mem: GiB, type: 'mps' });
  const listed = await until('the forged server listed as a job', async () => {
    await r.tick(0);
    return r.job(`p${forged}`);
  });
  assert.equal(listed.uid, me.uid);
  assert.equal(listed.usedMemory, GiB, 'its GPU memory counts as its owner\'s');
  const snapshot = r.engine.sampler.latest!;
  assert.deepEqual(snapshot.processes.filter((p) => p.pid === own).map((p) => p.command), ['nvidia-cuda-mps-server'], 'the driver lists our server too');
  assert.equal(await r.job(`p${own}`), undefined, 'our own MPS server is no job: never held, never parked');
  assert.deepEqual(mps.status([{ index: 0, uuid: snapshot.gpus[0].uuid }])[0].serverPids, [own], "the daemon's status names the same server, not the forged one");
});

test('a job that needs more memory than is free waits queued, then starts when memory frees up', async (t) => {
  const r = rig('queue');
  const alerts: Alert[] = [];
  r.engine.events.on('alert', (a) => alerts.push(a));
  const hog = fakejob(t, ['--device', '0', '--mem', '30G', 'hold', '--duration', '60']);
  await hog.ready;
  await r.tick(0);
  const submitted = await r.engine.call('jobs.submit', {
    argv: [FAKEJOB, '--mem', '12G', 'train', '--kernel-ms', '2', '--duration', '0.5'],
    cwd: dir,
    gpu: 'auto',
    memoryRequestBytes: 12 * GiB,
    memoryQuotaBytes: 16 * GiB,
  });
  assert.equal(submitted.state, 'queued');
  await r.tick();
  await r.tick();
  const waiting = alerts.filter((a) => a.kind === 'waiting');
  assert.equal(waiting.length, 1, 'one "waiting" alert for the whole wait');
  assert.equal(waiting[0].jobId, submitted.id);
  assert.match(waiting[0].message, /is queued: no GPU fits it now \(GPU 0 has [\d.]+G free and j1 needs 12G\)/);
  assert.equal((await r.job(submitted.id))!.state, 'queued');

  hog.kill('SIGKILL');
  await hog.exited;
  const started = await until('the queued job started', async () => {
    await r.tick();
    const j = await r.job(submitted.id);
    return j?.state === 'running' ? j : undefined;
  });
  assert.equal(started.gpu, 0);
  assert.ok(started.pid);
  const finished = await until('the job finished', async () => {
    await r.tick(200);
    const j = await r.job(submitted.id);
    return j && j.state !== 'running' ? j : undefined;
  }, { tries: 40 });
  assert.equal(finished.state, 'finished');
  assert.equal(finished.exitCode, 0);
  assert.deepEqual(finished.history.map((h) => h.state), ['queued', 'starting', 'running', 'finished']);
  assert.ok(existsSync(finished.logPath!));
  const log = readFileSync(finished.logPath!, 'utf8');
  assert.match(log, /"event":"ready".*"allocated":12884901888/);
  assert.match(log, /"event":"done"/);
  assert.deepEqual(
    alerts.filter((a) => a.jobId === submitted.id).map((a) => a.kind),
    ['waiting', 'finished'],
  );
});

test('a process over its memory quota is alerted once, suspended after the grace period, resumed when the quota is lifted', async (t) => {
  const r = rig('quota', { unmanagedQuota: { graceMs: 0, action: 'suspend' } });
  const alerts: Alert[] = [];
  r.engine.events.on('alert', (a) => alerts.push(a));
  const hog = fakejob(t, ['--device', '0', '--mem', '2G', 'hold', '--duration', '60']);
  await hog.ready;
  const id = `p${hog.pid}`;
  await until('listed', async () => {
    await r.tick(0);
    return r.job(id);
  });
  await r.engine.call('jobs.setQuota', { job: id, bytes: GiB });
  await r.tick(0);
  await r.tick(0);
  const over = (await r.job(id))!;
  assert.equal(over.state, 'suspended');
  assert.equal(over.suspendedBy, 'quota');
  assert.match(over.history.at(-1)!.reason, /over its memory quota/);
  await until('the process stopped (T in /proc)', () => procState(hog.pid) === 'T', { intervalMs: 10 }); // a signal lands when the process next runs
  assert.deepEqual(alerts.filter((a) => a.jobId === id).map((a) => [a.kind, a.message.replace(/p\d+/, 'pN')]), [
    ['quota', 'pN (fakejob, root) uses 2G of GPU memory, over its 1G quota.'.replace('root', over.owner)],
  ]);
  await r.engine.call('jobs.setQuota', { job: id, bytes: null });
  await r.tick(0);
  assert.equal((await r.job(id))!.state, 'running');
  await until('the process continued (not T in /proc)', () => procState(hog.pid) !== 'T', { intervalMs: 10 });
});

// last: pid 1 stays on the simulated GPU for the rest of this file
test('bad requests get a clear error and change nothing', async (t) => {
  const r = rig('bad-input');
  const mine = fakejob(t, ['--device', '0', '--mem', '512M', 'hold', '--duration', '60']);
  await mine.ready;
  await driver.attach({ device: 0, pid: 1, mem: GiB }); // pid 1 (root's init) on the GPU: another user's process
  const id = `p${mine.pid}`;
  await until('both listed', async () => {
    await r.tick();
    return (await r.job(id)) && (await r.job('p1'));
  });
  const before = JSON.stringify(await r.engine.call('jobs.list', { includeFinished: true }));
  const stranger: Caller = { uid: 1000, gid: 1000, groups: [], user: 'alice', pid: null, admin: false, via: 'socket' };
  const asNonRoot = process.getuid!() === 0 ? stranger : r.engine.owner;

  const refusals: Array<[string, Promise<unknown>, string, RegExp]> = [
    ['unknown job', r.engine.call('jobs.suspend', { job: 'j999' }), 'not-found', /No job j999/],
    ['negative quota', r.engine.call('jobs.setQuota', { job: id, bytes: -1 }), 'invalid-request', /bytes: must be at least 0/],
    ['quota above the GPU', r.engine.call('jobs.setQuota', { job: id, bytes: 64 * GiB }), 'invalid-request', /64G is more than GPU 0 has \(40G\)/],
    ['priority "urgent"', r.engine.call('jobs.setPriority', { job: id, priority: 'urgent' as never }), 'invalid-request', /"high", "normal", "best-effort"; got "urgent"/],
    ["another user's process", r.engine.call('jobs.suspend', { job: 'p1' }, asNonRoot), 'forbidden', /p1: it belongs to root \(uid 0\)/],
    ["another user's process (terminate)", r.engine.call('jobs.terminate', { job: 'p1' }, asNonRoot), 'forbidden', /belongs to root/],
    ['a command that does not exist', r.engine.call('jobs.submit', { argv: ['no-such-command-gpushare'], gpu: 0, cwd: dir }), 'invalid-request', /command not found: no-such-command-gpushare/],
    ['a GPU that does not exist', r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], gpu: 3, cwd: dir }), 'invalid-request', /GPU 3 does not exist/],
    ['MPS mode for a running process', r.engine.call('jobs.setMode', { job: id, mode: 'mps' }), 'conflict', /the MPS share is fixed when a client starts: terminate and resubmit/],
    ['unpark a job that is not parked', r.engine.call('jobs.unpark', { job: id }), 'conflict', /Cannot unpark p\d+: it is not parked \(it is running\)/],
  ];
  for (const [what, call, code, message] of refusals) {
    await assert.rejects(call, (error: Error & { code?: string }) => {
      assert.equal(error.code ?? 'invalid-request', code, `${what}: ${error.message}`);
      assert.match(error.message, message, what);
      return true;
    });
  }
  assert.equal(JSON.stringify(await r.engine.call('jobs.list', { includeFinished: true })), before, 'the jobs are as they were');
  assert.notEqual(procState(mine.pid), 'T');
  assert.notEqual(procState(1), 'T');
  const audit = (await r.engine.call('audit.list', {})).reverse();
  assert.equal(audit.length, refusals.length, 'every refused change is audited');
  assert.ok(audit.every((a) => a.result !== 'ok'), 'and none of them as ok');
  // the refused submissions used no job id
  const first = await r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold', '--duration', '0.1'], gpu: 0, cwd: dir });
  assert.equal(first.id, 'j1');
});
