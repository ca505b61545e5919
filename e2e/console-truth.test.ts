// What a new user saw that was not true, against the real engine on a simulated A100 (MIG capable,
// MIG off): a MIG note on a GPU not in MIG mode, "the engine does not answer" for a wrong token,
// timelines that start empty although the engine has been sampling for a while.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserMissing, eventually, openConsoleHarness, sleep, type ConsoleHarness } from './harness.js';

const missing = browserMissing();
const MIG_NOTE = 'The driver does not report SM % per process on MIG slices.';

describe('the console tells the truth on a simulated A100 (MIG off)', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  /** When the engine began sampling, before any page was open. */
  let engineStartedAt = 0;

  before(async () => {
    engineStartedAt = Date.now();
    h = await openConsoleHarness('a100-40gb');
  });
  after(async () => h?.close());

  test('an idle GPU not in MIG mode never shows the MIG note, from the first frame on', async () => {
    const smTimeline = h.page.locator('.timeline[data-metric="sm"]');
    // watch every frame from the first render: the note must never appear, not only "eventually not"
    await h.page.addInitScript({
      content: `window.migNoteSeen = 0;
        new MutationObserver(() => {
          for (const note of document.querySelectorAll('.timeline-note')) if (note.textContent.includes(${JSON.stringify(MIG_NOTE)})) window.migNoteSeen++;
        }).observe(document, { subtree: true, childList: true, characterData: true });`,
    });
    await h.page.goto(h.web.url);
    await smTimeline.waitFor({ timeout: 15_000 });
    await eventually(async () => Number(await smTimeline.getAttribute('data-points')) > 0, 15_000, 'a sample on the SM timeline');
    await sleep(4000); // "for the first seconds after every page load", and for good on an idle GPU
    const seen = Number(await h.page.evaluate('window.migNoteSeen'));
    assert.equal(seen, 0, `the MIG note was on the page in ${seen} frames, on a GPU whose MIG mode is off`);
    assert.equal(await h.page.getByText(MIG_NOTE).count(), 0);
  });

  test('timelines open with the samples the engine took before the page was opened', async () => {
    // the engine has sampled since before(); give it a few more seconds, then open a fresh page
    const fakejob = h.driver.spawnFakejob(['--mem', '2G', 'train', '--kernel-ms', '5', '--duration', '60']);
    await fakejob.ready;
    await sleep(Math.max(0, engineStartedAt + 8000 - Date.now()));
    const page = h.page; // a fresh load: the console's sample rings start empty
    try {
      const openedAt = Date.now();
      await page.goto(h.web.url);
      await page.getByRole('button', { name: '1 min' }).click();
      const memory = page.locator('.timeline[data-metric="memory"]');
      await eventually(async () => Number(await memory.getAttribute('data-points')) > 0, 15_000, 'a column on the memory timeline');
      const since = Number(await memory.getAttribute('data-since'));
      assert.ok(Number.isFinite(since) && since > 0, `the timeline says from when it draws (data-since="${await memory.getAttribute('data-since')}")`);
      assert.ok(since < openedAt - 4000, `the oldest column drawn is ${openedAt - since} ms before the page opened; the engine had sampled for ${openedAt - engineStartedAt} ms`);
    } finally {
      fakejob.kill();
    }
  });

  test('a wrong token: the page says the token is wrong and where to get the URL again, not "the engine does not answer"', async () => {
    const page = h.page;
    try {
      const wrong = new URL(h.web.url);
      wrong.searchParams.set('token', 'f'.repeat(48));
      await page.goto(wrong.toString());
      const detail = page.locator('.connection-detail');
      await eventually(async () => /token/i.test((await detail.innerText().catch(() => '')) ?? ''), 15_000, 'the header to speak of the token');
      const text = await detail.innerText();
      assert.match(text, /token/i);
      assert.match(text, /gpushare status/);
      assert.match(text, /gpushare start/);
      assert.doesNotMatch(text, /does not answer/);
      await sleep(3000); // the retry loop must not turn it back into "does not answer"
      assert.doesNotMatch(await detail.innerText(), /does not answer/);
      // the body does not promise a sample that cannot come
      assert.match(await page.locator('.gpu-grid').innerText(), /not connected/);
      const bar = await detail.boundingBox();
      const tabs = await page.locator('.top-bar').boundingBox();
      assert.ok(bar && tabs && bar.y >= tabs.y + tabs.height - 1, 'the sentence is a bar below the top bar, not squeezed into it');
    } finally {
      await page.goto(h.web.url);
    }
  });

  test('no token: the page says how to get the URL with its token', async () => {
    const page = h.page;
    try {
      const bare = new URL(h.web.url);
      bare.searchParams.delete('token');
      await page.goto(bare.toString());
      const detail = page.locator('.connection-detail');
      await detail.waitFor({ timeout: 10_000 });
      const text = await detail.innerText();
      assert.match(text, /token/i);
      assert.match(text, /gpushare status/);
      assert.match(text, /gpushare start/);
    } finally {
      await page.goto(h.web.url);
    }
  });

  test('a managed job has one label everywhere: its job id, command and user, in the timeline, the memory bar and the table', async () => {
    const job = await h.engine.call('jobs.submit', { argv: [h.driver.libDir + '/fakejob', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60'], gpu: 0 });
    const pid = await eventually(async () => (await h.engine.call('jobs.list', {})).find((j) => j.id === job.id)?.pid, 15_000, `${job.id} to start`);
    try {
      const label = new RegExp(`^${job.id} · fakejob · \\S+$`);
      await h.page.goto(h.web.url);
      await h.page.getByRole('button', { name: '1 min' }).click();
      const series = h.page.locator(`.timeline[data-metric="memory"] .timeline-series [data-series="p${pid}"]`); // the bands drawn, listed
      await series.waitFor({ timeout: 15_000 });
      assert.match((await series.getAttribute('data-label')) ?? '', label, 'the timeline series');
      const bar = h.page.locator('.gpu-card[data-gpu="0"] [aria-label^="memory "]');
      await eventually(async () => ((await bar.getAttribute('aria-label')) ?? '').includes(`${job.id} · fakejob`), 10_000, 'the memory bar to name the job');
      await h.page.locator('.process-panel').scrollIntoViewIfNeeded();
      const row = h.page.locator(`.process-table tr[data-pid="${pid}"]`);
      await row.waitFor({ timeout: 10_000 });
      assert.equal((await row.locator('td').first().innerText()).trim(), job.id, 'the table\'s first column');
    } finally {
      await h.engine.call('jobs.terminate', { job: job.id });
    }
  });

  test('both timelines give their unit on the value axis', async () => {
    await h.page.goto(h.web.url);
    const ticks = (metric: string) => h.page.locator(`.timeline[data-metric="${metric}"]  text.timeline-value-tick`).allTextContents();
    await eventually(async () => (await ticks('memory')).length > 0, 10_000, 'the memory axis');
    const memory = await ticks('memory');
    assert.ok(memory.every((t) => / GiB$/.test(t)), `memory ticks: ${memory.join(', ')}`);
    const sm = await ticks('sm');
    assert.ok(sm.length > 0 && sm.every((t) => /%$/.test(t)), `SM ticks: ${sm.join(', ')}`);
  });

  test('the alert list can show every alert the engine holds', async () => {
    for (let i = 1; i <= 40; i++) h.engine.raiseAlert({ kind: 'waiting', severity: 'info', gpu: 0, jobId: null, message: `Listed alert number ${i}.` });
    await h.page.goto(h.web.url); // alerts.list on opening
    const panel = h.page.locator('.alert-panel');
    await panel.locator('.alert', { hasText: 'Listed alert number 40.' }).waitFor({ timeout: 10_000 });
    const held = (await h.engine.call('alerts.list', {})).length;
    await panel.getByRole('button', { name: /^Show all/ }).click();
    const items = panel.locator('.alert');
    assert.equal(await items.count(), held, 'one item per alert the engine holds');
    // nothing clipped: the list is as tall as its items, and the last one is inside the panel
    const clipped = await panel.locator('.alert-list').evaluate((list) => list.scrollHeight - list.clientHeight);
    assert.ok(clipped <= 1, `the expanded list hides ${clipped} px`);
    const last = await items.last().boundingBox();
    const box = await panel.boundingBox();
    assert.ok(last && box && last.y + last.height <= box.y + box.height + 1, 'the oldest alert is inside the panel');
    await panel.getByRole('button', { name: 'Show fewer' }).click();
  });
});
