// The CLI's engine client takes snapshots as deltas (cheap for the engine to send each tick to every
// `ps --watch`) and its listeners hear each one whole; a delta from another base makes it ask for the latest.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Snapshot } from '../../shared/snapshot.js';
import { snapshotDelta } from '../../shared/snapshot-delta.js';
import { simulatedRun } from '../../shared/testing/snapshot-run.js';
import { until } from '../testing/until.js';
import { connectToEngine } from './engine-client.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-engine-client-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the CLI subscribes to snapshots with snapshotDeltas and its listeners hear every snapshot whole, asking for the latest when a delta misses its base', async () => {
  const run = simulatedRun(31, 40);
  const subscriptions: unknown[] = [];
  const asked: string[] = [];
  let engineSide: Socket | null = null;
  const server = createServer((socket) => {
    engineSide = socket;
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      buffer += d;
      let k;
      while ((k = buffer.indexOf('\n')) >= 0) {
        const m = JSON.parse(buffer.slice(0, k)) as { kind: string; id: number; method: string };
        buffer = buffer.slice(k + 1);
        if (m.kind === 'subscribe') subscriptions.push(m);
        if (m.kind === 'request') {
          asked.push(m.method);
          socket.write(JSON.stringify({ kind: 'response', id: m.id, ok: true, result: run.at(-1) }) + '\n');
        }
      }
    });
  });
  const path = join(dir, 'engine.sock');
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const engine = await connectToEngine(path);
  const heard: Snapshot[] = [];
  engine.on('snapshot', (s) => heard.push(s));
  await until('the subscription', () => subscriptions.length === 1);
  assert.deepEqual(subscriptions[0], { kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true });

  const event = (event: string, data: unknown): string => JSON.stringify({ kind: 'event', event, data }) + '\n';
  engineSide!.write(event('snapshot', run[0]));
  for (let i = 1; i < run.length - 1; i++) engineSide!.write(event('snapshot.delta', snapshotDelta(run[i - 1], run[i])));
  await until('every snapshot but the last', () => heard.length === run.length - 1);
  assert.deepEqual(heard, JSON.parse(JSON.stringify(run.slice(0, -1))));
  assert.deepEqual(asked, [], 'no delta missed its base');

  // one from a snapshot it never had: it asks for the latest and hears that whole
  engineSide!.write(event('snapshot.delta', { ...snapshotDelta(run[0], run[1])!, baseSeq: 999, seq: 1000 }));
  await until('the latest, asked for', () => heard.length === run.length);
  assert.deepEqual(asked, ['snapshot.latest']);
  assert.deepEqual(heard.at(-1), JSON.parse(JSON.stringify(run.at(-1))));
  engine.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
