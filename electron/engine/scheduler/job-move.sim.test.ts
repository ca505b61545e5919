// jobs.move, a lane move, on the simulated driver: every change in it (priority, memory quota, a change
// of state) is checked before any is applied, so a refusal of one leaves the job exactly as it was.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseLabPolicy } from '../../../shared/lab-policy.js';
import type { JobView } from '../../../shared/jobs.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const ME = userInfo().username;
const GiB = 1024 ** 3;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x8', 'gpushare-move-', (rig) => ({ driver, nvml, dir } = rig));

/** A scheduler whose lab policy lets this user have no high-priority job, with one job of theirs running on GPU 0. */
async function boxWithRunningJob(name: string) {
  const r = schedulerRig({ driver, nvml, dir }, name, { labPolicy: parseLabPolicy({ limits: [{ user: ME, maxHighPriorityJobs: 0 }] }) }, cleanups);
  const job = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60'], gpu: 0, cwd: dir });
  await r.until(`${job.id} running`, async () => (await r.job(job.id))?.state === 'running');
  return { r, id: job.id };
}

/** The job as it is asked and kept, without its live readings (memory and SM in use move on their own). */
const asKept = ({ usedMemory: _memory, smPercent: _sm, ...rest }: JobView): Omit<JobView, 'usedMemory' | 'smPercent'> => rest;

test('a paused job dropped on High past the lab limit (resume, then raise: refused) stays exactly as it was', async () => {
  const { r, id } = await boxWithRunningJob('limit');
  await r.engine.call('jobs.suspend', { job: id });
  const before = (await r.job(id))!;
  const audited = r.engine.dispatcher.auditLog(1000).length;
  await assert.rejects(r.engine.call('jobs.move', { job: id, priority: 'high', action: 'resume' }), { code: 'forbidden', message: new RegExp(`^Cannot raise ${id} to high priority: .*It keeps its normal priority\\.$`) });
  await r.tick();
  assert.deepEqual(asKept((await r.job(id))!), asKept(before));
  assert.deepEqual(r.engine.dispatcher.auditLog(1000).slice(0, -audited || undefined).map((e) => [e.what, e.result === 'ok']), [['jobs.move', false]], 'one request, refused');
  await r.engine.call('jobs.terminate', { job: id });
});

test('a move with a quota beyond the GPU is refused whole: its priority and suspend are not applied', async () => {
  const { r, id } = await boxWithRunningJob('quota');
  const before = (await r.job(id))!;
  await assert.rejects(r.engine.call('jobs.move', { job: id, priority: 'best-effort', memoryQuotaBytes: 1000 * GiB, action: 'suspend' }), { code: 'invalid-request', message: /is more than GPU 0 has/ });
  assert.deepEqual(asKept((await r.job(id))!), asKept(before));
  await r.engine.call('jobs.terminate', { job: id });
});

test('a parked job moved past the lab limit is not unparked: the unpark waits until the whole move is allowed', async () => {
  const { r, id } = await boxWithRunningJob('parked');
  await r.until(`${id} holds its memory`, async () => (await r.job(id))?.usedMemory === GiB);
  await r.engine.call('jobs.park', { job: id });
  await r.until(`${id} parked`, async () => (await r.job(id))?.state === 'parked');
  const before = (await r.job(id))!;
  await assert.rejects(r.engine.call('jobs.move', { job: id, priority: 'high', action: 'unpark' }), { code: 'forbidden' });
  await r.tick();
  assert.deepEqual(asKept((await r.job(id))!), asKept(before));
  const unparked = await r.engine.call('jobs.move', { job: id, priority: 'best-effort', action: 'unpark' });
  assert.equal(unparked.priority, 'best-effort');
  await r.until(`${id} running again`, async () => (await r.job(id))?.state === 'running');
  await r.engine.call('jobs.terminate', { job: id });
});

test('an accepted move applies every change in one request: resumed, reprioritised, its quota set', async () => {
  const { r, id } = await boxWithRunningJob('accepted');
  await r.engine.call('jobs.suspend', { job: id });
  const moved = await r.engine.call('jobs.move', { job: id, priority: 'best-effort', memoryQuotaBytes: 2 * GiB, action: 'resume' });
  assert.deepEqual([moved.state, moved.priority, moved.memoryQuotaBytes], ['running', 'best-effort', 2 * GiB]);
  assert.equal(r.engine.dispatcher.auditLog(1)[0].what, 'jobs.move');
  await r.engine.call('jobs.terminate', { job: id });
});

test('a queued job moved to another GPU with a new mode is placed and reconfigured in one request, or, refused, not at all', async () => {
  const r = schedulerRig({ driver, nvml, dir }, 'place', {}, cleanups);
  const hold = (gpu: number, mem: string, request: number | null) =>
    r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', mem, 'hold', '--duration', '60'], gpu, cwd: dir, memoryRequestBytes: request });
  const holder = await hold(0, '70G', null);
  await r.until(`${holder.id} holds GPU 0`, async () => (await r.job(holder.id))?.usedMemory === 70 * GiB);
  const waiter = await hold(0, '1G', 20 * GiB);
  await r.tick();
  const before = (await r.job(waiter.id))!;
  assert.equal(before.state, 'queued', 'GPU 0 has no room for its request');
  await assert.rejects(r.engine.call('jobs.move', { job: waiter.id, gpu: 1, mode: 'exclusive', memoryQuotaBytes: 100 * GiB }), { code: 'invalid-request', message: /is more than GPU 1 has/ });
  assert.deepEqual(asKept((await r.job(waiter.id))!), asKept(before));
  const moved = await r.engine.call('jobs.move', { job: waiter.id, gpu: 1, mode: 'exclusive' });
  assert.deepEqual([moved.requestedGpu, moved.mode], [1, 'exclusive']);
  await r.until(`${waiter.id} running on GPU 1`, async () => (await r.job(waiter.id))?.state === 'running');
  for (const id of [holder.id, waiter.id]) await r.engine.call('jobs.terminate', { job: id });
});
