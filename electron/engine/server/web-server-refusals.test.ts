// What the console's HTTP server and WebSocket refuse, and that refusing never takes the engine down:
// a path that is not percent-encoding, a frame that is not UTF-8, a message past the bound, a page of another origin.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { Engine } from '../engine.js';
import { noGpus } from '../store/testing/synthetic.js';
import { MAX_REQUEST_BYTES } from './session.js';
import { openConsoleClient } from './testing/console-client.js';
import { rawHttp } from './testing/raw-http.js';
import { listenOnLoopback, type WebServer } from './web-server.js';
import { realBackend } from '../gpu/gpu-backend.js';

let engine: Engine;
let web: WebServer;

before(async () => {
  engine = new Engine(realBackend(noGpus, () => undefined));
  web = await listenOnLoopback(engine);
});
after(() => web.close());

/** The console still answers a new client: whoami, as its owner. */
async function stillServes(): Promise<void> {
  const client = await openConsoleClient(web.url);
  assert.equal((await client.call('session.whoami', {})).uid, engine.owner.uid);
  client.close();
}

/** A WebSocket on /api with the right token and the console's own origin, open. */
async function openRaw(): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${web.port}/api?token=${web.token}`, { origin: `http://127.0.0.1:${web.port}` });
  ws.on('error', () => undefined); // the server may cut the connection while this side still writes
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { ws, closed };
}

test('a path that is not valid percent-encoding (GET /%E0%A4%A, no token) is answered 400 naming the path, and the console still serves', async () => {
  const host = `Host: 127.0.0.1:${web.port}`;
  for (const path of ['/%E0%A4%A', '/%ZZ', '/assets/%C0']) {
    const reply = await rawHttp(web.port, `GET ${path} HTTP/1.1\r\n${host}`);
    assert.equal(reply.status, 400, `GET ${path}`);
    assert.ok(reply.body.includes(path), `the refusal names ${path}: ${reply.body}`);
  }
  await stillServes();
});

test('a request target that is no URL is refused, on the page and on the WebSocket upgrade, and the console still serves', async () => {
  const host = `Host: 127.0.0.1:${web.port}`;
  const page = await rawHttp(web.port, `GET http://[ HTTP/1.1\r\n${host}`);
  assert.equal(page.status, 400);
  const upgrade = await rawHttp(web.port, `GET http://[/api HTTP/1.1\r\n${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==`);
  assert.equal(upgrade.status, 400);
  await stillServes();
});

test('a WebSocket text frame that is not UTF-8 closes that client with 1007 and a reason; the console still serves', async () => {
  const { ws, closed } = await openRaw();
  ws.send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { binary: false });
  const { code, reason } = await closed;
  assert.equal(code, 1007);
  assert.match(reason, /UTF-8/);
  await stillServes();
});

test('a WebSocket message past the request bound (10 MB) closes that client with 1009; the console still serves', async () => {
  const { ws, closed } = await openRaw();
  ws.send('x'.repeat(10 * 1024 * 1024));
  assert.equal((await closed).code, 1009);
  await stillServes();
});

test('a WebSocket message at the request bound is read as a request (a well-formed error for its params), not refused as too big', async () => {
  const client = await openConsoleClient(web.url);
  const request = JSON.stringify({ kind: 'request', id: 7, method: 'session.whoami', params: { padding: '' } });
  const text = request.replace('"padding":""', `"padding":"${'p'.repeat(MAX_REQUEST_BYTES - request.length)}"`);
  assert.equal(Buffer.byteLength(text), MAX_REQUEST_BYTES);
  const reply = await client.sendRaw(text, 7);
  assert.equal(reply.ok, false);
  assert.equal(reply.error?.code, 'invalid-request');
  client.close();
});

test('the WebSocket refuses a page of another origin (http://evil.example) with the right token, and a client that sends no Origin, naming why', async () => {
  await assert.rejects(openConsoleClient(web.url, web.token, 'http://evil.example'), /HTTP 403 .*http:\/\/evil\.example/);
  await assert.rejects(openConsoleClient(web.url, web.token, `http://127.0.0.1:${web.port + 1}`), /HTTP 403 .*127\.0\.0\.1/);
  await assert.rejects(openConsoleClient(web.url, web.token, null), /HTTP 403 .*no Origin/);
  await stillServes(); // its own origin, http://127.0.0.1:PORT
});
