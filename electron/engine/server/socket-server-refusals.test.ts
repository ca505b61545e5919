// What the engine's unix socket refuses, each with a response that says why, and the engine serving on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Engine } from '../engine.js';
import { noGpus } from '../store/testing/synthetic.js';
import { MAX_REQUEST_BYTES, MAX_REQUEST_DEPTH } from './session.js';
import { listenOnSocket, type SocketServer } from './socket-server.js';
import { socketProbe } from './testing/wire-probe.js';
import { realBackend } from '../gpu/gpu-backend.js';

let dir: string;
let server: SocketServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-socket-refusals-'));
  server = await listenOnSocket(new Engine(realBackend(noGpus, () => undefined)), join(dir, 'engine.sock'));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a line over MAX_REQUEST_BYTES is answered with why, then the connection is closed; a new one is served', async () => {
  const probe = socketProbe(server.path);
  const { replies, closed } = await probe.exchange('x'.repeat(MAX_REQUEST_BYTES + 100 * 1024));
  assert.ok(closed, 'the engine closed the connection');
  assert.equal(replies.length, 1);
  assert.equal(replies[0].error?.code, 'invalid-request');
  assert.match(String(replies[0].error?.message), new RegExp(`over ${MAX_REQUEST_BYTES} bytes`));
  const next = await probe.exchange('{"kind":"request","id":3,"method":"session.whoami","params":{}}');
  assert.deepEqual([next.closed, next.replies.map((r) => [r.id, r.ok])], [null, [[3, true]]]);
  probe.close();
});

test('a line that is not JSON, or nests past MAX_REQUEST_DEPTH, is refused and the connection stays', async () => {
  const probe = socketProbe(server.path);
  const garbage = await probe.exchange('{"kind":"request",');
  assert.deepEqual([garbage.closed, garbage.replies.map((r) => [r.id, r.error?.code])], [null, [[-1, 'invalid-request']]]);
  const deep = await probe.exchange(`{"kind":"request","id":4,"method":"session.whoami","params":${'['.repeat(MAX_REQUEST_DEPTH + 1)}${']'.repeat(MAX_REQUEST_DEPTH + 1)}}`);
  assert.deepEqual([deep.closed, deep.replies.map((r) => [r.id, r.error?.code])], [null, [[4, 'invalid-request']]]);
  assert.match(String(deep.replies[0].error?.message), /nested deeper/);
  probe.close();
});
