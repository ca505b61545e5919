// Issue 24, finding 6: a user could queue jobs without limit (2,900 took the daemon to 100 % of a
// core). The box daemon caps each user's queued jobs (maxQueuedJobsPerUser, default 100): past it a
// submission is refused naming the cap and how many the user has queued; other users submit as before.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isRoot, LabBox, type LabUser, type WireRequest } from './testing/lab-box.js';

const GiB = 1024 ** 3;
const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users (CI runs as root)';

let box: LabBox;
let alice: LabUser;
let mallory: LabUser;

before(async () => {
  if (SKIP) return;
  box = new LabBox(String(process.pid % 100000));
  alice = box.user('alice');
  mallory = box.user('mallory');
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
