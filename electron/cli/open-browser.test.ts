// The console's token never reaches a command line: the opener gets a 0600 page's path.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openInBrowser } from './open-browser.js';

const URL = 'http://127.0.0.1:41234/?token=3f9a0c1d2e4b5a6978a1b2c3d4e5f60718293a4b5c6d7e8f';
const TOKEN = '3f9a0c1d2e4b5a6978a1b2c3d4e5f60718293a4b5c6d7e8f';

function scratch(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-open-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function recorder() {
  const spawned: string[][] = [];
  const warned: string[] = [];
  return { spawned, warned, spawn: (command: string, args: string[]) => void spawned.push([command, ...args]), warn: (line: string) => void warned.push(line), has: () => true };
}

test('the opener is given a page path with no token in its argv; the page is 0600 and redirects to the URL', (t) => {
  const dir = join(scratch(t), 'gpushare');
  const r = recorder();
  const opened = openInBrowser(URL, { ...r, env: { DISPLAY: ':0' }, dir });
  assert.equal(r.spawned.length, 1);
  assert.equal(r.spawned[0][0], 'xdg-open');
  assert.deepEqual(r.spawned[0].slice(1), [opened.page]);
  assert.ok(!r.spawned[0].some((arg) => arg.includes(TOKEN)), `argv ${JSON.stringify(r.spawned[0])} carries no token`);
  assert.equal(statSync(opened.page!).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  const html = readFileSync(opened.page!, 'utf8');
  assert.match(html, new RegExp(`<meta http-equiv="refresh" content="0; url=${URL.replace(/[.?]/g, '\\$&')}">`));
  assert.ok(html.includes(`location.replace(${JSON.stringify(URL)})`));
  opened.dispose();
  assert.throws(() => statSync(opened.page!), /ENOENT/, 'dispose removes the page with the token');
});

test('no display: nothing is spawned and no page is written', (t) => {
  const dir = join(scratch(t), 'gpushare');
  const r = recorder();
  const opened = openInBrowser(URL, { ...r, env: {}, dir });
  assert.equal(opened.page, null);
  assert.deepEqual(r.spawned, []);
  assert.throws(() => statSync(dir), /ENOENT/);
});

test('a runtime dir others can open is refused: no page, no opener, a sentence why', (t) => {
  const dir = join(scratch(t), 'gpushare');
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  const r = recorder();
  const opened = openInBrowser(URL, { ...r, env: { WAYLAND_DISPLAY: 'wayland-0' }, dir });
  assert.equal(opened.page, null);
  assert.deepEqual(r.spawned, []);
  assert.equal(r.warned.length, 1);
  assert.match(r.warned[0], /must be a directory of yours that no one else can open \(mode 0700\)/);
});
