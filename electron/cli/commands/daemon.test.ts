// `gpushare daemon install` writes a unit that runs this installation and a default config it
// never overwrites, checks everything before writing; `gpushare daemon` parses its run options
// and does not start on a bad config.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defaultConfigText } from '../../engine/daemon/config-file.js';
import { packageRoot } from '../../engine/paths.js';
import { UsageError } from '../args.js';
import { CLI_ENV, CLI_PATH, COMPILED_TREE } from '../testing/compiled-cli.js';
import { daemonInstall, daemonRunOptions } from './daemon.js';
import { installDaemon, InstallError, systemdWord, type InstallOptions } from './daemon-install.js';

const isRoot = process.geteuid?.() === 0;
const home = mkdtempSync(join(tmpdir(), 'gpushare-daemon-install-'));
after(() => rmSync(home, { recursive: true, force: true }));
const unitOf = (root: string): string => join(root, 'etc', 'systemd', 'system', 'gpushare.service');
const configOf = (root: string): string => join(root, 'etc', 'gpushare', 'config.json');
const START = ['Start it now and at every boot:', '  systemctl daemon-reload && systemctl enable --now gpushare'];

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...CLI_ENV }, cwd: home }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** stderr of an install: nothing, or (where the checkout is not root's alone) one warning line. */
function assertNoErrors(stderr: string): void {
  assert.ok(stderr === '' || /^warning: someone other than root can change what the daemon would run as root[^\n]*\n$/.test(stderr), stderr);
}

function systemdAnalyzeVerify(unit: string): { code: number | null; output: string } | null {
  const run = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return null;
  return { code: run.status, output: run.stdout + run.stderr };
}

test('daemon install --root writes the unit running this installation and the default config, and says so line by line', async () => {
  const root = mkdtempSync(join(home, 'root-'));
  const install = await gpushare(['daemon', 'install', '--root', root]);
  assert.equal(install.code, 0, install.stderr);
  assertNoErrors(install.stderr);
  assert.deepEqual(install.stdout.trimEnd().split('\n'), [
    `wrote ${unitOf(root)}: runs ${process.execPath} ${CLI_PATH} daemon as root`,
    `wrote ${configOf(root)}: the defaults (administrators: root and group gpushare-admin; no limits); the README lists every key`,
    'skipped the group gpushare-admin (--root: create it on the box that runs the daemon)',
    ...START,
  ]);

  const unit = readFileSync(unitOf(root), 'utf8');
  const service = (key: string): string[] => unit.split('\n').filter((line) => line.startsWith(`${key}=`)).map((line) => line.slice(key.length + 1));
  assert.deepEqual(service('ExecStart'), [`${process.execPath} ${CLI_PATH} daemon`]);
  assert.deepEqual(service('Environment'), [`GPUSHARE_DIST=${COMPILED_TREE}`], 'the unit runs the compiled tree the installer ran');
  assert.deepEqual(service('Documentation'), [`file://${join(packageRoot(), 'README.md')}`]);
  assert.deepEqual(service('KillMode'), ['process'], 'stopping the daemon leaves managed jobs running');
  assert.deepEqual(service('RuntimeDirectory'), ['gpushare']);
  assert.deepEqual(service('RuntimeDirectoryMode'), ['0755']);
  assert.deepEqual(service('StateDirectory'), ['gpushare']);
  assert.deepEqual(service('ConfigurationDirectory'), ['gpushare']);
  assert.deepEqual(service('Restart'), ['on-failure']);
  assert.deepEqual([...service('NoNewPrivileges'), ...service('PrivateUsers'), ...service('ProtectProc'), ...service('ProtectHome'), ...service('PrivateTmp')], [], 'nothing that breaks running jobs as their users');
  assert.doesNotMatch(unit, /@[A-Z]+@/, 'no placeholder left');

  assert.equal(readFileSync(configOf(root), 'utf8'), defaultConfigText());
  assert.equal(statSync(unitOf(root)).mode & 0o777, 0o644);
  assert.equal(statSync(configOf(root)).mode & 0o777, 0o644);
  assert.equal(statSync(join(root, 'etc', 'gpushare')).mode & 0o777, 0o755);
});

test('systemd-analyze verify accepts the written unit (no warning either)', async (t) => {
  const root = mkdtempSync(join(home, 'verify-'));
  assert.equal((await gpushare(['daemon', 'install', '--root', root])).code, 0);
  const verify = systemdAnalyzeVerify(unitOf(root));
  if (!verify) return t.skip('systemd-analyze is missing (Debian package systemd)');
  assert.deepEqual(verify, { code: 0, output: '' });
});

test('a second install keeps the admin\'s config byte for byte and says so; the unit is kept when unchanged', async () => {
  const root = mkdtempSync(join(home, 'again-'));
  assert.equal((await gpushare(['daemon', 'install', '--root', root])).code, 0);
  const edited = '{\n  "adminGroup": "gpu-admins",\n  "policy": { "limits": [ { "group": "students", "maxGpus": 1 } ] }\n}\n';
  writeFileSync(configOf(root), edited);
  const again = await gpushare(['daemon', 'install', '--root', root]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(again.stdout.trimEnd().split('\n'), [
    `kept ${unitOf(root)}: already runs ${process.execPath} ${CLI_PATH} daemon`,
    `kept ${configOf(root)}: yours, and valid (administrators: root and group gpu-admins; 1 limit)`,
    'skipped the group gpu-admins (--root: create it on the box that runs the daemon)',
    ...START,
  ]);
  assert.equal(readFileSync(configOf(root), 'utf8'), edited);

  writeFileSync(unitOf(root), '[Service]\nExecStart=/old/node /old/gpushare.js daemon\n');
  const moved = await gpushare(['daemon', 'install', '--root', root]);
  assert.equal(moved.stdout.split('\n')[0], `updated ${unitOf(root)}: runs ${process.execPath} ${CLI_PATH} daemon as root`);
});

test('an existing config the daemon would refuse stops the install before anything is written', async () => {
  const root = mkdtempSync(join(home, 'bad-config-'));
  mkdirSync(join(root, 'etc', 'gpushare'), { recursive: true });
  writeFileSync(configOf(root), '{"policy": {"limits": [{"maxGpus": 99}]}}');
  const install = await gpushare(['daemon', 'install', '--root', root]);
  assert.equal(install.code, 1);
  assert.equal(install.stdout, '');
  assert.match(install.stderr, new RegExp(`^(warning: [^\n]*\n)?gpushare daemon install: Not installed: the config in place would stop the daemon: ${configOf(root)}: policy\\.limits\\[0\\]\\.maxGpus: must be at most 64, got 99\n`));
  assert.equal(existsSync(unitOf(root)), false, 'no unit written');
});

test('ExecStart quotes a path with a space, %, $ and a quote as systemd reads it (verified by systemd-analyze where it exists)', async (t) => {
  assert.equal(systemdWord('/usr/bin/node'), '/usr/bin/node');
  assert.equal(systemdWord('/opt/my apps/node'), '"/opt/my apps/node"');
  assert.equal(systemdWord('/opt/100%/node'), '/opt/100%%/node');
  assert.equal(systemdWord('/opt/$HOME/gpushare.js'), '/opt/$$HOME/gpushare.js', 'an argument is expanded: $ doubled');
  assert.equal(systemdWord('/opt/$HOME/node', { expandsVariables: false }), '/opt/$HOME/node');
  assert.equal(systemdWord('/opt/"q"\\/node'), '"/opt/\\"q\\"\\\\/node"');
  assert.throws(() => systemdWord('/opt/a\nb'), InstallError);

  const root = mkdtempSync(join(home, 'quoted-'));
  const odd = join(home, 'node 100% $x');
  mkdirSync(odd, { recursive: true });
  symlinkSync(process.execPath, join(odd, 'node'));
  const install = await gpushare(['daemon', 'install', '--root', root, '--node', join(odd, 'node')]);
  assert.equal(install.code, 0, install.stderr);
  const exec = readFileSync(unitOf(root), 'utf8').split('\n').find((line) => line.startsWith('ExecStart='));
  assert.equal(exec, `ExecStart="${home}/node 100%% $x/node" ${CLI_PATH} daemon`, 'the binary\'s path is not expanded: its $ stays single');
  const verify = systemdAnalyzeVerify(unitOf(root));
  if (!verify) return t.skip('systemd-analyze is missing (Debian package systemd): only the quoting was checked');
  assert.deepEqual(verify, { code: 0, output: '' }, 'systemd found the node binary at the quoted path');
});

test('--node must name an executable file by its absolute path', async () => {
  const root = mkdtempSync(join(home, 'node-'));
  const relative = await gpushare(['daemon', 'install', '--root', root, '--node', 'node']);
  assert.deepEqual([relative.code, relative.stderr], [1, 'gpushare daemon install: --node must be an absolute path, got "node".\n']);
  const missing = await gpushare(['daemon', 'install', '--root', root, '--node', '/nonexistent/node']);
  assert.deepEqual([missing.code, missing.stderr], [1, 'gpushare daemon install: /nonexistent/node is not an executable file: --node names the node binary the daemon runs.\n']);
  assert.equal(existsSync(join(root, 'etc')), false);
});

function options(root: string, overrides: Partial<InstallOptions> = {}): InstallOptions & { lines: string[]; warnings: string[] } {
  const lines: string[] = [];
  const warnings: string[] = [];
  return {
    root,
    node: process.execPath,
    packageRoot: packageRoot(),
    compiledTree: COMPILED_TREE,
    refuseUnsafe: false,
    createGroup: false,
    say: (line) => lines.push(line),
    warn: (line) => warnings.push(line),
    lines,
    warnings,
    ...overrides,
  };
}

test('as root: a node binary in a directory another user owns is refused (that user could become root), or only warned about under --root', (t) => {
  if (!isRoot) return t.skip('needs root: chown a directory to uid 65534');
  const theirs = mkdtempSync(join(home, 'theirs-'));
  chownSync(theirs, 65534, 65534);
  symlinkSync(process.execPath, join(theirs, 'node'));
  const root = mkdtempSync(join(home, 'unsafe-'));
  const strict = options(root, { node: join(theirs, 'node'), refuseUnsafe: true });
  assert.throws(() => installDaemon(strict), (error: Error) => {
    assert.ok(error instanceof InstallError);
    assert.match(error.message, new RegExp(`^Not installed: someone other than root can change what the daemon would run as root, and so become root: ${theirs} is owned by uid 65534\\. `));
    return true;
  });
  assert.equal(existsSync(join(root, 'etc')), false, 'nothing written');

  const staged = options(root, { node: join(theirs, 'node'), refuseUnsafe: false });
  installDaemon(staged);
  assert.equal(staged.warnings.length, 1);
  assert.match(staged.warnings[0], new RegExp(`^warning: .*: ${theirs} is owned by uid 65534\\.$`));
  assert.ok(existsSync(unitOf(root)));
});

test('as root: the config\'s admin group is created when the box has none, and kept after', (t) => {
  if (!isRoot) return t.skip('needs root: groupadd');
  const group = `gpst-h2adm${process.pid % 10000}`;
  t.after(() => spawnSync('groupdel', [group]));
  const root = mkdtempSync(join(home, 'group-'));
  mkdirSync(join(root, 'etc', 'gpushare'), { recursive: true });
  writeFileSync(configOf(root), JSON.stringify({ adminGroup: group }));
  assert.equal(spawnSync('getent', ['group', group]).status, 2, 'the group does not exist yet');

  const first = options(root, { createGroup: true });
  installDaemon(first);
  assert.equal(first.lines[2], `created the group ${group}: add an administrator with \`usermod -aG ${group} USER\``);
  assert.match(execFileSync('getent', ['group', group], { encoding: 'utf8' }), new RegExp(`^${group}:x:\\d+:\n$`));

  const second = options(root, { createGroup: true });
  installDaemon(second);
  assert.equal(second.lines[2], `kept the group ${group} (members: none yet): add an administrator with \`usermod -aG ${group} USER\``);
});

test('daemon install without --root, not as root, is refused before anything else is checked', async () => {
  // --node names nothing: were the refusal missing, the install would stop there rather than write to this box's /etc
  await assert.rejects(daemonInstall(['--node', '/nonexistent/node'], 1000), (error: Error) => {
    assert.ok(error instanceof UsageError);
    assert.equal(error.message, 'gpushare daemon install writes /etc/systemd/system/gpushare.service and creates a group: run it as root (sudo), or with --root DIR to write the files under DIR.');
    return true;
  });
});

test('daemon run options: the box\'s paths by default, absolute paths, --simulate with or without a scenario, bad input refused', () => {
  assert.deepEqual(daemonRunOptions([]), { socket: '/run/gpushare/engine.sock', db: '/var/lib/gpushare/usage.db', config: '/etc/gpushare/config.json' });
  assert.deepEqual(daemonRunOptions(['--socket', 'rel/d.sock', '--db', '/tmp/u.db', '--config', 'c.json', '--simulate']), {
    socket: join(process.cwd(), 'rel', 'd.sock'),
    db: '/tmp/u.db',
    config: join(process.cwd(), 'c.json'),
    simulate: 'h100x2-mig',
  });
  assert.equal(daemonRunOptions(['--simulate', 'a100-40gb', '--db', '/tmp/u.db']).simulate, 'a100-40gb');
  assert.throws(() => daemonRunOptions(['--sockett', '/x']), UsageError);
  assert.throws(() => daemonRunOptions(['instal']), { message: /^Unknown daemon command "instal"/ });
  assert.throws(() => daemonRunOptions(['--config', '']), { message: '--config needs a path, got "".' });
});

test('gpushare daemon with a bad config exits 78 naming the key, and opens no socket and no store', async (t) => {
  if (!isRoot) return t.skip('needs root: the daemon refuses to run as anyone else before it reads its config');
  const dir = mkdtempSync(join(home, 'run-'));
  const config = join(dir, 'config.json');
  writeFileSync(config, '{"policy": {"limits": [{"user": "alice", "group": "students"}]}}');
  const run = await gpushare(['daemon', '--config', config, '--socket', join(dir, 'engine.sock'), '--db', join(dir, 'usage.db'), '--simulate', 'a100-40gb']);
  assert.equal(run.code, 78);
  assert.equal(run.stderr, `gpushare daemon: not started: ${config}: policy.limits[0]: names both a user and a group: one entry is for one of them (or, naming neither, for everyone)\n`);
  assert.equal(existsSync(join(dir, 'engine.sock')), false);
  assert.equal(existsSync(join(dir, 'usage.db')), false);
});

test('gpushare daemon --help and gpushare help describe the daemon and its install', async () => {
  const help = await gpushare(['daemon', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: gpushare daemon \[--socket PATH\] \[--db PATH\] \[--config PATH\] \[--simulate \[SCENARIO\]\]/);
  assert.match(help.stdout, /\nUsage: gpushare daemon install \[--root DIR\] \[--node PATH\] \[--preload-all \| --no-preload-all\]\n/); // the box-wide route's options
  assert.match((await gpushare(['help'])).stdout, /\n {2}daemon +the box daemon: one scheduler for every user/);
});
