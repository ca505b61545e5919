// gpushare start's choice between the desktop app and the browser console, with injected facts and
// an injected fetch (no network): what it says, what it fetches, and what it runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { desktopElectron, type DesktopLaunchDeps } from './desktop-launch.js';
import type { SandboxFacts } from './electron-sandbox.js';

const sandboxed: SandboxFacts = { uid: 1000, chromeSandbox: null, unprivilegedUsernsClone: 1, maxUserNamespaces: 15000, apparmorRestrictsUserns: null, noSandboxAsked: false };

function deps(overrides: Partial<DesktopLaunchDeps> = {}) {
  const said: string[] = [];
  const done: string[] = [];
  const all: DesktopLaunchDeps = {
    env: { DISPLAY: ':0' },
    find: () => '/x/dist/electron',
    fetch: async () => (done.push('fetch'), { ok: true }),
    sandboxFacts: () => (done.push('sandbox check'), sandboxed),
    say: (line) => said.push(line),
    ...overrides,
  };
  return { all, said, done };
}

test('a display, a binary and a working sandbox: the desktop app runs, nothing said or fetched', async () => {
  const { all, said, done } = deps();
  assert.equal(await desktopElectron(all), '/x/dist/electron');
  assert.deepEqual(said, []);
  assert.deepEqual(done, ['sandbox check']);
});

test('no display: the browser console, without fetching Electron', async () => {
  const { all, said, done } = deps({ env: {}, find: () => null });
  assert.equal(await desktopElectron(all), null);
  assert.deepEqual(said, ['There is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set), so gpushare opens the browser console instead.']);
  assert.deepEqual(done, []);
  const wayland = deps({ env: { WAYLAND_DISPLAY: 'wayland-0' } });
  assert.equal(await desktopElectron(wayland.all), '/x/dist/electron');
});

test('a missing binary whose fetch fails: the fallback\'s one sentence, and no sandbox check', async () => {
  const { all, said, done } = deps({ find: () => null, fetch: async () => ({ ok: false, why: 'install.js exited with code 1: TypeError: fetch failed' }) });
  assert.equal(await desktopElectron(all), null);
  assert.deepEqual(said, [
    "Electron's binary is not downloaded yet; fetching it once (about 100 MB)…",
    "Electron's binary could not be fetched (install.js exited with code 1: TypeError: fetch failed), so gpushare opens the browser console instead.",
  ]);
  assert.deepEqual(done, []);
});

test('a sandbox Chromium cannot start: the reason and its fix before Electron runs, then the browser console', async () => {
  const { all, said } = deps({ sandboxFacts: () => ({ ...sandboxed, uid: 0 }) });
  assert.equal(await desktopElectron(all), null);
  assert.equal(said.length, 1);
  assert.match(said[0], /^The desktop app cannot run as root: .* The browser console opens now instead\.$/);
});

test('--no-sandbox: Electron runs, with the warning of what it costs', async () => {
  const { all, said } = deps({ sandboxFacts: () => ({ ...sandboxed, uid: 0, noSandboxAsked: true }) });
  assert.equal(await desktopElectron(all), '/x/dist/electron');
  assert.match(said[0], /^gpushare start: --no-sandbox: /);
});
