// engine.stop and what session.whoami tells: only a personal engine's own user may stop it, after
// the answer is sent; the box daemon refuses; the console URL (it carries the token) goes to the owner only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Caller } from './api/dispatcher.js';
import { Engine } from './engine.js';
import { noGpus } from './store/testing/synthetic.js';
import { realBackend } from './gpu/gpu-backend.js';

const backend = realBackend(noGpus, () => undefined);
const stranger: Caller = { uid: 54321, gid: 54321, groups: [], user: 'mallory', pid: 999, admin: false, via: 'socket' };
const tick = () => new Promise((resolve) => setImmediate(resolve));

function personalEngine() {
  const engine = new Engine(backend);
  const stops: string[] = [];
  engine.setHost({ stop: () => stops.push('stop'), consoleUrl: 'http://127.0.0.1:4000/?token=secret' });
  return { engine, stops, owner: { ...engine.owner, via: 'socket' as const } };
}

test("engine.stop from the engine's own user answers with the pid, then stops the host once", async () => {
  const { engine, stops, owner } = personalEngine();
  assert.deepEqual(await engine.call('engine.stop', {}, owner), { pid: process.pid });
  assert.deepEqual(stops, [], 'not before the answer is on its way');
  await tick();
  assert.deepEqual(stops, ['stop']);
  assert.deepEqual(engine.dispatcher.auditLog().map((e) => [e.who, e.what, e.result]), [[owner.user, 'engine.stop', 'ok']], 'a stop is audited');
});

test("engine.stop from another user is refused with the rule and both users named, and stops nothing", async () => {
  const { engine, stops } = personalEngine();
  await assert.rejects(engine.call('engine.stop', {}, stranger), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'forbidden');
    assert.equal(error.message, `Only a personal engine's own user may stop it: this one is ${engine.owner.user}'s (uid ${engine.owner.uid}); mallory (uid 54321) is not.`);
    return true;
  });
  await tick();
  assert.deepEqual(stops, []);
});

test('the box daemon refuses engine.stop, even from root: an admin stops it with systemctl', async () => {
  const daemon = new Engine(backend, { kind: 'daemon' });
  const stops: string[] = [];
  daemon.setHost({ stop: () => stops.push('stop') });
  await assert.rejects(daemon.call('engine.stop', {}, { ...daemon.owner, uid: 0, admin: true, via: 'socket' }), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'forbidden');
    assert.equal(error.message, 'The box daemon is stopped by an admin: systemctl stop gpushare.');
    return true;
  });
  await tick();
  assert.deepEqual(stops, []);
});

test('a host that offers no stop (the desktop app) says so instead of half-stopping', async () => {
  const engine = new Engine(backend);
  await assert.rejects(engine.call('engine.stop', {}, engine.owner), (error: Error & { code?: string }) => error.code === 'unsupported' && /is not stopped through its socket/.test(error.message));
});

test("whoami gives the console URL to the engine's own user only, and lists other engines", async () => {
  const { engine, owner } = personalEngine();
  const mine = await engine.call('session.whoami', {}, owner);
  assert.equal(mine.consoleUrl, 'http://127.0.0.1:4000/?token=secret');
  assert.deepEqual(mine.engine, { kind: 'personal', owner: engine.owner.user, pid: process.pid });
  assert.ok(Array.isArray(mine.otherEngines));
  assert.ok(mine.otherEngines.every((e) => e.user !== engine.owner.user), "the engine's own user's processes are not others'");
  assert.equal((await engine.call('session.whoami', {}, stranger)).consoleUrl, null, 'the URL carries the token');
});
