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
    await assert.rejects(assembleEngine(profile({ store: { path: join(dir, 'other.db'), owner: 'person' } })), {
      message: `Another gpushare engine is already running on ${join(dir, 'run', 'engine.sock')} (a second engine, such as another simulated box for \`gpushare lab\`, needs its own: XDG_RUNTIME_DIR, XDG_DATA_HOME and XDG_STATE_HOME).`,
    });
    assert.equal(existsSync(join(dir, 'other.db')), false, 'the refused start opened no store');
  } finally {
    await first.close();
  }
});

test('a second personal engine on a socket of its own but the same store or job-log folder is refused, naming the engine that uses them and what to give it; a claim left by an engine that died stops nothing', async () => {
  // a new user's second simulated box for `gpushare lab`: only XDG_RUNTIME_DIR changed, so both would write j1 and re-adopt each other's jobs
  const beside = (overrides: Partial<EngineProfile> = {}): EngineProfile =>
    profile({
      gpus: { simulate: 'a100-40gb', simulatedState: { dir: join(dir, 'run2') } },
      socket: { path: join(dir, 'run2', 'engine.sock') },
      scheduler: { stateDir: join(dir, 'state'), runtimeDir: join(dir, 'run2'), guardian: false, gate: null },
      ...overrides,
    });
  const own = '(a second engine, such as another simulated box for `gpushare lab`, needs its own: XDG_RUNTIME_DIR, XDG_DATA_HOME and XDG_STATE_HOME)';
  /** Why a start was refused; one that started is closed again (so a failing test does not hang on it). */
  const refusal = async (p: EngineProfile): Promise<string> => {
    try {
      await (await assembleEngine(p)).close();
      return 'it started';
    } catch (error) {
      return (error as Error).message;
    }
  };
  const first = await assembleEngine(profile());
  try {
    assert.equal(await refusal(beside()), `The usage store ${join(dir, 'data', 'usage.db')} is in use by the gpushare engine on ${join(dir, 'run', 'engine.sock')} ${own}.`);
    assert.equal(await refusal(beside({ store: { path: join(dir, 'data2', 'usage.db'), owner: 'person' } })), `The job logs folder ${join(dir, 'state')} is in use by the gpushare engine on ${join(dir, 'run', 'engine.sock')} ${own}.`);
    assert.equal(existsSync(join(dir, 'data2')), false, 'the refused start opened no store');
  } finally {
    await first.close();
  }
  const second = await assembleEngine(beside()); // the first is gone: its places are free
  await second.close();
  writeFileSync(join(dir, 'data', 'usage.db.engine'), JSON.stringify({ socket: join(dir, 'gone.sock'), pid: 1 }));
  const next = await assembleEngine(beside());
  await next.close();
});
