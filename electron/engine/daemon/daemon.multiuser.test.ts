// One scheduler for the box: a daemon as root, users as clients the kernel names. Jobs run as
// their users; nobody acts on another's job or changes the box unless an administrator; one user's
// high-priority job holds back another's best-effort job; a killed daemon leaves nothing stopped or parked.
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { ApiMethod } from '../../../shared/api.js';
import type { JobView } from '../../../shared/jobs.js';
import { readProcStatus } from '../proc/proc-status.js';
import { untilWith } from '../../testing/until.js';
import { isRoot, LabBox, type LabUser, type WireRequest } from './testing/lab-box.js';

const GiB = 1024 ** 3;
const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';

let box: LabBox;
let alice: LabUser;
let bob: LabUser;
let admin: LabUser;
let labGroup: string;

before(async () => {
  if (SKIP) return;
  box = new LabBox(String(process.pid % 100000));
  labGroup = box.group('data');
  const adminGroup = box.group('admins');
  alice = box.user('alice', [labGroup]);
  bob = box.user('bob');
  admin = box.user('admin', [adminGroup]);
  await box.start({ adminGroup, rateHz: 5 });
});
after(async () => {
  if (!SKIP) await box.dispose();
});

const until = untilWith({ intervalMs: 100, timeoutMs: 15_000, detail: () => box.output });

const train = (seconds: number, mem = '1G', kernelMs = '5') => [box.fakejob, '--mem', mem, 'train', '--kernel-ms', kernelMs, '--duration', String(seconds)];
const job = async (id: string): Promise<JobView> => (await box.ok(null, 'jobs.list', { includeFinished: true })).find((j) => j.id === id)!;
const running = (id: string) => until(`${id} running`, async () => ((await job(id)).state === 'running' ? job(id) : undefined));
const idsOf = (status: string): number[] => (/^Groups:\s*(.*)$/m.exec(status)?.[1] ?? '').split(/\s+/).filter(Boolean).map(Number);

test('each connection is the kernel\'s caller: a user, an administrator (by group) and root', { skip: SKIP }, async () => {
  const seen = await Promise.all([alice, admin, null].map((u) => box.ok(u, 'session.whoami', {})));
  assert.deepEqual(
    seen.map((w) => [w.user, w.uid, w.admin, w.engine.kind]),
    [
      [alice.name, alice.uid, false, 'daemon'],
      [admin.name, admin.uid, true, 'daemon'],
      ['root', 0, true, 'daemon'],
    ],
  );
  assert.doesNotMatch(box.output, /Launch gate off/, 'every user\'s jobs share the daemon\'s launch gate');
});

test("the daemon's store, which keeps queued jobs' environments, is root's alone: the database and its -wal are mode 0600", { skip: SKIP }, async () => {
  await box.ok(null, 'jobs.list', {});
  for (const file of [box.dbPath, `${box.dbPath}-wal`]) assert.equal((statSync(file).mode & 0o777).toString(8), '600', `${file} is root's alone`);
});

test("a job alice submits runs with alice's uid, gid and supplementary groups, in her working directory", { skip: SKIP }, async () => {
  const submitted = await box.ok(alice, 'jobs.submit', { argv: train(60), cwd: box.dir, gpu: 0 });
  assert.equal(submitted.owner, alice.name);
  const view = await running(submitted.id);
  const status = readFileSync(`/proc/${view.pid}/status`, 'utf8');
  assert.match(status, new RegExp(`^Uid:\\s+${alice.uid}\\s+${alice.uid}\\s+${alice.uid}\\s+${alice.uid}$`, 'm'));
  assert.match(status, new RegExp(`^Gid:\\s+${alice.gid}\\s+${alice.gid}\\s+${alice.gid}\\s+${alice.gid}$`, 'm'));
  const labGid = Number(readFileSync('/etc/group', 'utf8').split('\n').find((l) => l.startsWith(labGroup + ':'))!.split(':')[2]);
  assert.ok(idsOf(status).includes(labGid), `groups ${idsOf(status)} include ${labGroup} (${labGid})`);
  assert.equal(readlinkSync(`/proc/${view.pid}/cwd`), box.dir);
  await box.ok(alice, 'jobs.terminate', { job: submitted.id });
});

test("nobody but an administrator acts on another user's job or process or changes the box: bob's attempts all refused, an administrator's go through", { skip: SKIP }, async () => {
  const mine = await box.ok(alice, 'jobs.submit', { argv: train(120), cwd: box.dir, gpu: 0 });
  await running(mine.id);
  const loose = box.runAs(alice, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120']);
  await until('alice\'s own process listed', async () => (await box.ok(null, 'jobs.list', {})).some((j) => j.id === `p${loose.pid}`));
  const onJob = (method: ApiMethod, extra: Record<string, unknown> = {}): WireRequest => ({ method, params: { job: mine.id, ...extra } });
  const attempts: WireRequest[] = [
    onJob('jobs.setPriority', { priority: 'high' }),
    onJob('jobs.setQuota', { bytes: 2 * GiB }),
    onJob('jobs.setMode', { mode: 'exclusive' }),
    onJob('jobs.place', { gpu: 0 }),
    onJob('jobs.suspend'),
    onJob('jobs.resume'),
    onJob('jobs.park'),
    onJob('jobs.unpark'),
    onJob('jobs.terminate'),
    { method: 'jobs.suspend', params: { job: `p${loose.pid}` } },
    { method: 'mig.apply', params: { gpu: 1, layout: ['3g.40gb@4', '3g.40gb@0'] } },
    { method: 'mps.start', params: { gpu: 0 } },
    { method: 'mps.stop', params: { gpu: 0 } },
    { method: 'policy.set', params: { policy: { limits: [{ maxGpus: 0 }] } } },
    { method: 'sampler.setRate', params: { hz: 10 } },
  ];
  const before = JSON.stringify((await box.ok(null, 'jobs.list', {})).map((j) => [j.id, j.state, j.priority, j.memoryQuotaBytes, j.mode]));
  const outcomes = await box.calls(bob, attempts);
  const succeeded = outcomes.filter((o) => o.ok).length;
  assert.equal(succeeded, 0, `of ${attempts.length} attempts by a non-admin, ${succeeded} succeeded`);
  for (const [i, outcome] of outcomes.entries()) {
    assert.equal(outcome.ok ? 'ok' : outcome.error.code, 'forbidden', `${attempts[i].method} refused as forbidden`);
    if (!outcome.ok && attempts[i].method.startsWith('jobs.')) assert.match(outcome.error.message, new RegExp(`belongs to ${alice.name} \\(uid ${alice.uid}\\)`));
    if (!outcome.ok) assert.match(outcome.error.message, /administrator \(root or a member of group gpst\d+admins\)/, `${attempts[i].method} names the rule`);
  }
  const afterRefusals = JSON.stringify((await box.ok(null, 'jobs.list', {})).map((j) => [j.id, j.state, j.priority, j.memoryQuotaBytes, j.mode]));
  assert.equal(afterRefusals, before, 'refused requests changed nothing');

  // the same commands, in an order where each makes sense, by an administrator
  const byAdmin: WireRequest[] = [
    onJob('jobs.setPriority', { priority: 'high' }),
    onJob('jobs.setQuota', { bytes: 2 * GiB }),
    onJob('jobs.setMode', { mode: 'shared' }),
    onJob('jobs.suspend'),
    onJob('jobs.resume'),
    { method: 'jobs.suspend', params: { job: `p${loose.pid}` } },
    { method: 'jobs.resume', params: { job: `p${loose.pid}` } },
    { method: 'mps.start', params: { gpu: 0 } },
    { method: 'mps.stop', params: { gpu: 0 } },
    { method: 'mig.apply', params: { gpu: 1, layout: ['3g.40gb@4', '3g.40gb@0'] } },
    { method: 'policy.set', params: { policy: { limits: [{ group: labGroup, maxGpus: 1 }] } } },
    { method: 'sampler.setRate', params: { hz: 5 } },
  ];
  const adminOutcomes = await box.calls(admin, byAdmin);
  assert.deepEqual(
    adminOutcomes.map((o, i) => `${byAdmin[i].method}: ${o.ok ? 'ok' : o.error.message}`),
    byAdmin.map((r) => `${r.method}: ok`),
  );
  // placing applies only to a job that has not started: for the admin it is refused by the job's state, not by a right
  const placed = await box.call(admin, 'jobs.place', { job: mine.id, gpu: 0 });
  assert.deepEqual(placed.ok ? 'ok' : [placed.error.code, placed.error.message], ['conflict', `Cannot move ${mine.id}: it already runs on GPU 0 (a parked job comes back on the GPU it left).`]);
  const parked = await box.call(admin, 'jobs.park', { job: mine.id });
  assert.ok(parked.ok, parked.ok ? '' : parked.error.message);
  await until('parked', async () => (await job(mine.id)).state === 'parked');
  assert.ok((await box.call(admin, 'jobs.unpark', { job: mine.id })).ok);
  await until('back running', async () => (await job(mine.id)).state === 'running');
  assert.ok((await box.call(admin, 'jobs.terminate', { job: mine.id })).ok);
  loose.kill('SIGKILL');
  await box.ok(admin, 'policy.set', { policy: {} });
});

test("alice's high-priority job holds back bob's best-effort job on the same GPU", { skip: SKIP }, async () => {
  const low = await box.ok(bob, 'jobs.submit', { argv: train(120, '1G', '2'), cwd: box.dir, gpu: 0, priority: 'best-effort' });
  await running(low.id);
  const high = await box.ok(alice, 'jobs.submit', { argv: train(120, '1G', '2'), cwd: box.dir, gpu: 0, priority: 'high' });
  await running(high.id);
  const held = await until('bob\'s job held back', async () => {
    const view = await job(low.id);
    return view.state === 'gated' || view.state === 'suspended' ? view : undefined;
  });
  assert.match(held.history.at(-1)!.reason, new RegExp(`${high.id}`), 'the reason names alice\'s job');
  await box.ok(alice, 'jobs.terminate', { job: high.id });
  await until('bob\'s job runs again', async () => (await job(low.id)).state === 'running');
  await box.ok(bob, 'jobs.terminate', { job: low.id });
});

test('SIGKILL of the daemon leaves no process of any user stopped or parked', { skip: SKIP }, async () => {
  const loose = box.runAs(bob, ['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '120']);
  await until("bob's own process listed", async () => (await box.ok(null, 'jobs.list', {})).some((j) => j.id === `p${loose.pid}`));
  const parked = await box.ok(alice, 'jobs.submit', { argv: train(120, '2G'), cwd: box.dir, gpu: 0 });
  const p = await running(parked.id);
  await box.ok(bob, 'jobs.suspend', { job: `p${loose.pid}` });
  await box.ok(alice, 'jobs.park', { job: parked.id });
  await until('suspended and parked', async () => (await job(`p${loose.pid}`))?.state === 'suspended' && (await job(parked.id)).state === 'parked');
  const onGpu = (pid: number) => box.dump().devices.flatMap((d) => d.processes).find((q) => q.pid === pid);
  assert.equal(readProcStatus(loose.pid!)?.state, 'T', "bob's process is stopped (SIGSTOP)");
  assert.equal(onGpu(p.pid!)?.checkpointState, 'checkpointed', "alice's job is checkpointed");
  await box.stop('SIGKILL');
  await until('both free again', () => readProcStatus(loose.pid!)?.state !== 'T' && onGpu(p.pid!)?.checkpointState === 'running');
  assert.notEqual(readProcStatus(loose.pid!)?.state, 'T', "bob's process is not stopped");
  assert.equal(onGpu(p.pid!)?.checkpointState, 'running', "alice's job is not parked");
  loose.kill('SIGKILL');
});
