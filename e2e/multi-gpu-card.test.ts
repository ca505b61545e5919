// A job on several GPUs in the browser console (simulated H100 ×8): its card names all its GPUs, running or
// queued, and its quota bar is one GPU's share.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing, openConsoleHarness, type ConsoleHarness } from './harness.js';

const GIB = 1024 ** 3;
const missing = browserMissing();

describe('a job on several GPUs in the console', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  before(async () => {
    h = await openConsoleHarness('h100x8');
    await h.page.goto(h.web.url);
  });
  after(async () => h?.close());

  const cardText = async (id: string): Promise<string> => {
    await h.page.locator('.job-board').scrollIntoViewIfNeeded();
    const card = h.page.locator(`.job-card[data-job="${id}"]`);
    await card.waitFor({ timeout: 15_000 });
    return (await card.innerText()).replace(/\s+/g, ' ');
  };

  test('running on GPUs 0,1 and queued for 8 GPUs: each card says where, the quota per GPU', async () => {
    const fakejob = `${h.driver.libDir}/fakejob`;
    const rank = (d: number) => `${fakejob} --device ${d} --mem 2G train --kernel-ms 5 --duration 60`;
    const two = await h.engine.call('jobs.submit', { argv: ['/bin/sh', '-c', `${rank(0)} & ${rank(1)} & wait`], gpu: [0, 1], mode: 'exclusive', memoryQuotaBytes: 10 * GIB });
    const eight = await h.engine.call('jobs.submit', { argv: [fakejob, 'train', '--duration', '1'], gpu: 'auto', gpuCount: 8 });
    await h.page.locator('.job-board').scrollIntoViewIfNeeded();
    await h.page.locator(`.job-card[data-job="${two.id}"]`, { hasText: 'per GPU ×2' }).waitFor({ timeout: 20_000 }); // once it runs and its memory shows
    const running = await cardText(two.id);
    assert.match(running, /GPUs 0,1/, running);
    assert.match(running, /\/ 10(\.0)? GiB per GPU ×2/, running);
    const queued = await cardText(eight.id);
    assert.match(queued, /8 GPUs/, queued);
    assert.match(queued, /waiting: 6 of the 8 GPUs it needs fit it now/, queued);
    await h.screenshot('multi-gpu-cards');
  });
});
