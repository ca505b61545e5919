// The per-user runtime directory (sockets, gate, simulated state): a directory another user made
// first, or one others can open, is refused with the path, its owner and mode, and what to do.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { findEngine } from '../cli/engine-client.js';
import type { Engine } from './engine.js';
import { ensurePrivateDir, privateRuntimeDir, runtimeDir } from './paths.js';
import { listenOnSocket } from './server/socket-server.js';

const root = process.getuid?.() === 0;
const USER = `gpsfa${process.pid % 100000}`;
let other: { uid: number; gid: number } | null = null;
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-paths-'));
  chmodSync(dir, 0o755);
  if (!root) return;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
  other = { uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8' })) };
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
  if (other) execFileSync('userdel', [USER]);
});

/** A directory as another user would leave it: theirs, with the given mode. */
function othersDir(name: string, mode: number): string {
  const path = join(dir, name);
  mkdirSync(path);
  chownSync(path, other!.uid, other!.gid);
  chmodSync(path, mode);
  return path;
}

const noRoot = root ? false : 'needs root to create a directory owned by another user';

test('without XDG_RUNTIME_DIR the runtime dir is /tmp/gpushare-UID; with it, $XDG_RUNTIME_DIR/gpushare', () => {
  assert.equal(runtimeDir({}, '/somewhere'), join('/somewhere', `gpushare-${process.getuid!()}`));
  assert.equal(runtimeDir({ XDG_RUNTIME_DIR: '/run/user/7' }), '/run/user/7/gpushare');
});

test('a missing runtime dir is created 0700 and accepted', () => {
  const tmpRoot = join(dir, 'fresh');
  mkdirSync(tmpRoot);
  const made = privateRuntimeDir({}, tmpRoot);
  assert.equal(made, join(tmpRoot, `gpushare-${process.getuid!()}`));
  assert.equal(statSync(made).mode & 0o777, 0o700);
  assert.equal(statSync(made).uid, process.getuid!());
});

test("another user's runtime dir is refused naming the path, its owner, its mode and what to do", { skip: noRoot }, () => {
  mkdirSync(join(dir, 'taken'));
  const theirs = othersDir(`taken/gpushare-${process.getuid!()}`, 0o777);
  assert.throws(
    () => privateRuntimeDir({}, join(dir, 'taken')),
    (error: Error) =>
      error.message.includes(theirs) && error.message.includes(`owned by ${USER} (uid ${other!.uid})`) && error.message.includes('mode 0777') && /remove it/.test(error.message),
  );
  const theirsPrivate = othersDir('private-theirs', 0o700);
  assert.throws(() => ensurePrivateDir(theirsPrivate), /owned by gpsfa\d+ .* mode 0700/);
});

test('a runtime dir of mine that others can open is refused; a symbolic link to a good one too', () => {
  const open = join(dir, 'open-mine');
  mkdirSync(open, { mode: 0o755 });
  chmodSync(open, 0o755);
  assert.throws(() => ensurePrivateDir(open), new RegExp(`${open} must be a directory of yours .* mode 0755`));
  const good = ensurePrivateDir(join(dir, 'good'));
  symlinkSync(good, join(dir, 'link'));
  assert.throws(() => ensurePrivateDir(join(dir, 'link')), /is a symbolic link/);
});

/** Run with XDG_RUNTIME_DIR=xdg and neither GPUSHARE_SOCKET nor a box daemon: the personal engine's default place. */
function personalEnvironment(t: TestContext, xdg: string): void {
  const saved = { ...process.env };
  t.after(() => {
    for (const key of ['XDG_RUNTIME_DIR', 'GPUSHARE_SOCKET', 'GPUSHARE_DAEMON_SOCKET']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });
  process.env.XDG_RUNTIME_DIR = xdg;
  delete process.env.GPUSHARE_SOCKET;
  process.env.GPUSHARE_DAEMON_SOCKET = join(dir, 'no-daemon.sock');
}

test("the engine does not listen in another user's runtime dir: no socket appears there", { skip: noRoot }, async (t) => {
  mkdirSync(join(dir, 'xdg-engine'));
  const theirs = othersDir('xdg-engine/gpushare', 0o777);
  const socket = join(theirs, 'engine.sock');
  personalEnvironment(t, join(dir, 'xdg-engine'));
  // refused before the engine is used at all
  const listening = await listenOnSocket({} as Engine).then(
    async (server) => (await server.close(), 'listening'),
    (error: Error) => error.message,
  );
  assert.ok(listening.includes(theirs) && listening.includes(USER), `refused naming the dir and its owner: ${listening}`);
  assert.equal(existsSync(socket), false);
});

test("the CLI does not connect to a personal engine socket in another user's runtime dir", { skip: noRoot }, async (t) => {
  const xdg = join(dir, 'xdg');
  mkdirSync(xdg);
  const theirs = othersDir('xdg/gpushare', 0o777);
  // what the other user would listen with, to catch `gpushare run`'s environment
  const trap = createServer((c) => c.end());
  let connections = 0;
  trap.on('connection', () => connections++);
  await new Promise<void>((resolve) => trap.listen(join(theirs, 'engine.sock'), resolve));
  t.after(() => trap.close());
  personalEnvironment(t, xdg);
  const found = await findEngine().then(
    (engine) => (engine.client.close(), `connected to ${engine.socket.path}`),
    (error: Error) => error.message,
  );
  assert.ok(found.includes(`your personal engine at ${join(theirs, 'engine.sock')}`) && found.includes(`owned by ${USER}`), found);
  assert.equal(connections, 0);
});
