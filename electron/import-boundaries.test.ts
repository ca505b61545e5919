// The layering rule made checkable: only electron/main and electron/preload may import `electron`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from './engine/paths.js';

const SOURCE = /\.(ts|tsx|js|mjs|cjs|jsx)$/;
const SKIP = new Set(['node_modules', 'dist', 'build', '.git', 'test-results']);
const ALLOWED = [/^electron\/main\//, /^electron\/preload\//];

/** Does this source text import the `electron` module (or one of its subpaths)? */
export function importsElectron(source: string): boolean {
  const spec = String.raw`['"]electron(?:/[^'"]*)?['"]`;
  return new RegExp(String.raw`(?:\bfrom\s*${spec}|\bimport\s*${spec}|\b(?:require|import)\s*\(\s*${spec}\s*\))`).test(source);
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (SOURCE.test(entry.name)) yield path;
  }
}

// the module name is spliced in so this file itself never reads as an import of it
const M = 'electron';

test('the detector recognises every way of importing electron', () => {
  for (const yes of [
    `import { app } from '${M}';`,
    `import {BrowserWindow} from "${M}/main";`,
    `import '${M}';`,
    `const { app } = require('${M}');`,
    `const e = await import("${M}");`,
    `export { ipcMain } from '${M}';`,
  ]) {
    assert.ok(importsElectron(yes), yes);
  }
  for (const no of [
    `import { x } from './electron-helpers.js';`,
    `import { build } from 'electron-builder';`,
    `// electron is only imported in electron/main`,
    `const name = 'electron';`,
  ]) {
    assert.ok(!importsElectron(no), no);
  }
});

test('nothing outside electron/main and electron/preload imports electron', () => {
  const root = packageRoot();
  const offenders: string[] = [];
  for (const file of sourceFiles(root)) {
    const path = relative(root, file);
    if (ALLOWED.some((rule) => rule.test(path))) continue;
    if (importsElectron(readFileSync(file, 'utf8'))) offenders.push(path);
  }
  assert.deepEqual(offenders, [], `electron is imported outside electron/main and electron/preload: ${offenders.join(', ')}`);
});
