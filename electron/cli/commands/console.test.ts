// `gpushare console`: the per-user proxy to the box daemon. It says so when nothing answers, relays
// the console to a real engine on a temporary socket, and the engine knows its clients by the
// kernel's word: a proxy run as uid 65534 is uid 65534 to the engine, whatever it could claim.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { listenOnSocket } from '../../engine/server/socket-server.js';
import { openConsoleClient } from '../../engine/server/testing/console-client.js';
import { packageRoot } from '../../engine/paths.js';
import { schedulerRig, type SchedulerRig } from '../../engine/testing/scheduler-rig.js';
import { useSimulatedRig, type SimulatedRig } from '../../engine/testing/simulated-rig.js';
import { CLI_ENV, CLI_PATH, COMPILED_TREE } from '../testing/compiled-cli.js';

const isRoot = process.getuid?.() === 0;
// Under /tmp, not TMPDIR (which may be private): uid 65534 must reach the socket and the copied tree.
const shared = mkdtempSync('/tmp/gpushare-console-');
chmodSync(shared, 0o755);
const socketPath = join(shared, 'run', 'engine.sock');
let box: SchedulerRig;
let rigReady: (rig: SimulatedRig) => void;
const ready = new Promise<SimulatedRig>((resolve) => (rigReady = resolve));
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-console-rig-', (r) => rigReady(r));
cleanups.push(() => rmSync(shared, { recursive: true, force: true }));

before(async () => {
  const rig = await ready; // node 20 starts top-level before hooks together: wait for the rig's
  box = schedulerRig(rig, 'engine', {}, cleanups);
  execFileSync('install', ['-d', '-m', '0755', join(shared, 'run')]);
  const socket = await listenOnSocket(box.engine, socketPath);
  chmodSync(socketPath, 0o666); // a box daemon's socket: every local user may connect
  cleanups.push(() => socket.close());
});

/** Runs `gpushare console` (argv: the command and its arguments); resolves once it printed its URL, or when it exits. */
function runConsole(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const child: ChildProcess = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...CLI_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = new Promise<{ url: string; stdout: string } | { code: number | null; stderr: string }>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const url = /gpushare console: (\S+)\nengine: .*\n/.exec(stdout);
      if (url) resolve({ url: url[1], stdout });
    });
    void exited.then((code) => resolve({ code, stderr }));
  });
  return { child, started, exited };
}

const cli = (args: string[]) => [process.execPath, CLI_PATH, 'console', ...args];

test('with nothing answering on the socket, gpushare console says so in one sentence and exits 1', async () => {
  const missing = join(shared, 'nothing-here.sock');
  const byFlag = await runConsole(cli(['--socket', missing, '--no-open'])).started;
  assert.ok('code' in byFlag, 'it did not start serving');
  assert.equal(byFlag.code, 1);
  assert.equal(
    byFlag.stderr,
    `No box daemon answers on ${missing} (ENOENT): use \`gpushare start\` for a personal engine, or ask an admin to install the daemon (\`gpushare daemon install\`).\n`,
  );
  const byEnv = await runConsole(cli(['--no-open']), { GPUSHARE_SOCKET: missing }).started;
  assert.ok('code' in byEnv && byEnv.code === 1 && byEnv.stderr.includes(`on ${missing} (ENOENT)`), 'GPUSHARE_SOCKET is the default socket');
});

test('gpushare console relays the browser console to the engine on the socket, as the user who runs it', async () => {
  const run = runConsole(cli(['--socket', socketPath, '--no-open', '--port', '0']));
  const started = await run.started;
  assert.ok('url' in started, `it serves the console: ${JSON.stringify(started)}`);
  assert.match(started.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{48}$/);
  assert.ok(started.stdout.includes(`personal engine on ${socketPath} · signed in as ${userInfo().username} (uid ${process.getuid!()})\n`), started.stdout);
  const client = await openConsoleClient(started.url);
  const me = await client.call('session.whoami', {});
  assert.deepEqual([me.uid, me.engine.pid], [process.getuid!(), process.pid], 'the engine in this test answers, as this user');
  assert.deepEqual(await client.call('jobs.list', {}), []);
  client.close();
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 0, 'SIGTERM stops the proxy cleanly');
});

test('a proxy run as uid 65534 is uid 65534 to the engine (whoami over the relay)', async (t) => {
  if (!isRoot) return t.skip('needs root: runs the proxy as uid 65534 with setpriv');
  // The checkout may sit where uid 65534 cannot read (/root): the compiled tree and ws, copied.
  const tree = join(shared, 'tree');
  for (const part of ['electron', 'shared']) cpSync(join(COMPILED_TREE, part), join(tree, part), { recursive: true });
  cpSync(join(packageRoot(), 'node_modules', 'ws'), join(tree, 'node_modules', 'ws'), { recursive: true });
  writeFileSync(join(tree, 'package.json'), JSON.stringify({ name: 'gpushare', type: 'module' }));
  execFileSync('chmod', ['-R', 'u=rwX,go=rX', tree]);
  const entry = 'const { consoleCommand } = await import(process.argv[1]); process.exitCode = await consoleCommand(process.argv.slice(2));';
  const run = runConsole([
    'setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups',
    process.execPath, '--input-type=module', '-e', entry, join(tree, 'electron', 'cli', 'commands', 'console.js'), '--socket', socketPath, '--no-open',
  ]);
  const started = await run.started;
  assert.ok('url' in started, `the proxy serves the console as uid 65534: ${JSON.stringify(started)}`);
  assert.match(started.stdout, /signed in as \S+ \(uid 65534\)/);
  const client = await openConsoleClient(started.url);
  const me = await client.call('session.whoami', {});
  assert.equal(me.uid, 65534, 'the engine knows the relayed client as the proxy’s user, from the kernel');
  assert.equal(me.admin, false);
  client.close();
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 0);
});
