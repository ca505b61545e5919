// Finding other gpushare engines in /proc: the parser on fixtures, the scan on a fake /proc,
// and (as root) a real process of uid 65534 that looks like an engine.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { findEngineProcesses, otherEnginesWarning, otherUsersEngines, parseEngineProcess } from './other-engines.js';
import { startEngineLookalike } from './testing/engine-lookalike.js';

const status = (uid: number, ppid = 1): string => `Name:\tnode\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t77\nPid:\t77\nPPid:\t${ppid}\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nGid:\t${uid}\t${uid}\t${uid}\t${uid}\n`;
const cmdline = (...argv: string[]): string => argv.join('\0') + '\0';

test('the parser knows gpushare serve, start and daemon run by node, whatever the path or node options', () => {
  assert.deepEqual(parseEngineProcess(77, cmdline('node', '/home/bob/gpushare/electron/cli/gpushare.js', 'serve', '--simulate'), status(1001, 40)), { pid: 77, ppid: 40, uid: 1001, kind: 'serve' });
  assert.equal(parseEngineProcess(77, cmdline('/usr/bin/node', '--enable-source-maps', 'electron/cli/gpushare.js', 'start'), status(1001))?.kind, 'start');
  assert.equal(parseEngineProcess(77, cmdline('/usr/bin/node', '/usr/local/bin/gpushare', 'daemon', '--socket', '/run/x.sock'), status(0))?.kind, 'daemon');
  assert.equal(parseEngineProcess(77, cmdline('/opt/gpushare/gpushare', '/opt/gpushare/resources/app.asar/electron/cli/gpushare.js', 'engine', '--until-stdin-closes'), status(1001))?.kind, 'engine', "the app's binary run as node");
  assert.equal(parseEngineProcess(77, cmdline('/home/bob/gpushare/node_modules/electron/dist/electron', '/home/bob/gpushare/electron/cli/gpushare.js', 'engine'), status(1001))?.kind, 'engine', 'Electron run as node from a checkout');
});

test('the parser knows the packaged desktop app, but not its --type= helper processes', () => {
  assert.equal(parseEngineProcess(77, cmdline('/opt/gpushare/gpushare', '--no-sandbox'), status(1002))?.kind, 'app');
  assert.equal(parseEngineProcess(77, cmdline('/opt/gpushare/gpushare', '--type=renderer', '--lang=en-US'), status(1002)), null);
  assert.equal(parseEngineProcess(77, cmdline('/opt/gpushare/gpushare', '--type=zygote'), status(1002)), null);
});

test('the parser leaves out CLI commands that are not engines, other programs and kernel threads', () => {
  for (const argv of [
    ['node', '/x/electron/cli/gpushare.js', 'ps', '--watch'],
    ['node', '/x/electron/cli/gpushare.js', 'run', '--', 'python', 'serve'],
    ['node', '/x/electron/cli/gpushare.js', 'status'],
    ['node', '/x/electron/cli/gpushare.js'],
    ['node', '/x/electron/cli/gpushare.js', 'daemon', 'install'],
    ['node', '/x/electron/cli/gpushare.js', 'serve', '--help'],
    ['vim', '/x/electron/cli/gpushare.js', 'serve'],
    ['sh', '-c', 'node gpushare.js serve'],
    ['python', 'train.py', '--name', 'gpushare'],
    ['/usr/lib/electron/electron', '/home/bob/gpushare'],
  ]) {
    assert.equal(parseEngineProcess(77, cmdline(...argv), status(1001)), null, argv.join(' '));
  }
  assert.equal(parseEngineProcess(2, '', status(0)), null, 'a kernel thread has no command line');
  assert.equal(parseEngineProcess(77, cmdline('node', '/x/gpushare.js', 'serve'), 'Name:\tnode\n'), null, 'a status without Uid (the process went away mid-read)');
});

test('the scan of a /proc tree lists each engine once: a helper started by its own engine process is not counted again', (t) => {
  const proc = mkdtempSync(join(tmpdir(), 'gpushare-proc-'));
  t.after(() => rmSync(proc, { recursive: true, force: true }));
  const passwd = join(proc, 'passwd');
  writeFileSync(passwd, 'root:x:0:0::/root:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\ncarol:x:1002:1002::/home/carol:/bin/sh\n');
  const fake = (pid: number, argv: string[], uid: number, ppid = 1): void => {
    mkdirSync(join(proc, String(pid)));
    writeFileSync(join(proc, String(pid), 'cmdline'), cmdline(...argv));
    writeFileSync(join(proc, String(pid), 'status'), status(uid, ppid));
  };
  fake(100, ['node', '/home/bob/gpushare/electron/cli/gpushare.js', 'serve'], 1001);
  fake(200, ['/opt/gpushare/gpushare'], 1002);
  fake(201, ['/opt/gpushare/gpushare', '/opt/gpushare/resources/app.asar/electron/cli/gpushare.js', 'engine', '--until-stdin-closes'], 1002, 200);
  fake(202, ['/opt/gpushare/gpushare', '--type=gpu-process'], 1002, 200);
  fake(300, ['node', '/srv/gpushare/electron/cli/gpushare.js', 'daemon'], 0);
  fake(400, ['bash'], 1001);
  mkdirSync(join(proc, 'self'));

  assert.deepEqual(findEngineProcesses(proc).map((e) => [e.pid, e.uid, e.kind]), [[100, 1001, 'serve'], [200, 1002, 'app'], [300, 0, 'daemon']]);
  assert.deepEqual(otherUsersEngines(1001, proc, passwd), [
    { user: 'carol', pid: 200, kind: 'app' },
    { user: 'root', pid: 300, kind: 'daemon' },
  ]);
});

test('the warning names each other user once and says what to do: install the daemon, or use the one there is', () => {
  assert.equal(otherEnginesWarning([]), null);
  assert.equal(
    otherEnginesWarning([{ user: 'bob', pid: 4242, kind: 'serve' }]),
    "bob's gpushare engine also schedules this box (pid 4242, gpushare serve); ask an admin to install the daemon (gpushare daemon install), so one scheduler serves everyone.",
  );
  assert.match(
    otherEnginesWarning([{ user: 'bob', pid: 1, kind: 'serve' }, { user: 'carol', pid: 2, kind: 'app' }, { user: 'bob', pid: 3, kind: 'start' }])!,
    /^bob's and carol's gpushare engines also schedule this box \(pid 1, gpushare serve; pid 2, the desktop app; pid 3, gpushare start\); ask an admin/,
  );
  assert.equal(
    otherEnginesWarning([{ user: 'root', pid: 812, kind: 'daemon' }]),
    "The box daemon (pid 812, root's) already schedules this box; this personal engine schedules beside it without knowing of it: stop it (gpushare stop) and use the daemon (gpushare console).",
    'beside the daemon, installing it is not the advice',
  );
});

test('a process of uid 65534 whose command line is a gpushare engine is found, with its user', async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root: starts a process as uid 65534');
    return;
  }
  const lookalike = await startEngineLookalike(65534, 'serve');
  t.after(() => lookalike.kill());
  assert.deepEqual(otherUsersEngines(0).filter((e) => e.pid === lookalike.pid), [{ user: lookalike.user, pid: lookalike.pid, kind: 'serve' }]);
  assert.deepEqual(otherUsersEngines(65534).filter((e) => e.pid === lookalike.pid), [], "an engine's own user's processes are not others'");
});
