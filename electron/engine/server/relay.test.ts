// The console proxy's relay: a browser client reaches an engine only through its own connection to
// the engine's unix socket, and loses its WebSocket when that connection drops.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig, type SimulatedRig } from '../testing/simulated-rig.js';
import { relayToSocket } from './relay.js';
import { listenOnSocket } from './socket-server.js';
import { openConsoleClient } from './testing/console-client.js';
import { serveConsoleOnLoopback, type WebServer } from './web-server.js';

let box: SchedulerRig;
let socketPath: string;
let engineSocket: { close(): Promise<void> } | null = null;
let web: WebServer;
let rigReady: (rig: SimulatedRig) => void;
const ready = new Promise<SimulatedRig>((resolve) => (rigReady = resolve));
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-relay-', (r) => rigReady(r));

before(async () => {
  const rig = await ready; // node 20 starts top-level before hooks together: wait for the rig's
  box = schedulerRig(rig, 'engine', {}, cleanups);
  socketPath = join(rig.dir, 'engine.sock');
  engineSocket = await listenOnSocket(box.engine, socketPath);
  web = await serveConsoleOnLoopback(relayToSocket(socketPath));
  cleanups.push(() => web.close(), () => engineSocket?.close());
});

test('a relayed client calls session.whoami and jobs.list on the engine and receives its snapshot events', async () => {
  const client = await openConsoleClient(web.url);
  const me = await client.call('session.whoami', {});
  assert.deepEqual([me.uid, me.user, me.engine.pid], [process.getuid!(), userInfo().username, process.pid]);
  assert.deepEqual(await client.call('jobs.list', {}), []);
  const snapshot = client.nextEvent('snapshot'); // subscribed before whoami answered: the relay asks first
  box.engine.start(); // its first tick is published at once
  const seen = await snapshot;
  box.engine.stop();
  assert.deepEqual([seen.driver.scenario, seen.gpus.length], ['a100-40gb', 1], 'the simulated box the engine samples');
  client.close();
});

test('one WebSocket frame is one request on the socket, whatever whitespace it carries', async () => {
  const client = await openConsoleClient(web.url);
  const response = await client.sendRaw('{"kind":"request",\n"id":7,\n"method":"jobs.list","params":{}}', 7);
  assert.deepEqual(response, { kind: 'response', id: 7, ok: true, result: [] });
  const bad = await client.sendRaw('not json', -1);
  assert.equal(bad.ok, false);
  assert.match(bad.error!.message, /must be JSON/);
  client.close();
});

test('a message nested 20,000 deep, or whose method is no string, is refused by id through the relay; the proxy and the engine stay up', async () => {
  const client = await openConsoleClient(web.url);
  const deep = `{"kind":"request","id":8,"method":"jobs.list","params":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`;
  const nested = await client.sendRaw(deep, 8);
  assert.equal(nested.ok, false);
  assert.equal(nested.error?.code, 'invalid-request');
  assert.match(nested.error!.message, /nested deeper than \d+/);
  const method = await client.sendRaw('{"kind":"request","id":9,"method":{"toString":1},"params":{}}', 9);
  assert.deepEqual([method.ok, method.error?.code], [false, 'invalid-request']);
  assert.match(method.error!.message, /method/);
  assert.deepEqual(await client.call('jobs.list', {}), []);
  client.close();
});

test('a wrong or missing token is refused before anything reaches the engine', async () => {
  const good = new URL(web.url).searchParams.get('token')!;
  await assert.rejects(openConsoleClient(web.url, good.slice(0, -1) + (good.endsWith('0') ? '1' : '0')), /HTTP 403/);
  await assert.rejects(openConsoleClient(web.url, ''), /HTTP 403/);
});

// timeout: a close that never comes fails the test instead of hanging the run
test('when the engine goes away a relayed client’s WebSocket is closed; the proxy keeps serving and reconnects per new client', { timeout: 30_000 }, async () => {
  const before = await openConsoleClient(web.url);
  await before.call('session.whoami', {});
  await engineSocket!.close();
  engineSocket = null;
  const dropped = await before.closed;
  assert.equal(dropped.code, 1011);
  assert.match(dropped.reason, /closed the connection|went away/);

  const whileDown = await openConsoleClient(web.url); // the upgrade is the proxy's; the engine's side fails at once
  const refused = await whileDown.closed;
  assert.equal(refused.code, 1011);
  assert.match(refused.reason, /went away \((ENOENT|ECONNREFUSED)/);

  engineSocket = await listenOnSocket(box.engine, socketPath);
  const after = await openConsoleClient(web.url);
  assert.equal((await after.call('session.whoami', {})).uid, process.getuid!());
  after.close();
});
