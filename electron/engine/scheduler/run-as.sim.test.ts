// A managed job submitted by another user (root engine): it runs with that user's uid, gid and
// supplementary groups, in their directory, with their variables and the engine's GPUSHARE_*, and
// writes a log only they can read. A directory they cannot enter is refused before anything starts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync, chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ApiParams } from '../../../shared/api.js';
import type { JobView } from '../../../shared/jobs.js';
import type { Caller } from '../api/dispatcher.js';
import { openNvml } from '../gpu/nvml-addon.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver } from '../gpu/simulated-driver.js';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { userRuntimeDir } from './job-env.js';

const SKIP = process.getuid?.() === 0 ? false : 'needs root: the engine runs jobs as another user only as root, and the test creates a user and a group';
const REPORT = ['/bin/sh', '-c', 'id -u; id -g; id -G; pwd; env'];
const tag = String(process.pid % 100000);
const userName = `gpst-runas${tag}`;
const groupName = `gpst-rdata${tag}`;

let driver: SimulatedDriver;
let nvml: NvmlBinding;
/** Every user can traverse it (not under a private TMPDIR): the job's user works and reads its log here. */
let dir: string;
let user: { uid: number; gid: number; labGid: number; home: string };
let r: SchedulerRig;
let runUser: string;
const cleanups: Array<() => unknown> = [];

before(async () => {
  if (SKIP) return;
  dir = mkdtempSync('/tmp/gpushare-runas-');
  chmodSync(dir, 0o755);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('groupadd', ['--system', groupName]);
  cleanups.push(() => execFileSync('groupdel', [groupName]));
  const home = join(dir, 'home');
  execFileSync('useradd', ['--system', '--no-create-home', '--home-dir', home, '--shell', '/usr/sbin/nologin', '--groups', groupName, userName]);
  cleanups.push(() => execFileSync('userdel', [userName]));
  const id = (flag: string) => Number(execFileSync('id', [flag, userName], { encoding: 'utf8' }));
  const labGid = Number(execFileSync('getent', ['group', groupName], { encoding: 'utf8' }).split(':')[2]);
  user = { uid: id('-u'), gid: id('-g'), labGid, home };
  mkdirSync(home, { mode: 0o700 });
  chownSync(home, user.uid, user.gid);
  driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath;
  nvml = openNvml(driver.nvmlLibraryPath);
  runUser = join(dir, 'run-user'); // stands for /run/user, which pam_systemd fills at login (this machine's is left alone)
  mkdirSync(runUser, { mode: 0o755 });
  r = schedulerRig({ driver, nvml, dir }, 'engine', { userRuntimeRoot: runUser }, cleanups);
});

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  nvml?.close();
  await driver?.dispose();
});

const caller = (): Caller => ({ uid: user.uid, gid: user.gid, groups: [user.gid, user.labGid], user: userName, pid: null, admin: false, via: 'socket' });
const submit = (params: Omit<ApiParams<'jobs.submit'>, 'gpu'>) => r.engine.dispatcher.dispatch('jobs.submit', { gpu: 0, ...params }, caller()) as Promise<JobView>;
const finished = (id: string) => r.until(`${id} to finish`, async () => ((await r.job(id))?.state === 'finished' ? (await r.job(id))! : undefined));

/** The report the job wrote: uid, gid, groups, working directory and environment. */
function readReport(logPath: string) {
  const [uid, gid, groups, cwd, ...env] = readFileSync(logPath, 'utf8').trimEnd().split('\n');
  return { uid: Number(uid), gid: Number(gid), groups: groups.split(' ').map(Number), cwd, env: new Map(env.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)])) };
}

/** Whether `uid` can read the file, asked of the kernel as that user. */
function readableBy(uid: number, gid: number, path: string): boolean {
  return spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', 'cat', path], { stdio: 'ignore' }).status === 0;
}

test("a job another user submits runs with their uid, gid, groups, working directory and variables, the engine's GPUSHARE_* values, and a log only they can read", { skip: SKIP }, async () => {
  const work = join(dir, 'work');
  mkdirSync(work, { mode: 0o755 });
  const submitted = await submit({
    argv: REPORT,
    cwd: work,
    env: ['PATH=/usr/bin:/bin', 'GPST_MARK=from the caller', 'GPUSHARE_JOB_ID=forged', 'GPUSHARE_FAKEGPU_STATE=/forged', 'LD_PRELOAD=/forged.so', 'CUDA_VISIBLE_DEVICES=7', 'CUDA_MPS_PIPE_DIRECTORY=/forged'],
  });
  assert.equal(submitted.owner, userName);
  const done = await finished(submitted.id);
  assert.equal(done.exitCode, 0);
  const report = readReport(done.logPath!);
  assert.deepEqual([report.uid, report.gid], [user.uid, user.gid]);
  assert.ok(report.groups.includes(user.labGid), `groups ${report.groups.join(' ')} include ${groupName} (${user.labGid})`);
  assert.equal(report.cwd, work);
  assert.equal(report.env.get('GPST_MARK'), 'from the caller');
  assert.equal(report.env.get('PATH'), '/usr/bin:/bin');
  assert.equal(report.env.get('GPUSHARE_JOB_ID'), submitted.id);
  assert.equal(report.env.get('GPUSHARE_FAKEGPU_STATE'), driver.statePath);
  assert.notEqual(report.env.get('CUDA_VISIBLE_DEVICES'), '7');
  assert.equal(report.env.has('LD_PRELOAD'), false, 'no gate here, so no LD_PRELOAD at all: not the caller\'s');
  assert.equal(report.env.has('CUDA_MPS_PIPE_DIRECTORY'), false);

  const log = statSync(done.logPath!);
  assert.deepEqual([log.uid, log.mode & 0o777], [user.uid, 0o600]);
  const own = statSync(join(done.logPath!, '..'));
  assert.deepEqual([own.uid, own.mode & 0o777], [0, 0o711], 'their folder is the engine\'s: they open their logs in it, nobody but the engine writes there');
  const logs = statSync(join(done.logPath!, '..', '..'));
  assert.deepEqual([logs.uid, logs.mode & 0o777], [0, 0o755]);
  assert.equal(readableBy(user.uid, user.gid, done.logPath!), true, 'its user follows it');
  assert.equal(readableBy(65534, 65534, done.logPath!), false, 'nobody else does');
});

test("the pid the engine records is the job's own (gpushare-spawn became it), running as its user; terminate reaches it", { skip: SKIP }, async () => {
  const sleep = realpathSync('/bin/sleep');
  const submitted = await submit({ argv: [sleep, '60'], cwd: dir, env: ['PATH=/usr/bin:/bin'] });
  const pid = await r.until('the job to exec its command', async () => {
    const view = await r.job(submitted.id);
    return view?.pid && readlinkSync(`/proc/${view.pid}/exe`) === sleep ? view.pid : undefined;
  });
  assert.match(readFileSync(`/proc/${pid}/status`, 'utf8'), new RegExp(`^Uid:\\s+${user.uid}\\s+${user.uid}\\s+${user.uid}\\s+${user.uid}$`, 'm'));
  await r.engine.dispatcher.dispatch('jobs.terminate', { job: submitted.id }, caller());
  const ended = await r.until(`${submitted.id} to end`, async () => ((await r.job(submitted.id))?.signal ? (await r.job(submitted.id))! : undefined));
  assert.deepEqual([ended.state, ended.history.at(-1)?.reason], ['failed', `killed by SIGTERM (terminated by ${userName})`]);
});

test("with no directory or environment sent (the browser console), a job runs in its user's home with a login-like environment, not the engine's", { skip: SKIP }, async (t) => {
  const saved = { LANG: process.env.LANG, GPST_ENGINE_ONLY: process.env.GPST_ENGINE_ONLY };
  process.env.LANG = 'C.UTF-8';
  process.env.GPST_ENGINE_ONLY = 'the engine';
  t.after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  const submitted = await submit({ argv: REPORT });
  const done = await finished(submitted.id);
  const report = readReport(done.logPath!);
  assert.equal(report.cwd, user.home);
  assert.equal(report.env.get('HOME'), user.home);
  assert.equal(report.env.get('USER'), userName);
  assert.equal(report.env.get('LOGNAME'), userName);
  assert.equal(report.env.get('SHELL'), '/usr/sbin/nologin');
  assert.equal(report.env.get('LANG'), 'C.UTF-8');
  assert.match(report.env.get('PATH') ?? '', /^\/usr\/local\/bin:\/usr\/bin:\/bin/);
  assert.equal(report.env.has('GPST_ENGINE_ONLY'), false);
  assert.equal(report.env.get('GPUSHARE_JOB_ID'), submitted.id);
});

test("a job sent from another box (loginEnv) runs in this box's login environment for its user with what was sent on top, the engine's own variables never the caller's", { skip: SKIP }, async () => {
  const submitted = await submit({
    argv: REPORT,
    cwd: dir,
    loginEnv: true,
    env: ['LANG=C.UTF-8', 'TERM=xterm-other', 'GPST_NAMED=by the person', 'GPUSHARE_JOB_ID=forged', 'GPUSHARE_FAKEGPU_STATE=/forged', 'LD_PRELOAD=/forged.so', 'CUDA_VISIBLE_DEVICES=7', 'CUDA_MPS_PIPE_DIRECTORY=/forged'],
  });
  const report = readReport((await finished(submitted.id)).logPath!);
  assert.deepEqual([report.uid, report.cwd], [user.uid, dir]);
  assert.deepEqual(
    ['HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'TERM', 'GPST_NAMED'].map((k) => report.env.get(k)),
    [user.home, userName, userName, '/usr/sbin/nologin', 'C.UTF-8', 'xterm-other', 'by the person'],
  );
  assert.match(report.env.get('PATH') ?? '', /^\/usr\/local\/bin:\/usr\/bin:\/bin/);
  assert.equal(report.env.get('GPUSHARE_JOB_ID'), submitted.id);
  assert.equal(report.env.get('GPUSHARE_FAKEGPU_STATE'), driver.statePath);
  assert.notEqual(report.env.get('CUDA_VISIBLE_DEVICES'), '7');
  assert.equal(report.env.has('LD_PRELOAD'), false, "no gate here, so no LD_PRELOAD at all: not the caller's");
  assert.equal(report.env.has('CUDA_MPS_PIPE_DIRECTORY'), false);
});

test('a working directory its user cannot enter is refused naming it and the user, said as a missing one would be (issue 24); nothing is started or kept', { skip: SKIP }, async () => {
  const closed = join(dir, 'closed');
  mkdirSync(closed, { mode: 0o700 });
  const inner = join(closed, 'inner');
  mkdirSync(inner, { mode: 0o777 });
  chmodSync(inner, 0o777);
  const listed = () => r.engine.call('jobs.list', { includeFinished: true });
  const before = JSON.stringify(await listed());
  const userLogs = join(dir, 'engine', 'state', 'logs', userName);
  const logs = () => (existsSync(userLogs) ? readdirSync(userLogs) : []);
  const logsBefore = logs();
  await assert.rejects(submit({ argv: REPORT, cwd: closed, env: ['PATH=/usr/bin:/bin'] }), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'invalid-request');
    assert.equal(error.message, `${userName} (uid ${user.uid}) cannot use the working directory ${closed}: it does not exist, is not a directory, or it or a directory on the way is closed to them. Nothing was started.`);
    return true;
  });
  await assert.rejects(submit({ argv: REPORT, cwd: inner, env: ['PATH=/usr/bin:/bin'] }), (error: Error) => {
    assert.equal(error.message, `${userName} (uid ${user.uid}) cannot use the working directory ${inner}: it does not exist, is not a directory, or it or a directory on the way is closed to them. Nothing was started.`);
    return true;
  });
  await r.tick();
  assert.equal(JSON.stringify(await listed()), before);
  assert.deepEqual(logs(), logsBefore);
});

test("a job sent from another box gets XDG_RUNTIME_DIR as an ssh login would: only the user's own /run/user/UID, a 0700 directory (never a symlink there), never made by the engine", { skip: SKIP }, async () => {
  const mine = join(runUser, String(user.uid));
  const runtimeDirOf = async (): Promise<string | undefined> => {
    const submitted = await submit({ argv: REPORT, cwd: dir, loginEnv: true, env: [] });
    return readReport((await finished(submitted.id)).logPath!).env.get('XDG_RUNTIME_DIR');
  };
  assert.equal(await runtimeDirOf(), undefined, 'no such directory: unset');
  assert.equal(existsSync(mine), false, 'and the engine made none');

  mkdirSync(mine, { mode: 0o700 });
  chownSync(mine, user.uid, user.gid);
  assert.equal(await runtimeDirOf(), mine, 'the user\'s own, 0700');

  chownSync(mine, 0, 0);
  assert.equal(userRuntimeDir(user.uid, runUser), null, 'another owner (root)');
  chownSync(mine, user.uid + 1, user.gid);
  assert.equal(userRuntimeDir(user.uid, runUser), null, 'another owner (another user)');
  chownSync(mine, user.uid, user.gid);
  chmodSync(mine, 0o750);
  assert.equal(userRuntimeDir(user.uid, runUser), null, 'mode 0750');
  chmodSync(mine, 0o1700);
  assert.equal(userRuntimeDir(user.uid, runUser), null, 'mode 01700');
  chmodSync(mine, 0o700);
  assert.equal(userRuntimeDir(user.uid, runUser), mine, 'right again');

  const real = join(dir, 'elsewhere');
  mkdirSync(real, { mode: 0o700 });
  chownSync(real, user.uid, user.gid);
  rmSync(mine, { recursive: true });
  symlinkSync(real, mine);
  assert.equal(lstatSync(mine).isSymbolicLink(), true);
  assert.equal(await runtimeDirOf(), undefined, 'a symlink is not followed, though its target would pass');
  rmSync(mine);
  writeFileSync(mine, '', { mode: 0o700 });
  chownSync(mine, user.uid, user.gid);
  assert.equal(userRuntimeDir(user.uid, runUser), null, 'a plain file');
  rmSync(mine);
});
