// The composition root: a start refused part-way closes what it had opened (no socket answers, the
// metrics port is free), and close() undoes a whole start so the same profile starts again.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { assembleEngine, type EngineProfile } from './assemble-engine.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-assemble-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const said: string[] = [];
const profile = (overrides: Partial<EngineProfile> = {}): EngineProfile => ({
  kind: 'personal',
  gpus: { simulate: 'a100-40gb', simulatedState: { dir: join(dir, 'run') } },
  rateHz: 2,
  store: { path: join(dir, 'data', 'usage.db'), owner: 'person' },
  scheduler: { stateDir: join(dir, 'state'), runtimeDir: join(dir, 'run'), guardian: false, gate: null },
  settings: { ownerFile: join(dir, 'config.json') },
  socket: { path: join(dir, 'run', 'engine.sock') },
  web: null,
  metrics: null,
  demo: false,
  warnOtherEngines: false,
  say: (line) => said.push(line),
  ...overrides,
});

const listening = (): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });

test('a metrics port in use stops the start before the socket exists; the same profile then starts and closes cleanly', async () => {
  const taken = await listening();
  try {
    const port = (taken.address() as { port: number }).port;
    await assert.rejects(assembleEngine(profile({ metrics: { host: '127.0.0.1', port } })), /in use/);
    assert.equal(existsSync(join(dir, 'run', 'engine.sock')), false, 'no socket answers for a start that failed');
  } finally {
    taken.close();
  }
  const host = await assembleEngine(profile());
  try {
    assert.equal(host.backend.label.scenario, 'a100-40gb');
    assert.ok(host.usage?.status().recording);
    assert.equal((await host.engine.call('jobs.list', {})).length, 0);
  } finally {
    await host.close();
  }
  assert.equal(existsSync(join(dir, 'run', 'engine.sock')), false, 'close() removes the socket');
});

test('a socket that cannot be made stops the start, and the metrics endpoint opened before it is closed again', async () => {
  const free = await listening();
  const port = (free.address() as { port: number }).port;
  await new Promise((resolve) => free.close(resolve));
  writeFileSync(join(dir, 'not-a-folder'), '');
  await assert.rejects(assembleEngine(profile({ metrics: { host: '127.0.0.1', port }, socket: { path: join(dir, 'not-a-folder', 'engine.sock') } })), /EEXIST|ENOTDIR/);
  const again = createServer();
  await new Promise<void>((resolve, reject) => again.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await new Promise((resolve) => again.close(resolve)); // the port was free: the failed start's listener is gone
});

test('a start beside a running engine is refused before anything opens', async () => {
  const first = await assembleEngine(profile());
  try {
    await assert.rejects(assembleEngine(profile({ store: { path: join(dir, 'other.db'), owner: 'person' } })), /already running/);
    assert.equal(existsSync(join(dir, 'other.db')), false, 'the refused start opened no store');
  } finally {
    await first.close();
  }
});
