// `gpushare status` and the engine finder behind every CLI command: $GPUSHARE_SOCKET alone when set,
// else the box daemon when it answers, else your personal engine; and what it says when none does.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { until } from '../../testing/until.js';
import { startEngineLookalike } from '../../engine/testing/engine-lookalike.js';
import { cliRig, type ServedEngine } from '../testing/cli-rig.js';
import { daemonWhoami, listenAsFakeEngine } from '../testing/fake-engine.js';
import type { StatusReport } from './status.js';

const rig = cliRig('status');
const me = userInfo();
let engine: ServedEngine;

before(async () => {
  engine = await rig.serve();
});
after(async () => {
  engine.child.kill('SIGTERM');
  await engine.exited;
  rig.dispose();
});

const lines = (text: string): string[] => text.trimEnd().split('\n');

test('status names your personal engine, its pid and socket, who you are and its console URL; exit 0', async () => {
  const { code, stdout, stderr } = await rig.gpushare(['status']);
  assert.equal(code, 0, stderr);
  const [engineLine, socketLine, youLine, consoleLine] = lines(stdout);
  assert.equal(engineLine, `engine:   your personal engine, pid ${engine.child.pid}: only your own processes can be scheduled`);
  assert.equal(socketLine, `socket:   ${rig.personalSocket}`);
  assert.equal(youLine, `you:      ${me.username} (uid ${me.uid}), ${me.uid === 0 ? "an admin: you may act on anyone's jobs and change the box" : 'not an admin'}`);
  assert.equal(consoleLine, `console:  ${engine.url}`);
});

test('status --json says the same as data', async () => {
  const { code, stdout } = await rig.gpushare(['status', '--json']);
  assert.equal(code, 0);
  const report = JSON.parse(stdout) as StatusReport;
  assert.deepEqual(report.engine, { kind: 'personal', owner: me.username, pid: engine.child.pid, socket: rig.personalSocket, foundBy: 'personal' });
  assert.deepEqual(report.you, { user: me.username, uid: me.uid, admin: me.uid === 0 });
  assert.equal(report.consoleUrl, engine.url);
  assert.ok(Array.isArray(report.otherEngines));
  assert.equal(report.problem, null);
});

test('the box daemon, when it answers, comes before your personal engine: for status and for every command', async (t) => {
  const daemon = await listenAsFakeEngine(rig.daemonSocket, daemonWhoami(me.username, me.uid));
  t.after(() => daemon.close());
  const { code, stdout } = await rig.gpushare(['status']);
  assert.equal(code, 0);
  assert.deepEqual(lines(stdout).slice(0, 2), ['engine:   the box daemon, pid 4242 (runs as root): one scheduler for every user of this box', `socket:   ${rig.daemonSocket}`]);
  assert.match(stdout, /^console:  `gpushare console` opens it, through a proxy of your own$/m);
  const json = JSON.parse((await rig.gpushare(['status', '--json'])).stdout) as StatusReport;
  assert.equal(json.engine?.foundBy, 'daemon');
  assert.equal(json.consoleUrl, null);

  await rig.gpushare(['jobs']);
  // status asks who you are and whether usage is recorded, twice (text and --json); jobs asks for the jobs
  assert.deepEqual(daemon.asked, ['session.whoami', 'store.status', 'session.whoami', 'store.status', 'jobs.list'], '`gpushare jobs` asked the daemon too');
});

test('$GPUSHARE_SOCKET, when set, is the only place looked at', async (t) => {
  const daemon = await listenAsFakeEngine(rig.daemonSocket, daemonWhoami(me.username, me.uid));
  t.after(() => daemon.close());
  const named = JSON.parse((await rig.gpushare(['status', '--json'], { GPUSHARE_SOCKET: rig.personalSocket })).stdout) as StatusReport;
  assert.deepEqual([named.engine?.foundBy, named.engine?.pid], ['GPUSHARE_SOCKET', engine.child.pid]);
  assert.match((await rig.gpushare(['status'], { GPUSHARE_SOCKET: rig.personalSocket })).stdout, /^socket: {3}\S+ \(\$GPUSHARE_SOCKET\)$/m);

  const nowhere = join(rig.home, 'nothing.sock');
  const { code, stdout } = await rig.gpushare(['status'], { GPUSHARE_SOCKET: nowhere });
  assert.equal(code, 1, 'no engine answers where it points, though two others would');
  assert.equal(
    lines(stdout)[0],
    `No gpushare engine is running (tried the engine $GPUSHARE_SOCKET names at ${nowhere}: no socket there). Start one there, or unset GPUSHARE_SOCKET to use the box daemon or your personal engine.`,
  );
  assert.deepEqual(daemon.asked, [], 'the daemon was not asked');
});

test('with no engine, status says where it looked, in order and why each failed, and exits 1', async () => {
  const runtime = join(rig.home, 'nowhere');
  const personal = join(runtime, 'gpushare', 'engine.sock');
  const { code, stdout } = await rig.gpushare(['status'], { XDG_RUNTIME_DIR: runtime });
  assert.equal(code, 1);
  assert.equal(
    lines(stdout)[0],
    `No gpushare engine is running (tried the box daemon at ${rig.daemonSocket}: no socket there; your personal engine at ${personal}: no socket there). ` +
      'Start one with `gpushare serve` (add --simulate on a machine without NVIDIA GPUs) or open the desktop app; on a lab box, an admin installs the daemon (`gpushare daemon install`).',
  );
  const json = JSON.parse((await rig.gpushare(['status', '--json'], { XDG_RUNTIME_DIR: runtime })).stdout) as StatusReport;
  assert.deepEqual([json.engine, json.you, json.consoleUrl], [null, null, null]);
  assert.match(json.problem ?? '', /^No gpushare engine is running \(tried the box daemon at /);
});

test("a personal engine that starts beside another user's engine says so on stderr, and status lists it", async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root: starts a process as uid 65534');
    return;
  }
  const other = await startEngineLookalike(65534, 'serve');
  t.after(() => other.kill());
  const beside = cliRig('beside');
  t.after(() => beside.dispose());
  const served = await beside.serve();
  t.after(async () => {
    served.child.kill('SIGTERM');
    await served.exited;
  });
  const warning = `${other.user}'s gpushare engine also schedules this box (pid ${other.pid}, gpushare serve); ask an admin to install the daemon (gpushare daemon install), so one scheduler serves everyone.`;
  const status = await beside.gpushare(['status']);
  assert.ok(lines(status.stdout).includes(warning), status.stdout);
  const json = JSON.parse((await beside.gpushare(['status', '--json'])).stdout) as StatusReport;
  assert.deepEqual(json.otherEngines.filter((e) => e.pid === other.pid), [{ user: other.user, pid: other.pid, kind: 'serve' }]);
  // serve wrote it to stderr before its URL to stdout; the two pipes may be read in either order
  await until('the warning in what serve printed', () => served.output().includes(warning), { timeoutMs: 5_000, intervalMs: 100, detail: () => served.output() });
  assert.ok(served.output().includes(warning + '\n'), served.output());
});

test('status --help prints its usage (exit 0); an argument is a usage error (exit 2)', async () => {
  const help = await rig.gpushare(['status', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: gpushare status \[--json\]/);
  const wrong = await rig.gpushare(['status', 'now']);
  assert.equal(wrong.code, 2);
  assert.equal(wrong.stderr, 'gpushare status: gpushare status takes no arguments, got "now".\n');
});
