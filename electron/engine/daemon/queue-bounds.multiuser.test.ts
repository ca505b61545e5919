// Issue 24, finding 6: a user could queue jobs without limit (2,900 took the daemon to 100 % of a
// core). The box daemon caps each user's queued jobs (maxQueuedJobsPerUser, default 100): past it a
// submission is refused naming the cap and how many the user has queued; other users submit as before.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { until } from '../../testing/until.js';
import { isRoot, LabBox, type LabUser, type WireRequest } from './testing/lab-box.js';

const GiB = 1024 ** 3;
const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';

let box: LabBox;
let alice: LabUser;
let mallory: LabUser;
let eve: LabUser;

before(async () => {
  if (SKIP) return;
  box = new LabBox(String(process.pid % 100000));
  alice = box.user('alice');
  mallory = box.user('mallory');
  eve = box.user('eve');
  await box.start({ adminGroup: box.group('admins'), rateHz: 2 }); // no maxQueuedJobsPerUser: the default
});
after(async () => {
  if (!SKIP) await box.dispose();
});

/** A job that needs 70 GiB of GPU 0's 80: the first runs, the rest wait for it. */
const big = (): WireRequest => ({ method: 'jobs.submit', params: { argv: ['/bin/sleep', '600'], cwd: '/tmp', gpu: 0, memoryRequestBytes: 70 * GiB } });

test("past 100 queued jobs of hers, mallory's next submission is refused naming the cap and her count; alice still submits", { skip: SKIP }, async () => {
  const outcomes = await box.calls(mallory, Array.from({ length: 102 }, big));
  const accepted = outcomes.filter((o) => o.ok).length;
  const jobs = await box.ok(null, 'jobs.list', {});
  const queued = jobs.filter((j) => j.owner === mallory.name && j.state === 'queued').length;
  assert.equal(queued, 100, `mallory has ${queued} jobs queued (${accepted} of 102 submissions accepted)`);
  const last = outcomes.at(-1)!;
  assert.ok(!last.ok, 'the 102nd submission (one running, 100 queued) is refused');
  assert.equal(last.error.code, 'forbidden');
  assert.match(last.error.message, new RegExp(`^The job was not submitted: ${mallory.name} has 100 jobs queued, and this box allows 100 jobs queued per user \\(maxQueuedJobsPerUser in the daemon's config\\)`));

  const hers = await box.call(alice, 'jobs.submit', big().params as never);
  assert.ok(hers.ok, hers.ok ? '' : hers.error.message);

  // mallory cancels one: she may submit one again
  const one = jobs.find((j) => j.owner === mallory.name && j.state === 'queued')!;
  await box.ok(mallory, 'jobs.terminate', { job: one.id });
  const again = await box.calls(mallory, [big(), big()]);
  assert.deepEqual(
    again.map((o) => (o.ok ? 'ok' : o.error.code)),
    ['ok', 'forbidden'],
  );
});

test("what the daemon keeps of a job is bounded: argv and environment at submission, the argv it shows, its finished jobs in jobs.list (finding 9)", { skip: SKIP }, async () => {
  const huge = await box.call(eve, 'jobs.submit', { argv: ['/bin/false', 'x'.repeat(100_000), 'y'.repeat(100_000), 'z'.repeat(100_000)], cwd: '/tmp', gpu: 'auto' });
  assert.deepEqual(huge.ok ? 'accepted' : [huge.error.code, huge.error.message], ['invalid-request', 'The job was not submitted: its arguments and environment come to 300,014 bytes, and a job may have at most 262,144 (256 KiB). Put long inputs in a file and pass its path. Nothing was started.']);

  const long = 'a'.repeat(120_000);
  const submitted = await box.calls(eve, Array.from({ length: 20 }, () => ({ method: 'jobs.submit', params: { argv: ['/bin/false', '--token', long], cwd: '/tmp', gpu: 'auto' } }) as WireRequest));
  assert.ok(submitted.every((o) => o.ok), JSON.stringify(submitted.find((o) => !o.ok)));
  const ids = submitted.map((o) => (o.ok ? (o.result as { id: string }).id : ''));
  const hers = async () => (await box.ok(eve, 'jobs.list', { includeFinished: true })).filter((j) => ids.includes(j.id)); // her own: whole, as she submitted them
  const views = await until('her 20 jobs ended', async () => { const all = await hers(); return all.every((j) => j.state === 'finished' || j.state === 'failed') ? all : undefined; }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.equal(views.length, 20);
  assert.ok(views.every((j) => j.state === 'failed'), 'each ran and failed (exit 1)');
  const shown = views[0];
  assert.ok(JSON.stringify(shown.argv).length <= 4096, `the argv shown is cut to 4 KB of JSON, not ${JSON.stringify(shown.argv).length} bytes`);
  assert.deepEqual(shown.argv.slice(0, 2), ['/bin/false', '--token']);
  assert.deepEqual(shown.argvCut, { bytes: 120_020, args: 3 }, 'with its whole size noted, as /proc/PID/cmdline counts it');
  const seenByAlice = (await box.ok(alice, 'jobs.list', { includeFinished: true })).find((j) => j.id === shown.id)!;
  assert.deepEqual([seenByAlice.argv, seenByAlice.argvCut], [['false'], undefined], 'another user sees neither her arguments nor their length');
  const answer = JSON.stringify(views).length;
  assert.ok(answer < 20 * 8192, `jobs.list holds ${answer} bytes for 20 finished jobs of 120 KB arguments`);

  // the job itself runs with its whole argv
  const whole = await box.ok(eve, 'jobs.submit', { argv: ['/bin/sh', '-c', '[ ${#1} -eq 120000 ]', 'sh', long], cwd: '/tmp', gpu: 'auto' });
  const state = await until(`${whole.id} ended`, async () => {
    const now = (await box.ok(eve, 'jobs.list', { includeFinished: true })).find((j) => j.id === whole.id)!.state;
    return now === 'finished' || now === 'failed' ? now : undefined;
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.equal(state, 'finished', 'its $1 had all 120,000 bytes (exit 0)');
});
