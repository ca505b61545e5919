// The console opens as it was left: its timeline window and filters are kept in the person's config
// file through the engine (settings.set) and read back when the page loads again.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { browserMissing, eventually, openConsoleHarness, type ConsoleHarness } from './harness.js';

const missing = browserMissing();

describe('the console keeps its choices across a restart', { skip: missing ?? false, timeout: 120_000 }, () => {
  let h: ConsoleHarness;
  const configFile = (): string => join(h.dir, 'config', 'gpushare', 'config.json');
  const kept = (): Record<string, unknown> | null => (existsSync(configFile()) ? (JSON.parse(readFileSync(configFile(), 'utf8')) as { console?: Record<string, unknown> }).console ?? null : null);

  before(async () => {
    h = await openConsoleHarness('h100x2-mig');
    await h.page.goto(h.web.url);
  });
  after(async () => h?.close());

  test('the timeline window and GPU filter chosen are in the config file, and a reloaded console shows them', async () => {
    const windowButton = (minutes: number) => h.page.locator('.timeline-panel [aria-label="Window"] button', { hasText: `${minutes} min` });
    await windowButton(60).click();
    await h.page.getByLabel('GPU filter').selectOption('1');
    await eventually(async () => kept()?.timelineMinutes === 60 && kept()?.gpuFilter === 1, 10_000, 'the choices to be written to the config file');

    await h.page.reload();
    await eventually(async () => (await windowButton(60).getAttribute('aria-pressed')) === 'true', 10_000, 'the 60 min window to be chosen again');
    assert.equal(await windowButton(10).getAttribute('aria-pressed'), 'false');
    assert.equal(await h.page.getByLabel('GPU filter').inputValue(), '1');
    await h.screenshot('console-preferences-restored');
  });
});
