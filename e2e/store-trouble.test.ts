// The console says when usage is not being recorded: a store whose writes fail (an injected
// SQLITE_FULL) shows a banner with the reason and the path, and the banner goes when writes work again.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { attachUsageStore } from '../electron/engine/store/attach.js';
import { UsageStore } from '../electron/engine/store/usage-store.js';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const missing = browserMissing();

describe('the store-trouble banner', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  let store: UsageStore;
  const full = { on: true };

  before(async () => {
    h = await openConsoleHarness('a100-40gb');
    const diskFull = () => Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
    store = await UsageStore.open({ path: join(h.dir, 'usage.db'), flushIntervalMs: 200, onNotice: () => undefined, writeFault: () => (full.on ? diskFull() : null) });
    attachUsageStore(h.engine, store);
  });
  after(async () => {
    await h?.close();
    await store?.close();
  });

  test('a full disk shows "Usage is not being recorded: <why>, <path>" in the console, and it goes once writes work', async () => {
    await eventually(() => !store.status().recording, 15_000, 'the first failed flush');
    await h.page.goto(h.web.url);
    const banner = h.page.locator('.store-trouble[role="alert"]');
    await banner.waitFor({ timeout: 15_000 });
    const text = await banner.innerText();
    assert.ok(text.startsWith(`Usage is not being recorded: writes fail (SQLITE_FULL: database or disk is full), ${store.path}.`), text);
    await h.screenshot('store-trouble-banner');
    full.on = false;
    await banner.waitFor({ state: 'detached', timeout: 15_000 });
    assert.equal(store.status().recording, true);
  });
});
