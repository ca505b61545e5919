// What a program the engine runs as root gets for an environment: a fixed one, whatever the engine's own
// holds; and every place in the engine that starts a program says which environment it gets.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from './paths.js';
import { ROOT_PATH, toolEnvironment } from './root-env.js';

test("as root a tool gets PATH of system directories and what its caller adds, none of the engine's own variables; a personal engine's tool gets its user's", (t) => {
  const saved = process.env.LD_AUDIT;
  process.env.LD_AUDIT = '/home/mallory/evil.so';
  t.after(() => (saved === undefined ? delete process.env.LD_AUDIT : (process.env.LD_AUDIT = saved)));
  assert.deepEqual(toolEnvironment({ CUDA_MPS_PIPE_DIRECTORY: '/run/gpushare/mps/0' }, true), { PATH: ROOT_PATH, CUDA_MPS_PIPE_DIRECTORY: '/run/gpushare/mps/0' });
  assert.equal(ROOT_PATH, '/usr/sbin:/usr/bin:/sbin:/bin');
  assert.equal(toolEnvironment({}, false).LD_AUDIT, '/home/mallory/evil.so');
});

/** Programs started without an environment of their own choosing, and why that is right there. */
const ALLOWED: Record<string, string> = {
  'electron/engine/reports/pdf.ts': 'Chromium renders a PDF for `gpushare report`, in the CLI, as the user who asked',
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'testing' ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The argument text of the call whose '(' is at `open`. */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

test('every program the engine starts (spawn, execFile and their Sync forms) is given its environment explicitly: the engine never hands its own on by default', () => {
  const root = packageRoot();
  const unsaid: string[] = [];
  const starters = new Set<string>();
  for (const file of sources(join(root, 'electron', 'engine'))) {
    const name = relative(root, file);
    const text = readFileSync(file, 'utf8');
    if (!/from 'node:child_process'/.test(text) || name in ALLOWED) continue;
    for (const match of text.matchAll(/\b(spawn|spawnSync|execFile|execFileSync|exec|execSync|fork)\(/g)) {
      if (text.slice(Math.max(0, match.index - 9), match.index).endsWith('function ')) continue; // a definition, not a call
      if (/\.\s*$/.test(text.slice(0, match.index))) continue; // a method (db.exec, regex.exec)
      const call = callText(text, match.index + match[0].length - 1);
      starters.add(name);
      if (!/\benv\b/.test(call)) unsaid.push(`${name}:${text.slice(0, match.index).split('\n').length} ${match[1]}${call.slice(0, 80)}`);
    }
  }
  for (const known of ['electron/engine/scheduler/launcher.ts', 'electron/engine/mps/real-mps-control.ts', 'electron/engine/mig/executor.ts', 'electron/engine/store/salvage.ts']) assert.ok(starters.has(known), `${known} was looked at`);
  assert.deepEqual(unsaid, []);
});
