// The console's Lab policy view and a queued job's card, against a real engine on the simulated
// h100x8 box whose scheduler applies a lab policy: the card says which limit holds the job, the
// view shows the user's limits and rank, and an administrator's edit is checked, applied and kept.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { parseLabPolicy } from '../shared/lab-policy.js';
import type { JobView } from '../shared/jobs.js';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const ME = userInfo().username;
const missing = browserMissing();

describe('the lab policy in the console', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  const job = async (id: string): Promise<JobView | undefined> => (await h.engine.call('jobs.list', {})).find((j) => j.id === id);
  const train = (): string[] => [h.driver.libDir + '/fakejob', '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '120'];

  before(async () => {
    h = await openConsoleHarness('h100x8', { labPolicy: parseLabPolicy({ limits: [{ user: ME, maxGpus: 1 }] }) });
    await h.page.goto(h.web.url);
    await h.page.locator('.gpu-card').first().waitFor({ timeout: 15_000 });
  });
  after(async () => h?.close());

  test('a job over the GPU limit shows the limit on its card; the view shows your limits; an admin\'s edit is checked, then lets it start', async () => {
    const first = await h.engine.call('jobs.submit', { argv: train(), gpu: 0 });
    await eventually(async () => (await job(first.id))?.state === 'running', 15_000, `${first.id} running`);
    const second = await h.engine.call('jobs.submit', { argv: train(), gpu: 1 });
    const card = h.page.locator(`.job-card[data-job="${second.id}"] .job-waiting`);
    await card.scrollIntoViewIfNeeded();
    await card.waitFor({ timeout: 10_000 });
    assert.equal(await card.innerText(), `waiting: ${ME} may use at most 1 GPU at once (lab policy, user ${ME}) and already uses GPU 0`);
    await h.screenshot('lab-policy-waiting-card');

    await h.page.locator('.view-tabs').getByRole('button', { name: 'Lab policy' }).click();
    const view = h.page.locator('.lab-policy-view');
    const gpus = view.locator('tr[data-limit="maxGpus"] td');
    await gpus.first().waitFor({ timeout: 10_000 });
    assert.deepEqual(await gpus.allInnerTexts(), ['GPUs at once', '1', '1', `user ${ME}`]);
    assert.match(await view.locator('.lab-rank').innerText(), /Your place between users in the queue: 1 of 1/);
    await h.screenshot('lab-policy-view');

    await view.getByRole('button', { name: 'Edit the policy' }).click();
    const draft = view.locator('textarea');
    await draft.fill(JSON.stringify({ limits: [{ user: ME, group: 'staff', maxGpus: 2 }] }));
    await view.getByRole('button', { name: 'Save' }).click();
    const refusal = view.locator('.report-error[role="alert"]');
    await refusal.waitFor({ timeout: 10_000 });
    assert.equal(await refusal.innerText(), 'params.policy.limits[0]: names both a user and a group: one entry is for one of them (or, naming neither, for everyone)');
    assert.equal((await h.engine.call('policy.get', {})).policy.limits[0].maxGpus, 1, 'the refused policy changed nothing');
    await h.screenshot('lab-policy-refused-edit');

    await draft.fill(JSON.stringify({ limits: [{ user: ME, maxGpus: 2 }] }));
    await view.getByRole('button', { name: 'Save' }).click();
    await eventually(async () => (await gpus.nth(2).innerText()) === '2', 10_000, 'the view to show the new limit');
    await eventually(async () => (await job(second.id))?.state === 'running', 15_000, `${second.id} starting under the new limit`);
    await Promise.all([first, second].map((j) => h.engine.call('jobs.terminate', { job: j.id })));
  });
});
