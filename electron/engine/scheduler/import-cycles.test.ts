// The scheduler's modules form no import cycle (type imports count: a cycle of types is still two
// modules that must change together). The control loop sits on top; policies, park steps and
// auto-park take what they need of it as narrow interfaces of their own.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../paths.js';

const FOLDER = join(packageRoot(), 'electron', 'engine', 'scheduler');

/** Relative imports of a TypeScript source: import/export … from, side-effect imports and import(), types included. */
export function relativeImports(source: string): string[] {
  const noComments = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specifiers = [
    ...noComments.matchAll(/\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g),
    ...noComments.matchAll(/\bimport\s*['"]([^'"]+)['"]/g),
    ...noComments.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
  return specifiers.filter((s) => s.startsWith('.'));
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself), by Tarjan's walk. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const dep of graph.get(file) ?? []) {
      if (!index.has(dep)) {
        visit(dep);
        low.set(file, Math.min(low.get(file)!, low.get(dep)!));
      } else if (onStack.has(dep)) low.set(file, Math.min(low.get(file)!, index.get(dep)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** The import graph of the .ts sources (tests left out) under `folder`, edges only between them. */
function sourceGraph(folder: string): Map<string, string[]> {
  const files = (readdirSync(folder, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => resolve(folder, f));
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const deps = relativeImports(readFileSync(file, 'utf8')).map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
      return [relative(folder, file), deps.filter((d) => known.has(d)).map((d) => relative(folder, d))];
    }),
  );
}

test('the walk reads every kind of import and finds a cycle through type imports', () => {
  assert.deepEqual(
    relativeImports(`import type { A } from './a.js';\nimport { b, type B } from "../b.js";\nexport { c } from './c.js';\nimport './d.js';\nconst e = await import('./e.js');\n// import { f } from './f.js';\nimport { g } from 'node:fs';`),
    ['./a.js', '../b.js', './c.js', './d.js', './e.js'],
  );
  const graph = new Map([
    ['loop.ts', ['park.ts', 'table.ts']],
    ['park.ts', ['table.ts', 'loop.ts']], // `import type { Loop }`: a cycle all the same
    ['table.ts', []],
    ['self.ts', ['self.ts']],
  ]);
  assert.deepEqual(importCycles(graph).sort(), [['loop.ts', 'park.ts'], ['self.ts']]);
  graph.set('park.ts', ['table.ts']);
  assert.deepEqual(importCycles(graph), [['self.ts']]);
});

test('no import cycle among the electron/engine/scheduler sources', () => {
  const graph = sourceGraph(FOLDER);
  assert.ok(graph.has('scheduler.ts') && graph.get('scheduler.ts')!.includes('job-table.ts'), 'the walk sees the scheduler and what it imports');
  assert.deepEqual(importCycles(graph), [], 'files that import each other, directly or round a cycle');
});
