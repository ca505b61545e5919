// policy.get and policy.set through the engine's dispatcher: only an administrator may replace
// the policy (a refusal changes nothing and is audited), a new policy is kept before it applies,
// and everyone may read the policy and where they stand under it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseLabPolicy, type LabPolicy } from '../../../../shared/lab-policy.js';
import type { Caller } from '../../api/dispatcher.js';
import { Engine } from '../../engine.js';
import { noGpus } from '../../store/testing/synthetic.js';
import { attachScheduler, type AttachSchedulerOptions } from '../attach.js';
import { realBackend } from '../../gpu/gpu-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-policy-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ALICE: Caller = { uid: 64_101, gid: 64_101, groups: [], user: 'alice', pid: null, admin: false, via: 'socket' };
const ADMIN: Caller = { uid: 64_102, gid: 64_102, groups: [], user: 'dana', pid: null, admin: true, via: 'socket' };
let engines = 0;

function box(options: Partial<AttachSchedulerOptions>, kind: 'daemon' | 'personal' = 'daemon') {
  const engine = new Engine(realBackend(noGpus, () => undefined), { kind, adminGroup: kind === 'daemon' ? 'gpushare-admin' : undefined });
  const name = `e${++engines}`;
  const attached = attachScheduler(engine, { gate: null, guardian: false, stateDir: join(dir, name, 'state'), runtimeDir: join(dir, name, 'run'), ...options });
  after(() => attached.stop());
  const call = (caller: Caller, method: 'policy.get' | 'policy.set', params: object) => engine.dispatcher.dispatch(method, params, caller);
  return { engine, call };
}

const INITIAL = parseLabPolicy({ limits: [{ group: 'gpst-students', maxGpus: 1 }, { user: 'alice', maxMemory: 40 * 1024 ** 3 }] });

test('policy.set by a non-administrator is refused naming the rule; nothing changes, nothing is kept, the attempt is audited', async () => {
  const kept: LabPolicy[] = [];
  const { engine, call } = box({ labPolicy: INITIAL, persistPolicy: (p) => kept.push(p) });
  const before = await call(ALICE, 'policy.get', {});
  await assert.rejects(call(ALICE, 'policy.set', { policy: { limits: [] } }), {
    name: 'ApiError',
    code: 'forbidden',
    message: 'Cannot change the lab policy: it sets the limits and the queue order of every user of the box. Only an administrator (root or a member of group gpushare-admin) may; alice (uid 64101) is not.',
  });
  assert.deepEqual(await call(ALICE, 'policy.get', {}), before);
  assert.deepEqual(kept, []);
  const audit = engine.dispatcher.auditLog(5).find((e) => e.what === 'policy.set');
  assert.equal(audit?.who, 'alice');
  assert.match(audit!.result, /^Cannot change the lab policy/);
});

test('policy.set by an administrator is kept first, then applied; a policy that cannot be kept or is invalid changes nothing', async () => {
  const kept: LabPolicy[] = [];
  let failKeep = false;
  const { engine, call } = box({
    labPolicy: INITIAL,
    persistPolicy: async (p) => {
      if (failKeep) throw new Error('EROFS: read-only file system');
      kept.push(p);
    },
  });
  const answer = (await call(ADMIN, 'policy.set', { policy: { limits: [{ user: 'alice', maxGpus: 2 }], idleHolders: { park: true } } })) as { policy: LabPolicy };
  const expected = parseLabPolicy({ limits: [{ user: 'alice', maxGpus: 2 }], idleHolders: { park: true } });
  assert.deepEqual(kept, [expected], 'kept with every default filled in');
  assert.deepEqual(answer.policy, expected);
  assert.equal(engine.dispatcher.auditLog(1)[0].result, 'ok');

  await assert.rejects(call(ADMIN, 'policy.set', { policy: { limits: [{ user: 'alice', group: 'students', maxGpus: 1 }] } }), {
    name: 'ValidationError',
    message: 'params.policy.limits[0]: names both a user and a group: one entry is for one of them (or, naming neither, for everyone)',
  });
  failKeep = true;
  await assert.rejects(call(ADMIN, 'policy.set', { policy: {} }), { code: 'unsupported', message: 'The lab policy was not changed: it could not be kept (EROFS: read-only file system).' });
  assert.deepEqual(((await call(ALICE, 'policy.get', {})) as { policy: LabPolicy }).policy, expected, 'still the policy that was kept');
  assert.equal(kept.length, 1);
});

test('policy.get tells the caller their limits and where each comes from, and that only administrators may change it', async () => {
  const { engine, call } = box({ labPolicy: INITIAL });
  const status = (await call(ALICE, 'policy.get', {})) as import('../../../../shared/lab-policy.js').LabPolicyStatus;
  assert.equal(status.enforced, true);
  assert.equal(status.mayChange, false);
  assert.equal(status.administrators, 'an administrator (root or a member of group gpushare-admin)');
  assert.deepEqual(status.you.limits, { maxMemory: { value: 40 * 1024 ** 3, from: 'user alice' } }, 'alice is in no group gpst-students on this system');
  assert.deepEqual(status.you.using, { gpus: 0, memoryBytes: 0, highPriorityJobs: 0 });
  assert.deepEqual(status.fairShare, [{ user: 'alice', gpuHours: 0, rank: 1 }]);
  assert.equal(((await call(ADMIN, 'policy.get', {})) as { mayChange: boolean }).mayChange, true);
  assert.deepEqual(engine.dispatcher.auditLog().filter((e) => e.what === 'policy.get'), [], 'reading the policy is not a change to audit');
});

test('a personal engine has no lab policy: policy.get says so and policy.set is refused', async () => {
  const { engine, call } = box({}, 'personal');
  const status = (await call(engine.owner, 'policy.get', {})) as { enforced: boolean; you: { limits: object } };
  assert.equal(status.enforced, false);
  assert.deepEqual(status.you.limits, {});
  await assert.rejects(call(engine.owner, 'policy.set', { policy: {} }), { code: 'unsupported', message: /^This is a personal engine: a lab policy belongs to the box daemon/ });
});
