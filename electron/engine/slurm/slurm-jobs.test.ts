// The daemon's side of the prolog: who may register a Slurm job, its quota from its shards, its lane from its
// QOS or partition, and which processes may join it (only the job's own user's, by what Slurm says of the pid).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_SLURM_CONFIG, type SlurmConfig } from '../../../shared/slurm.js';
import type { Caller } from '../api/dispatcher.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { SlurmJobs } from './slurm-jobs.js';

const GiB = 1024 ** 3;
const me = { uid: process.getuid!(), name: execFileSync('id', ['-un'], { encoding: 'utf8' }).trim() };
const caller = (admin: boolean, uid = 4242): Caller => ({ uid, gid: uid, groups: [], user: admin ? 'root' : 'mallory', pid: null, admin, via: 'socket' }) as Caller;
const scheduler = { snapshot: () => ({ gpus: [{ index: 0, uuid: 'GPU-0', memoryTotal: 40 * GiB }, { index: 1, uuid: 'GPU-1', memoryTotal: 80 * GiB }] }), act: { options: { mps: null } } } as unknown as Scheduler;
const config: SlurmConfig = { qosLanes: [{ name: 'high', lane: 'high' }], partitionLanes: [{ name: 'scavenger', lane: 'best-effort', maxLane: 'normal' }] };

function jobs(pidInfo: (pid: number, node: string | null) => string | null = () => null) {
  return new SlurmJobs(scheduler, { config: () => config, pidInfo });
}

test('only root or an administrator registers a Slurm job: a user is refused and nothing is registered', () => {
  const s = jobs();
  assert.throws(() => s.register({ jobId: '7', uid: me.uid, gpus: [0] }, caller(false)), /only root \(Slurm's prolog\) or an administrator may; mallory \(uid 4242\) is not/);
  assert.deepEqual(s.list(), []);
});

test("quota = shards ÷ shards per GPU × that GPU's memory; lane from the QOS, else the partition, else normal", () => {
  const s = jobs();
  const a = s.register({ jobId: '1', uid: me.uid, gpus: [0], shards: 1, shardsPerGpu: 4, qos: 'high', partition: 'scavenger' }, caller(true));
  assert.deepEqual([a.memoryQuotaBytes, a.lane, a.laneFrom, a.user], [10 * GiB, 'high', 'QOS high', me.name]);
  const b = s.register({ jobId: '2', uid: me.uid, gpus: [1], shards: 3, shardsPerGpu: 4, qos: null, partition: 'scavenger' }, caller(true));
  assert.deepEqual([b.memoryQuotaBytes, b.lane], [60 * GiB, 'best-effort']);
  const c = s.register({ jobId: '3', uid: me.uid, gpus: [1] }, caller(true));
  assert.deepEqual([c.memoryQuotaBytes, c.lane, c.laneFrom], [null, 'normal', 'the default']);
  assert.equal(new SlurmJobs(scheduler, { config: () => DEFAULT_SLURM_CONFIG }).register({ jobId: '4', uid: me.uid, gpus: [0], qos: 'high' }, caller(true)).lane, 'normal');
});

test('bad registrations are refused whole: a GPU the box lacks, more shards than configured, an unknown uid', () => {
  const s = jobs();
  assert.throws(() => s.register({ jobId: '5', uid: me.uid, gpus: [3] }, caller(true)), /given GPU 3, which this box does not have/);
  assert.throws(() => s.register({ jobId: '5', uid: me.uid, gpus: [0], shards: 5, shardsPerGpu: 4 }, caller(true)), /holds 5 shards of a GPU configured with 4/);
  assert.throws(() => s.register({ jobId: '5', uid: 3_999_999, gpus: [0] }, caller(true)), /uid 3999999 has no account on this box/);
  assert.deepEqual(s.list(), []);
});

test("a process joins a Slurm job only when Slurm says it is that job's and it runs as the job's user", () => {
  const asked: Array<[number, string | null]> = [];
  const s = jobs((pid, node) => {
    asked.push([pid, node]);
    return pid === process.pid ? '9' : null;
  });
  assert.equal(s.jobOf({ pid: process.pid, uid: me.uid, startTicks: 1 }), null, 'no Slurm job registered: nothing asked');
  assert.deepEqual(asked, []);
  s.register({ jobId: '9', uid: me.uid, gpus: [0], node: 'gpu1' }, caller(true));
  assert.equal(s.jobOf({ pid: process.pid, uid: me.uid, startTicks: 1 })?.jobId, '9');
  assert.deepEqual(asked, [[process.pid, 'gpu1']], "asked of the slurmd of the job's node");
  assert.equal(s.jobOf({ pid: process.pid, uid: me.uid + 1, startTicks: 2 }), null, "another user's process never joins it");
  assert.equal(s.jobOf({ pid: process.ppid, uid: me.uid, startTicks: 3 }), null, 'a process Slurm does not place in it');
});

test("a process of a user with no live Slurm job here makes the root daemon run no scontrol: only a Slurm job's own user can cost it one", () => {
  const asked: number[] = [];
  const s = jobs((pid) => (asked.push(pid), null));
  s.register({ jobId: '11', uid: me.uid, gpus: [0], node: 'gpu1' }, caller(true));
  for (let i = 0; i < 50; i++) assert.equal(s.jobOf({ pid: process.pid, uid: me.uid + 1, startTicks: 100 + i }), null);
  assert.deepEqual(asked, [], 'another user enrolling 50 processes asked slurmd nothing');
  s.jobOf({ pid: process.pid, uid: me.uid, startTicks: 1 });
  assert.deepEqual(asked, [process.pid], "the job's own user's process is asked about");
});

test('the epilog is root\'s too, and names a job never registered', async () => {
  const s = jobs();
  await assert.rejects(s.end('9', caller(false)), /Cannot end Slurm job 9: only root/);
  await assert.rejects(s.end('9', caller(true)), /Slurm job 9 was never registered here/);
});

test("a QOS or partition with maxLane caps how high the job's owner may drag it; without one, the lab policy alone decides", () => {
  const s = jobs();
  s.register({ jobId: '11', uid: me.uid, gpus: [0], partition: 'scavenger' }, caller(true));
  s.register({ jobId: '12', uid: me.uid, gpus: [0], qos: 'high' }, caller(true));
  const record = (jobId: string) => ({ view: { enrolled: { slurm: { jobId } } } }) as never;
  assert.deepEqual(scheduler.laneCap!(record('11')), { lane: 'normal', why: "Slurm job 11's partition scavenger" });
  assert.equal(scheduler.laneCap!(record('12')), null);
  assert.equal(scheduler.laneCap!({ view: {} } as never), null, 'not a Slurm job');
});

test('one sharing type per GPU, as Slurm allows one per node: gres/shard and gres/mps in one job, or beside each other on a GPU, are refused naming both; nothing is registered', () => {
  const s = jobs();
  assert.throws(() => s.register({ jobId: '21', uid: me.uid, gpus: [0], shards: 1, shardsPerGpu: 4, mpsPercent: 25 }, caller(true)), /holds both gres\/shard and gres\/mps: Slurm allows one sharing type per node/);
  s.register({ jobId: '22', uid: me.uid, gpus: [0], shards: 1, shardsPerGpu: 4 }, caller(true));
  assert.throws(() => s.register({ jobId: '23', uid: me.uid, gpus: [0], mpsPercent: 25 }, caller(true)), /Slurm job 23 holds gres\/mps of GPU 0, which Slurm job 22 shares by gres\/shard/);
  assert.throws(() => s.register({ jobId: '24', uid: me.uid, mpsPercent: 25, gpus: [] }, caller(true)), /holds gres\/mps but Slurm named no GPU of this node/);
  assert.deepEqual(s.list().map((j) => j.jobId), ['22']);
});

test('gres/mps where the engine has no MPS: the job is registered with its quota and lane, and says why its tasks run without MPS; the task prolog gets no MPS variables', () => {
  const noMps = { ...scheduler, act: { options: { mps: null } } } as unknown as Scheduler;
  const s = new SlurmJobs(noMps, { config: () => config, pidInfo: (pid) => (pid === process.pid ? '31' : null) });
  const view = s.register({ jobId: '31', uid: me.uid, gpus: [1], mpsPercent: 50, qos: 'high' }, caller(true));
  assert.deepEqual([view.mps, view.lane, view.mpsPercent], [{ started: false, why: 'MPS is not available in this engine' }, 'high', 50]);
  assert.deepEqual(s.taskEnv({ ...caller(false, me.uid), pid: process.pid }), { jobId: '31', env: {} });
  assert.equal(s.sharingOf('31'), null, 'its tasks are ordinary shared jobs');
});

test("the task prolog's environment is only for a process the kernel places in the job, of the job's user", () => {
  const s = jobs((pid) => (pid === process.pid ? '41' : null));
  s.register({ jobId: '41', uid: me.uid, gpus: [0] }, caller(true));
  assert.deepEqual(s.taskEnv({ ...caller(false, me.uid), pid: process.pid }), { jobId: '41', env: {} });
  assert.deepEqual(s.taskEnv({ ...caller(false, me.uid + 1), pid: process.pid }), { jobId: null, env: {} }, 'the pid is not the caller\'s');
  assert.deepEqual(s.taskEnv({ ...caller(false, me.uid), pid: null }), { jobId: null, env: {} }, 'no peer pid: nothing');
  assert.deepEqual(s.taskEnv({ ...caller(false, me.uid), pid: process.ppid }), { jobId: null, env: {} }, 'a process Slurm does not place in it');
});

test("a process under a root-owned slurmstepd is that step's job (as proctrack/linuxproc says), without asking slurmd; a slurmstepd of a user's own is no Slurm's", () => {
  const root = mkdtempSync(join(tmpdir(), 'gpushare-slurm-proc-'));
  const proc = (pid: number, comm: string, ppid: number, cmdline: string, uid = 0) => {
    mkdirSync(join(root, String(pid)));
    writeFileSync(join(root, String(pid), 'stat'), `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${1000 + pid} 0 0`);
    writeFileSync(join(root, String(pid), 'comm'), `${comm}\n`);
    writeFileSync(join(root, String(pid), 'cmdline'), `${cmdline}\0`);
    chownSync(join(root, String(pid)), uid, uid);
  };
  try {
    proc(100, 'slurmstepd', 1, 'slurmstepd: [55.batch]');
    proc(200, 'sh', 100, 'sh', me.uid);
    proc(300, 'python3', 200, 'python3', me.uid);
    proc(400, 'slurmstepd', 1, 'slurmstepd: [55.batch]', 4242); // a user's program named so
    proc(500, 'python3', 400, 'python3', me.uid);
    const asked: number[] = [];
    const s = new SlurmJobs(scheduler, { config: () => config, procRoot: root, pidInfo: (pid) => (asked.push(pid), null) });
    s.register({ jobId: '55', uid: me.uid, gpus: [0] }, caller(true));
    assert.equal(s.jobOf({ pid: 300, uid: me.uid, startTicks: 1300 })?.jobId, '55');
    assert.deepEqual(asked, [], 'slurmd was not asked');
    assert.equal(s.jobOf({ pid: 500, uid: me.uid, startTicks: 1500 }), null, 'a slurmstepd that is not root\'s');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
