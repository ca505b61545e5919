// The lab policy's checks of a job on several GPUs when it is submitted and when its quota is raised: its
// memory is per GPU, so it counts once per GPU; asking for more GPUs than its owner may use is refused at once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseLabPolicy } from '../../../../shared/lab-policy.js';
import { ApiError } from '../../api/api-error.js';
import { JobTable, newJobView } from '../job-table.js';
import { LabPolicyEnforcer } from './lab-policy-enforcer.js';
import { storeWithHistory } from './testing/usage-history.js';

const G = 1024 ** 3;
const NOW = Date.UTC(2026, 2, 10, 12, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'gpushare-multi-gpu-limits-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function enforcer(limits: unknown[]): Promise<LabPolicyEnforcer> {
  const store = await storeWithHistory(join(dir, `${Math.random()}.db`), [], NOW);
  after(() => store.close());
  return new LabPolicyEnforcer({ policy: parseLabPolicy({ limits }), usage: store, groupsOf: () => [], now: () => NOW });
}

const refused = (fn: () => void, message: RegExp): void => assert.throws(fn, (e: unknown) => e instanceof ApiError && message.test(e.message));
const submission = { owner: 'alice', uid: 1000, priority: 'normal' as const, memoryRequestBytes: null };

test('a submission on two GPUs counts its memory on each, and asks for no more GPUs than its owner may use', async () => {
  const lab = await enforcer([{ user: 'alice', maxGpus: 1, maxMemory: '30G' }]);
  lab.checkSubmission({ ...submission, memoryQuotaBytes: 20 * G });
  refused(() => lab.checkSubmission({ ...submission, memoryQuotaBytes: 20 * G, gpuCount: 2 }), /its memory quota of 20G on each of 2 GPUs, 40G in all, is more than alice may hold at once \(30G/);
  refused(() => lab.checkSubmission({ ...submission, memoryQuotaBytes: 10 * G, gpuCount: 2 }), /it asks for 2 GPUs, and alice may use at most 1 at once \(lab policy, user alice\)/);
});

test('raising the quota of a running job on two GPUs counts it on each of them', async () => {
  const lab = await enforcer([{ user: 'alice', maxMemory: '50G' }]);
  const t = new JobTable();
  const r = t.add(newJobView({ id: 'j1', managed: true, owner: 'alice', uid: 1000, argv: ['torchrun'], gpus: [0, 1], gpuCount: 2, memoryQuotaBytes: 10 * G }, 'running', 'started'));
  lab.checkQuota(r, 25 * G, t.placed().map((x) => x.view));
  refused(() => lab.checkQuota(r, 30 * G, t.placed().map((x) => x.view)), /Cannot raise the memory quota to 30G per GPU \(60G on its 2 GPUs\) of j1: alice may hold at most 50G/);
});
