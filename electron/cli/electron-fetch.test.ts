// Getting Electron without the network: an injected fetch that fails, one that succeeds, and the real
// installer runner on stand-in install.js scripts (one failing as a download does offline, one hanging).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ensureElectron, fallbackSentence, runElectronInstaller } from './electron-fetch.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-electron-fetch-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a binary already there is used without fetching', async () => {
  let fetched = 0;
  const result = await ensureElectron({ find: () => '/x/electron', fetch: async () => (fetched++, { ok: true }), say: () => undefined });
  assert.deepEqual(result, { executable: '/x/electron' });
  assert.equal(fetched, 0);
});

test('a missing binary is fetched once, then used', async () => {
  let present: string | null = null;
  const said: string[] = [];
  const result = await ensureElectron({
    find: () => present,
    fetch: async () => {
      present = '/x/electron';
      return { ok: true };
    },
    say: (line) => said.push(line),
  });
  assert.deepEqual(result, { executable: '/x/electron' });
  assert.equal(said.length, 1, 'one line says a download is happening');
});

test('a failing fetch gives the reason for the browser fallback\'s one sentence', async () => {
  const result = await ensureElectron({ find: () => null, fetch: async () => ({ ok: false, why: 'install.js exited with code 1: RequestError: getaddrinfo ENOTFOUND github.com' }), say: () => undefined });
  assert.deepEqual(result, { executable: null, why: 'install.js exited with code 1: RequestError: getaddrinfo ENOTFOUND github.com' });
  assert.equal(
    fallbackSentence(result.executable === null ? result.why : ''),
    "Electron's binary could not be fetched (install.js exited with code 1: RequestError: getaddrinfo ENOTFOUND github.com), so gpushare opens the browser console instead.",
  );
  const empty = await ensureElectron({ find: () => null, fetch: async () => ({ ok: true }), say: () => undefined });
  assert.deepEqual(empty, { executable: null, why: 'its installer finished but left no binary in node_modules/electron/dist' });
});

test('the installer runner passes on its progress and keeps the error line, not the stack', async () => {
  const electronDir = mkdtempSync(join(dir, 'failing-'));
  writeFileSync(
    join(electronDir, 'install.js'),
    "console.log('Downloading electron-v45.4.1-linux-x64.zip');\nconsole.error('RequestError: getaddrinfo ENOTFOUND github.com\\n    at ClientRequest.<anonymous> (got/index.js:1:1)');\nprocess.exit(1);\n",
  );
  const said: string[] = [];
  const outcome = await runElectronInstaller({ electronDir, say: (line) => said.push(line) });
  assert.deepEqual(outcome, { ok: false, why: 'install.js exited with code 1: Downloading electron-v45.4.1-linux-x64.zip RequestError: getaddrinfo ENOTFOUND github.com' });
  assert.ok(said.includes('  electron install: Downloading electron-v45.4.1-linux-x64.zip'), said.join('\n'));
});

test('an installer that hangs is killed at the time limit', async () => {
  const electronDir = mkdtempSync(join(dir, 'hanging-'));
  writeFileSync(join(electronDir, 'install.js'), "console.log('Downloading…');\nsetInterval(() => undefined, 1000);\n");
  const outcome = await runElectronInstaller({ electronDir, timeoutMs: 300, say: () => undefined });
  assert.deepEqual(outcome, { ok: false, why: 'its download did not finish within 0.3 s' });
});

test('a missing install.js (electron not installed) says to run npm install', async () => {
  const outcome = await runElectronInstaller({ electronDir: join(dir, 'absent'), say: () => undefined });
  assert.deepEqual(outcome, { ok: false, why: `${join(dir, 'absent', 'install.js')} is missing: run npm install first` });
});
