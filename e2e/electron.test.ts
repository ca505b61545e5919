// The desktop app through Playwright's Electron support: it runs where an Electron
// binary exists (node_modules/electron/dist) and says why it skipped everywhere else.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { _electron } from 'playwright-core';
import { electronBinary } from '../electron/cli/commands/start.js';
import { packageRoot } from '../electron/engine/paths.js';
import { RESULTS_DIR } from './harness.js';

const executable = electronBinary();
const skip = executable ? false : 'no Electron binary here (node_modules/electron has no dist/: its download was not possible; `npm start` fetches it where the network allows); the browser console tests cover the renderer';
if (skip) console.log(`electron e2e skipped: ${skip}`); // a skipped test's body never runs, so say it here

test('the desktop app opens the console on simulated GPUs, sandboxed, with the preload bridge only', { skip, timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-electron-'));
  const app = await _electron.launch({
    executablePath: executable!,
    args: [packageRoot(), '--simulate', 'a100-40gb', '--no-sandbox'],
    env: { ...process.env, XDG_RUNTIME_DIR: dir, XDG_STATE_HOME: join(dir, 'state'), XDG_DATA_HOME: join(dir, 'data') } as Record<string, string>,
  });
  try {
    const page = await app.firstWindow();
    assert.match(page.url(), /^app:\/\/console\//);
    await page.locator('.simulated-banner').waitFor({ timeout: 30_000 });
    await page.locator('.gpu-card').first().waitFor();
    const exposed = await page.evaluate(() => ({
      bridge: Object.keys((globalThis as unknown as { gpushare: object }).gpushare).sort(),
      node: typeof (globalThis as { require?: unknown }).require,
    }));
    assert.deepEqual(exposed, { bridge: ['call', 'on'], node: 'undefined' });
    const popup = await page.evaluate(() => (globalThis as unknown as { open(url: string): unknown }).open('https://example.com') === null);
    assert.ok(popup, 'new windows are denied');
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: join(RESULTS_DIR, 'electron-console.png') });
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
