// Every tray state has an icon at every size Linux panels use, and each file is a PNG of that size.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../engine/paths.js';
import { TRAY_ICON_SIZES, trayIconFiles } from './tray-icons.js';

test('tray icons at 16, 22, 24, 32 and 48 px for each state, as PNGs of those sizes', () => {
  assert.deepEqual([...TRAY_ICON_SIZES], [16, 22, 24, 32, 48]);
  for (const state of ['ok', 'contention', 'alert'] as const) {
    const files = trayIconFiles(join(packageRoot(), 'assets'), state);
    assert.deepEqual(files.map((f) => f.scaleFactor), [1, 1.375, 1.5, 2, 3]);
    for (const file of files) {
      const png = readFileSync(file.path);
      assert.equal(png.subarray(1, 4).toString(), 'PNG', file.path);
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [file.size, file.size], file.path);
    }
  }
});
