// A client that never reads costs the engine a bounded number of bytes, on the unix socket and on the WebSocket:
// past SLOW_CLIENT_BYTES it gets the latest snapshot rather than every one, past STUCK_CLIENT_BYTES it is
// disconnected with a logged reason. Asserted on the bytes that reach the client once it reads, never on time.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import WebSocket from 'ws';
import type { Alert } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { Engine } from '../engine.js';
import { noGpus } from '../store/testing/synthetic.js';
import { SLOW_CLIENT_BYTES, STUCK_CLIENT_BYTES } from './outbox.js';
import type { OutboxStats } from './outbox.js';
import { listenOnSocket, type SocketServer } from './socket-server.js';
import { listenOnLoopback, type WebServer } from './web-server.js';
import { realBackend } from '../gpu/gpu-backend.js';

const SNAPSHOTS = 300;
const SNAPSHOT_BYTES = 256 * 1024; // 300 of them: 75 MB, past the hard bound too
/** One line: the write that crosses a bound is measured after it is made. */
const LINE_SLACK = 1024 * 1024 + 1024;

let engine: Engine;
let dir: string;
let socketPath: string;
let socketServer: SocketServer;
let web: WebServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-backpressure-'));
  engine = new Engine(realBackend(noGpus, () => undefined));
  socketPath = join(dir, 'engine.sock');
  socketServer = await listenOnSocket(engine, socketPath);
  web = await listenOnLoopback(engine);
});
after(async () => {
  await Promise.all([socketServer.close(), web.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Snapshot number `n`, padded to SNAPSHOT_BYTES (simulated: only its size and its number matter here). */
const bigSnapshot = (n: number): Snapshot => ({ seq: n, gpus: [], processes: [], padding: 'x'.repeat(SNAPSHOT_BYTES) }) as unknown as Snapshot;
const bigAlert = (n: number): Alert => ({ id: n, kind: 'idle-memory', at: 0, gpu: null, jobId: null, message: 'y'.repeat(1024 * 1024) }) as unknown as Alert;

/** What a client read: every line's kind and number, and the bytes. */
interface Received {
  bytes: number;
  snapshots: number[];
  alerts: number[];
}

const readInto = (received: Received, line: string): void => {
  received.bytes += line.length;
  const message = JSON.parse(line) as { kind: string; event?: string; data?: { seq?: number; id?: number } };
  if (message.event === 'snapshot') received.snapshots.push(message.data!.seq!);
  if (message.event === 'alert') received.alerts.push(message.data!.id!);
};

/** A socket client subscribed to snapshot and alert that has stopped reading (it has read whoami's answer first). */
/** Until the servers have seen every earlier test's client go. */
async function noClientsLeft(): Promise<void> {
  for (let i = 0; socketServer.clients().length + web.clients().length > 0; i++) {
    if (i === 1000) throw new Error('an earlier client is still connected');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function pausedSocketClient(): Promise<{ socket: Socket; received: Received; lines: (until: (r: Received) => boolean) => Promise<'until' | 'closed'> }> {
  await noClientsLeft();
  const socket = connect(socketPath);
  const received: Received = { bytes: 0, snapshots: [], alerts: [] };
  let buffer = '';
  let waiter: (() => void) | null = null;
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      readInto(received, buffer.slice(0, newline + 1));
      buffer = buffer.slice(newline + 1);
    }
    waiter?.();
  });
  socket.on('close', () => {
    closed = true;
    waiter?.();
  });
  socket.write(JSON.stringify({ kind: 'subscribe', events: ['snapshot', 'alert'] }) + '\n' + JSON.stringify({ kind: 'request', id: 1, method: 'session.whoami', params: {} }) + '\n');
  await new Promise<void>((resolve) => (waiter = () => received.bytes > 0 && resolve()));
  socket.pause();
  received.bytes = 0;
  const lines = (until: (r: Received) => boolean): Promise<'until' | 'closed'> =>
    new Promise((resolve) => {
      waiter = () => (until(received) ? resolve('until') : closed ? resolve('closed') : undefined);
      socket.resume();
      waiter();
    });
  return { socket, received, lines };
}

/** A console WebSocket client (subscribed to every event, as the console is) that has stopped reading. */
async function pausedWebClient(): Promise<{ ws: WebSocket; received: Received; lines: (until: (r: Received) => boolean) => Promise<'until' | 'closed'> }> {
  await noClientsLeft();
  const ws = new WebSocket(`ws://127.0.0.1:${web.port}/api?token=${web.token}`, { origin: `http://127.0.0.1:${web.port}` });
  const received: Received = { bytes: 0, snapshots: [], alerts: [] };
  let waiter: (() => void) | null = null;
  let closed = false;
  ws.on('message', (data) => {
    readInto(received, data.toString());
    waiter?.();
  });
  ws.on('error', () => undefined);
  ws.on('close', () => {
    closed = true;
    waiter?.();
  });
  await new Promise((resolve) => ws.once('open', resolve));
  ws.pause();
  const lines = (until: (r: Received) => boolean): Promise<'until' | 'closed'> =>
    new Promise((resolve) => {
      waiter = () => (until(received) ? resolve('until') : closed ? resolve('closed') : undefined);
      ws.resume();
      waiter();
    });
  return { ws, received, lines };
}

/** The one client the server has now (the test's). */
function only(clients: OutboxStats[]): OutboxStats {
  assert.equal(clients.length, 1, 'one client connected');
  return clients[0];
}

function assertLatestOnly(stats: OutboxStats, received: Received, transport: string): void {
  process.stdout.write(`# ${transport}: ${SNAPSHOTS} snapshots of ${SNAPSHOT_BYTES} B to a client that did not read: at most ${stats.peakUnread} B unread in the engine, ${stats.dropped} dropped; it then read ${received.snapshots.length} (${received.bytes} B)\n`);
  assert.ok(stats.peakUnread <= SLOW_CLIENT_BYTES + SNAPSHOT_BYTES + 1024, `the engine held ${stats.peakUnread} B for it, past SLOW_CLIENT_BYTES (${SLOW_CLIENT_BYTES}) and one snapshot`);
  assert.ok(stats.dropped > 0 && !stats.disconnected, 'snapshots were dropped for the slow client, which stays connected');
  assert.equal(received.snapshots.length + stats.dropped, SNAPSHOTS, 'every snapshot was either sent or dropped');
  assert.equal(received.snapshots.at(-1), SNAPSHOTS - 1, 'the last one it gets is the latest');
  assert.deepEqual(received.snapshots, [...received.snapshots].sort((a, b) => a - b), 'in the order they were taken');
}

test('a socket client that never reads holds at most SLOW_CLIENT_BYTES in the engine and, once it reads, gets the latest snapshot', async () => {
  const client = await pausedSocketClient();
  for (let n = 0; n < SNAPSHOTS; n++) engine.events.emit('snapshot', bigSnapshot(n));
  assert.equal(await client.lines((r) => r.snapshots.at(-1) === SNAPSHOTS - 1), 'until', 'still connected');
  assertLatestOnly(only(socketServer.clients()), client.received, 'unix socket');
  client.socket.destroy();
});

test('a WebSocket client that never reads holds at most SLOW_CLIENT_BYTES in the engine and, once it reads, gets the latest snapshot', async () => {
  const client = await pausedWebClient();
  for (let n = 0; n < SNAPSHOTS; n++) engine.events.emit('snapshot', bigSnapshot(n));
  assert.equal(await client.lines((r) => r.snapshots.at(-1) === SNAPSHOTS - 1), 'until', 'still connected');
  assertLatestOnly(only(web.clients()), client.received, 'WebSocket');
  client.ws.terminate();
});

const ALERTS = Math.ceil((STUCK_CLIENT_BYTES * 1.5) / (1024 * 1024));

/** Returns the line that logged the disconnection. */
function assertDisconnected(t: TestContext, stats: OutboxStats, received: Received, everyLog: string[], transport: string): string {
  const logged = everyLog.filter((line) => line.includes(transport === 'WebSocket' ? 'console client' : 'socket client'));
  process.stdout.write(`# ${transport}: ${ALERTS} alerts of 1 MB (never dropped) to a client that did not read; it read ${received.alerts.length} before it was disconnected\n`);
  assert.ok(stats.disconnected, 'disconnected');
  assert.ok(stats.peakUnread <= STUCK_CLIENT_BYTES + LINE_SLACK, `the engine held ${stats.peakUnread} B for it, past STUCK_CLIENT_BYTES`);
  assert.ok(received.alerts.length < ALERTS, 'not every alert was kept for it');
  assert.deepEqual(received.alerts, received.alerts.map((_, i) => i), 'the ones it got, in order, none skipped');
  assert.equal(logged.length, 1, 'one logged disconnection');
  assert.match(logged[0], /disconnected.*unread/);
  t.mock.restoreAll();
  return logged[0];
}

test('a socket client that still does not read past STUCK_CLIENT_BYTES (alerts are never dropped) is disconnected, with a logged reason', async (t) => {
  const logged: string[] = [];
  t.mock.method(console, 'error', (...args: unknown[]) => logged.push(args.join(' ')));
  const client = await pausedSocketClient();
  for (let n = 0; n < ALERTS; n++) engine.events.emit('alert', bigAlert(n));
  const stats = only(socketServer.clients()); // before its close is seen
  assert.equal(await client.lines(() => false), 'closed');
  assert.match(assertDisconnected(t, stats, client.received, logged, 'unix socket'), /uid \d+/, 'the log says who');
});

test('a WebSocket client that still does not read past STUCK_CLIENT_BYTES is disconnected, with a logged reason', async (t) => {
  const logged: string[] = [];
  t.mock.method(console, 'error', (...args: unknown[]) => logged.push(args.join(' ')));
  const client = await pausedWebClient();
  for (let n = 0; n < ALERTS; n++) engine.events.emit('alert', bigAlert(n));
  const stats = only(web.clients()); // before its close is seen
  assert.equal(await client.lines(() => false), 'closed');
  assertDisconnected(t, stats, client.received, logged, 'WebSocket');
});
