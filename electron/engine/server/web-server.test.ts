// The console on loopback for the engine in this process (`gpushare serve`, `gpushare start`):
// a WebSocket client is the engine's owner and gets every event without asking.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../engine.js';
import { noGpus } from '../store/testing/synthetic.js';
import { openConsoleClient } from './testing/console-client.js';
import { listenOnLoopback } from './web-server.js';
import { realBackend } from '../gpu/gpu-backend.js';

test('listenOnLoopback serves the engine in this process: whoami is its owner and snapshots arrive unasked', async (t) => {
  const engine = new Engine(realBackend(noGpus, () => undefined));
  const web = await listenOnLoopback(engine);
  t.after(() => web.close());
  const client = await openConsoleClient(web.url);
  const me = await client.call('session.whoami', {});
  assert.deepEqual([me.uid, me.user, me.engine.pid], [engine.owner.uid, engine.owner.user, process.pid]);
  const snapshot = client.nextEvent('snapshot');
  engine.start(); // its first tick is published at once
  const seen = await snapshot;
  engine.stop();
  assert.deepEqual(seen.gpus, []);
  client.close();
  await assert.rejects(openConsoleClient(web.url, 'not-the-token'), /HTTP 403/);
});
