// `gpushare lab ps|where` as a person runs them, on stand-in boxes reached by their sockets (no root,
// no ssh: lab.multiuser.test covers those): the lab list's mistakes, each box's state, --watch.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { LabSnapshot } from '../../../shared/lab.js';
import { FakeBox } from '../../engine/lab/testing/fake-box.js';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-labcli-'));
after(() => rmSync(home, { recursive: true, force: true }));
const labFile = join(home, '.config', 'gpushare', 'lab.json');
mkdirSync(join(home, '.config', 'gpushare'), { recursive: true });
mkdirSync(join(home, 'rt'), { mode: 0o700 });
const env: NodeJS.ProcessEnv = { ...process.env, ...CLI_ENV, HOME: home, XDG_RUNTIME_DIR: join(home, 'rt'), GPUSHARE_LAB_FILE: join(home, 'no-admin-list.json') };
delete env.XDG_CONFIG_HOME;

function gpushare(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 }); // one that hangs is ended, not left behind
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

test('without a lab list, or with a mistake in it, lab ps says which file and what to write, and exits 1', async () => {
  rmSync(labFile, { force: true });
  const none = await gpushare(['lab', 'ps']);
  assert.equal(none.status, 1);
  assert.equal(none.stderr, `gpushare lab: No lab boxes: neither ${join(home, 'no-admin-list.json')} nor ${labFile} lists any. Write one like {"boxes": [{"name": "box1", "ssh": "box1"}]}.\n`);
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'box1', ssh: 'box1' }, { name: 'box2', ssh: 'box2', sockt: '/run/x.sock' }] }));
  const bad = await gpushare(['lab', 'ps']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, new RegExp(`^gpushare lab: ${labFile}: boxes\\[1\\] \\("box2"\\)\\.sockt: `));
  const usage = await gpushare(['lab', 'where']);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /Give --mem, like --mem 20G/);
});

test('lab ps --json: every box with its state, a box with nothing on its socket down with why', async (t) => {
  const boxes = ['a', 'b'].map((n) => new FakeBox(join(home, `${n}.sock`), 'alice'));
  for (const box of boxes) await box.start();
  t.after(async () => {
    for (const box of boxes) await box.stop();
  });
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'a', socket: join(home, 'a.sock') }, { name: 'b', socket: join(home, 'b.sock') }, { name: 'c', socket: join(home, 'c.sock') }] }));
  const out = await gpushare(['lab', 'ps', '--json']);
  assert.equal(out.status, 0, out.stderr);
  const lab = JSON.parse(out.stdout) as LabSnapshot & { people: unknown[] };
  assert.deepEqual(lab.boxes.map((b) => [b.name, b.connection.state, b.caller?.user ?? null]), [['a', 'connected', 'alice'], ['b', 'connected', 'alice'], ['c', 'down', null]]);
  assert.equal((lab.boxes[2]!.connection as { lastError: string }).lastError, `c: ${join(home, 'c.sock')}: no socket there (no gpushare daemon runs)`);
  assert.deepEqual(lab.people, []);
});

test('lab ps --watch redraws: a box whose daemon dies shows down, the other stays connected', async (t) => {
  const boxes = ['w1', 'w2'].map((n) => new FakeBox(join(home, `${n}.sock`), 'alice'));
  for (const box of boxes) await box.start();
  t.after(async () => {
    for (const box of boxes) await box.stop();
  });
  writeFileSync(labFile, JSON.stringify({ boxes: boxes.map((b, i) => ({ name: `w${i + 1}`, socket: b.path })) }));
  const child = spawn(process.execPath, [CLI_PATH, 'lab', 'ps', '--watch'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let screen = '';
  child.stdout.on('data', (d: Buffer) => (screen = (screen + d.toString()).split('\x1b[2J\x1b[H').at(-1)!));
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 300 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(ok(), `waited for ${what}; the screen: ${screen}`);
  };
  await until('both connected', () => /^w1 .*: connected to its socket/m.test(screen) && /^w2 .*: connected to its socket/m.test(screen));
  await boxes[0]!.stop();
  await until('w1 down', () => /^w1 .*: down since .*: w1: the daemon closed the connection/m.test(screen) || /^w1 .*: (down|reconnecting) .*no socket there/m.test(screen));
  assert.match(screen, /^w2 .*: connected to its socket/m);
  const status = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.kill('SIGINT');
  assert.equal(await status, 0);
});

test("run --box to a box whose daemon predates loginEnv says so and what to do, starting nothing (never falls back to sending this shell's environment)", async (t) => {
  const old = new FakeBox(join(home, 'old.sock'), 'alice');
  old.refusals['jobs.submit'] = { code: 'invalid-request', message: 'params.loginEnv is not a known field (known: argv, cwd, gpu, priority, memoryQuotaBytes, memoryRequestBytes, mode, mpsSharePercent, migSlice, keepResident, env)' };
  await old.start();
  t.after(() => old.stop());
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'old', socket: old.path }] }));
  const out = await gpushare(['run', '--box', 'old', '--', '/bin/true']);
  assert.equal(out.status, 1, out.stderr);
  assert.equal(out.stderr, "gpushare run: old: its gpushare daemon is older than this gpushare and cannot start a job in old's own login environment, so nothing was started: update gpushare on old.\n");
});

// What a new user trying the lab on this machine tripped on (each seen failing before its fix).

test('an empty lab list file is named with what a lab list looks like, not the config file\'s "{}" (which lab.json refuses)', async () => {
  writeFileSync(labFile, '');
  const out = await gpushare(['lab', 'ps']);
  assert.equal(out.status, 1);
  assert.equal(out.stderr, `gpushare lab: ${labFile}:1:1: not valid JSON: the file is empty (a lab list is like {"boxes": [{"name": "box1", "ssh": "box1"}]})\n`);
});

test('a socket entry naming a directory or a plain file says it is not a socket, not that the daemon is not running', async () => {
  const dir = join(home, 'a-dir');
  mkdirSync(dir, { recursive: true });
  const file = join(home, 'a-file');
  writeFileSync(file, 'x');
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'd', socket: dir }, { name: 'f', socket: file }] }));
  const out = await gpushare(['lab', 'ps', '--json']);
  assert.equal(out.status, 1, out.stderr);
  const lab = JSON.parse(out.stdout) as LabSnapshot;
  assert.deepEqual(
    lab.boxes.map((b) => (b.connection as { lastError?: string }).lastError),
    [`d: ${dir}: is a directory, not a socket (give the daemon's socket, like /run/gpushare/engine.sock)`, `f: ${file}: is a file, not a socket (give the daemon's socket, like /run/gpushare/engine.sock)`],
  );
});

test('lab where: "no box can start" gives the size as it was asked (90G), as the reasons under it do', async (t) => {
  const box = new FakeBox(join(home, 'n.sock'), 'alice');
  await box.start();
  t.after(() => box.stop());
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'n', socket: box.path }] }));
  const out = await gpushare(['lab', 'where', '--mem', '90G']);
  assert.equal(out.status, 1, out.stderr);
  assert.match(out.stdout, /^No box can start a 90G job now\.$/m);
});

test('run --box with its value missing says so (it took "--" as the box), and a working directory that is gone is named in words', async (t) => {
  const box = new FakeBox(join(home, 'r.sock'), 'alice');
  await box.start();
  t.after(() => box.stop());
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'r', socket: box.path }] }));
  const missing = await gpushare(['run', '--box', '--', '/bin/true']);
  assert.equal(missing.status, 2);
  assert.equal(missing.stderr, 'gpushare run: --box needs a value, got "--".\n');
  const gone = join(home, 'gone');
  for (const args of [['run', '--box', 'r', '--', '/bin/true'], ['run', '--', '/bin/true']]) {
    mkdirSync(gone);
    const out = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      // the shell enters the folder, removes it, then becomes gpushare there
      const child = spawn('/bin/sh', ['-c', 'cd "$1" && rmdir "$1" && shift && exec "$@"', 'sh', gone, process.execPath, CLI_PATH, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stderr }));
    });
    assert.equal(out.status, 1, args.join(' '));
    assert.equal(out.stderr, 'gpushare run: the working directory here no longer exists (it was removed): cd to one that does, then run it again.\n', args.join(' '));
  }
  assert.ok(!box.heard.includes('jobs.submit'), 'nothing was submitted');
});

test('start --lab on a port in use says so and exits (it printed "listen EADDRINUSE" and then hung, its hub still running)', { timeout: 30_000 }, async (t) => {
  const box = new FakeBox(join(home, 'p.sock'), 'alice');
  await box.start();
  t.after(() => box.stop());
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'p', socket: box.path }] }));
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const out = await gpushare(['start', '--lab', '--port', String(port)]);
  assert.equal(out.status, 1);
  assert.equal(out.stderr, `gpushare start: The console cannot listen on 127.0.0.1:${port}: the port is in use (give another --port, or none for a free one).\n`);
});

test('gpushare lab --help points to the rest of the lab (run --box, start --lab) and says whose entry wins, as the README does', async () => {
  const out = await gpushare(['lab', '--help']);
  assert.equal(out.status, 0);
  assert.match(out.stdout, /an entry of the same name replaces the admin's/);
  assert.match(out.stdout, /gpushare run --box NAME \[--env NAME\[=VALUE\]\]… -- COMMAND/);
  assert.match(out.stdout, /gpushare start --lab/);
});

test('jobs and set --box: an unknown box and a down one get the errors run --box gives; a refusal names the box; jobs asks the box, not this machine', async (t) => {
  const up = new FakeBox(join(home, 'up.sock'), 'alice');
  up.refusals['jobs.move'] = { code: 'forbidden', message: "j1 is bob's job: only bob or an administrator may change it." };
  await up.start();
  t.after(() => up.stop());
  const down = join(home, 'down.sock');
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'up', socket: up.path }, { name: 'down', socket: down }] }));
  for (const [command, ...rest] of [['run', '--', '/bin/true'], ['jobs'], ['set', 'j1', '--suspend']] as const) {
    const unknown = await gpushare([command, '--box', 'nope', ...rest]);
    assert.deepEqual([unknown.status, unknown.stderr], [2, `gpushare ${command}: --box nope: no such box in the lab list; it has up, down.\n`], command);
    const gone = await gpushare([command, '--box', 'down', ...rest]);
    assert.deepEqual([gone.status, gone.stderr], [1, `gpushare ${command}: down: ${down}: no socket there (no gpushare daemon runs)\n`], command);
  }
  const jobs = await gpushare(['jobs', '--box', 'up']);
  assert.deepEqual([jobs.status, jobs.stdout, jobs.stderr], [0, 'No jobs on up.\n', '']);
  const set = await gpushare(['set', 'j1', '--box', 'up', '--suspend']);
  assert.deepEqual([set.status, set.stderr], [1, "gpushare set: up: j1 is bob's job: only bob or an administrator may change it.\n"]);
  assert.deepEqual(up.heard.filter((m) => m.startsWith('jobs.')), ['jobs.list', 'jobs.list', 'jobs.move']);
});

test('lab ps and lab where, run once, say since when and why a box is down, not a next try they will not make', async () => {
  const down = join(home, 'gone.sock');
  writeFileSync(labFile, JSON.stringify({ boxes: [{ name: 'gone', socket: down }] }));
  const ps = await gpushare(['lab', 'ps', '--wait', '1']);
  assert.equal(ps.status, 1);
  assert.equal(ps.stdout.replace(/\d\d:\d\d:\d\d/, 'HH:MM:SS'), `gone (socket ${down}): down since HH:MM:SS UTC: gone: ${down}: no socket there (no gpushare daemon runs)\n`);
  const where = await gpushare(['lab', 'where', '--mem', '1G', '--wait', '1']);
  assert.equal(where.status, 1);
  assert.match(where.stdout, new RegExp(`^  gone: down since \\d\\d:\\d\\d:\\d\\d UTC: gone: ${down}: no socket there`, 'm'));
  assert.doesNotMatch(ps.stdout + where.stdout, /next try/);
});
