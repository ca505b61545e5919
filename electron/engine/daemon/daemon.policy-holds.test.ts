// The policy holds against a user who games it (issue 24, finding 7), on a box daemon as root with
// users the test creates: a high-priority job's claim on the launch gate holds others back only while
// the driver confirms it, and a user's memory limit is held by each job's hard quota, not only checked
// at admission. Asserts on the simulated driver's execution record, its memory and the jobs' own logs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { KernelRecord } from '../gpu/simulated-driver.js';
import { enqueuedUnderHigh } from '../gate/testing/launch-gate-sim.js';
import { CLAIM_CONFIRM_MS } from '../scheduler/activity-claims.js';
import { untilWith } from '../../testing/until.js';
import { isRoot, LabBox, type LabUser } from './testing/lab-box.js';

const GiB = 1024 ** 3;
const SCENARIO = 'h100x2-mig'; // GPU 0: a whole H100 80GB
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';

let box: LabBox;
let alice: LabUser;
let mallory: LabUser;

before(async () => {
  if (SKIP) return;
  box = new LabBox(`p${process.pid % 10000}`);
  alice = box.user('alice');
  mallory = box.user('mallory');
  await box.start({ rateHz: 5, policy: { limits: [{ user: mallory.name, maxMemory: '20G' }] } }, SCENARIO);
});
after(async () => {
  if (!SKIP) await box.dispose();
});

const until = untilWith({ intervalMs: 100, timeoutMs: 30_000 });

const job = async (id: string): Promise<JobView> => (await box.ok(null, 'jobs.list', { includeFinished: true })).find((j) => j.id === id)!;
const running = (id: string) => until(`${id} running`, async () => ((await job(id)).state === 'running' ? job(id) : undefined));
const logOf = (view: JobView): string => (view.logPath && existsSync(view.logPath) ? readFileSync(view.logPath, 'utf8') : '');

/** The simulated driver's execution record of GPU 0: every kernel, by pid, with when it was enqueued, started and ended. */
function kernels(): KernelRecord[] {
  const state = join(box.dir, 'run', `sim-${SCENARIO}.state`);
  const out = execFileSync(join(box.nativeCopy, 'fakegpu', 'build', 'fakegpu'), ['execlog', '--state', state, '--device', '0'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as KernelRecord);
}

/** GPU memory the driver shows held by `user`'s processes on GPU 0. */
function memoryOf(user: LabUser): number {
  const pids = new Set(box.dump(SCENARIO).devices[0].processes.map((p) => p.pid).filter((pid) => {
    try {
      return new RegExp(`^Uid:\\s+${user.uid}\\s`, 'm').test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  }));
  return box.dump(SCENARIO).devices[0].processes.filter((p) => pids.has(p.pid)).reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
}

test("mallory's high job that claims to be launching but never runs a kernel stops holding alice's normal job back: the driver never confirms it", { skip: SKIP }, async () => {
  const claim = await box.ok(mallory, 'jobs.submit', { argv: [box.fakejob, 'hostile', '--in-launch', '1', '--duration', '120'], cwd: box.dir, gpu: 0, priority: 'high' });
  const claiming = await running(claim.id);
  await until("mallory's job claiming in its activity page", () => logOf(claiming).includes('"event":"hostile"'));
  const normal = await box.ok(alice, 'jobs.submit', { argv: [box.fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '120'], cwd: box.dir, gpu: 0 });
  const alices = await running(normal.id);
  try {
    const ran = await until("alice's kernels on the driver while mallory's job claims", () => {
      const hers = kernels().filter((k) => k.pid === alices.pid);
      return hers.length >= 50 ? hers : undefined;
    });
    assert.equal((await job(claim.id)).state, 'running', "mallory's job claimed all along");
    const said = (await box.ok(null, 'alerts.active', {})).find((a) => a.jobId === claim.id);
    assert.equal(said?.message, `${claim.id} (fakejob, ${mallory.name}) claims launch-gate activity the driver does not confirm (no SM use, no memory growth for 3 s): it holds no other job back until it computes.`);
    assert.match(logOf(claiming), /"event":"hostile","writable":1,"own":true,"inLaunch":1/, 'it wrote "launching" into its own activity page, and could write nothing else');
    assert.deepEqual(kernels().filter((k) => k.pid === claiming.pid), [], 'it never ran a kernel');
    assert.ok(ran.length >= 50);

    // a high job the driver sees computing holds alice's job back as before, well past the bound
    await box.ok(mallory, 'jobs.terminate', { job: claim.id });
    const real = await box.ok(mallory, 'jobs.submit', { argv: [box.fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '120'], cwd: box.dir, gpu: 0, priority: 'high' });
    const high = await running(real.id);
    try {
      const highRan = await until("mallory's high job's kernels, two bounds' worth", () => {
        const its = kernels().filter((k) => k.pid === high.pid);
        return its.length >= CLAIM_CONFIRM_MS ? its : undefined; // 2 ms each: twice the bound
      });
      const under = enqueuedUnderHigh(highRan, kernels().filter((k) => k.pid === alices.pid));
      assert.deepEqual(under, [], "no kernel of alice's was enqueued while a kernel of the confirmed high job was queued or running");
    } finally {
      await box.ok(mallory, 'jobs.terminate', { job: real.id });
    }
  } finally {
    await box.call(mallory, 'jobs.terminate', { job: claim.id });
    await box.ok(alice, 'jobs.terminate', { job: normal.id });
  }
});

test("mallory's three jobs that declare no memory hold no more than her 20G between them: the first gets her whole allowance as its hard quota, the others wait", { skip: SKIP }, async () => {
  const hold = [box.fakejob, '--mem', '9G', 'hold', '--duration', '120'];
  const outcomes = await box.calls(mallory, [0, 1, 2].map(() => ({ method: 'jobs.submit' as const, params: { argv: hold, cwd: box.dir, gpu: 0 } })));
  const ids = outcomes.map((o) => (o.ok ? (o.result as JobView).id : assert.fail(o.error.message)));
  try {
    const first = await until('the first job holding its 9G', async () => {
      const view = await job(ids[0]);
      return view.state === 'running' && view.usedMemory === 9 * GiB ? view : undefined;
    });
    // a few ticks for whatever else would start to start and allocate
    await until('the others started or waiting', async () => {
      const others = await Promise.all(ids.slice(1).map(job));
      const waiting = (await box.ok(null, 'alerts.active', {})).filter((a) => a.kind === 'waiting').map((a) => a.jobId);
      return others.every((o) => (o.state === 'running' && o.usedMemory === 9 * GiB) || (o.state === 'queued' && waiting.includes(o.id)));
    });
    await sleep(1000);
    assert.ok(memoryOf(mallory) <= 20 * GiB, `mallory holds ${memoryOf(mallory) / GiB} GiB on the driver, over her 20G`);
    assert.equal(first.memoryQuotaBytes, 20 * GiB, 'the first job declared nothing: its hard quota is her whole allowance');
    for (const id of ids.slice(1)) {
      assert.equal((await job(id)).state, 'queued');
      const waiting = (await box.ok(null, 'alerts.active', {})).find((a) => a.kind === 'waiting' && a.jobId === id);
      assert.match(waiting!.message, new RegExp(`${mallory.name} may hold at most 20G of GPU memory at once \\(lab policy, user ${mallory.name}\\); ${mallory.name}'s running jobs hold 20G and ${id} declares no memory, and nothing is left`));
    }
    const raised = await box.call(mallory, 'jobs.setQuota', { job: ids[0], bytes: null });
    assert.deepEqual(raised.ok ? 'ok' : raised.error.code, 'forbidden', 'she cannot lift the quota the lab policy gave it');
    assert.equal((await job(ids[0])).memoryQuotaBytes, 20 * GiB);
  } finally {
    for (const id of [...ids].reverse()) await box.call(mallory, 'jobs.terminate', { job: id });
  }
  await until("mallory's jobs ended", async () => (await Promise.all(ids.map(job))).every((j) => !['running', 'queued', 'starting'].includes(j.state)));
});

test("a job of mallory's that declares no memory and allocates past her allowance is refused by its hard quota (the preload library), not only counted", { skip: SKIP }, async () => {
  const grow = await box.ok(mallory, 'jobs.submit', { argv: [box.fakejob, 'alloc', '--chunk', '9G', '--count', '3', '--hold'], cwd: box.dir, gpu: 0 });
  try {
    const ended = await until(`${grow.id} done allocating`, async () => {
      const view = await job(grow.id);
      return logOf(view).includes('"event":"meminfo"') ? view : undefined;
    });
    assert.ok(memoryOf(mallory) <= 20 * GiB, `mallory holds ${memoryOf(mallory) / GiB} GiB on the driver, over her 20G`);
    assert.equal(ended.memoryQuotaBytes, 20 * GiB);
    const log = logOf(ended);
    assert.match(log, /"event":"alloc","i":1,"bytes":9663676416,"total":19327352832,"result":"CUDA_SUCCESS"/, 'its first two 9G fit its quota');
    assert.match(log, /"event":"alloc","i":2,"bytes":9663676416,"total":19327352832,"result":"CUDA_ERROR_OUT_OF_MEMORY"/, 'its third saw CUDA_ERROR_OUT_OF_MEMORY');
    assert.match(log, /"event":"meminfo","free":2147483648,"total":21474836480/, 'and the driver, asked, shows it the quota as its whole GPU');
  } finally {
    await box.call(mallory, 'jobs.terminate', { job: grow.id });
  }
});
