// The lab policy in a scheduler on the simulated driver: a limit holds a managed job queued with
// its reason until the user's other job ends; past the day's high-priority hours a high job starts
// as normal; an idle memory holder is reported, then parked (and not when park is off, or high).
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { parseLabPolicy } from '../../../../shared/lab-policy.js';
import type { NvmlBinding } from '../../gpu/nvml-types.js';
import type { FakejobHandle, SimulatedDriver } from '../../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../../paths.js';
import { HOUR_MS } from '../../store/usage-store.js';
import { schedulerRig } from '../../testing/scheduler-rig.js';
import { fakejobFor, useSimulatedRig } from '../../testing/simulated-rig.js';
import type { AttachSchedulerOptions } from '../attach.js';
import { CHECKPOINT_UNAVAILABLE, UnavailableCheckpointer } from '../../holds/checkpointer.js';
import { storeWithHistory } from './testing/usage-history.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const ME = userInfo().username;
const MIN = 60_000;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x8', 'gpushare-lab-', (rig) => ({ driver, nvml, dir } = rig));

function rig(name: string, options: Partial<AttachSchedulerOptions>) {
  return schedulerRig({ driver, nvml, dir }, name, options, cleanups);
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const fakejob = (t: TestContext, args: string[]): FakejobHandle => fakejobFor(t, driver, args);

test('a job over the user\'s GPU limit waits with the rule on its card, and starts when their other job ends', async () => {
  const r = rig('gpus', { labPolicy: parseLabPolicy({ limits: [{ user: ME, maxGpus: 1 }] }) });
  const train = [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60'];
  const j1 = await r.engine.call('jobs.submit', { argv: train, gpu: 0, cwd: dir });
  await r.until('j1 running', async () => (await r.job(j1.id))?.state === 'running');
  const j2 = await r.engine.call('jobs.submit', { argv: train, gpu: 1, cwd: dir });
  await r.tick();
  await r.tick();
  assert.equal((await r.job(j2.id))?.state, 'queued');
  const waiting = (await r.engine.call('alerts.active', {})).find((c) => c.kind === 'waiting' && c.jobId === j2.id);
  assert.equal(waiting?.message, `${j2.id} (fakejob, ${ME}) is queued: ${ME} may use at most 1 GPU at once (lab policy, user ${ME}) and already uses GPU 0.`);
  await r.engine.call('jobs.terminate', { job: j1.id });
  const started = await r.until('j2 running once j1 ended', async () => {
    const j = await r.job(j2.id);
    return j?.state === 'running' ? j : undefined;
  });
  assert.equal(started.gpu, 1);
  assert.equal((await r.job(j1.id))?.state === 'running', false);
  await r.engine.call('jobs.terminate', { job: j2.id });
  // gone before the next test's engine looks at the same simulated GPUs (else it lists the dying job as a process of its own)
  await r.until('j2 exited', async () => !isAlive(started.pid!) || undefined);
});

test('a job whose quota is more than its user may hold is refused at submit, and nothing is queued', async () => {
  const r = rig('memory', { labPolicy: parseLabPolicy({ limits: [{ maxMemory: '8G' }] }) });
  const before = await r.engine.call('jobs.list', { includeFinished: true });
  await assert.rejects(r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold'], gpu: 0, cwd: dir, memoryQuotaBytes: 12 * 1024 ** 3 }), {
    code: 'forbidden',
    message: `The job was not submitted: its memory quota 12G is more than ${ME} may hold at once (8G, lab policy, everyone); ask for at most that. Nothing was started.`,
  });
  assert.deepEqual(await r.engine.call('jobs.list', { includeFinished: true }), before);
});

test('past the day\'s high-priority GPU-hours (from the store) a new high job starts at normal priority and says why', async () => {
  const now = Date.now();
  const store = await storeWithHistory(join(dir, 'high.db'), [{ user: ME, pid: 4242, gpu: 0, from: now - 3 * HOUR_MS, to: now - MIN, priority: 'high' }], now);
  cleanups.push(() => store.close());
  const r = rig('high', { labPolicy: parseLabPolicy({ limits: [{ user: ME, highPriorityGpuHoursPerDay: 2 }] }), usage: store });
  const job = await r.engine.call('jobs.submit', { argv: [FAKEJOB, 'hold', '--duration', '60'], gpu: 2, cwd: dir, priority: 'high' });
  const running = await r.until('the high job running', async () => {
    const j = await r.job(job.id);
    return j?.state === 'running' ? j : undefined;
  });
  assert.equal(running.priority, 'normal');
  const start = running.history.find((h) => h.state === 'starting')!;
  assert.match(start.reason, new RegExp(`^starting on GPU 2 at normal priority: ${ME} used 2\\.9 of 2 high-priority GPU-hours in the last 24 h \\(lab policy, user ${ME}\\)$`));
  await assert.rejects(r.engine.call('jobs.setPriority', { job: job.id, priority: 'high' }), (error: Error) => {
    assert.match(error.message, new RegExp(`^Cannot raise ${job.id} to high priority: ${ME} used 2\\.9 of 2 high-priority GPU-hours .*It keeps its normal priority\\.$`));
    return true;
  });
  assert.equal((await r.job(job.id))?.priority, 'normal', 'the refusal changed nothing');
  await r.engine.call('jobs.terminate', { job: job.id });
});

/** A scheduler whose lab clock the test moves: every tick is `minutesPerTick` later. */
function idleRig(name: string, idleHolders: { notifyAfterMinutes: number; graceMinutes: number; park: boolean }, options: Partial<AttachSchedulerOptions> = {}) {
  let clock = Date.now();
  const r = rig(name, { labPolicy: parseLabPolicy({ idleHolders }), labClock: () => clock, ...options });
  return { ...r, advance: (minutes: number) => (clock += minutes * MIN) };
}

test('an idle memory holder is reported after notifyAfterMinutes, parked after the grace, and its owner unparks it', async (t) => {
  const r = idleRig('idle-park', { notifyAfterMinutes: 2, graceMinutes: 1, park: true });
  const holder = fakejob(t, ['--device', '3', '--mem', '2G', 'hold', '--duration', '60']);
  await holder.ready;
  const id = `p${holder.pid}`;
  await r.until('the holder seen idle', async () => (await r.job(id))?.smPercent === 0);
  const states: string[] = [];
  for (let minute = 1; minute <= 4; minute++) {
    r.advance(1);
    await r.tick();
    states.push(`${minute}:${(await r.job(id))?.state}:${(await r.engine.call('alerts.active', {})).some((c) => c.kind === 'idle' && c.jobId === id) ? 'idle' : '-'}`);
  }
  const parked = await r.until('parked', async () => {
    const j = await r.job(id);
    return j?.state === 'parked' ? j : undefined;
  });
  assert.deepEqual(states.slice(0, 2), ['1:running:-', '2:running:idle'], 'reported at 2 minutes');
  assert.match(states[2], /^3:(parking|parked):/, 'parked at 2 + 1 minutes');
  assert.match(states[3], /^4:(parking|parked):-$/, 'no longer an idle holder once parked');
  assert.match(parked.history.at(-1)!.reason, /^parked by the lab policy \(no GPU activity for 3 min\): 2G of GPU 3 memory moved to host memory$/);
  const notice = (await r.engine.call('alerts.list', {})).find((a) => a.kind === 'idle' && a.jobId === id);
  assert.match(notice!.message, new RegExp(`^${id} \\(fakejob, ${ME}\\) holds 2G of GPU 3 memory and has not computed for 2 min\\. It will be parked in 1 min unless it computes`));

  await r.engine.call('jobs.unpark', { job: id });
  await r.until('running again with its memory', async () => (await r.job(id))?.usedMemory === 2 * 1024 ** 3);
  r.advance(1);
  await r.tick();
  assert.equal((await r.job(id))?.state, 'running', 'the idle clock starts afresh after an unpark');
});

test('an idle holder is only reported when park is off, and never parked at high priority', async (t) => {
  for (const [name, park, priority] of [['idle-off', false, 'normal'], ['idle-high', true, 'high']] as const) {
    const r = idleRig(name, { notifyAfterMinutes: 1, graceMinutes: 0, park });
    const holder = fakejob(t, ['--device', name === 'idle-off' ? '4' : '5', '--mem', '1G', 'hold', '--duration', '60']);
    await holder.ready;
    const id = `p${holder.pid}`;
    await r.until('the holder seen idle', async () => (await r.job(id))?.smPercent === 0);
    if (priority === 'high') await r.engine.call('jobs.setPriority', { job: id, priority });
    for (let minute = 0; minute < 10; minute++) {
      r.advance(1);
      await r.tick();
    }
    const job = await r.job(id);
    assert.equal(job?.state, 'running', name);
    const idle = (await r.engine.call('alerts.active', {})).find((c) => c.kind === 'idle' && c.jobId === id);
    assert.match(idle!.message, /Free it if it is no longer needed \(lab policy\)\.$/, name);
    await r.stop();
  }
});

test('where the driver cannot park, an idle holder keeps running and its owner is told why it was not parked (once)', async (t) => {
  const r = idleRig('idle-no-checkpoint', { notifyAfterMinutes: 1, graceMinutes: 1, park: true }, { checkpointer: new UnavailableCheckpointer() });
  const holder = fakejob(t, ['--device', '7', '--mem', '1G', 'hold', '--duration', '60']);
  await holder.ready;
  const id = `p${holder.pid}`;
  await r.until('the holder seen idle', async () => (await r.job(id))?.smPercent === 0);
  for (let minute = 0; minute < 6; minute++) {
    r.advance(1);
    await r.tick();
  }
  assert.equal((await r.job(id))?.state, 'running');
  const notices = (await r.engine.call('alerts.list', {})).filter((a) => a.kind === 'idle' && a.jobId === id).map((a) => a.message).reverse(); // oldest first
  assert.equal(notices.length, 2, notices.join(' | '));
  assert.match(notices[0], /has not computed for 1 min\. It will be parked in 1 min unless it computes/);
  assert.equal(notices[1], `${id} was not parked for holding idle GPU memory: Cannot park ${id}: ${CHECKPOINT_UNAVAILABLE}`);
});

test('a process gpushare did not start gets its owner\'s default priority from the policy, and is held back as best-effort', async (t) => {
  const r = rig('default-priority', { labPolicy: parseLabPolicy({ limits: [{ user: ME, defaultPriority: 'best-effort' }] }) });
  const proc = fakejob(t, ['--device', '6', '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60']);
  await proc.ready;
  const seen = await r.until('the process seen', async () => r.job(`p${proc.pid}`));
  assert.equal(seen.priority, 'best-effort');
  assert.equal(seen.history[0].reason, `seen on GPU 6 (best-effort: the lab policy's default for ${ME})`);
  const high = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60'], gpu: 6, cwd: dir, priority: 'high' });
  await r.until('the process held back for the high job', async () => (await r.job(seen.id))?.state === 'suspended');
  await r.engine.call('jobs.terminate', { job: high.id });
});
