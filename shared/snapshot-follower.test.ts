// A client that takes snapshot deltas (createMessageClient with snapshotDeltas): its snapshot listeners hear each
// whole snapshot; a delta from another snapshot than the one it holds is refused and it asks for snapshot.latest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMessageClient } from './api-client.js';
import type { RequestMessage, SubscribeMessage } from './api.js';
import type { Snapshot } from './snapshot.js';
import { snapshotDelta } from './snapshot-delta.js';
import { simulatedRun } from './testing/snapshot-run.js';

function deltaClient() {
  const sent: Array<RequestMessage | SubscribeMessage> = [];
  const client = createMessageClient((m) => sent.push(m), { snapshotDeltas: true });
  const heard: Snapshot[] = [];
  client.api.on('snapshot', (s) => heard.push(s));
  const deltasHeard: unknown[] = [];
  client.api.on('snapshot.delta', (d) => deltasHeard.push(d));
  const event = (event: 'snapshot' | 'snapshot.delta', data: unknown) => client.receive(JSON.parse(JSON.stringify({ kind: 'event', event, data })));
  return { client, sent, heard, deltasHeard, event };
}

test('snapshot listeners hear each whole snapshot rebuilt from the deltas, and never a delta', () => {
  const run = simulatedRun(3, 30);
  const { heard, deltasHeard, sent, event } = deltaClient();
  event('snapshot', run[0]);
  for (let i = 1; i < run.length; i++) event('snapshot.delta', snapshotDelta(run[i - 1], run[i]));
  assert.deepEqual(heard, run);
  assert.deepEqual(deltasHeard, []);
  assert.deepEqual(sent, [], 'nothing asked: every delta fitted');
});

test('a delta whose base is not the snapshot held is refused; the client asks for snapshot.latest once and goes on from it', async () => {
  const run = simulatedRun(4, 6);
  const { client, heard, sent, event } = deltaClient();
  event('snapshot', run[0]);
  event('snapshot.delta', snapshotDelta(run[1], run[2])); // the one from run[0] to run[1] was lost
  event('snapshot.delta', snapshotDelta(run[2], run[3])); // asked already: not asked twice
  assert.deepEqual(heard.map((s) => s.seq), [1], 'no snapshot made of a delta that does not fit');
  assert.deepEqual(sent, [{ kind: 'request', id: 1, method: 'snapshot.latest', params: {} }]);
  client.receive({ kind: 'response', id: 1, ok: true, result: run[3] });
  await new Promise((resolve) => setImmediate(resolve));
  event('snapshot.delta', snapshotDelta(run[2], run[3])); // older than what it holds now: dropped, nothing asked
  event('snapshot.delta', snapshotDelta(run[3], run[4]));
  assert.deepEqual(heard, [run[0], run[3], run[4]]);
  assert.equal(sent.length, 1);
});

test('after the connection is lost, a delta is not applied to the snapshot of the connection before', () => {
  const run = simulatedRun(5, 3);
  const { client, heard, sent, event } = deltaClient();
  event('snapshot', run[0]);
  client.failPending('lost');
  event('snapshot.delta', snapshotDelta(run[0], run[1]));
  assert.deepEqual(heard, [run[0]]);
  assert.deepEqual(sent.map((m) => (m as RequestMessage).method), ['snapshot.latest']);
});
