// The lab's pure parts: the lab list's checks (file, entry, key), the lab view, per-person totals
// and "where can I run now", on boxes built here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JobView } from '../../../shared/jobs.js';
import { describeBoxState, labView, mergeLabLists, personTotals, type LabBox, type LabSnapshot } from '../../../shared/lab.js';
import { runFlags, whereCanIRun } from '../../../shared/lab-where.js';
import type { LabPolicyStatus } from '../../../shared/lab-policy.js';
import type { GpuProcessView, GpuView, MigSliceView, Snapshot } from '../../../shared/snapshot.js';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLabList, parseLabText, readLabFile, LabListError } from './lab-list.js';
import { sshWords } from './box-link.js';

const G = 1024 ** 3;

function gpu(index: number, totalG: number, usedG: number, extra: Partial<GpuView> = {}): GpuView {
  return {
    index, uuid: `GPU-${index}`, name: 'H100', pciBusId: `0000:0${index}:00.0`, lost: false, memoryTotal: totalG * G, memoryUsed: usedG * G, memoryFree: (totalG - usedG) * G,
    utilizationGpu: 10 * index, utilizationMemory: null, temperatureC: null, powerWatts: null, powerLimitWatts: null, smClockMHz: null, memClockMHz: null,
    smCount: 132, computeMode: null, migEnabled: false, migPending: false, migSlices: [], errors: [], ...extra,
  };
}

function proc(pid: number, gpuIndex: number, user: string, usedG: number, sm = 50): GpuProcessView {
  return { pid, gpuIndex, gpuUuid: `GPU-${gpuIndex}`, kind: 'compute', user, uid: 1000 + pid, command: 'python', argv: ['python'], startedAt: 0, usedMemory: usedG * G, smPercent: sm, memPercent: null, gpuInstanceId: null, computeInstanceId: null };
}

function snapshot(gpus: GpuView[], processes: GpuProcessView[]): Snapshot {
  return { seq: 1, takenAt: 1000, intervalMs: 1000, nominalIntervalMs: 1000, driver: { driverVersion: 'sim', nvmlVersion: 'sim', cudaDriverVersion: null, simulated: true, scenario: 'h100x2' }, gpus, processes };
}

function job(id: string, owner: string, state: JobView['state'], extra: Partial<JobView> = {}): JobView {
  return {
    id, managed: true, owner, uid: 1000, argv: ['train'], cwd: '/', gpu: null, requestedGpu: 'auto', priority: 'normal', memoryQuotaBytes: null, memoryRequestBytes: null,
    mode: 'shared', mpsSharePercent: null, migSlice: null, state, suspendedBy: null, pid: null, exitCode: null, signal: null, logPath: null,
    history: [{ state: 'queued', at: Number(id.slice(1)), reason: 'submitted' }], usedMemory: null, smPercent: null, ...extra,
    gpus: extra.gpus ?? (extra.gpu === undefined || extra.gpu === null ? [] : [extra.gpu]),
  };
}

function box(name: string, snap: Snapshot | null, jobs: JobView[] = [], extra: Partial<LabBox> = {}): LabBox {
  return { name, reach: `ssh ${name}`, connection: { state: 'connected', since: 0, via: 'ssh-forward' }, snapshot: snap, jobs, policy: null, caller: null, updatedAt: 1000, ...extra };
}

const lab = (...boxes: LabBox[]): LabSnapshot => ({ takenAt: 5000, boxes });

test('a lab list mistake names the file, the entry (by its name) and the key', () => {
  assert.throws(
    () => parseLabText('/etc/gpushare/lab.json', JSON.stringify({ boxes: [{ name: 'box1', ssh: 'box1' }, { name: 'box3', ssh: '-oProxyCommand=x' }] })),
    (e: Error) => e instanceof LabListError && /^\/etc\/gpushare\/lab\.json: boxes\[1\] \("box3"\)\.ssh: must be an ssh destination/.test(e.message),
  );
  assert.throws(() => parseLabText('f.json', '{"boxes": [{"name": "b", "ssh": "b", "port": 22}]}'), /f\.json: boxes\[0\] \("b"\)\.port: .*/);
  assert.throws(() => parseLabText('f.json', '{"boxes": [{"name": "b"}]}'), /f\.json: boxes\[0\] \("b"\)[^.]*: .*needs "ssh".*or "socket"/);
  assert.throws(() => parseLabText('f.json', '{"boxes": [{"name": "b", "ssh": "b"}, {"name": "b", "ssh": "c"}]}'), /boxes\[1\] \("b"\)\.name: names "b" again/);
  assert.throws(() => parseLabText('f.json', '{"boxes": [{"name": "b", "ssh": "b",}]}'), (e: Error) => /^f\.json:1:\d+: not valid JSON: a comma before "}"/.test(e.message));
  assert.throws(() => parseLabText('f.json', '[]'), /f\.json: the whole file must be an object/);
});

test('the lab list: ssh boxes default to the daemon socket there; a socket alone is reached here; the own list replaces the admin entry of the same name', () => {
  const admin = parseLabText('a', JSON.stringify({ boxes: [{ name: 'box1', ssh: 'box1.lab' }, { name: 'box2', ssh: 'box2.lab', socket: '/run/other.sock', gpushare: '/opt/gpushare/electron/cli/gpushare.js' }] }));
  assert.deepEqual(admin[0]!.route, { kind: 'ssh', destination: 'box1.lab', socket: '/run/gpushare/engine.sock', gpushare: 'gpushare' });
  assert.deepEqual(admin[1]!.route, { kind: 'ssh', destination: 'box2.lab', socket: '/run/other.sock', gpushare: '/opt/gpushare/electron/cli/gpushare.js' });
  const own = parseLabText('o', JSON.stringify({ boxes: [{ name: 'box1', ssh: 'alice@10.0.0.1' }, { name: 'here', socket: '/run/gpushare/engine.sock' }] }));
  assert.deepEqual(own[1]!.route, { kind: 'socket', path: '/run/gpushare/engine.sock' });
  assert.deepEqual(mergeLabLists(admin, own).map((b) => [b.name, b.route.kind === 'ssh' ? b.route.destination : b.route.path]), [['box1', 'alice@10.0.0.1'], ['box2', 'box2.lab'], ['here', '/run/gpushare/engine.sock']]);
});

test("ssh's words become the box's last error: the user@host prefix dropped, a dead daemon said as such", () => {
  assert.equal(sshWords('Warning: Permanently added x\nalice@127.0.0.2: Permission denied (publickey).\n'), 'ssh: Permission denied (publickey)');
  assert.equal(sshWords('ssh: connect to host 127.0.0.9 port 22: Connection refused\n'), 'ssh: connect to host 127.0.0.9 port 22: Connection refused');
  assert.match(sshWords('channel 1: open failed: connect failed: open failed\n')!, /^ssh: no gpushare daemon answers on the box/);
  assert.equal(sshWords(''), null);
  assert.equal(sshWords('setpriv: failed to execute ssh: No such file or directory\n'), 'ssh: not found (install openssh-client)');
});

test('a box down says since when, the next try and the last error', () => {
  const line = describeBoxState({ name: 'box3', connection: { state: 'down', since: Date.UTC(2026, 0, 1, 20, 3, 12), lastError: 'box3: ssh: Permission denied (publickey)', attempt: 2, nextTryAt: Date.UTC(2026, 0, 1, 20, 3, 16) } }, Date.UTC(2026, 0, 1, 20, 3, 13));
  assert.equal(line, 'down since 20:03:12 UTC (next try in 3 s): box3: ssh: Permission denied (publickey)');
});

test('the lab view lists every box with its GPUs, who runs on each and what is queued; totals count the boxes that answer', () => {
  const one = box('box1', snapshot([gpu(0, 80, 30), gpu(1, 80, 0)], [proc(1, 0, 'alice', 20), proc(2, 0, 'bob', 10), proc(3, 0, 'alice', 0)]), [job('j1', 'carol', 'queued', { requestedGpu: 1 }), job('j2', 'carol', 'queued')]);
  const down = box('box2', snapshot([gpu(0, 40, 40)], [proc(9, 0, 'dave', 40)]), [], { connection: { state: 'down', since: 0, lastError: 'box2: ssh: Connection refused', attempt: 1, nextTryAt: 9000 } });
  const view = labView(lab(one, down));
  assert.deepEqual(view.boxes[0]!.gpus[0]!.users.map((u) => [u.user, u.processes, u.memoryBytes / G]), [['alice', 2, 20], ['bob', 1, 10]]);
  assert.equal(view.boxes[0]!.gpus[1]!.queued, 1);
  assert.deepEqual([view.boxes[0]!.queued, view.boxes[0]!.queuedAnyGpu], [2, 1]);
  assert.equal(view.boxes[1]!.state, 'down');
  assert.match(view.boxes[1]!.status, /^down since .*box2: ssh: Connection refused$/);
  assert.deepEqual(view.totals, { boxes: 2, connected: 1, gpus: 2, processes: 3, memoryUsed: 30 * G, memoryTotal: 160 * G });
});

test('per-person totals add up each person across the boxes that answer', () => {
  const a = box('box1', snapshot([gpu(0, 80, 30), gpu(1, 80, 10)], [proc(1, 0, 'alice', 20, 40), proc(2, 1, 'alice', 10, 30), proc(3, 0, 'bob', 5)]), [job('j1', 'alice', 'running', { gpu: 0 }), job('j2', 'bob', 'queued')]);
  const b = box('box2', snapshot([gpu(0, 80, 8)], [proc(4, 0, 'alice', 8, 20)]), [job('j9', 'alice', 'finished')]);
  const c = box('box3', snapshot([gpu(0, 80, 80)], [proc(5, 0, 'zed', 80)]), [], { connection: { state: 'reconnecting', since: 0, lastError: 'x', attempt: 2 } });
  const people = personTotals(lab(a, b, c));
  assert.deepEqual(
    people.map((p) => [p.user, p.boxes, p.gpus, p.processes, p.memoryBytes / G, p.smPercent, p.runningJobs, p.queuedJobs]),
    [
      ['alice', ['box1', 'box2'], 3, 3, 38, 90, 1, 0],
      ['bob', ['box1'], 1, 1, 5, 50, 0, 1],
    ],
  );
});

test('where can I run: boxes whose GPUs have the memory free now, the fewest queued ahead first, then the most free', () => {
  const roomy = box('roomy', snapshot([gpu(0, 80, 70), gpu(1, 80, 20)], []));
  const busy = box('busy', snapshot([gpu(0, 80, 0)], []), [job('j1', 'bob', 'queued', { memoryQuotaBytes: 10 * G })]);
  const full = box('full', snapshot([gpu(0, 80, 75)], []));
  const down = box('gone', snapshot([gpu(0, 80, 0)], []), [], { connection: { state: 'down', since: 0, lastError: 'gone: ssh: x', attempt: 1, nextTryAt: 0 } });
  const answer = whereCanIRun(lab(busy, roomy, full, down), { memoryBytes: 20 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(answer.places.map((p) => [p.box, p.gpus, p.freeBytes.map((f) => f / G), p.queueAhead]), [['roomy', [1], [60], 0], ['busy', [0], [70], 1]]);
  assert.deepEqual(answer.notNow.map((n) => n.box), ['full', 'gone']);
  assert.match(answer.notNow[1]!.reason, /^down since .*: gone: ssh: x$/);
  assert.match(answer.notNow[0]!.reason, /no GPU has 20G free now \(the most: GPU 0, 5(\.0)?G\)/);
  // two GPUs on one box: busy has only one
  const two = whereCanIRun(lab(busy, roomy), { memoryBytes: 5 * G, gpus: 2, priority: 'high' });
  assert.deepEqual(two.places.map((p) => [p.box, p.gpus]), [['roomy', [1, 0]]]);
  assert.match(two.notNow[0]!.reason, /has 1 GPU$/);
});

test('where can I run: among places the job fits, an idle GPU comes before a busy one with more memory free, across boxes and within one', () => {
  const busyRoomy = box('busy-roomy', snapshot([gpu(0, 80, 2, { utilizationGpu: 100 })], []));
  const idleSmall = box('idle-small', snapshot([gpu(0, 40, 4, { utilizationGpu: 0 })], []));
  assert.deepEqual(whereCanIRun(lab(busyRoomy, idleSmall), { memoryBytes: 1 * G, gpus: 1, priority: 'normal' }).places.map((p) => p.box), ['idle-small', 'busy-roomy']);
  const mixed = box('mixed', snapshot([gpu(0, 80, 10, { utilizationGpu: 95 }), gpu(1, 40, 10, { utilizationGpu: 5 })], []));
  assert.deepEqual(whereCanIRun(lab(mixed), { memoryBytes: 10 * G, gpus: 1, priority: 'normal' }).places.map((p) => p.gpus), [[1]]);
});

test('where can I run: a job queued ahead takes its memory first; a lower-priority one queued does not count; exclusive and lost GPUs are out, and a GPU in MIG mode with no slice', () => {
  const queuedBig = box('b1', snapshot([gpu(0, 80, 0)], []), [job('j1', 'bob', 'queued', { memoryQuotaBytes: 70 * G, priority: 'high' }), job('j2', 'bob', 'queued', { memoryQuotaBytes: 70 * G, priority: 'best-effort' })]);
  const odd = box('b2', snapshot([gpu(0, 80, 0, { lost: true }), gpu(1, 80, 0, { migEnabled: true }), gpu(2, 80, 1)], []), [job('j5', 'carol', 'running', { gpu: 2, mode: 'exclusive', memoryQuotaBytes: 1 * G, usedMemory: 1 * G })]);
  const answer = whereCanIRun(lab(queuedBig, odd), { memoryBytes: 20 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(answer.places, []);
  assert.match(answer.notNow[0]!.reason, /no GPU has 20G free now \(the most: GPU 0, 10(\.0)?G\)/);
  assert.match(answer.notNow[1]!.reason, /GPU 0 is lost; GPU 1 is in MIG mode with no slices; GPU 2 runs j5 exclusively/);
  // started jobs' declared memory not yet allocated is spoken for
  const promised = box('b3', snapshot([gpu(0, 80, 10)], []), [job('j7', 'bob', 'running', { gpu: 0, memoryQuotaBytes: 60 * G, usedMemory: 10 * G })]);
  assert.match(whereCanIRun(lab(promised), { memoryBytes: 21 * G, gpus: 1, priority: 'high' }).notNow[0]!.reason, /the most: GPU 0, 20(\.0)?G/);
});

function slice(gi: number, profile: string, totalG: number, usedG: number, extra: Partial<MigSliceView> = {}): MigSliceView {
  return { uuid: `MIG-${gi}`, name: `H100 MIG ${profile}`, profileName: profile, gpuInstanceId: gi, computeInstanceId: 0, smCount: null, placement: null, memoryTotal: totalG * G, memoryUsed: usedG * G, ...extra };
}

function sliceProc(pid: number, gpuIndex: number, gi: number, user: string, usedG: number): GpuProcessView {
  return { ...proc(pid, gpuIndex, user, usedG), smPercent: null, gpuInstanceId: gi, computeInstanceId: 0 };
}

/** An H100 in MIG mode (the whole GPU's utilization unknown, as NVML says in MIG mode) beside a nearly full whole one. */
const migBox = (name: string, slices: MigSliceView[], processes: GpuProcessView[] = [], jobs: JobView[] = []): LabBox =>
  box(name, snapshot([gpu(0, 80, 75, { utilizationGpu: 0 }), gpu(1, 80, 30, { migEnabled: true, utilizationGpu: null, migSlices: slices })], processes), jobs);

test('where can I run: on a GPU in MIG mode the places are its slices, each by its own free memory, processes and queue', () => {
  // 15G fits no whole GPU here (GPU 0 has 5G free), only the idle 3g.40gb and the 2g.20gb bob runs in
  const mig = migBox('mig', [slice(1, '3g.40gb', 40, 0), slice(2, '2g.20gb', 20, 1), slice(3, '1g.10gb', 10, 0)], [sliceProc(7, 1, 2, 'bob', 1)]);
  const answer = whereCanIRun(lab(mig), { memoryBytes: 15 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(answer.notNow, []);
  assert.deepEqual(
    answer.places.map((p) => [p.box, p.gpus, p.slice, p.freeBytes.map((f) => f / G), p.utilization]),
    [['mig', [1], { uuid: 'MIG-1', profile: '3g.40gb', gpuInstanceId: 1, computeInstanceId: 0 }, [40], 0]],
    'the idle slice with room (no process in it: idle), not the busy-unknown one',
  );
  // a job queued ahead for the 3g.40gb takes 30G of it first; a running job's declared, unallocated memory is spoken for in its slice
  const queued = migBox('queued', [slice(1, '3g.40gb', 40, 0), slice(2, '2g.20gb', 20, 0)], [], [job('j1', 'bob', 'queued', { mode: 'mig', migSlice: 'MIG-1', requestedGpu: 1, memoryQuotaBytes: 30 * G })]);
  const running = migBox('running', [slice(1, '3g.40gb', 40, 2), slice(2, '2g.20gb', 20, 0)], [sliceProc(8, 1, 1, 'bob', 2)], [job('j2', 'bob', 'running', { mode: 'mig', migSlice: 'MIG-1', gpu: 1, memoryQuotaBytes: 30 * G, usedMemory: 2 * G })]);
  const both = whereCanIRun(lab(queued, running), { memoryBytes: 15 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(both.places.map((p) => [p.box, p.slice?.profile, p.freeBytes.map((f) => f / G), p.queueAhead]), [['running', '2g.20gb', [20], 0], ['queued', '2g.20gb', [20], 1]]);
  // nothing fits: the reason names the roomiest slice
  const tight = whereCanIRun(lab(mig), { memoryBytes: 50 * G, gpus: 1, priority: 'normal' });
  assert.match(tight.notNow[0]!.reason, /no GPU or MIG slice has 50G free now \(the most: GPU 1 slice 3g\.40gb, 40(\.0)?G\)/);
  // a job on several GPUs cannot run in slices
  const two = whereCanIRun(lab(migBox('mig', [slice(1, '3g.40gb', 40, 0)])), { memoryBytes: 1 * G, gpus: 2, priority: 'normal' });
  assert.deepEqual(two.places.map((p) => [p.gpus, p.slice]), []);
  assert.match(two.notNow[0]!.reason, /^only 1 GPU has 1G free now \(the most: GPU 0, 5(\.0)?G\); GPU 1 is in MIG mode: its slices take one-GPU jobs$/);
});

test("where can I run: a higher-priority job waiting for a slice that cannot hold it yet holds back that GPU's other slices; one of the same priority does not (as the box's scheduler)", () => {
  const waiting = (priority: JobView['priority']): LabBox =>
    migBox(`waits-${priority}`, [slice(1, '1g.10gb', 10, 0), slice(2, '3g.40gb', 40, 0)], [], [job('j1', 'bob', 'queued', { priority, mode: 'mig', migSlice: 'MIG-1', requestedGpu: 1, memoryQuotaBytes: 20 * G })]);
  const answer = whereCanIRun(lab(waiting('high'), waiting('normal')), { memoryBytes: 15 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(answer.places.map((p) => [p.box, p.slice?.profile, p.queueAhead]), [['waits-normal', '3g.40gb', 1]]);
  assert.deepEqual(answer.notNow, [{ box: 'waits-high', reason: 'no GPU has 15G free now (the most: GPU 0, 5G); j1 (bob) waits for GPU 1 slice 1g.10gb first' }]);
});

test("where can I run: each place's run flags start the job there (a slice by its UUID, the priority when not normal, the memory as asked)", () => {
  const [inSlice] = whereCanIRun(lab(migBox('mig', [slice(1, '3g.40gb', 40, 0)])), { memoryBytes: 15 * G, gpus: 1, priority: 'high' }).places;
  assert.deepEqual(runFlags(inSlice!, { memoryBytes: 15 * G, gpus: 1, priority: 'high' }, '15G'), ['--box', 'mig', '--mig-slice', 'MIG-1', '--mem', '15G', '--priority', 'high']);
  const [whole] = whereCanIRun(lab(box('w', snapshot([gpu(0, 80, 0)], []))), { memoryBytes: 0, gpus: 1, priority: 'normal' }).places;
  assert.deepEqual(runFlags(whole!, { memoryBytes: 0, gpus: 1, priority: 'normal' }, '0'), ['--box', 'w']);
});

test('the lab view counts a queued job naming two GPUs on each of them, and one queued for any two GPUs as for any GPU', () => {
  const named = job('j1', 'carol', 'queued', { requestedGpu: 0, requestedGpus: [0, 2], gpuCount: 2, gpus: [0, 2] });
  const any = job('j2', 'carol', 'queued', { requestedGpu: 'auto', gpuCount: 2 });
  const view = labView(lab(box('b', snapshot([gpu(0, 80, 0), gpu(1, 80, 0), gpu(2, 80, 0)], []), [named, any])));
  assert.deepEqual(view.boxes[0]!.gpus.map((g) => g.queued), [1, 0, 1]);
  assert.deepEqual([view.boxes[0]!.queued, view.boxes[0]!.queuedAnyGpu], [2, 1]);
});

test('where can I run on two GPUs: the run flags name both, in index order; a running job on two GPUs holds its memory on each, a queued one takes two first', () => {
  const four = (jobs: JobView[]) => box('four', snapshot([gpu(0, 80, 0), gpu(1, 80, 0), gpu(2, 80, 0), gpu(3, 80, 0)], []), jobs);
  const [place] = whereCanIRun(lab(four([])), { memoryBytes: 20 * G, gpus: 2, priority: 'high' }).places;
  assert.deepEqual(runFlags(place!, { memoryBytes: 20 * G, gpus: 2, priority: 'high' }, '20G'), ['--box', 'four', '--gpu', '0,1', '--mem', '20G', '--priority', 'high']);
  // j1 runs on GPUs 0 and 2 with 70G declared on each (nothing allocated yet); j2 (high) waits for two GPUs of 70G
  const running = job('j1', 'bob', 'running', { gpu: 0, gpus: [0, 2], gpuCount: 2, requestedGpus: [0, 2], requestedGpu: 0, memoryQuotaBytes: 70 * G, usedMemory: 0 });
  const queued = job('j2', 'bob', 'queued', { priority: 'high', requestedGpu: 'auto', gpuCount: 2, memoryQuotaBytes: 70 * G });
  const answer = whereCanIRun(lab(four([running, queued])), { memoryBytes: 20 * G, gpus: 2, priority: 'normal' });
  assert.deepEqual(answer.places, [], 'GPUs 1 and 3 go to j2 first; 0 and 2 have 10G left each');
  assert.match(answer.notNow[0]!.reason, /^no GPU has 20G free now \(the most: GPU 0, 10G\)/);
  const exclusive = job('j3', 'bob', 'running', { gpu: 1, gpus: [1, 3], gpuCount: 2, requestedGpu: 'auto', mode: 'exclusive' });
  assert.deepEqual(whereCanIRun(lab(four([exclusive])), { memoryBytes: 1 * G, gpus: 2, priority: 'normal' }).places.map((p) => p.gpus), [[0, 2]], 'an exclusive job on two GPUs holds both');
  // j4 waits for three whole GPUs exclusively beside j3: it keeps GPUs 0 and 2, which fit it now, as the scheduler does
  const waiting = job('j4', 'bob', 'queued', { requestedGpu: 'auto', gpuCount: 3, mode: 'exclusive' });
  const kept = whereCanIRun(lab(four([exclusive, waiting])), { memoryBytes: 1 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(kept.places, []);
  assert.match(kept.notNow[0]!.reason, /GPU 0 is held for j4 \(bob\), which waits for the rest of its GPUs/);
});

test('where can I run: a slice that fits ranks with whole GPUs by the same rule: queue ahead, then its own busyness, then its free memory', () => {
  const idleSlice = migBox('slice', [slice(1, '3g.40gb', 40, 0, { smPercent: 0 })]);
  const busyWhole = box('busy', snapshot([gpu(0, 80, 10, { utilizationGpu: 100 })], []));
  const idleWhole = box('idle', snapshot([gpu(0, 80, 50, { utilizationGpu: 0 })], []));
  const roomyWhole = box('roomy', snapshot([gpu(0, 80, 10, { utilizationGpu: 0 })], []));
  const busySlice = migBox('busy-slice', [slice(1, '3g.40gb', 40, 0, { smPercent: 90 })]);
  const answer = whereCanIRun(lab(busyWhole, idleWhole, roomyWhole, busySlice, idleSlice), { memoryBytes: 20 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(
    answer.places.map((p) => [p.box, p.slice === null ? 'whole' : p.slice.profile, Math.min(...p.freeBytes) / G]),
    [['roomy', 'whole', 70], ['slice', '3g.40gb', 40], ['idle', 'whole', 30], ['busy', 'whole', 70], ['busy-slice', '3g.40gb', 40]],
  );
});

test("where can I run: the person's limits on a box keep it out, naming the rule", () => {
  const policy = (limits: LabPolicyStatus['you']['limits'], using: LabPolicyStatus['you']['using']): LabPolicyStatus => ({
    enforced: true, policy: { limits: [], fairShare: { enabled: true, halfLifeHours: 24 }, idleHolders: { notifyAfterMinutes: 30, graceMinutes: 30, park: false } }, mayChange: false, administrators: 'root',
    you: { user: 'alice', groups: [], limits, using, highPriorityGpuHoursToday: 0 }, fairShare: [], usageAsOf: null,
  });
  const capped = box('capped', snapshot([gpu(0, 80, 0), gpu(1, 80, 0)], []), [], { policy: policy({ maxGpus: { value: 1, from: 'group students' } }, { gpus: 1, memoryBytes: 0, highPriorityJobs: 0 }) });
  const tight = box('tight', snapshot([gpu(0, 80, 0)], []), [], { policy: policy({ maxMemory: { value: 30 * G, from: 'everyone' } }, { gpus: 0, memoryBytes: 20 * G, highPriorityJobs: 0 }) });
  const fine = box('fine', snapshot([gpu(0, 80, 0)], []), [], { policy: policy({ maxGpus: { value: 2, from: 'everyone' } }, { gpus: 1, memoryBytes: 0, highPriorityJobs: 0 }) });
  const answer = whereCanIRun(lab(capped, tight, fine), { memoryBytes: 20 * G, gpus: 1, priority: 'normal' });
  assert.deepEqual(answer.places.map((p) => p.box), ['fine']);
  assert.match(answer.notNow[0]!.reason, /alice may use at most 1 GPU at once \(lab policy on capped, group students\) and already uses 1/);
  assert.match(answer.notNow[1]!.reason, /alice may hold at most 30G of GPU memory \(lab policy on tight, everyone\) and holds 20G/);
});

test('a lab file others could write is refused (it says what your ssh runs); a missing one is an empty list', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-labfile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'lab.json');
  writeFileSync(file, JSON.stringify({ boxes: [{ name: 'box1', ssh: 'box1', gpushare: '/tmp/theirs' }] }));
  chmodSync(file, 0o666);
  assert.throws(() => readLabFile(file), { message: `${file}: refused: it can be written by others, who could send your ssh to a command of theirs (chmod go-w ${file})` });
  chmodSync(file, 0o644);
  assert.equal(readLabFile(file)![0]!.name, 'box1');
  assert.equal(readLabFile(join(dir, 'none.json')), null);
  const both = loadLabList({ admin: join(dir, 'none.json'), own: file });
  assert.deepEqual([both.boxes.length, both.files], [1, [file]]);
});
