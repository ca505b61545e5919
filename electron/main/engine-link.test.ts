// The desktop app's engine, in its own process: found when one answers, else started, waited for,
// watched and stopped. Run with plain node as the runtime where Electron would run itself as Node.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { until } from '../testing/until.js';
import { fileURLToPath } from 'node:url';
import { createMessageClient } from '../../shared/api-client.js';
import type { ApiResults } from '../../shared/api.js';
import { socketAnswers } from '../cli/engine-client.js';
import { packageRoot } from '../engine/paths.js';
import { personalEngineCommand } from './app-args.js';
import { openEngineLink } from './engine-link.js';
import type { LineConnection } from './line-connection.js';

/** This file is <tree>/electron/main/engine-link.test.js: the engine runs from the same compiled tree. */
const COMPILED_TREE = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'gpushare-link-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;

/** A fresh runtime directory, and the personal engine as the app would start it there, on simulated GPUs. */
function box() {
  const home = join(dir, `box-${++seq}`);
  for (const sub of ['run', 'state', 'data']) mkdirSync(join(home, sub), { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: join(home, 'run'), XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') };
  delete env.GPUSHARE_SOCKET;
  const start = personalEngineCommand({ simulate: 'a100-40gb', noDemo: true }, { execPath: process.execPath, root: packageRoot(), compiledTree: COMPILED_TREE, env });
  return { home, env, start, personalSocket: join(home, 'run', 'gpushare', 'engine.sock'), daemonSocket: join(home, 'daemon.sock') };
}

function apiOver(connection: LineConnection) {
  const client = createMessageClient((message) => connection.send(message));
  connection.onMessage((message) => client.receive(message));
  return client.api;
}
const whoami = (connection: LineConnection): Promise<ApiResults['session.whoami']> => apiOver(connection).call('session.whoami', {});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A node one-liner as the "engine" command, for starts that go wrong. */
const nodeScript = (code: string) => ({ command: process.execPath, args: ['-e', code], env: process.env });

test('an engine that answers is used as it is: nothing is started, and quitting leaves it running', { timeout: 20_000 }, async () => {
  const b = box();
  const daemon = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => daemon.listen(b.daemonSocket, resolve));
  const marker = join(b.home, 'started');
  const link = await openEngineLink({
    sockets: [b.daemonSocket, b.personalSocket],
    personalSocket: b.personalSocket,
    start: nodeScript(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`),
  });
  assert.deepEqual([link.socketPath, link.started, link.pid], [b.daemonSocket, false, null]);
  assert.equal(await link.stop(), null, 'not ours to stop');
  assert.equal(existsSync(marker), false, 'no engine was started');
  assert.equal(await socketAnswers(b.daemonSocket), true);
  await new Promise<void>((resolve) => daemon.close(() => resolve()));
});

test('no engine answers: a personal engine starts in its own process, answers as this user\'s, and stops cleanly when asked', { timeout: 60_000 }, async () => {
  const b = box();
  const said: string[] = [];
  const link = await openEngineLink({ sockets: [b.daemonSocket, b.personalSocket], personalSocket: b.personalSocket, start: b.start, say: (line) => said.push(line) });
  let lost: string | null = null;
  link.onLost((why) => (lost = why));
  try {
    assert.equal(link.started, true);
    assert.equal(link.socketPath, b.personalSocket);
    assert.ok(link.pid && link.pid !== process.pid && alive(link.pid), 'a child process');
    const me = await whoami(await link.connect());
    assert.equal(me.engine.kind, 'personal');
    assert.equal(me.engine.pid, link.pid, 'the engine that answers is the child, not this process');
    assert.equal(me.uid, process.getuid!());
    // a job from the console (no environment of its own) gets the engine's, without the app's run-as-Node switch
    const envFile = join(b.home, 'job.env');
    const api = apiOver(await link.connect());
    await api.call('jobs.submit', { argv: ['/bin/sh', '-c', `env > ${envFile}.part && mv ${envFile}.part ${envFile}`], gpu: 0 });
    await until('the job\'s environment written', () => existsSync(envFile), { timeoutMs: 10_000, intervalMs: 50 });
    const jobEnv = readFileSync(envFile, 'utf8');
    assert.match(jobEnv, /^XDG_RUNTIME_DIR=/m, 'the engine\'s environment');
    assert.doesNotMatch(jobEnv, /^ELECTRON_RUN_AS_NODE=/m);
  } finally {
    const exit = await link.stop();
    assert.deepEqual(exit, { code: 0, signal: null, clean: true }, `a clean stop; it said: ${said.join(' | ')}`);
  }
  assert.equal(alive(link.pid!), false);
  assert.equal(await socketAnswers(b.personalSocket), false, 'its socket is gone with it');
  assert.equal(lost, null, 'a stop that was asked for is not a loss');
  assert.deepEqual(await link.stop(), { code: 0, signal: null, clean: true }, 'asking again tells the same');
});

test('a started engine that dies: the app hears it once, with why, and its connections end', { timeout: 60_000 }, async () => {
  const b = box();
  const link = await openEngineLink({ sockets: [b.personalSocket], personalSocket: b.personalSocket, start: b.start });
  const connection = await link.connect();
  const closed = new Promise<void>((resolve) => connection.onClose(resolve));
  const lost = new Promise<string>((resolve) => link.onLost(resolve));
  process.kill(link.pid!, 'SIGKILL');
  const why = await lost;
  await closed;
  assert.match(why, /^The personal engine stopped \(killed by SIGKILL\)/);
  assert.match(why, /Quit and reopen gpushare to start it again\.$/);
  assert.equal(link.lostReason(), why);
  assert.deepEqual(await link.stop(), { code: null, signal: 'SIGKILL', clean: false });
});

test('an engine that exits before it answers: the start fails with its exit status and its last words', { timeout: 20_000 }, async () => {
  const b = box();
  await assert.rejects(
    openEngineLink({ sockets: [b.personalSocket], personalSocket: b.personalSocket, start: nodeScript(`console.error('Cannot open the usage store: disk full'); process.exit(3)`) }),
    { message: 'The personal engine stopped before it answered (exit code 3): Cannot open the usage store: disk full.' },
  );
});

test('an engine that never answers: the wait is bounded, and the process is stopped', { timeout: 20_000 }, async () => {
  const b = box();
  const pidFile = join(b.home, 'pid');
  await assert.rejects(
    openEngineLink({
      sockets: [b.personalSocket],
      personalSocket: b.personalSocket,
      start: nodeScript(`require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`),
      readyTimeoutMs: 1000,
    }),
    { message: `The personal engine did not answer on ${b.personalSocket} within 1 s.` },
  );
  assert.equal(alive(Number(readFileSync(pidFile, 'utf8'))), false, 'not left running');
});

test('the app killed outright: its engine, in a session of its own, sees its standard input end and stops cleanly by itself', { timeout: 60_000 }, async () => {
  const b = box();
  // the engine's output to a file, so nothing but its standard input tells it the app is gone; then its exit status
  const log = join(b.home, 'engine.log');
  const start = { ...b.start, command: '/bin/sh', args: ['-c', '"$0" "$@" >>"$ENGINE_LOG" 2>&1; echo "exit status $?" >>"$ENGINE_LOG"', b.start.command, ...b.start.args], env: { ...b.start.env, ENGINE_LOG: log } };
  // a stand-in for the app's main process: opens the link, says the engine's pid, then waits to be killed
  const app = spawn(process.execPath, ['--input-type=module', '-e', `
    const { openEngineLink } = await import(${JSON.stringify(join(COMPILED_TREE, 'electron', 'main', 'engine-link.js'))});
    const link = await openEngineLink(JSON.parse(process.argv[1]));
    process.stdout.write(link.pid + '\\n');
    setInterval(() => {}, 1000);
  `, JSON.stringify({ sockets: [b.personalSocket], personalSocket: b.personalSocket, start })], { stdio: ['ignore', 'pipe', 'inherit'] });
  const enginePid = await new Promise<number>((resolve, reject) => {
    app.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    app.once('exit', (code) => reject(new Error(`the stand-in app exited (${code}) before its engine answered`)));
  });
  try {
    assert.equal(await socketAnswers(b.personalSocket), true);
    app.kill('SIGKILL');
    await until('the engine to end with its app', () => !alive(enginePid), { timeoutMs: 15_000, intervalMs: 50, detail: () => `it wrote: ${readFileSync(log, 'utf8')}` });
    assert.match(readFileSync(log, 'utf8'), /\nexit status 0\n$/, 'a clean stop');
    assert.equal(await socketAnswers(b.personalSocket), false);
  } finally {
    if (alive(enginePid)) process.kill(enginePid, 'SIGKILL');
    app.kill('SIGKILL');
  }
});
