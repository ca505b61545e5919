// Snapshot deltas on the engine's socket: a client that subscribes with snapshotDeltas gets one whole snapshot and
// then deltas, the same bytes as every other delta client; a client that does not gets every snapshot whole.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Snapshot } from '../../../shared/snapshot.js';
import { applySnapshotDelta, type SnapshotDelta } from '../../../shared/snapshot-delta.js';
import { simulatedRun } from '../../../shared/testing/snapshot-run.js';
import { Engine } from '../engine.js';
import { realBackend } from '../gpu/gpu-backend.js';
import { streamClient } from '../lab/box-client.js';
import { noGpus } from '../store/testing/synthetic.js';
import { openSession, wireLine, type Outgoing } from './session.js';
import { listenOnSocket, type SocketServer } from './socket-server.js';

let engine: Engine;
let dir: string;
let server: SocketServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-deltas-'));
  engine = new Engine(realBackend(noGpus, () => undefined));
  server = await listenOnSocket(engine, join(dir, 'engine.sock'));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A socket client's event lines, raw, as they arrive. */
async function subscriber(subscribe: object): Promise<{ socket: Socket; lines: string[]; until: (n: number) => Promise<void> }> {
  const socket = connect(server.path);
  const lines: string[] = [];
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let k; (k = buffer.indexOf('\n')) >= 0; buffer = buffer.slice(k + 1)) lines.push(buffer.slice(0, k));
  });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(JSON.stringify(subscribe) + '\n' + JSON.stringify({ kind: 'request', id: 1, method: 'session.whoami', params: {} }) + '\n');
  const until = async (n: number): Promise<void> => {
    while (lines.length < n) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  await until(1); // answered: the subscription took first
  assert.match(lines[0], /"id":1,"ok":true/);
  lines.length = 0;
  return { socket, lines, until };
}

test('delta clients get one whole snapshot, then deltas that rebuild every snapshot, the same bytes for each; others get them whole', { timeout: 30_000 }, async () => {
  const run = simulatedRun(21, 40);
  const deltaA = await subscriber({ kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true });
  const deltaB = await subscriber({ kind: 'subscribe', events: ['snapshot', 'snapshot.delta'], snapshotDeltas: true });
  const whole = await subscriber({ kind: 'subscribe', events: ['snapshot', 'snapshot.delta'] });
  for (const snapshot of run) engine.events.emit('snapshot', snapshot);
  await Promise.all([deltaA, deltaB, whole].map((c) => c.until(run.length)));
  const events = (lines: string[]) => lines.map((l) => JSON.parse(l) as { event: string; data: unknown });
  assert.deepEqual(events(whole.lines), run.map((s) => ({ kind: 'event', event: 'snapshot', data: JSON.parse(JSON.stringify(s)) })));
  const [first, ...rest] = events(deltaA.lines);
  assert.equal(first.event, 'snapshot');
  assert.deepEqual(rest.map((e) => e.event), run.slice(1).map(() => 'snapshot.delta'));
  let held = first.data as Snapshot;
  for (const [i, e] of rest.entries()) {
    held = applySnapshotDelta(held, e.data as SnapshotDelta);
    assert.deepEqual(held, JSON.parse(JSON.stringify(run[i + 1])), `snapshot ${run[i + 1].seq}`);
  }
  assert.deepEqual(deltaB.lines, deltaA.lines, 'both delta clients read the same bytes');
  const deltaBytes = deltaA.lines.slice(1).reduce((n, l) => n + l.length, 0);
  const wholeBytes = whole.lines.slice(1).reduce((n, l) => n + l.length, 0);
  assert.ok(deltaBytes < wholeBytes, `deltas (${deltaBytes} bytes) are smaller than the snapshots (${wholeBytes})`);
  for (const c of [deltaA, deltaB, whole]) c.socket.destroy();
});

test('a tick\'s delta is made and encoded once for every session that takes deltas', () => {
  const [a, b] = simulatedRun(22, 2);
  const sent: Outgoing[][] = [[], []];
  const sessions = sent.map((into) => openSession(engine, { ...engine.owner, via: 'web' }, (m) => into.push(m)));
  for (const s of sessions) s.receive({ kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true });
  engine.events.emit('snapshot', a);
  engine.events.emit('snapshot', b);
  for (const s of sessions) s.close();
  assert.deepEqual(sent.map((m) => m.map((e) => (e.kind === 'event' ? e.event : e.kind))), [['snapshot', 'snapshot.delta'], ['snapshot', 'snapshot.delta']]);
  assert.equal((sent[0][1] as { data: unknown }).data, (sent[1][1] as { data: unknown }).data, 'one delta object');
  assert.equal(wireLine(sent[0][1]), wireLine(sent[1][1]), 'one Buffer of its bytes');
});

test('the deltas made keep no snapshot alive past the one each session was last sent', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const sent: Outgoing[] = [];
  const session = openSession(engine, { ...engine.owner, via: 'web' }, (m) => sent.push(m));
  session.receive({ kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true });
  let first: WeakRef<object> | null = null;
  for (const snapshot of simulatedRun(23, 5)) {
    first ??= new WeakRef(snapshot);
    engine.events.emit('snapshot', snapshot);
  }
  sent.length = 0; // the whole first snapshot went out in a message: let it go
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  assert.equal(first!.deref(), undefined, 'the first snapshot was collected while the session is open');
  session.close();
});

test('the lab hub\'s box client takes deltas from a daemon and its snapshot listeners hear every snapshot whole', { timeout: 30_000 }, async () => {
  const run = simulatedRun(24, 20);
  const socket = connect(server.path);
  await new Promise((resolve) => socket.once('connect', resolve));
  let wire = '';
  socket.on('data', (chunk: Buffer) => (wire += chunk.toString('latin1')));
  const box = streamClient(socket, socket, () => undefined, () => socket.destroy());
  const heard: Snapshot[] = [];
  box.on('snapshot', (s) => heard.push(s));
  await box.call('session.whoami', {}); // the subscription took
  for (const snapshot of run) engine.events.emit('snapshot', snapshot);
  while (heard.length < run.length) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(heard, JSON.parse(JSON.stringify(run)));
  const events = wire.split('\n').filter(Boolean).map((line) => /^\{"kind":"event","event":"([a-z.]+)"/.exec(line)?.[1] ?? 'not an event');
  assert.deepEqual(events.filter((e) => e !== 'not an event'), ['snapshot', ...run.slice(1).map(() => 'snapshot.delta')], 'one whole snapshot, then deltas on the wire');
  box.close();
});
