// The desktop app's Lab view, without an Electron binary: the built console in Chromium with the
// real compiled preload (electron/preload/preload.cjs) run under a stand-in for Electron's
// ipcRenderer and contextBridge, and on this side the main process's own relays (console-relays.ts,
// lab-windows.ts, lab-hub-child.ts, window-relay.ts) under a stand-in for ipc-bridge.ts, the hub in a child
// process of its own (child_process.fork standing in for Electron's utilityProcess). This box is a real engine on a simulated A100; the
// lab is box1 (gpushare serve on two simulated H100s) and box2, which is down. Switching to Lab,
// asking where a job can run, opening box1's console (box1's GPUs, not this box's) and moving a job
// there (box1's daemon moves it, this box's engine does not), back to the Lab view, and to this box. The hub's
// process killed: the Lab view says so, and a reload starts another.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP_LAB_STATUS, IPC_MESSAGE_CHANNEL, IPC_REQUEST_CHANNEL } from '../shared/bridge.js';
import { parseLabList, type LabBoxSpec } from '../shared/lab.js';
import { startServeBox, type ServeBox } from '../electron/cli/testing/serve-box.js';
import { LabHub } from '../electron/engine/lab/lab-hub.js';
import type { HubChild } from '../electron/engine/lab/hub-process-protocol.js';
import { LabListError } from '../electron/engine/lab/lab-list.js';
import { forkNodeHub } from '../electron/engine/lab/testing/node-hub-process.js';
import { defaultSocketPath } from '../electron/engine/server/socket-server.js';
import { fakegpuBuildDir, packageRoot } from '../electron/engine/paths.js';
import { consoleRelays } from '../electron/main/console-relays.js';
import { desktopLab, servedBy, type DesktopLab } from '../electron/main/lab-windows.js';
import { openLineConnection } from '../electron/main/line-connection.js';
import type { ToWindowOrText } from '../electron/main/window-relay.js';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const missing = browserMissing();
const PRELOAD = join(packageRoot(), 'dist', 'electron', 'preload', 'preload.cjs');

/** The preload as Electron runs it in a sandboxed page: `require('electron')` is all it has; each page load gets its own. */
const preloadUnderStandIn = (source: string): string => `(() => {
  const load = Math.random().toString(36).slice(2);
  const handlers = new Map();
  window.__standInLoad = load;
  window.__standInDeliver = (forLoad, channel, message) => { if (forLoad === load) handlers.get(channel)?.({}, message); };
  const electron = {
    ipcRenderer: { send: (channel, message) => window.__standInSend(load, channel, message), on: (channel, handler) => handlers.set(channel, handler) },
    contextBridge: { exposeInMainWorld: (name, api) => { window[name] = api; } },
  };
  const module = { exports: {} };
  const exports = module.exports;
  const require = (name) => { if (name === 'electron') return electron; throw new Error('a sandboxed preload cannot require ' + name); };
  ${source}
})();`;

/**
 * ipc-bridge.ts's part, for one page: its messages go to the main process's relays (console-relays.ts),
 * each page load being a window's new page (the last one's relay dropped); the relay's messages go back to that load only.
 */
async function standInMain(page: Page, lab: DesktopLab, engineSocket: string, asked: string[]): Promise<{ close(): void; delivered(): Promise<void> }> {
  const relays = consoleRelays<string>({ connect: () => openLineConnection(engineSocket), whyClosed: () => "this box's engine closed the connection" }, lab);
  let lastLoad: string | null = null;
  let delivering = Promise.resolve();
  const toWindow = (load: string) => (message: ToWindowOrText) => {
    // one at a time, in order, as Electron's IPC delivers them
    delivering = delivering.then(() => page.evaluate(([l, channel, m]) => (globalThis as unknown as { __standInDeliver(l: string, c: string, m: unknown): void }).__standInDeliver(l, channel, m), [load, IPC_MESSAGE_CHANNEL, message] as const)).catch(() => undefined);
  };
  await page.exposeBinding('__standInSend', (source, load: string, channel: string, message: { method?: string }) => {
    if (channel !== IPC_REQUEST_CHANNEL) return;
    if (lastLoad !== load) {
      if (lastLoad !== null) relays.drop(lastLoad); // did-start-navigation
      lastLoad = load;
    }
    const url = source.frame.url();
    if (typeof message?.method === 'string') asked.push(`${servedBy(url)} ${message.method}`);
    relays.receive(load, url, message, toWindow(load));
  });
  await page.addInitScript({ content: preloadUnderStandIn(readFileSync(PRELOAD, 'utf8')) });
  return { close: () => relays.close(), delivered: () => delivering };
}

describe('the desktop app\'s Lab view, the renderer driven through the preload under a stand-in for Electron', { skip: missing ?? false, timeout: 180_000 }, () => {
  let h: ConsoleHarness;
  let root: string;
  let box1: ServeBox;
  let lab: DesktopLab;
  let specs: LabBoxSpec[];
  let listed: LabBoxSpec[];
  let mistake: LabListError | null = null;
  let main: Awaited<ReturnType<typeof standInMain>>;
  const asked: string[] = [];
  let home: string;
  let testHub: LabHub;
  let boxJob: string;
  let localJob: string;
  const hubs: HubChild[] = [];

  before(async () => {
    h = await openConsoleHarness('a100-40gb');
    const engineSocket = defaultSocketPath(); // the harness's engine: this box
    root = mkdtempSync(join(tmpdir(), 'gpushare-e2e-desktop-lab-'));
    box1 = await startServeBox(root, 'box1', 'h100x2-mig');
    specs = parseLabList({ boxes: [{ name: 'box1', socket: box1.socketPath }, { name: 'box2', socket: join(root, 'box2-is-down.sock') }] });
    listed = specs;
    lab = desktopLab({
      readList: () => {
        if (mistake) throw mistake;
        return { boxes: listed, files: listed.length > 0 ? ['lab.json'] : [], looked: { admin: '/etc/gpushare/lab.json', own: join(root, 'lab.json') } };
      },
      forkHub: () => {
        const hub = forkNodeHub();
        hubs.push(hub);
        return hub;
      },
      hubOptions: { socketDir: join(root, 'lab'), firstRetryMs: 500, maxRetryMs: 2000 },
    });
    main = await standInMain(h.page, lab, engineSocket, asked);
    // a job on box1 (through a hub of the test's own, as the person) and one on this box, to act on
    const fakejob = join(fakegpuBuildDir(), 'fakejob');
    testHub = new LabHub(specs.slice(0, 1), { socketDir: join(root, 'test-hub') });
    testHub.start();
    await testHub.settled(30_000);
    boxJob = (await testHub.client('box1')!.call('jobs.submit', { argv: [fakejob, '--mem', '1G', 'hold', '--duration', '300'], gpu: 0, priority: 'normal' })).id;
    localJob = (await h.engine.call('jobs.submit', { argv: [fakejob, '--mem', '1G', 'hold', '--duration', '300'], gpu: 0, priority: 'normal' })).id;
    home = new URL('/index.html', h.web.url).toString(); // no token: the preload's bridge is the way in, as in the app
  });
  after(async () => {
    await testHub?.client('box1')?.call('jobs.terminate', { job: boxJob }).catch(() => undefined);
    testHub?.close();
    main?.close();
    lab?.close();
    await box1?.stop();
    await h?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('this box\'s console shows a Lab tab; the Lab view lists the boxes and answers where to run; box1\'s console shows box1 and acts on box1 only; back to the Lab view and to this box', async () => {
    const page = h.page;
    await page.goto(home);
    const cards = page.locator('.gpu-card');
    await cards.first().waitFor({ timeout: 30_000 });
    assert.match(await page.locator('.top-bar-facts').innerText(), /desktop app/, 'the console runs on the preload bridge');
    assert.match(await cards.first().locator('.gpu-name').innerText(), /A100/, 'this box: the simulated A100');
    const labTab = page.locator('.view-tabs a.view-tab-link', { hasText: 'Lab' });
    await labTab.waitFor();
    assert.equal(await page.locator('.lab-box-crumb').count(), 0, 'this box\'s console names no box of the lab');

    await labTab.click();
    await page.waitForURL(/[?&]lab=1/);
    const card = (name: string) => page.locator(`.lab-box[data-box="${name}"]`);
    await card('box1').and(page.locator('[data-state="connected"]')).waitFor({ timeout: 30_000 });
    await eventually(async () => (await card('box1').locator('.lab-gpu').count()) === 2, 15_000, 'box1\'s two GPUs in the Lab view');
    await card('box2').and(page.locator('[data-state="down"], [data-state="reconnecting"]')).waitFor({ timeout: 15_000 });
    assert.match(await card('box2').locator('.lab-box-status').innerText(), /box2: /, 'box2 is down, and why');
    // the totals follow the boxes at most once a second
    await eventually(async () => /1 of 2 boxes connected · 2 GPUs/.test(await page.locator('.lab-totals').innerText()), 5_000, 'the lab totals: 1 of 2 boxes connected, 2 GPUs');
    assert.match(await page.locator('.top-bar-facts').innerText(), /desktop app · lab$/, 'the Lab view says it runs in the desktop app, as this box\'s console does');
    // where can I run: asked of the app's hub, in its own process
    const form = page.locator('.lab-where-form');
    await form.locator('input[name="memory"]').fill('1G');
    await form.locator('input[name="gpus"]').fill('1');
    await form.getByRole('button', { name: 'Find' }).click();
    await page.locator('.lab-places li').first().waitFor({ timeout: 10_000 });
    assert.deepEqual(await page.locator('.lab-places li').evaluateAll((items) => [...new Set(items.map((i) => i.getAttribute('data-box')))]), ['box1']);
    assert.match(await page.locator('.lab-not-now li[data-box="box2"]').innerText(), /^box2: (down since|reconnecting)/);
    await h.screenshot('desktop-lab-view');

    await card('box1').locator('a.lab-open').click();
    await page.waitForURL(/[?&]box=box1/);
    await eventually(async () => (await cards.count()) === 2, 30_000, 'box1\'s two GPU cards');
    assert.match(await cards.first().locator('.gpu-name').innerText(), /H100/, 'box1\'s own GPUs, not this box\'s A100');
    assert.match(await page.locator('.lab-box-crumb').innerText(), /box box1/);
    await eventually(async () => /live/.test(await page.locator('.connection').innerText()), 15_000, 'box1\'s console live');
    await h.screenshot('desktop-lab-box1-console');
    assert.ok(asked.some((a) => a === 'box:box1 session.whoami'), 'box1\'s console asked box1 who it is');
    // an action in box1's console goes to box1's daemon, and not to this box's engine
    const jobCard = page.locator(`.job-card[data-job="${boxJob}"]`);
    await jobCard.waitFor({ timeout: 15_000 });
    await jobCard.scrollIntoViewIfNeeded();
    await jobCard.focus();
    await page.keyboard.press('b');
    await eventually(async () => (await testHub.client('box1')!.call('jobs.list', {})).find((j) => j.id === boxJob)?.priority === 'best-effort', 10_000, `box1's ${boxJob} best-effort after pressing B in box1's console`);
    assert.equal((await h.engine.call('jobs.list', {})).find((j) => j.id === localJob)?.priority, 'normal', `this box's ${localJob} untouched`);
    assert.ok(!asked.some((a) => a.startsWith('engine ') && a !== `engine ${DESKTOP_LAB_STATUS}` && asked.indexOf(a) > asked.indexOf('box:box1 session.whoami')), 'nothing went to this box\'s engine from box1\'s console');

    await page.locator('.lab-crumb').click();
    await page.waitForURL(/[?&]lab=1/);
    await card('box1').and(page.locator('[data-state="connected"]')).waitFor({ timeout: 15_000 });
    await page.locator('.view-tabs a.view-tab-link', { hasText: 'This box' }).click();
    await page.waitForURL((url) => !url.search.includes('lab') && !url.search.includes('box'));
    await cards.first().waitFor({ timeout: 30_000 });
    assert.equal(await cards.count(), 1);
    assert.match(await cards.first().locator('.gpu-name').innerText(), /A100/, 'back on this box');
  });

  test('with no lab list, this box\'s console shows no Lab tab', async () => {
    const page = h.page;
    listed = [];
    try {
      const answered = asked.filter((a) => a === `engine ${DESKTOP_LAB_STATUS}`).length;
      await page.goto(home);
      await page.locator('.gpu-card').first().waitFor({ timeout: 30_000 });
      await eventually(() => asked.filter((a) => a === `engine ${DESKTOP_LAB_STATUS}`).length > answered, 10_000, 'the console to ask about the lab');
      await main.delivered(); // the answer is in the page
      await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
      assert.equal(await page.locator('.view-tabs a.view-tab-link').count(), 0);
    } finally {
      listed = specs;
    }
  });

  test('a lab list with a mistake: the Lab tab is there, and the Lab view says the mistake, with This box to go back', async () => {
    const page = h.page;
    mistake = new LabListError(join(root, 'lab.json'), 'boxes[0] ("box1"): unknown key "shh"');
    try {
      await page.goto(home);
      const labTab = page.locator('.view-tabs a.view-tab-link', { hasText: 'Lab' });
      await labTab.waitFor({ timeout: 30_000 });
      assert.equal(await labTab.getAttribute('title'), mistake.message);
      await labTab.click();
      await page.waitForURL(/[?&]lab=1/);
      const detail = page.locator('.connection-detail');
      await detail.waitFor({ timeout: 10_000 });
      assert.equal(await detail.innerText(), mistake.message);
      await page.locator('.view-tabs a.view-tab-link', { hasText: 'This box' }).click();
      await page.locator('.gpu-card').first().waitFor({ timeout: 30_000 });
    } finally {
      mistake = null;
    }
  });

  test('the hub\'s process killed: the Lab view says the hub stopped and why, dims what it shows, and its Reload starts a new hub', async () => {
    const page = h.page;
    await page.goto(new URL('?lab=1', home).toString());
    const card = (name: string) => page.locator(`.lab-box[data-box="${name}"]`);
    await card('box1').and(page.locator('[data-state="connected"]')).waitFor({ timeout: 30_000 });
    const running = hubs.at(-1)!;
    const before = hubs.length;
    process.kill(running.pid!, 'SIGKILL');
    const detail = page.locator('.connection-detail');
    await eventually(async () => (await detail.count()) > 0 && /^The lab hub stopped \(killed by SIGKILL\)\./.test(await detail.innerText()), 15_000, 'the Lab view to say the hub stopped');
    // what is shown is what was: the boxes dimmed, with when their figures are from
    assert.match(await page.locator('.lab-not-live').innerText(), /^Not live: the figures below are as of \d\d:\d\d:\d\d UTC\./);
    assert.equal(await page.locator('.lab-boxes.stale').count(), 1, 'the boxes dimmed');
    await h.screenshot('desktop-lab-hub-stopped');
    await page.locator('.lab-not-live').getByRole('button', { name: 'Reload' }).click();
    await page.locator('.lab-not-live').waitFor({ state: 'detached', timeout: 30_000 });
    await card('box1').and(page.locator('[data-state="connected"]')).waitFor({ timeout: 30_000 });
    assert.equal(hubs.length, before + 1, 'the reload started a new hub process');
  });
});
