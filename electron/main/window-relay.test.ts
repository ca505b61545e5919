// A console window's connection to an engine in another process, relayed by the main process:
// against a real engine on a unix socket (and a bare socket where the exact bytes matter).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Engine } from '../engine/engine.js';
import { listenOnSocket } from '../engine/server/socket-server.js';
import { noGpus } from '../engine/store/testing/synthetic.js';
import { openLineConnection } from './line-connection.js';
import { openWindowRelay, type ToWindow } from './window-relay.js';
import { realBackend } from '../engine/gpu/gpu-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-relay-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let socketSeq = 0;

async function engineOnSocket() {
  const engine = new Engine(realBackend(noGpus, () => undefined));
  const socket = await listenOnSocket(engine, join(dir, `engine-${++socketSeq}.sock`));
  return { engine, path: socket.path, close: () => socket.close() };
}

/** What the window hears, and a way to wait until it has heard `n` messages. */
function windowRecorder() {
  const heard: ToWindow[] = [];
  const waiters: Array<() => void> = [];
  return {
    heard,
    send: (message: ToWindow) => {
      heard.push(message);
      waiters.splice(0).forEach((wake) => wake());
    },
    async until(n: number): Promise<ToWindow[]> {
      while (heard.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return heard;
    },
  };
}

const summary = (m: ToWindow): string =>
  m.kind === 'connection' ? `connection ${m.state}` : m.kind === 'event' ? `event ${m.event}` : `response ${m.id} ${m.ok ? 'ok' : m.error.code}`;

test('requests made while the engine starts wait, then the window hears "open" before their answers, in order', { timeout: 10_000 }, async () => {
  const e = await engineOnSocket();
  let release!: () => void;
  const started = new Promise<void>((resolve) => (release = resolve));
  const window = windowRecorder();
  const relay = openWindowRelay(async () => (await started, openLineConnection(e.path)), window.send, () => 'gone');
  relay.receive({ kind: 'request', id: 1, method: 'session.whoami', params: {} });
  relay.receive({ kind: 'request', id: 2, method: 'alerts.active', params: {} });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(window.heard, [], 'nothing yet: the engine has not answered');
  release();
  const heard = await window.until(3);
  assert.deepEqual(heard.map(summary), ['connection open', 'response 1 ok', 'response 2 ok']);
  const whoami = heard[1] as { result: { engine: { kind: string; pid: number } } };
  assert.equal(whoami.result.engine.kind, 'personal');
  assert.equal(whoami.result.engine.pid, process.pid, 'the answer is the engine\'s own');
  relay.close();
  await e.close();
});

test('the window gets the events it subscribed to, and only those', { timeout: 10_000 }, async () => {
  const e = await engineOnSocket();
  const window = windowRecorder();
  const relay = openWindowRelay(() => openLineConnection(e.path), window.send, () => 'gone');
  relay.receive({ kind: 'subscribe', events: ['conditions'] });
  relay.receive({ kind: 'request', id: 1, method: 'alerts.active', params: {} }); // answered after the subscription took
  await window.until(2);
  e.engine.raiseAlert({ kind: 'finished', severity: 'info', gpu: 0, jobId: 'j1', message: 'j1 finished.' });
  e.engine.setConditions([{ kind: 'contention', severity: 'warning', gpu: 0, jobId: 'j1', message: 'j1 contends.' }]);
  const heard = await window.until(3);
  assert.deepEqual(heard.map(summary), ['connection open', 'response 1 ok', 'event conditions'], 'no alert event: the window did not ask for alerts');
  relay.close();
  await e.close();
});

test('only requests and subscriptions reach the engine, rebuilt from their own fields', { timeout: 10_000 }, async () => {
  const lines: string[] = [];
  const path = join(dir, 'bare.sock');
  const peers = new Set<Socket>();
  const server = createServer((socket) => {
    peers.add(socket);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const window = windowRecorder();
  const relay = openWindowRelay(() => openLineConnection(path), window.send, () => 'gone');
  relay.receive({ kind: 'request', id: 7, method: 'jobs.list', params: { includeFinished: true }, caller: { uid: 0, admin: true } });
  relay.receive({ kind: 'response', id: 1, ok: true, result: null });
  relay.receive({ kind: 'event', event: 'jobs', data: [] });
  relay.receive({ kind: 'request', id: -1, method: 'jobs.list', params: {} });
  relay.receive({ kind: 'request', id: 8 });
  relay.receive('{"kind":"request","id":9,"method":"jobs.list"}');
  relay.receive({ kind: 'subscribe', events: ['alert', 'secrets', 42] });
  relay.receive({ kind: 'subscribe', events: ['nothing-we-know'] });
  relay.receive({ kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true, extra: 1 });
  relay.receive({ kind: 'subscribe', events: ['jobs'], snapshotDeltas: 'yes' });
  relay.receive(null);
  await window.until(1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(lines.map((l) => JSON.parse(l)), [
    { kind: 'request', id: 7, method: 'jobs.list', params: { includeFinished: true } },
    { kind: 'subscribe', events: ['alert'] },
    { kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true },
    { kind: 'subscribe', events: ['jobs'] },
  ]);
  relay.close();
  for (const peer of peers) peer.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('when the engine goes away, requests in flight and later ones are answered "unavailable" with the reason, and the window is told once', { timeout: 10_000 }, async () => {
  const path = join(dir, 'mute.sock');
  const peers = new Set<Socket>();
  const server = createServer((socket) => peers.add(socket).size); // accepts, never answers
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const window = windowRecorder();
  const relay = openWindowRelay(() => openLineConnection(path), window.send, () => 'The personal engine stopped (killed by SIGKILL).');
  relay.receive({ kind: 'request', id: 1, method: 'jobs.list', params: {} });
  await window.until(1);
  while (peers.size === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  for (const peer of peers) peer.destroy(); // the engine dies with request 1 unanswered
  const heard = await window.until(3);
  assert.deepEqual(heard.map(summary), ['connection open', 'response 1 unavailable', 'connection closed']);
  assert.deepEqual(heard.slice(1).map((m) => ('detail' in m ? m.detail : 'error' in m ? m.error.message : null)), [
    'The personal engine stopped (killed by SIGKILL).',
    'The personal engine stopped (killed by SIGKILL).',
  ]);
  relay.receive({ kind: 'request', id: 2, method: 'jobs.list', params: {} });
  assert.deepEqual((await window.until(4)).slice(3).map(summary), ['response 2 unavailable']);
  relay.close();
  assert.equal(window.heard.length, 4, 'closing an ended relay tells nothing more');
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('an engine that cannot be reached: every waiting request is refused with why, then the window hears it', { timeout: 10_000 }, async () => {
  const window = windowRecorder();
  let fail!: (error: Error) => void;
  const relay = openWindowRelay(() => new Promise((_resolve, reject) => (fail = reject)), window.send, () => 'gone');
  relay.receive({ kind: 'request', id: 1, method: 'session.whoami', params: {} });
  relay.receive({ kind: 'subscribe', events: ['snapshot'] });
  relay.receive({ kind: 'request', id: 2, method: 'jobs.list', params: {} });
  fail(new Error('The personal engine stopped before it answered (exit code 1): No NVIDIA driver.'));
  const heard = await window.until(3);
  assert.deepEqual(heard.map(summary), ['response 1 unavailable', 'response 2 unavailable', 'connection closed']);
  assert.equal((heard[2] as { detail: string }).detail, 'gpushare cannot reach its engine (The personal engine stopped before it answered (exit code 1): No NVIDIA driver.).');
});

test('a window that closes its relay drops its connection: the engine sees it end, and the window is not told', { timeout: 10_000 }, async () => {
  const path = join(dir, 'ends.sock');
  let peerClosed!: () => void;
  const ended = new Promise<void>((resolve) => (peerClosed = resolve));
  const server = createServer((socket) => socket.on('close', peerClosed).resume());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const window = windowRecorder();
  const relay = openWindowRelay(() => openLineConnection(path), window.send, () => 'gone');
  relay.receive({ kind: 'subscribe', events: ['alert'] });
  await window.until(1);
  relay.close();
  await ended;
  relay.receive({ kind: 'request', id: 1, method: 'jobs.list', params: {} });
  assert.deepEqual(window.heard.map(summary), ['connection open', 'response 1 unavailable'], 'no "closed" for a window that closed it');
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('an engine that refuses the connection says why, and the window is told that reason', { timeout: 10_000 }, async () => {
  const path = join(dir, 'refuses.sock');
  const why = 'gpushare could not tell who connected (no peer credentials), so it answers nothing.';
  const server = createServer((socket) => socket.end(JSON.stringify({ kind: 'response', id: -1, ok: false, error: { code: 'forbidden', message: why } }) + '\n'));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const window = windowRecorder();
  const relay = openWindowRelay(() => openLineConnection(path), window.send, () => 'The engine closed the connection.');
  relay.receive({ kind: 'request', id: 1, method: 'session.whoami', params: {} });
  const heard = await window.until(3);
  assert.deepEqual(heard.map(summary), ['connection open', 'response 1 unavailable', 'connection closed']);
  assert.equal((heard[2] as { detail: string }).detail, why);
  relay.close();
  server.close(); // not awaited: after the server ended its side first, its close callback never came (Node 20)
});
