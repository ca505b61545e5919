// The scheduler's decisions as plain functions: sizes, admission, priority holds, contention.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatByteSize, parseByteSize, type JobView } from '../../../shared/jobs.js';
import type { GpuView } from '../../../shared/snapshot.js';
import { JobTable, newJobView, type JobRecord } from './job-table.js';
import { ConditionTracker, decideGating, decidePriority, detectContention, planAdmission, type GateSight } from './policies.js';

const G = 1024 ** 3;

test('sizes parse in one place: 20G, 512M, 1.5G, bytes; garbage and negatives are refused', () => {
  assert.equal(parseByteSize('20G'), 20 * G);
  assert.equal(parseByteSize('512M'), 512 * 1024 ** 2);
  assert.equal(parseByteSize('1.5G'), 1.5 * G);
  assert.equal(parseByteSize('2GiB'), 2 * G);
  assert.equal(parseByteSize('4096'), 4096);
  for (const bad of ['-3G', '0', 'G', '1.5.2G', '20X', '', 'lots']) assert.throws(() => parseByteSize(bad), /is not a memory size/, bad);
  assert.equal(formatByteSize(20 * G), '20G');
  assert.equal(formatByteSize(1.5 * G), '1.5G');
});

function gpu(index: number, totalG: number, usedG: number, extra: Partial<GpuView> = {}): GpuView {
  return { index, uuid: `GPU-${index}`, name: 'GPU', pciBusId: '', lost: false, memoryTotal: totalG * G, memoryUsed: usedG * G, memoryFree: (totalG - usedG) * G, utilizationGpu: 0, utilizationMemory: 0, temperatureC: null, powerWatts: null, powerLimitWatts: null, smClockMHz: null, memClockMHz: null, smCount: null, computeMode: null, migEnabled: false, migPending: false, migSlices: [], errors: [], ...extra };
}

function job(table: JobTable, fields: Partial<JobView> & { id: string }, state: JobView['state'] = 'queued', at = 0): JobRecord {
  return table.add(newJobView({ managed: true, owner: 'ann', uid: 1000, argv: ['train.py'], ...fields }, state, 'test', at));
}

test('admission: memory that fits, auto picks the most free, exclusive needs an empty GPU, priority goes first', () => {
  const t = new JobTable();
  job(t, { id: 'p7', managed: false, gpu: 0, requestedGpu: 0, usedMemory: 30 * G, smPercent: 50 }, 'running');
  job(t, { id: 'j1', requestedGpu: 0, memoryRequestBytes: 12 * G }, 'queued', 1); // 10G free on GPU 0
  job(t, { id: 'j2', requestedGpu: 'auto', memoryRequestBytes: 8 * G }, 'queued', 2);
  job(t, { id: 'j3', requestedGpu: 0, mode: 'exclusive' }, 'queued', 3);
  job(t, { id: 'j4', requestedGpu: 'auto', priority: 'high', memoryRequestBytes: 20 * G }, 'queued', 4);
  const gpus = [gpu(0, 40, 30), gpu(1, 40, 5)];
  const plan = planAdmission(gpus, t.live());
  // j4 (high) first, takes GPU 1 (35G free); j2 then fits best on GPU 1 (15G) over GPU 0 (10G)
  assert.deepEqual(plan.start, [
    { jobId: 'j4', gpus: [1] },
    { jobId: 'j2', gpus: [1] },
  ]);
  assert.match(plan.waiting.get('j1')!, /GPU 0 has 10G free and j1 needs 12G/);
  assert.match(plan.waiting.get('j3')!, /a higher-priority job is waiting for GPU 0|GPU 0 is not empty and j3 asked for it exclusively/);
});

test('admission: nothing joins an exclusive job, and a started job\'s declared memory is spoken for', () => {
  const t = new JobTable();
  job(t, { id: 'j1', gpu: 0, requestedGpu: 0, mode: 'exclusive', usedMemory: 0 }, 'running');
  job(t, { id: 'j2', gpu: 1, requestedGpu: 1, memoryRequestBytes: 30 * G, usedMemory: 2 * G }, 'running');
  job(t, { id: 'j3', requestedGpu: 0 }, 'queued', 1);
  job(t, { id: 'j4', requestedGpu: 1, memoryRequestBytes: 20 * G }, 'queued', 2);
  const plan = planAdmission([gpu(0, 40, 0), gpu(1, 40, 2)], t.live());
  assert.deepEqual(plan.start, []);
  assert.match(plan.waiting.get('j3')!, /GPU 0 runs j1 exclusively/);
  assert.match(plan.waiting.get('j4')!, /GPU 1 has 10G free and j4 needs 20G/);
});

test('admission into a MIG slice counts what it placed there this tick, and what a running job there declared', () => {
  const slice = (uuid: string, usedG: number): GpuView['migSlices'][number] => ({ uuid, name: uuid, profileName: '3g.40gb', gpuInstanceId: 1, computeInstanceId: 0, smCount: null, placement: { start: 0, size: 4 }, memoryTotal: 10 * G, memoryUsed: usedG * G });
  const gpus = [gpu(0, 80, 0, { migEnabled: true, migSlices: [slice('MIG-a', 0), slice('MIG-b', 1)] })];
  const t = new JobTable();
  job(t, { id: 'j1', requestedGpu: 0, mode: 'mig', migSlice: 'MIG-a', memoryRequestBytes: 6 * G }, 'queued', 1);
  job(t, { id: 'j2', requestedGpu: 0, mode: 'mig', migSlice: 'MIG-a', memoryRequestBytes: 6 * G }, 'queued', 2);
  job(t, { id: 'j3', gpu: 0, requestedGpu: 0, mode: 'mig', migSlice: 'MIG-b', memoryRequestBytes: 8 * G, usedMemory: 1 * G }, 'running');
  job(t, { id: 'j4', requestedGpu: 0, mode: 'mig', migSlice: 'MIG-b', memoryRequestBytes: 4 * G }, 'queued', 3);
  const plan = planAdmission(gpus, t.live());
  assert.deepEqual(plan.start, [{ jobId: 'j1', gpus: [0] }], 'j2 does not fit beside j1 in MIG-a; j4 does not fit beside what j3 declared in MIG-b');
  assert.match(plan.waiting.get('j2')!, /MIG slice 3g\.40gb has 4G free and j2 needs 6G/);
  assert.match(plan.waiting.get('j4')!, /MIG slice 3g\.40gb has 2G free and j4 needs 4G/);
});

test('priority by SM use: best-effort is held only while a higher job is active on the same GPU; a job under the gate only for a higher job the gate does not see', () => {
  const t = new JobTable();
  const high = job(t, { id: 'p1', managed: false, gpu: 0, priority: 'high', smPercent: 60 }, 'running');
  job(t, { id: 'p2', managed: false, gpu: 0, priority: 'best-effort', smPercent: 40 }, 'running');
  job(t, { id: 'p3', managed: false, gpu: 1, priority: 'best-effort', smPercent: 40 }, 'running');
  job(t, { id: 'j4', gpu: 0, priority: 'normal', smPercent: 10 }, 'running');
  const now = 10_000;
  const decision = decidePriority(t.live(), now, { gateFor: (r) => r.view.managed });
  // j4 is managed but the gate does not see p1 (unmanaged): the engine pauses j4's slot itself
  assert.deepEqual([...decision.hold], [['p2', 'p1'], ['j4', 'p1']]);
  job(t, { id: 'j5', gpu: 1, priority: 'high', smPercent: 30 }, 'running');
  job(t, { id: 'j6', gpu: 1, priority: 'normal', smPercent: 0 }, 'running');
  const onGpu1 = decidePriority(t.live(), now, { gateFor: (r) => r.view.managed });
  assert.equal(onGpu1.hold.has('j6'), false, 'between jobs under the gate the gate does the holding (decideGating)');
  assert.equal(onGpu1.hold.get('p3'), 'j5');
  for (const id of ['j5', 'j6']) t.remove(id);
  high.view.smPercent = 0; // idle, but computed 1 s ago: still active for the hold window
  high.lastActiveAt = now - 1000;
  assert.equal(decidePriority(t.live(), now, { gateFor: (r) => r.view.managed }).hold.size, 2);
  high.lastActiveAt = now - 5000;
  const later = decidePriority(t.live(), now, { gateFor: (r) => r.view.managed });
  assert.deepEqual([...later.hold], [['p2', 'j4']], 'the normal job computing still outranks best-effort');
});

test('priority: a MIG slice is its own domain — a high job in one slice holds back nobody in another', () => {
  const t = new JobTable();
  job(t, { id: 'p1', managed: false, gpu: 1, migSlice: 'MIG-a', priority: 'high', smPercent: 60 }, 'running');
  job(t, { id: 'p2', managed: false, gpu: 1, migSlice: 'MIG-b', priority: 'best-effort', smPercent: 40 }, 'running');
  job(t, { id: 'j3', gpu: 1, mode: 'mig', migSlice: 'MIG-b', priority: 'best-effort', smPercent: 40 }, 'running');
  job(t, { id: 'p4', managed: false, gpu: 1, migSlice: 'MIG-a', priority: 'best-effort', smPercent: 40 }, 'running');
  const decision = decidePriority(t.live(), 10_000, { gateFor: (r) => r.view.managed });
  assert.deepEqual([...decision.hold], [['p4', 'p1']], 'only the best-effort process in the high job\'s own slice is held');
  const conditions = detectContention([gpu(1, 80, 10)], t.live(), new Map(), 10_000);
  assert.deepEqual(
    conditions.filter((c) => c.key.startsWith('shared-high')).map((c) => c.message),
    ['High-priority p1 (train.py, ann) shares GPU 1 (slice MIG-a) with 1 other active job.'],
  );
});

test('gating from the gate\'s own counters: a job under the gate is gated while its launches waited for a higher job within the hold, named after the higher job that launched last; SM use says nothing', () => {
  const t = new JobTable();
  job(t, { id: 'j1', gpu: 0, priority: 'best-effort', smPercent: 40 }, 'running');
  job(t, { id: 'j2', gpu: 0, priority: 'high', smPercent: 0 }, 'running'); // idle by the driver's last interval
  job(t, { id: 'j3', gpu: 0, priority: 'normal', smPercent: 60 }, 'running');
  job(t, { id: 'j4', gpu: 0, mode: 'mig', migSlice: 'MIG-a', priority: 'high', smPercent: 90 }, 'running'); // another domain
  const sights = new Map<string, GateSight>([
    ['j1', { waitedAt: 9_000, inLaunch: 0, lastLaunchNs: 5n }],
    ['j2', { waitedAt: null, inLaunch: 0, lastLaunchNs: 900n }],
    ['j3', { waitedAt: null, inLaunch: 0, lastLaunchNs: 800n }],
    ['j4', { waitedAt: null, inLaunch: 1, lastLaunchNs: 1n }],
  ]);
  const gating = (now: number, holdMs = 3000) => decideGating(t.live(), now, { sightOf: (r) => sights.get(r.view.id) ?? null, holdMs });
  assert.deepEqual([...gating(10_000)], [['j1', 'j2']], 'j1 waited 1 s ago; j2 launched last of the higher jobs in its domain');
  sights.set('j3', { waitedAt: null, inLaunch: 2, lastLaunchNs: 1n });
  assert.deepEqual([...gating(10_000)], [['j1', 'j3']], 'a higher job mid-launch is the one it waits for');
  assert.deepEqual([...gating(12_500)], [], 'no wait within the hold: not gated, however busy the higher jobs look to the driver');
  sights.set('j1', { waitedAt: null, inLaunch: 0, lastLaunchNs: 5n });
  assert.deepEqual([...gating(10_000)], [], 'never waited: not gated');
  sights.set('j2', { waitedAt: 9_500, inLaunch: 0, lastLaunchNs: 1n });
  assert.deepEqual([...gating(10_000)], [], 'the highest job waited for nobody above it');
});

test('contention: each condition is raised once per onset', () => {
  const t = new JobTable();
  job(t, { id: 'p1', managed: false, gpu: 0, priority: 'high', smPercent: 50, usedMemory: 37 * G }, 'running');
  job(t, { id: 'p2', managed: false, gpu: 0, smPercent: 50, usedMemory: 1 * G, memoryQuotaBytes: 0.5 * G }, 'running');
  const gpus = [gpu(0, 40, 38)];
  const conditions = detectContention(gpus, t.live(), new Map([['j9', 'j9 is queued: …']]), 0);
  assert.deepEqual(conditions.map((c) => c.key).sort(), ['memory:0', 'quota:p2', 'shared-high:0', 'waiting:j9']);
  const tracker = new ConditionTracker();
  assert.equal(tracker.update(conditions).length, 4);
  assert.equal(tracker.update(conditions).length, 0, 'the next tick raises nothing new');
  assert.equal(tracker.update([]).length, 0);
  assert.deepEqual(tracker.update(conditions.filter((c) => c.key === 'memory:0')).map((c) => c.key), ['memory:0'], 'a new onset is raised again');
});

test('admission of jobs on several GPUs: all at once or none, auto by most free in index order, a named list reserved from lower jobs', () => {
  const t = new JobTable();
  job(t, { id: 'j1', requestedGpu: 'auto', gpuCount: 2, memoryRequestBytes: 20 * G }, 'queued', 1);
  job(t, { id: 'j2', requestedGpu: 0, requestedGpus: [0, 2], gpuCount: 2, priority: 'high', memoryRequestBytes: 20 * G }, 'queued', 2);
  job(t, { id: 'j3', requestedGpu: 2, priority: 'best-effort', memoryRequestBytes: 1 * G }, 'queued', 3);
  const tight = planAdmission([gpu(0, 40, 35), gpu(1, 40, 35), gpu(2, 40, 0)], t.live());
  assert.deepEqual(tight.start, [], 'one GPU fits each of them: neither starts on part of its GPUs');
  assert.match(tight.waiting.get('j1')!, /j1 \(train\.py, ann\) is queued: 0 of the 2 GPUs it needs fit it now \(a higher-priority job is waiting for GPU 2\)\./);
  assert.match(tight.waiting.get('j2')!, /is queued: GPU 0 has 5G free and j2 needs 20G\./);
  assert.match(tight.waiting.get('j3')!, /a higher-priority job is waiting for GPU 2/, 'j2 named GPU 2: a lower job does not take it meanwhile');
  const roomy = planAdmission([gpu(0, 40, 10), gpu(1, 40, 30), gpu(2, 40, 0), gpu(3, 40, 5)], t.live());
  assert.deepEqual(roomy.start, [{ jobId: 'j2', gpus: [0, 2] }, { jobId: 'j1', gpus: [2, 3] }], 'j2 (high) first on the two it named; j1 on the two with most free left, in index order');
  const alone = new JobTable();
  job(alone, { id: 'j4', requestedGpu: 'auto', gpuCount: 2, memoryRequestBytes: 20 * G }, 'queued', 1);
  assert.match(planAdmission([gpu(0, 40, 35), gpu(1, 40, 0)], alone.live()).waiting.get('j4')!, /is queued: 1 of the 2 GPUs it needs fits it now \(GPU 0 has 5G free and j4 needs 20G\)\./);
});

test('a job on two GPUs that waits keeps what fits it now from later jobs: its memory there, the whole GPU when exclusive', () => {
  const t = new JobTable();
  job(t, { id: 'p9', managed: false, gpu: 1, requestedGpu: 1, usedMemory: 30 * G, smPercent: 50 }, 'running');
  job(t, { id: 'j1', requestedGpu: 'auto', gpuCount: 2, memoryRequestBytes: 20 * G }, 'queued', 1);
  job(t, { id: 'j2', requestedGpu: 'auto', memoryRequestBytes: 30 * G }, 'queued', 2);
  job(t, { id: 'j3', requestedGpu: 'auto', memoryRequestBytes: 15 * G }, 'queued', 3);
  const plan = planAdmission([gpu(0, 40, 0), gpu(1, 40, 30)], t.live());
  assert.match(plan.waiting.get('j1')!, /1 of the 2 GPUs it needs fits it now/);
  assert.match(plan.waiting.get('j2')!, /GPU 0 has 20G free and j2 needs 30G/, 'j1 keeps 20G of GPU 0: j2, after it, does not take the GPU it waits beside');
  assert.deepEqual(plan.start, [{ jobId: 'j3', gpus: [0] }], 'what is left beside it is still used');
  const exclusive = new JobTable();
  job(exclusive, { id: 'p9', managed: false, gpu: 1, requestedGpu: 1, usedMemory: 30 * G, smPercent: 50 }, 'running');
  job(exclusive, { id: 'j1', requestedGpu: 0, requestedGpus: [0, 1], gpuCount: 2, mode: 'exclusive' }, 'queued', 1);
  job(exclusive, { id: 'j2', requestedGpu: 0, memoryRequestBytes: 1 * G }, 'queued', 2);
  job(exclusive, { id: 'j3', requestedGpu: 'auto', memoryRequestBytes: 1 * G }, 'queued', 3);
  const held = planAdmission([gpu(0, 40, 0), gpu(1, 40, 30)], exclusive.live());
  assert.match(held.waiting.get('j1')!, /GPU 1 is not empty and j1 asked for it exclusively/);
  assert.match(held.waiting.get('j2')!, /GPU 0 is held for j1, which waits for the rest of its GPUs to run on it exclusively/);
  assert.deepEqual(held.start, [{ jobId: 'j3', gpus: [1] }], 'not on GPU 0, which has the most free');
});
