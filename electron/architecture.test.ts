// ARCHITECTURE.md stays true to the tree: every path it names exists, every glob matches a file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from './engine/paths.js';

const root = packageRoot();
const doc = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');

/** The repository paths the page names: in `code` spans, and words with a '/' in its code blocks. */
export function namedPaths(text: string): string[] {
  const fenced = [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const prose = text.replace(/```[^\n]*\n[\s\S]*?```/g, '');
  const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const words = fenced.flatMap((block) => block.split(/[\s=']+/));
  const pathLike = /^[\w.*-]+(\/[\w.*-]*)+$/; // relative, at least one '/', no spaces or calls
  return [...new Set([...spans, ...words].filter((s) => pathLike.test(s)))];
}

const globRegex = (glob: string): RegExp =>
  new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/|\*\*|\*/g, (m) => (m === '**/' ? '(?:.*/)?' : m === '**' ? '.*' : '[^/]*'))}$`);

test('the path reader takes code spans and code-block words with a slash, nothing else', () => {
  const text = 'See `shared/api.ts`, `dispatcher.register(...)`, `node:*`, `/usr/bin/chromium` and /proc.\n```sh\nnode --test dist/x/y.test.js\n```\n';
  assert.deepEqual(namedPaths(text), ['shared/api.ts', 'dist/x/y.test.js']);
});

test('every path ARCHITECTURE.md names exists (a glob: matches a tracked file; a compiled file under dist/: its source)', () => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const named = namedPaths(doc);
  assert.ok(named.length > 40, `read ${named.length} paths`);
  const missing = named.filter((path) => {
    if (path.includes('*')) return !tracked.some((f) => globRegex(path).test(f));
    if (path.startsWith('test-results/')) return false; // written by the e2e tests
    // build output: a compiled file's source exists (a folder there is made by the build)
    if (path.startsWith('dist/')) return path.endsWith('.js') && !existsSync(join(root, path.replace(/^dist\//, '').replace(/\.js$/, '.ts')));
    return !existsSync(join(root, path));
  });
  assert.deepEqual(missing, [], 'named in ARCHITECTURE.md but not in the tree');
});
