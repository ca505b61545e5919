// The console's Lab view (`gpushare start --lab`) on three boxes, each a real engine on its own
// simulated scenario (gpushare serve, demo running) reached through the hub: every box's GPUs,
// whose processes, MIG slices and state; one box whose daemon stops is shown down since when, with
// its last error, while the others keep updating; where a job can start now; and opening a box
// shows its own console, whose actions go to that box's daemon and no other.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FINAL_STATES, type JobState, type JobView } from '../shared/jobs.js';
import { parseLabList } from '../shared/lab.js';
import { labConsoleHref } from '../shared/lab-console.js';
import { startServeBox, type ServeBox } from '../electron/cli/testing/serve-box.js';
import { labConsoleSessions, type LabConsoleSessions } from '../electron/engine/lab/lab-console-sessions.js';
import { LabHub } from '../electron/engine/lab/lab-hub.js';
import { serveConsoleOnLoopback, type WebServer } from '../electron/engine/server/web-server.js';
import { fakegpuBuildDir } from '../electron/engine/paths.js';
import { browserMissing, eventually, launchChromium, RESULTS_DIR } from './harness.js';

const missing = browserMissing();

describe('the Lab view on three simulated boxes', { skip: missing ?? false, timeout: 240_000 }, () => {
  let root: string;
  const boxes = new Map<string, ServeBox>();
  let hub: LabHub;
  let sessions: LabConsoleSessions;
  let web: WebServer;
  let browser: Browser;
  let page: Page;
  /** The job submitted on each box. */
  const jobIds = new Map<string, string>();
  const boxCard = (name: string) => page.locator(`.lab-box[data-box="${name}"]`);
  const jobsOn = async (box: string): Promise<JobView[]> => hub.client(box)!.call('jobs.list', {});
  const screenshot = (name: string): Promise<Buffer> => page.screenshot({ path: join(RESULTS_DIR, `${name}.png`), fullPage: true });

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpushare-e2e-lab-'));
    for (const [name, scenario] of [['box1', 'h100x2-mig'], ['box2', 'a100-40gb'], ['box3', 'a100-40gb']]) boxes.set(name, await startServeBox(root, name, scenario));
    const specs = parseLabList({ boxes: [...boxes.values()].map((b) => ({ name: b.name, socket: b.socketPath })) });
    hub = new LabHub(specs, { socketDir: join(root, 'lab'), firstRetryMs: 500, maxRetryMs: 2000 });
    hub.start();
    sessions = labConsoleSessions(hub);
    web = await serveConsoleOnLoopback(sessions);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on('pageerror', (error) => console.error('page error:', error.message));
    // a job on each box, submitted through the hub as the person (the demo is not started by gpushare serve)
    await hub.settled(30_000);
    const fakejob = join(fakegpuBuildDir(), 'fakejob');
    const submit = async (box: string, args: string[]): Promise<void> => {
      jobIds.set(box, (await hub.client(box)!.call('jobs.submit', { argv: [fakejob, ...args], gpu: 0, priority: 'normal' })).id);
    };
    await submit('box1', ['--mem', '2G', 'train', '--kernel-ms', '5', '--duration', '300']);
    await submit('box2', ['--mem', '4G', 'hold', '--duration', '300']);
    await submit('box3', ['--mem', '1G', 'hold', '--duration', '300']);
    await page.goto(labConsoleHref(web.url, null));
  });
  after(async () => {
    await browser?.close();
    for (const name of ['box1', 'box2', 'box3']) {
      const client = hub?.client(name);
      if (!client) continue;
      await client.call('jobs.terminate', { job: jobIds.get(name)! }).catch(() => undefined);
      await eventually(async () => (await client.call('jobs.list', {})).every((j) => !j.managed || FINAL_STATES.has(j.state)), 15_000, `${name}'s jobs ended`).catch(() => undefined);
    }
    await web?.close();
    sessions?.close();
    hub?.close();
    await Promise.all([...boxes.values()].map((b) => b.stop()));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('every box with its GPUs: utilization, memory, whose processes, MIG slices; and each person\'s totals across the boxes', async () => {
    for (const name of boxes.keys()) await boxCard(name).and(page.locator('[data-state="connected"]')).waitFor({ timeout: 30_000 });
    await eventually(async () => (await page.locator('.lab-box .lab-gpu').count()) === 4, 15_000, 'four GPUs: box1\'s two, box2\'s and box3\'s one each');
    assert.equal(await boxCard('box1').locator('.lab-gpu').count(), 2);
    assert.match(await boxCard('box1').locator('.lab-gpu[data-gpu="1"] .lab-gpu-head').innerText(), /MIG · \d+ slices/, 'box1\'s GPU 1 is in MIG mode');
    assert.match(await boxCard('box2').locator('.lab-gpu[data-gpu="0"] .lab-gpu-head').innerText(), /A100/);
    // the demo's processes, by their user, on each box; the people table sums them over the three
    const me = (await hub.client('box1')!.call('session.whoami', {})).user; // the jobs' owner
    for (const name of boxes.keys()) {
      await eventually(async () => (await boxCard(name).locator('.lab-user-name').allInnerTexts()).includes(me), 15_000, `${me}'s processes on ${name}`);
    }
    const row = page.locator(`.lab-people tr[data-user="${me}"] td`);
    await eventually(async () => (await row.nth(1).innerText().catch(() => '')) === 'box1, box2, box3', 15_000, `${me} on the three boxes in the people table`);
    // the totals follow the boxes at most once a second
    await eventually(async () => /3 of 3 boxes connected · 4 GPUs/.test(await page.locator('.lab-totals').innerText()), 5_000, 'the lab totals: 3 of 3 boxes connected, 4 GPUs');
    await screenshot('lab-three-boxes');
    // the figures are drawn on each tile's canvas, in a worker; the words under the canvas say the same
    const tile = boxCard('box1').locator('.lab-gpu[data-gpu="0"]');
    const figures = tile.locator('canvas.lab-figures');
    type Canvas = { width: number; height: number; toDataURL(): string; ownerDocument: { createElement(tag: 'canvas'): Canvas } };
    const drawn = async (): Promise<boolean> =>
      figures.evaluate((element) => {
        const c = element as unknown as Canvas;
        return c.width > 0 && c.toDataURL() !== Object.assign(c.ownerDocument.createElement('canvas'), { width: c.width, height: c.height }).toDataURL();
      });
    await eventually(drawn, 10_000, 'box1 GPU 0\'s figures drawn on its canvas');
    assert.ok(page.workers().some((w) => /figures-worker/.test(w.url())), `the tiles' worker runs (workers: ${page.workers().map((w) => w.url()).join(', ') || 'none'})`);
    assert.match(await tile.locator('.lab-util').textContent() ?? '', /^(\d+%|–)$/, 'the utilization in words under the canvas');
    // a meter's title is written when the pointer comes onto it (not on every update)
    assert.equal(await figures.getAttribute('title'), null, 'no title before the pointer comes');
    await figures.hover({ position: { x: 100, y: 7 } }); // the utilization meter's row (tile-figures.ts)
    await eventually(async () => /^utilization (\d+%|–)$/.test((await figures.getAttribute('title')) ?? ''), 5_000, 'the utilization meter\'s title under the pointer');
    await figures.hover({ position: { x: 100, y: 26 } }); // the memory meter's
    await eventually(async () => /^memory \S+ \S+ of /.test((await figures.getAttribute('title')) ?? ''), 5_000, 'the memory meter\'s title under the pointer');
  });

  test('where the page can have no worker, the tiles\' figures are drawn on the page itself', async () => {
    const bare = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    try {
      await bare.route(/figures-worker[^/]*\.js/, (route) => route.abort()); // as a policy refusing workers would
      const warnings: string[] = [];
      bare.on('console', (message) => void (message.type() === 'warning' && warnings.push(message.text())));
      await bare.goto(labConsoleHref(web.url, null));
      const figures = bare.locator('.lab-box[data-box="box1"] .lab-gpu[data-gpu="0"] canvas.lab-figures');
      type Canvas = { width: number; height: number; toDataURL(): string; ownerDocument: { createElement(tag: 'canvas'): Canvas } };
      await eventually(
        async () =>
          (await figures.count()) === 1 &&
          (await figures.evaluate((element) => {
            const c = element as unknown as Canvas;
            return c.width > 0 && c.toDataURL() !== Object.assign(c.ownerDocument.createElement('canvas'), { width: c.width, height: c.height }).toDataURL();
          })),
        15_000,
        'box1 GPU 0\'s figures drawn with no worker',
      );
      assert.equal(bare.workers().length, 0, 'no worker runs');
      assert.ok(warnings.some((w) => /draws its tiles on the page/.test(w)), `the page says why (${warnings.join(' | ')})`);
    } finally {
      await bare.close();
    }
  });

  test('a box whose daemon stops is down since when, with its last error in words, while the others keep updating', async () => {
    // its job first: managed jobs outlive their engine, and this one must not outlive the test
    await hub.client('box3')!.call('jobs.terminate', { job: jobIds.get('box3')! });
    let state = '';
    // jobs.list leaves finished jobs out
    await eventually(async () => (state = (await jobsOn('box3')).find((j) => j.id === jobIds.get('box3'))?.state ?? 'gone') === 'gone' || FINAL_STATES.has(state as JobState), 15_000, 'box3\'s job ended').catch((error: Error) => assert.fail(`${error.message} (${jobIds.get('box3')} ${state})`));
    await boxes.get('box3')!.stop();
    const card = boxCard('box3');
    await card.and(page.locator('[data-state="down"], [data-state="reconnecting"]')).waitFor({ timeout: 20_000 });
    const status = await card.locator('.lab-box-status').innerText();
    assert.match(status, /^(down since \d\d:\d\d:\d\d UTC \(next try in \d+ s\)|reconnecting \(down since \d\d:\d\d:\d\d UTC, try \d+\)): box3: /, status);
    assert.match(status, /figures below as of \d/, 'its last figures stay, marked as of when');
    assert.equal(await card.locator('.lab-open[aria-disabled="true"]').count(), 1, 'no console link while it is down');
    // the others: their updated time moves on
    const updated = async (name: string): Promise<number> => Number(await boxCard(name).getAttribute('data-updated'));
    const before = await Promise.all(['box1', 'box2'].map(updated));
    await eventually(async () => (await Promise.all(['box1', 'box2'].map(updated))).every((t, i) => t > before[i]), 10_000, 'box1 and box2 updating after box3 went down');
    // the totals follow the boxes at most once a second
    await eventually(async () => /2 of 3 boxes connected/.test(await page.locator('.lab-totals').innerText()), 5_000, 'the lab totals: 2 of 3 boxes connected');
    await card.and(page.locator('[data-state="down"]')).waitFor({ timeout: 10_000 });
    await screenshot('lab-three-boxes-one-down');
  });

  test('where can I run now: the boxes that can start it, best first, and why not on the others', async () => {
    const form = page.locator('.lab-where-form');
    await form.locator('input[name="memory"]').fill('1G');
    await form.locator('input[name="gpus"]').fill('1');
    await form.locator('select[name="priority"]').selectOption('normal');
    await form.getByRole('button', { name: 'Find' }).click();
    const places = page.locator('.lab-places li');
    await places.first().waitFor({ timeout: 10_000 });
    assert.deepEqual((await places.evaluateAll((items) => items.map((i) => i.getAttribute('data-box')))).sort(), ['box1', 'box2'], `the connected boxes fit 1 GiB: ${await page.locator('.lab-where-answer').innerText()}`);
    assert.match(await page.locator('.lab-not-now li[data-box="box3"]').innerText(), /^box3: (down since|reconnecting)/);
    // two GPUs on one box: box2 has one, box1 one that is not in MIG mode
    await form.locator('input[name="gpus"]').fill('2');
    await form.getByRole('button', { name: 'Find' }).click();
    await page.locator('.lab-where-none').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('.lab-not-now li[data-box="box2"]').innerText(), 'box2: has 1 GPU');
    assert.match(await page.locator('.lab-not-now li[data-box="box1"]').innerText(), /^box1: .*GPU 1 is in MIG mode|^box1: only 1 GPU/);
    await form.locator('input[name="memory"]').fill('lots');
    await form.getByRole('button', { name: 'Find' }).click();
    assert.match(await page.locator('.lab-where-error').innerText(), /"lots" is not a memory size/);
    await form.locator('input[name="memory"]').fill('1G');
    await form.locator('input[name="gpus"]').fill('1');
    await form.getByRole('button', { name: 'Find' }).click();
    await places.first().waitFor({ timeout: 10_000 });
    await screenshot('lab-where-can-i-run');
  });

  test('opening a box shows its own console, and an action there goes to that box\'s daemon only', async () => {
    const [job1, job2] = [jobIds.get('box1')!, jobIds.get('box2')!];
    const before1 = (await jobsOn('box1')).find((j) => j.id === job1)!;
    assert.equal(before1.priority, 'normal', 'the train job on box1');
    await boxCard('box2').locator('a.lab-open').click();
    await page.waitForURL(/[?&]box=box2\b/);
    await page.locator('.gpu-card').first().waitFor({ timeout: 20_000 });
    assert.match(await page.locator('.gpu-card').first().innerText(), /A100/, 'box2\'s GPU, not box1\'s H100s');
    assert.equal(await page.locator('.gpu-card').count(), 1);
    assert.match(await page.locator('.lab-box-crumb').innerText(), /box box2 · ← Lab/);
    const card = page.locator(`.job-card[data-job="${job2}"]`);
    await card.scrollIntoViewIfNeeded();
    await card.focus();
    await page.keyboard.press('b');
    await eventually(async () => (await jobsOn('box2')).find((j) => j.id === job2)?.priority === 'best-effort', 10_000, `box2's ${job2} best-effort after pressing B in box2's console`);
    assert.equal((await jobsOn('box1')).find((j) => j.id === job1)!.priority, 'normal', `box1's ${job1} untouched`);
    await screenshot('lab-box2-console');
    await page.locator('.lab-box-crumb a').click();
    await page.locator('.lab-box').first().waitFor({ timeout: 10_000 });
  });
});
