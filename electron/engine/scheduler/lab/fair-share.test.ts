// Fair share and high-priority hours from a synthetic usage history in a real store: the queue
// puts the user with the least recent (decayed) usage first, and the half-life decides who that is.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { JobView } from '../../../../shared/jobs.js';
import { parseLabPolicy } from '../../../../shared/lab-policy.js';
import type { GpuView } from '../../../../shared/snapshot.js';
import { HOUR_MS } from '../../store/usage-store.js';
import { JobTable, newJobView } from '../job-table.js';
import { planAdmission } from '../policies.js';
import { LabPolicyEnforcer } from './lab-policy-enforcer.js';
import { storeWithHistory, type UsageSpan } from './testing/usage-history.js';

const G = 1024 ** 3;
const DAY = 24 * HOUR_MS;
const NOW = Date.UTC(2026, 2, 10, 12, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'gpushare-fairshare-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// alice: 10 GPU-hours six days ago; carol: 12 GPU-hours two days ago; bob: 4 GPU-hours ending an hour ago
const HISTORY: UsageSpan[] = [
  { user: 'alice', pid: 101, gpu: 0, from: NOW - 6 * DAY - 10 * HOUR_MS, to: NOW - 6 * DAY },
  { user: 'carol', pid: 301, gpu: 1, from: NOW - 2 * DAY - 12 * HOUR_MS, to: NOW - 2 * DAY },
  { user: 'bob', pid: 201, gpu: 2, from: NOW - 5 * HOUR_MS, to: NOW - HOUR_MS },
];

const gpu: GpuView = { index: 0, uuid: 'GPU-0', name: 'GPU', pciBusId: '', lost: false, memoryTotal: 80 * G, memoryUsed: 0, memoryFree: 80 * G, utilizationGpu: 0, utilizationMemory: 0, temperatureC: null, powerWatts: null, powerLimitWatts: null, smClockMHz: null, memClockMHz: null, smCount: null, computeMode: null, migEnabled: false, migPending: false, migSlices: [], errors: [] };

/** One 30G job per user, submitted bob, carol, alice (so submission order is not the answer); room for two. */
function queue(): JobTable {
  const t = new JobTable();
  ['bob', 'carol', 'alice'].forEach((owner, i) => t.add(newJobView({ id: `j${i + 1}`, managed: true, owner, uid: 1000 + i, argv: ['train.py'], requestedGpu: 0, memoryRequestBytes: 30 * G }, 'queued', 'submitted', NOW - 10 + i)));
  return t;
}

async function enforcer(name: string, halfLifeHours: number, spans: UsageSpan[] = HISTORY, limits: unknown[] = []) {
  const store = await storeWithHistory(join(dir, `${name}.db`), spans, NOW);
  after(() => store.close());
  const lab = new LabPolicyEnforcer({ policy: parseLabPolicy({ limits, fairShare: { halfLifeHours } }), usage: store, groupsOf: () => [], now: () => NOW });
  await lab.usage.refresh();
  return lab;
}

const ownersInOrder = (lab: LabPolicyEnforcer, t: JobTable) => {
  const plan = planAdmission([gpu], t.live(), { queueOrder: lab.queueOrder() });
  return { started: plan.start.map((s) => t.get(s.jobId)!.view.owner), waiting: [...plan.waiting.keys()].map((id) => t.get(id)!.view.owner) };
};

test('fair share, half-life 24 h: alice (usage older than 4 half-lives) first, then carol (two days ago), and bob (just now) waits', async () => {
  const lab = await enforcer('day', 24);
  assert.deepEqual(ownersInOrder(lab, queue()), { started: ['alice', 'carol'], waiting: ['bob'] });
  const shares = lab.status({ user: 'bob', uid: 1000 }, [], { mayChange: false, administrators: 'root' }).fairShare;
  assert.deepEqual(shares.map((s) => [s.user, s.rank]), [['carol', 1], ['bob', 2]], 'alice\'s week-old usage is not read at all (bounded query)');
  const bob = shares.find((s) => s.user === 'bob')!.gpuHours;
  const carol = shares.find((s) => s.user === 'carol')!.gpuHours;
  assert.ok(bob > 4 * 2 ** (-5 / 24) && bob < 4, `bob's 4 GPU-hours of 1-5 h ago weigh between 2^(-5/24) and 1 each: ${bob}`);
  assert.ok(carol > 12 * 2 ** (-61 / 24) && carol < 12 * 2 ** (-48 / 24), `carol's 12 GPU-hours of 48-60 h ago: ${carol}`);
});

test('fair share, half-life a week: old usage still counts, so bob (least in total) goes first and carol waits', async () => {
  const lab = await enforcer('week', 168);
  assert.deepEqual(ownersInOrder(lab, queue()), { started: ['bob', 'alice'], waiting: ['carol'] });
});

test('fair share off: priority, then submission order, whoever used the box', async () => {
  const lab = await enforcer('off', 24);
  await lab.set(parseLabPolicy({ fairShare: { enabled: false } }));
  assert.deepEqual(ownersInOrder(lab, queue()), { started: ['bob', 'carol'], waiting: ['alice'] });
});

test('high-priority GPU-hours count the last 24 h of high-priority jobs only, and past the limit the enforcer says why a high job runs as normal', async () => {
  const spans: UsageSpan[] = [
    { user: 'bob', pid: 201, gpu: 0, from: NOW - 3 * HOUR_MS, to: NOW, priority: 'high' },
    { user: 'bob', pid: 202, gpu: 1, from: NOW - 30 * HOUR_MS, to: NOW - 25 * HOUR_MS, priority: 'high' }, // before the last 24 h
    { user: 'bob', pid: 203, gpu: 2, from: NOW - 8 * HOUR_MS, to: NOW, priority: 'normal' },
    { user: 'alice', pid: 101, gpu: 3, from: NOW - HOUR_MS, to: NOW, priority: 'high' },
  ];
  const lab = await enforcer('high', 24, spans, [{ highPriorityGpuHoursPerDay: 2.5 }]);
  const view = (owner: string): JobView => newJobView({ id: 'j9', managed: true, owner, uid: 1000, argv: ['x'], priority: 'high' }, 'queued', 'submitted');
  const status = lab.status({ user: 'bob', uid: 1000 }, [], { mayChange: false, administrators: 'root' });
  assert.equal(status.you.highPriorityGpuHoursToday, 3);
  assert.equal(lab.demotion(view('bob')), 'bob used 3.0 of 2.5 high-priority GPU-hours in the last 24 h (lab policy, everyone)');
  assert.equal(lab.demotion(view('alice')), null, 'alice used 1 of her 2.5');
});

test('a new half-life through the policy: jobs wait while usage is read again (also when a read was under way), then the order follows it', async () => {
  const lab = await enforcer('change', 24);
  const t = queue();
  assert.deepEqual(ownersInOrder(lab, t).started, ['alice', 'carol']);
  const reading = lab.usage.refresh(); // a read under the old half-life, still under way when the policy changes
  await lab.set(parseLabPolicy({ fairShare: { halfLifeHours: 168 } }));
  await reading;
  const held = planAdmission([gpu], t.live(), { limits: lab.admission(t.live().map((r) => r.view)), queueOrder: lab.queueOrder() });
  assert.deepEqual(held.start, []);
  assert.match(held.waiting.get('j1')!, /is queued: the lab policy is reading recent usage from the store \(a moment\)\.$/);
  await lab.usage.refresh();
  assert.deepEqual(ownersInOrder(lab, t), { started: ['bob', 'alice'], waiting: ['carol'] });
});
