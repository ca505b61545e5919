// The life of a whole-GPU MPS daemon on the simulated driver (the fakegpu MPS state is the record):
// started on demand by the first job in mode mps, kept while another client runs, stopped with the last
// one, also when a restarted engine adopted it; a daemon a person started stays; a job queued while the
// daemon stops starts as a client of a fresh daemon; `mps.status` says who started it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { until } from '../../testing/until.js';
import type { JobView } from '../../../shared/jobs.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { JobStore } from '../store/job-store.js';
import { UsageStore } from '../store/usage-store.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { killJobProcessesOn, useSimulatedRig } from '../testing/simulated-rig.js';
import type { AttachSchedulerOptions } from '../scheduler/attach.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const FAKEGPU = join(fakegpuBuildDir(), 'fakegpu');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-mps-life-', (rig) => ({ driver, nvml, dir } = rig));
const killAll = (jobId: string) => killJobProcessesOn(driver, jobId);
const FINALS = new Set(['finished', 'failed', 'lost', 'cancelled']);

const rig = (name: string, options: Partial<AttachSchedulerOptions> = {}) => schedulerRig({ driver, nvml, dir }, name, { terminateGraceMs: 500, ...options }, cleanups);
type Rig = ReturnType<typeof rig>;

interface FakegpuDaemon {
  running: boolean;
  pipeDir: string;
  clients: Array<{ pid: number; share: number }>;
}
/** GPU 0's simulated daemon as the fakegpu state holds it. */
const daemon = (): FakegpuDaemon => (JSON.parse(execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, 'status'], { encoding: 'utf8' })) as FakegpuDaemon[])[0];

/** A long MPS client at 50 %, until it is terminated. */
const submitMps = (r: Rig) => r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '256M', 'train', '--kernel-ms', '5', '--duration', '60'], cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 50 });

const running = (r: Rig, id: string): Promise<JobView> =>
  r.until(`${id} running`, async () => {
    const j = await r.job(id);
    return j?.state === 'running' ? j : undefined;
  });

/** Terminate a job and wait for its end, seen through its own exit (an engine's job) or its process's end (adopted). */
async function ended(r: Rig, id: string): Promise<JobView> {
  await r.engine.call('jobs.terminate', { job: id });
  return r.until(`${id} ended`, async () => {
    const j = await r.job(id);
    return j && FINALS.has(j.state) ? j : undefined;
  });
}


test('a daemon started for an mps job starts with the first job, stays while a second runs, and stops when the last one ends', async () => {
  const r = rig('on-demand');
  assert.equal(daemon().running, false, 'no daemon before the first job');
  const a = await submitMps(r);
  await running(r, a.id);
  assert.equal(daemon().running, true, 'the first job started the daemon');
  assert.equal(daemon().pipeDir, join(dir, 'on-demand', 'run', 'mps', 'gpu0', 'pipe'), "the engine's own daemon");
  const b = await submitMps(r);
  const second = await running(r, b.id);

  await ended(r, a.id);
  assert.equal(daemon().running, true, 'a second client still runs: the daemon stays');
  assert.ok(daemon().clients.some((c) => c.pid === second.pid), 'the second job is its client');
  await ended(r, b.id);
  assert.equal(daemon().running, false, 'the last client ended: the daemon the jobs started is stopped');
  assert.equal((await r.engine.call('mps.status', {}))[0].state, 'off');
});

test('an MPS client gpushare did not start keeps the daemon the jobs started until it ends too', async () => {
  const r = rig('outsider');
  const a = await submitMps(r);
  await running(r, a.id);
  const outsider = driver.spawnFakejob(['--device', '0', '--mem', '256M', 'train', '--kernel-ms', '5', '--duration', '60'], { CUDA_MPS_PIPE_DIRECTORY: daemon().pipeDir });
  await outsider.ready;
  await r.until('the outsider seen as an MPS process', async () => (await r.job(`p${outsider.pid}`))?.mode === 'mps');
  assert.ok(daemon().clients.some((c) => c.pid === outsider.pid), "it is a client of the engine's daemon");

  await ended(r, a.id);
  assert.equal(daemon().running, true, 'the last job ended, but a client is left: the daemon stays');
  outsider.kill('SIGTERM');
  await outsider.exited;
  await r.until('the outsider gone from the jobs', async () => (await r.job(`p${outsider.pid}`)) === undefined);
  assert.equal(daemon().running, false, 'its last client gone, the daemon the jobs started is stopped');
});

test('a daemon a person started stays after its jobs end, also one the jobs started that a person then asked for', async () => {
  const r = rig('request');
  const started = await r.engine.call('mps.start', { gpu: 0 });
  assert.equal(started.state, 'ours');
  const a = await submitMps(r);
  await running(r, a.id);
  await ended(r, a.id);
  assert.equal(daemon().running, true, 'started by a person: kept after its last job');
  assert.equal((await r.engine.call('mps.stop', { gpu: 0 })).state, 'off', 'until the person stops it');

  const b = await submitMps(r);
  await running(r, b.id);
  assert.equal(daemon().running, true, 'the job started it again');
  await r.engine.call('mps.start', { gpu: 0 }); // a person asks for the daemon the job started: now theirs to stop
  await ended(r, b.id);
  assert.equal(daemon().running, true, 'asked for by a person while its job ran: kept');
  await r.engine.call('mps.stop', { gpu: 0 });
  assert.equal(daemon().running, false);
});

test('mps.status says who started the daemon: the jobs (it stops with the last one) or a request', async () => {
  const r = rig('status');
  const a = await submitMps(r);
  await running(r, a.id);
  const [forJobs] = await r.engine.call('mps.status', {});
  assert.equal(forJobs.state, 'ours');
  assert.equal(forJobs.user, userInfo().username, "the engine's user runs it");
  assert.equal(forJobs.startedFor, 'jobs');
  assert.equal((await r.engine.call('mps.start', { gpu: 0 })).startedFor, 'request', 'a person asked for it while it ran');
  assert.equal((await r.engine.call('mps.status', {}))[0].startedFor, 'request');
  await ended(r, a.id);
  const stopped = await r.engine.call('mps.stop', { gpu: 0 });
  assert.equal(stopped.state, 'off');
  assert.equal(stopped.startedFor, undefined, 'no daemon, no reason');
});

test('after an engine restart, the end of the adopted last client stops the daemon the jobs started', async (t) => {
  const dbPath = join(dir, 'restart.db');
  const open = async () => {
    const usage = await UsageStore.open({ path: dbPath }); // migrates the schema the job store keeps its jobs in
    const jobStore = await JobStore.open(dbPath);
    return { jobStore, close: async () => (await jobStore.close(), await usage.close()) };
  };
  t.after(() => killAll('j1'));
  const first = await open();
  const a = rig('restart', { jobStore: first.jobStore });
  await a.attached.ready;
  const job = await submitMps(a);
  const seen = await running(a, job.id);
  assert.equal(daemon().running, true);
  assert.deepEqual(await a.stop(), []);
  await first.close();
  assert.equal(daemon().running, true, 'the stopped engine leaves its running client and its daemon');

  const second = await open();
  t.after(() => second.close());
  const b = rig('restart', { jobStore: second.jobStore });
  await b.attached.ready;
  const adopted = (await b.job(job.id))!;
  assert.equal(adopted.pid, seen.pid, 'the same process, re-adopted');
  assert.match(adopted.history.at(-1)!.reason, /re-adopted by a new engine/);
  assert.equal((await b.engine.call('mps.status', {}))[0].startedFor, 'jobs', 'the new engine knows why the daemon runs');
  const last = await ended(b, job.id);
  assert.equal(last.state, 'lost', 'an adopted job ends with its exit status unknown');
  assert.equal(daemon().running, false, 'the adopted last client ended: the daemon is stopped');
});

test('a daemon started for jobs whose last client ended while no engine ran is stopped by the next engine once its jobs are back', async (t) => {
  const dbPath = join(dir, 'unwatched.db');
  const open = async () => {
    const usage = await UsageStore.open({ path: dbPath });
    const jobStore = await JobStore.open(dbPath);
    return { jobStore, close: async () => (await jobStore.close(), await usage.close()) };
  };
  const first = await open();
  const a = rig('unwatched', { jobStore: first.jobStore });
  await a.attached.ready;
  const job = await submitMps(a);
  const seen = await running(a, job.id);
  t.after(() => killAll(job.id));
  await a.stop();
  await first.close();
  process.kill(seen.pid!, 'SIGTERM'); // the last client ends while no engine watches
  await until('the client gone', () => !existsSync(`/proc/${seen.pid}`), { timeoutMs: 5_000, intervalMs: 25 });
  assert.equal(daemon().running, true, 'nobody stopped the daemon meanwhile');

  const second = await open();
  t.after(() => second.close());
  const b = rig('unwatched', { jobStore: second.jobStore });
  await b.attached.ready;
  assert.equal((await b.job(job.id))?.state, 'lost');
  assert.equal(daemon().running, false, 'the new engine stopped the daemon its predecessor started for jobs');
});

test('a new engine keeps a daemon started for jobs while an MPS process still uses it (and stops it when that ends), and one a person started', async (t) => {
  const a = rig('unwatched-kept'); // no job store: the new engine sees the job as a process it did not start
  const job = await submitMps(a);
  const seen = await running(a, job.id);
  t.after(() => killAll(job.id));
  await a.until(`${job.id} listed by NVML`, async () => (await driver.dump()).devices[0].processes.some((p) => p.pid === seen.pid && p.type === 'mps'));
  await a.stop();

  const b = rig('unwatched-kept');
  await b.attached.ready;
  await b.until('its client seen by the new engine', async () => (await b.job(`p${seen.pid}`))?.mode === 'mps');
  assert.equal(daemon().running, true, 'an MPS process still uses it: kept');
  process.kill(seen.pid!, 'SIGTERM');
  await b.until('its client gone from the jobs', async () => (await b.job(`p${seen.pid}`)) === undefined);
  assert.equal(daemon().running, false, 'that client ended: the daemon started for jobs is stopped');

  await b.engine.call('mps.start', { gpu: 0 });
  await b.stop();
  const c = rig('unwatched-kept');
  await c.attached.ready;
  await c.tick();
  assert.equal(daemon().running, true, "a person's daemon is kept by a new engine");
  await c.engine.call('mps.stop', { gpu: 0 });
});

test('a job queued while the last client ends and the daemon stops starts after the stop, as a client of a fresh daemon', async () => {
  const r = rig('race');
  const a = await submitMps(r);
  await running(r, a.id);
  const firstDaemon = daemon();
  r.attached.scheduler.pauseEvaluation(true); // the next job is queued at the moment the last client ends
  const b = await submitMps(r);
  await r.engine.call('jobs.terminate', { job: a.id });
  await until('the last client ended', async () => FINALS.has((await r.job(a.id))!.state), { timeoutMs: 5_000, intervalMs: 25 });
  assert.equal((await r.job(b.id))!.state, 'queued');
  assert.equal(daemon().running, false, 'its end stopped the daemon, before the queued job could start');

  r.attached.scheduler.pauseEvaluation(false);
  const next = await running(r, b.id);
  const now = daemon();
  assert.equal(now.running, true, 'the queued job started a daemon again');
  assert.equal(now.pipeDir, firstDaemon.pipeDir);
  assert.deepEqual(now.clients.filter((c) => c.pid === next.pid).map((c) => c.share), [50], 'the new job is a client of the live daemon, at its share');
  await r.until(`${b.id} listed by NVML`, async () => (await driver.dump()).devices[0].processes.some((p) => p.pid === next.pid));
  assert.equal((await driver.dump()).devices[0].processes.find((p) => p.pid === next.pid)?.type, 'mps', 'NVML lists it as an MPS client');
  assert.equal((await r.engine.call('mps.status', {}))[0].startedFor, 'jobs');
  await ended(r, b.id);
  assert.equal(daemon().running, false);
});
