// The rooms and what each may import, checked: the two tables live in ARCHITECTURE.md (one list for each fact),
// this test reads them and looks at every import and #include in the repository.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { packageRoot } from './engine/paths.js';

export interface Room {
  name: string;
  /** Globs of repository paths, or module names (no '/'): `electron`, `node:*`. */
  patterns: string[];
}
export interface Rule {
  from: string[];
  forbidden: string[];
  why: string;
}
export interface Violation {
  file: string;
  line: number;
  imported: string;
  rule: string;
}

const SOURCE = /\.(ts|tsx|cts|mts|js|mjs|cjs|jsx|c|cc|h)$/;
const BUILTINS = new Set(builtinModules);

const cells = (row: string): string[] => row.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
const names = (cell: string): string[] => cell.split(',').map((n) => n.trim()).filter(Boolean);

/** The markdown table whose header starts with these columns, as rows of cells. */
function table(doc: string, header: string[]): string[][] {
  const lines = doc.split('\n');
  const at = lines.findIndex((l) => l.trim().startsWith('|') && header.every((h, i) => cells(l)[i] === h));
  assert.ok(at >= 0, `ARCHITECTURE.md has a table with the columns ${header.join(' | ')}`);
  const rows: string[][] = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.trim().startsWith('|')) break;
    rows.push(cells(line));
  }
  return rows;
}

/** The rooms (first match wins) and the rules, as ARCHITECTURE.md writes them. */
export function readTables(doc: string): { rooms: Room[]; rules: Rule[] } {
  const rooms = table(doc, ['room', 'files']).map(([name, files]) => ({ name, patterns: [...files.matchAll(/`([^`]+)`/g)].map((m) => m[1]) }));
  const rules = table(doc, ['from', 'may not import', 'why']).map(([from, forbidden, why]) => ({ from: names(from), forbidden: names(forbidden), why }));
  return { rooms, rules };
}

const globRegex = (glob: string): RegExp =>
  new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/|\*\*|\*/g, (m) => (m === '**/' ? '(?:.*/)?' : m === '**' ? '.*' : '[^/]*'))}$`);

/** Which room a repository path or a module name is in, or null (a package from npm, a system header). */
export function roomOf(rooms: Room[], target: { path: string } | { module: string }): string | null {
  for (const room of rooms) {
    for (const pattern of room.patterns) {
      const isModule = !pattern.includes('/');
      if ('path' in target && !isModule && globRegex(pattern).test(target.path)) return room.name;
      if ('module' in target && isModule) {
        const name = BUILTINS.has(target.module.split('/')[0]!) && !target.module.startsWith('node:') ? `node:${target.module}` : target.module;
        if (globRegex(pattern).test(name) || name.startsWith(`${pattern}/`)) return room.name;
      }
    }
  }
  return null;
}

/** Every import of a source file with its line: module specifiers of TypeScript and JavaScript, quoted #includes of C. */
export function importsOf(path: string, text: string): { spec: string; line: number }[] {
  if (/\.(c|cc|h)$/.test(path)) {
    return text.split('\n').flatMap((l, i) => {
      const m = /^\s*#\s*include\s*"([^"]+)"/.exec(l);
      return m ? [{ spec: m[1]!, line: i + 1 }] : [];
    });
  }
  const kind = /\.tsx$/.test(path) ? ts.ScriptKind.TSX : /\.(js|mjs|cjs|jsx)$/.test(path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const found: { spec: string; line: number }[] = [];
  const add = (node: ts.Node | undefined): void => {
    if (node && ts.isStringLiteralLike(node)) found.push({ spec: node.text, line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) add(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Where an import leads: a repository path (relative ones resolved, `.js` to its `.ts`), or a module name. */
function target(file: string, spec: string, exists: (path: string) => boolean): { path: string } | { module: string } {
  const c = /\.(c|cc|h)$/.test(file);
  if (!c && !spec.startsWith('.')) return { module: spec };
  const path = normalize(join(dirname(file), spec));
  const candidates = [path, path.replace(/\.js$/, '.ts'), path.replace(/\.js$/, '.tsx'), path.replace(/\.cjs$/, '.cts'), `${path}.ts`, `${path}/index.ts`];
  return { path: candidates.find(exists) ?? path };
}

/** The imports of one file that a rule forbids. */
export function violations(rooms: Room[], rules: Rule[], file: string, text: string, exists: (path: string) => boolean): Violation[] {
  const from = roomOf(rooms, { path: file });
  if (from === null) return [];
  const found: Violation[] = [];
  for (const { spec, line } of importsOf(file, text)) {
    const to = roomOf(rooms, target(file, spec, exists));
    if (to === null || to === from) continue;
    for (const rule of rules) {
      if (rule.from.includes(from) && rule.forbidden.includes(to)) found.push({ file, line, imported: spec, rule: `${from} may not import ${to}: ${rule.why}` });
    }
  }
  return found;
}

const root = packageRoot();
const { rooms, rules } = readTables(readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8'));
// the checkout's source files, new ones included, less what .gitignore leaves out (builds, packages, node_modules)
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => SOURCE.test(f) && existsSync(join(root, f)));
const present = new Set(files);
const exists = (path: string): boolean => present.has(path);

test('the rules name only rooms the rooms table defines, and each says why', () => {
  const defined = new Set(rooms.map((r) => r.name));
  assert.ok(rooms.length >= 10 && rules.length >= 8, `read ${rooms.length} rooms and ${rules.length} rules`);
  for (const rule of rules) {
    for (const name of [...rule.from, ...rule.forbidden]) assert.ok(defined.has(name), `rule "${rule.from} may not import ${rule.forbidden}": no room called ${name}`);
    assert.ok(rule.why.length > 10, `rule "${rule.from} may not import ${rule.forbidden}" says why`);
  }
});

test('every source file is in a room', () => {
  const homeless = files.filter((f) => roomOf(rooms, { path: f }) === null);
  assert.deepEqual(homeless, [], 'files in no room of ARCHITECTURE.md');
});

test('the import reader finds every way of importing, and nothing in comments or strings', () => {
  const M = 'electron'; // spliced in, so this file itself never reads as an import of it
  const source = [
    `import { app } from '${M}';`,
    `import {BrowserWindow} from "${M}/main";`,
    `import '${M}';`,
    `const { app } = require('${M}');`,
    `const e = await import("${M}");`,
    `export { ipcMain } from '${M}';`,
    `import type { X } from '../engine/x.js';`,
    `// import { y } from '${M}';`,
    `const name = '${M}';`,
    "const t = `import { z } from '../engine/z.js';`;",
    `import { build } from '${M}-builder';`,
    `let y: import('../engine/y.js').Y;`,
  ].join('\n');
  assert.deepEqual(importsOf('a.ts', source), [
    { spec: M, line: 1 }, { spec: `${M}/main`, line: 2 }, { spec: M, line: 3 }, { spec: M, line: 4 }, { spec: M, line: 5 }, { spec: M, line: 6 },
    { spec: '../engine/x.js', line: 7 }, { spec: `${M}-builder`, line: 11 }, { spec: '../engine/y.js', line: 12 },
  ]);
  assert.deepEqual(importsOf('a.c', '#include <stdio.h>\n  # include "../../fakegpu/src/fg_state.h"\n'), [{ spec: '../../fakegpu/src/fg_state.h', line: 2 }]);
});

test('a forbidden import is reported with its file, line and rule; an allowed one is not', () => {
  const planted = (file: string, text: string) => violations(rooms, rules, file, text, exists);
  const [renderer] = planted('renderer/src/x.ts', `import { a } from '../../shared/api.js';\nimport { Engine } from '../../electron/engine/engine.js';\n`);
  assert.deepEqual([renderer?.file, renderer?.line, renderer?.imported], ['renderer/src/x.ts', 2, '../../electron/engine/engine.js']);
  assert.match(renderer!.rule, /^renderer may not import engine: ./);
  assert.equal(planted('shared/x.ts', `import { readFileSync } from 'fs';`)[0]?.rule.split(':')[0], 'shared may not import node-builtins');
  assert.equal(planted('shared/x.ts', `import { readFileSync } from 'node:fs';`).length, 1);
  assert.equal(planted('electron/engine/x.ts', `import { app } from '${'electron'}';`)[0]?.rule.split(':')[0], 'engine may not import electron-module');
  assert.equal(planted('electron/engine/x.ts', `import { x } from './testing/simulated-rig.js';`)[0]?.rule.split(':')[0], 'engine may not import tests');
  assert.deepEqual(planted('electron/engine/x.test.ts', `import { x } from './testing/simulated-rig.js';`), [], 'a test may use test helpers');
  assert.equal(planted('native/preload/src/x.c', `#include "../../fakegpu/src/fg_state.h"`)[0]?.rule.split(':')[0], 'preload-library may not import fakegpu');
  assert.deepEqual(planted('native/preload/src/x.c', `#include "../../include/gate_abi.h"`), []);
  assert.deepEqual(planted('electron/main/x.ts', `import { app } from '${'electron'}';\nimport { Engine } from '../engine/engine.js';`), []);
});

test('no file imports across a wall ARCHITECTURE.md draws', () => {
  const found = files.flatMap((file) => violations(rooms, rules, file, readFileSync(join(root, file), 'utf8'), exists));
  assert.deepEqual(found.map((v) => `${v.file}:${v.line} imports ${v.imported} (${v.rule})`), []);
});
