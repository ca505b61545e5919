// Lab limits at admission: each holds a queued job back with the limit and the entry it comes
// from, and lets it go once the owner's other job ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../../shared/jobs.js';
import { parseLabPolicy, resolveLimits } from '../../../../shared/lab-policy.js';
import type { GpuView } from '../../../../shared/snapshot.js';
import { JobTable, newJobView, type JobRecord } from '../job-table.js';
import { planAdmission } from '../policies.js';
import { LimitAdmission } from './limits.js';

const G = 1024 ** 3;
const GROUPS: Record<string, string[]> = { alice: ['students'], bob: ['staff'], carol: ['students'] };

function gpu(index: number, totalG = 80): GpuView {
  return { index, uuid: `GPU-${index}`, name: 'GPU', pciBusId: '', lost: false, memoryTotal: totalG * G, memoryUsed: 0, memoryFree: totalG * G, utilizationGpu: 0, utilizationMemory: 0, temperatureC: null, powerWatts: null, powerLimitWatts: null, smClockMHz: null, memClockMHz: null, smCount: null, computeMode: null, migEnabled: false, migPending: false, migSlices: [], errors: [] };
}

function job(table: JobTable, fields: Partial<JobView> & { id: string; owner: string }, state: JobView['state'] = 'queued', at = 0): JobRecord {
  return table.add(newJobView({ managed: true, uid: 1000, argv: ['train.py'], ...fields }, state, 'test', at));
}

/** One admission pass under `policy`, with each user's high-priority GPU-seconds today. */
function admit(table: JobTable, gpus: GpuView[], input: unknown, highSeconds: Record<string, number> = {}) {
  const policy = parseLabPolicy(input);
  const limits = new LimitAdmission(table.live().map((r) => r.view), (j) => ({ limits: resolveLimits(policy, j.owner, GROUPS[j.owner] ?? []), highGpuSecondsToday: highSeconds[j.owner] ?? 0 }));
  return planAdmission(gpus, table.live(), { limits });
}

const end = (r: JobRecord): void => {
  r.view.state = 'finished';
};

test('limits resolve from the user\'s own entry, then the strictest of their groups\', then everyone\'s, and say which', () => {
  const policy = parseLabPolicy({
    limits: [{ maxGpus: 4, maxMemory: '80G' }, { group: 'students', maxGpus: 2, defaultPriority: 'normal' }, { group: 'interns', maxGpus: 1, defaultPriority: 'best-effort' }, { user: 'alice', maxMemory: '20G' }],
  });
  assert.deepEqual(resolveLimits(policy, 'alice', ['students', 'interns']), {
    maxGpus: { value: 1, from: 'group interns' },
    maxMemory: { value: 20 * G, from: 'user alice' },
    defaultPriority: { value: 'best-effort', from: 'group interns' },
  });
  assert.deepEqual(resolveLimits(policy, 'bob', ['staff']), { maxGpus: { value: 4, from: 'everyone' }, maxMemory: { value: 80 * G, from: 'everyone' } });
});

test('maxGpus: a job on a second GPU waits with the rule and its group, and starts when the first job ends', () => {
  const t = new JobTable();
  const first = job(t, { id: 'j1', owner: 'alice', gpu: 0, requestedGpu: 0 }, 'running');
  job(t, { id: 'j2', owner: 'alice', requestedGpu: 1 }, 'queued', 1);
  job(t, { id: 'j3', owner: 'bob', requestedGpu: 1 }, 'queued', 2);
  const policy = { limits: [{ group: 'students', maxGpus: 1 }] };
  const held = admit(t, [gpu(0), gpu(1)], policy);
  assert.equal(held.waiting.get('j2'), 'j2 (train.py, alice) is queued: alice may use at most 1 GPU at once (lab policy, group students) and already uses GPU 0.');
  assert.deepEqual(held.start, [{ jobId: 'j3', gpus: [1] }], 'bob is not held, and alice\'s waiting job holds no GPU from him');
  end(first);
  assert.deepEqual(admit(t, [gpu(0), gpu(1)], policy).start, [{ jobId: 'j2', gpus: [1] }, { jobId: 'j3', gpus: [1] }]);
});

test('maxGpus: an "auto" job of a user at the limit may join a GPU they already use, and two queued jobs cannot both take a new one', () => {
  const t = new JobTable();
  job(t, { id: 'j1', owner: 'alice', gpu: 1, requestedGpu: 1, memoryQuotaBytes: 70 * G, usedMemory: 70 * G }, 'running');
  job(t, { id: 'j2', owner: 'alice', requestedGpu: 'auto', memoryRequestBytes: 5 * G }, 'queued', 1);
  const gpus = [gpu(0), { ...gpu(1), memoryUsed: 70 * G, memoryFree: 10 * G }];
  assert.deepEqual(admit(t, gpus, { limits: [{ user: 'alice', maxGpus: 1 }] }).start, [{ jobId: 'j2', gpus: [1] }], 'not GPU 0, though it has the most free');
  job(t, { id: 'j3', owner: 'alice', requestedGpu: 'auto', memoryRequestBytes: 20 * G }, 'queued', 2);
  const plan = admit(t, gpus, { limits: [{ user: 'alice', maxGpus: 1 }] });
  assert.match(plan.waiting.get('j3')!, /alice may use at most 1 GPU at once \(lab policy, user alice\) and already uses GPU 1, and GPU 1 has 5G free and j3 needs 20G\.$/);

  const fresh = new JobTable();
  job(fresh, { id: 'j4', owner: 'carol', requestedGpu: 0 }, 'queued', 1);
  job(fresh, { id: 'j5', owner: 'carol', requestedGpu: 1 }, 'queued', 2);
  const both = admit(fresh, [gpu(0), gpu(1)], { limits: [{ group: 'students', maxGpus: 1 }] });
  assert.deepEqual(both.start, [{ jobId: 'j4', gpus: [0] }]);
  assert.match(both.waiting.get('j5')!, /carol may use at most 1 GPU at once \(lab policy, group students\) and already uses GPU 0/);
});

test('maxMemory counts running managed jobs\' quota, else request, else use; the job waits until one ends', () => {
  const t = new JobTable();
  const a = job(t, { id: 'j1', owner: 'alice', gpu: 0, requestedGpu: 0, memoryQuotaBytes: 10 * G, usedMemory: 2 * G }, 'running');
  job(t, { id: 'j2', owner: 'alice', gpu: 0, requestedGpu: 0, memoryRequestBytes: 6 * G, usedMemory: 1 * G }, 'running');
  job(t, { id: 'j3', owner: 'alice', gpu: 1, requestedGpu: 1, usedMemory: 3 * G }, 'running');
  job(t, { id: 'p99', owner: 'alice', managed: false, gpu: 1, requestedGpu: 1, usedMemory: 30 * G }, 'running');
  job(t, { id: 'j4', owner: 'alice', requestedGpu: 'auto', memoryQuotaBytes: 4 * G }, 'queued', 1);
  const policy = { limits: [{ user: 'alice', maxMemory: '20G' }] };
  const held = admit(t, [gpu(0), gpu(1)], policy);
  assert.equal(held.waiting.get('j4'), 'j4 (train.py, alice) is queued: alice may hold at most 20G of GPU memory at once (lab policy, user alice); alice\'s running jobs hold 19G and j4 asks for 4G.');
  end(a);
  assert.deepEqual(admit(t, [gpu(0), gpu(1)], policy).start.map((s) => s.jobId), ['j4']);
});

test('maxHighPriorityJobs holds a second high job back until the first ends; a normal job of the same user starts', () => {
  const t = new JobTable();
  const first = job(t, { id: 'j1', owner: 'bob', gpu: 0, requestedGpu: 0, priority: 'high' }, 'running');
  job(t, { id: 'j2', owner: 'bob', requestedGpu: 0, priority: 'high' }, 'queued', 1);
  job(t, { id: 'j3', owner: 'bob', requestedGpu: 0, priority: 'normal' }, 'queued', 2);
  const policy = { limits: [{ maxHighPriorityJobs: 1 }] };
  const held = admit(t, [gpu(0)], policy);
  assert.equal(held.waiting.get('j2'), 'j2 (train.py, bob) is queued: bob may run at most 1 high-priority job at once (lab policy, everyone); j1 runs at high.');
  assert.deepEqual(held.start, [{ jobId: 'j3', gpus: [0] }]);
  end(first);
  assert.deepEqual(admit(t, [gpu(0)], policy).start.map((s) => s.jobId), ['j2', 'j3']);
});

test('past the day\'s high-priority GPU-hours a high job is not held by the high-job limit (it will run as normal)', () => {
  const t = new JobTable();
  job(t, { id: 'j1', owner: 'bob', gpu: 0, requestedGpu: 0, priority: 'high' }, 'running');
  job(t, { id: 'j2', owner: 'bob', requestedGpu: 0, priority: 'high' }, 'queued', 1);
  const policy = { limits: [{ maxHighPriorityJobs: 1, highPriorityGpuHoursPerDay: 2 }] };
  assert.match(admit(t, [gpu(0)], policy, { bob: 3600 }).waiting.get('j2')!, /at most 1 high-priority job/);
  assert.deepEqual(admit(t, [gpu(0)], policy, { bob: 2 * 3600 }).start.map((s) => s.jobId), ['j2']);
});

test('maxMemory is held by quotas: a job that declares nothing starts with the rest of its owner\'s allowance as its hard quota, one that declares memory with that, and the next waits', () => {
  const t = new JobTable();
  job(t, { id: 'j1', owner: 'alice', gpu: 0, requestedGpu: 0, memoryQuotaBytes: 6 * G }, 'running');
  job(t, { id: 'j2', owner: 'alice', requestedGpu: 0, memoryRequestBytes: 4 * G }, 'queued', 1);
  job(t, { id: 'j3', owner: 'alice', requestedGpu: 0 }, 'queued', 2);
  job(t, { id: 'j4', owner: 'alice', requestedGpu: 0 }, 'queued', 3);
  job(t, { id: 'j5', owner: 'bob', requestedGpu: 0 }, 'queued', 4);
  const policy = { limits: [{ user: 'alice', maxMemory: '20G' }] };
  const plan = admit(t, [gpu(0)], policy);
  assert.deepEqual(plan.start, [
    { jobId: 'j2', gpus: [0], quotaBytes: 4 * G }, // its request, held
    { jobId: 'j3', gpus: [0], quotaBytes: 10 * G }, // 20G − j1's 6G − j2's 4G
    { jobId: 'j5', gpus: [0] }, // bob has no memory limit: no quota of the policy's
  ]);
  assert.equal(plan.waiting.get('j4'), 'j4 (train.py, alice) is queued: alice may hold at most 20G of GPU memory at once (lab policy, user alice); alice\'s running jobs hold 20G and j4 declares no memory, and nothing is left.');
});

test('a quota the lab policy gave a job caps it, and speaks for none of its GPU\'s memory: another user\'s job fits beside it', () => {
  const t = new JobTable();
  job(t, { id: 'j1', owner: 'alice', gpu: 0, requestedGpu: 0, memoryQuotaBytes: 20 * G, memoryQuotaFromPolicy: true, usedMemory: 9 * G }, 'running');
  job(t, { id: 'j2', owner: 'bob', requestedGpu: 0, memoryRequestBytes: 70 * G }, 'queued', 1);
  const gpus = [{ ...gpu(0), memoryUsed: 9 * G, memoryFree: 71 * G }];
  assert.deepEqual(admit(t, gpus, { limits: [{ user: 'alice', maxMemory: '20G' }] }).start, [{ jobId: 'j2', gpus: [0] }], 'free: 80G − the 9G it uses, not − the 11G more its cap would allow');
  t.get('j1')!.view.memoryQuotaFromPolicy = undefined; // a quota alice declared herself is memory she said it needs
  assert.match(admit(t, gpus, { limits: [{ user: 'alice', maxMemory: '20G' }] }).waiting.get('j2')!, /GPU 0 has 60G free and j2 needs 70G/);
});

test('a job on two GPUs counts two GPUs and its memory on each against its owner\'s limits; the policy\'s quota for it is per GPU', () => {
  const t = new JobTable();
  job(t, { id: 'j1', owner: 'alice', requestedGpu: 'auto', gpuCount: 2 }, 'queued', 1);
  const oneGpu = admit(t, [gpu(0), gpu(1), gpu(2)], { limits: [{ user: 'alice', maxGpus: 1 }] });
  assert.deepEqual(oneGpu.start, []);
  assert.match(oneGpu.waiting.get('j1')!, /is queued: alice may use at most 1 GPU at once \(lab policy, user alice\), and the job needs 2/);
  end(t.get('j1')!);
  job(t, { id: 'j2', owner: 'alice', requestedGpu: 'auto', gpuCount: 2, memoryQuotaBytes: 20 * G }, 'queued', 2);
  const memory = admit(t, [gpu(0), gpu(1), gpu(2)], { limits: [{ user: 'alice', maxMemory: '30G' }] });
  assert.match(memory.waiting.get('j2')!, /alice may hold at most 30G .* j2 asks for 40G/, 'its 20G on each of two GPUs');
  end(t.get('j2')!);
  job(t, { id: 'j3', owner: 'alice', requestedGpu: 'auto', gpuCount: 2 }, 'queued', 3);
  assert.deepEqual(admit(t, [gpu(0), gpu(1), gpu(2)], { limits: [{ user: 'alice', maxMemory: '40G' }] }).start, [{ jobId: 'j3', gpus: [0, 1], quotaBytes: 20 * G }], 'the rest of her 40G, per GPU');
});
