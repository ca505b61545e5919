import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadUserConfig, saveConsolePreferences } from '../engine/settings/user-config.js';
import { DEFAULT_WINDOW_SIZE, initialWindowSize, keepWindowSize } from './window-size.js';

test('the window reopens at the size it was closed at, kept beside the console\'s other choices in the settings file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-window-'));
  try {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ engine: { rateHz: 2 }, console: { timelineMinutes: 5 } }));
    const say: string[] = [];
    const opened = initialWindowSize(() => loadUserConfig(file).console, (line) => say.push(line));
    assert.deepEqual(opened, DEFAULT_WINDOW_SIZE, 'nothing kept yet: the default');
    assert.equal(keepWindowSize({ width: 1000.4, height: 700 }, opened, (p) => void saveConsolePreferences(p, file), (line) => say.push(line)), true);
    assert.deepEqual(initialWindowSize(() => loadUserConfig(file).console, (line) => say.push(line)), { width: 1000, height: 700 });
    const kept = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(kept.engine.rateHz, 2, 'the engine settings stay');
    assert.equal(kept.console.timelineMinutes, 5, "the console's other choices stay");
    assert.deepEqual(say, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unchanged size writes nothing, a size past the bounds is clamped, and a settings file that is not valid is left alone and said', () => {
  const saved: unknown[] = [];
  const say: string[] = [];
  assert.equal(keepWindowSize(DEFAULT_WINDOW_SIZE, DEFAULT_WINDOW_SIZE, (p) => saved.push(p), (line) => say.push(line)), false);
  assert.equal(keepWindowSize({ width: 100, height: 99999 }, DEFAULT_WINDOW_SIZE, (p) => saved.push(p), (line) => say.push(line)), true);
  assert.deepEqual(saved, [{ window: { width: 320, height: 16384 } }]);

  const dir = mkdtempSync(join(tmpdir(), 'gpushare-window-'));
  try {
    const file = join(dir, 'config.json');
    writeFileSync(file, '{ "engine": { "rateHz": "fast" } }');
    assert.deepEqual(initialWindowSize(() => loadUserConfig(file).console, (line) => say.push(line)), DEFAULT_WINDOW_SIZE);
    assert.equal(keepWindowSize({ width: 800, height: 600 }, DEFAULT_WINDOW_SIZE, (p) => void saveConsolePreferences(p, file), (line) => say.push(line)), false);
    assert.equal(readFileSync(file, 'utf8'), '{ "engine": { "rateHz": "fast" } }', 'the file is not overwritten');
    assert.equal(say.length, 2);
    assert.match(say[0], /default size: .*rateHz/);
    assert.match(say[1], /not kept: .*rateHz/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
