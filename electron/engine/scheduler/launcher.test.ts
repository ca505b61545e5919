// Resolving a job's command as a shell would (or as the job's user would), planning how it is
// spawned, and refusals that say what is wrong.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkDirectory, planSpawn, resolveCommand, type UserCheck } from './launcher.js';
import { describeSpawnFailure, rootOnlyProblem } from './spawn-as-user.js';
import { type Account } from '../accounts.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-launcher-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a command is found on PATH or by path; a file that is not executable is named as such, a missing one as not found', () => {
  const bin = join(dir, 'bin');
  const other = join(dir, 'other');
  mkdirSync(bin);
  mkdirSync(other);
  writeFileSync(join(bin, 'train.sh'), '#!/bin/sh\n');
  writeFileSync(join(other, 'train.sh'), '#!/bin/sh\n');
  chmodSync(join(other, 'train.sh'), 0o755);
  writeFileSync(join(bin, 'notes.txt'), 'not a program\n');
  assert.equal(resolveCommand('train.sh', { path: `${bin}:${other}`, cwd: dir }), join(other, 'train.sh'), 'like a shell, PATH goes on past a file it cannot run');
  assert.equal(resolveCommand('./other/train.sh', { path: '', cwd: dir }), join(other, 'train.sh'));
  assert.throws(() => resolveCommand('notes.txt', { path: bin, cwd: dir }), /notes\.txt is not executable \(chmod \+x it, or run it through its interpreter\)\. Nothing was started\./);
  assert.throws(() => resolveCommand(join(bin, 'notes.txt'), { path: '', cwd: dir }), /notes\.txt is not executable/);
  assert.throws(() => resolveCommand('nowhere-to-be-found', { path: bin, cwd: dir }), /command not found: nowhere-to-be-found \(searched PATH\)/);
});

const account = (uid: number, name: string): Account => ({ uid, gid: 500, name, home: `/home/${name}`, shell: '/bin/bash' });
const spec = (runAs: Account | null) => ({ executable: '/usr/bin/python3', argv: ['python3', 'train.py', '--epochs', '3'], cwd: '/home/alice', env: { HOME: '/home/alice' }, runAs });

test("another user's job is planned through gpushare-spawn: the helper alone, from /, with a fixed PATH and nothing else; the job (uid, gid, groups, cwd, program, argv, environment) only on its fd 3. The engine's own user's job directly", () => {
  const context = { engineUid: 0, helper: '/opt/gpushare/native/spawn/build/gpushare-spawn' };
  const hostile = { HOME: '/home/alice', LD_AUDIT: '/home/alice/evil.so', LD_LIBRARY_PATH: '/home/alice/lib', PATH: '/home/alice/bin' };
  const plan = planSpawn({ ...spec(account(1000, 'alice')), env: hostile }, context);
  assert.deepEqual({ ...plan, helper: undefined }, { file: context.helper, args: [], argv0: 'gpushare-spawn', cwd: '/', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, helper: undefined });
  assert.deepEqual(plan.helper!.request.toString('utf8').split('\0'), [
    'gpushare-spawn 1', '1000', '500', 'init', 'alice', '/home/alice', '/usr/bin/python3', '4', 'python3', 'train.py', '--epochs', '3',
    '4', 'HOME=/home/alice', 'LD_AUDIT=/home/alice/evil.so', 'LD_LIBRARY_PATH=/home/alice/lib', 'PATH=/home/alice/bin', '',
  ]);
  assert.deepEqual(planSpawn(spec(account(0, 'root')), context), { file: '/usr/bin/python3', args: ['train.py', '--epochs', '3'], argv0: 'python3', cwd: '/home/alice', env: { HOME: '/home/alice' } });
  assert.deepEqual(planSpawn(spec(null), { engineUid: 1000, helper: context.helper }).file, '/usr/bin/python3');
  assert.deepEqual(planSpawn(spec(account(4242, '4242')), context).helper!.request.toString('utf8').split('\0').slice(1, 5), ['4242', '500', 'clear', ''], 'a uid without an account has no groups to look up');
  assert.throws(() => planSpawn({ ...spec(account(1000, 'alice')), argv: ['python3', 'a\0b'] }, context), /contains a NUL byte, which no program can be given \("a\\u0000b"\)\. Nothing was started\./);
});

test('a failed start through the helper is one sentence naming the user and what stopped it; an exec that happened is no failure', () => {
  const context = { user: 'mallory', uid: 1001, cwd: '/home/mallory/work', executable: '/bin/true' };
  const status = (stage: string, reason: string) => Buffer.from(`${stage}\0${reason}\0`);
  assert.equal(describeSpawnFailure(Buffer.alloc(0), context), null);
  assert.equal(describeSpawnFailure(status('cwd', 'Permission denied'), context), 'mallory (uid 1001) cannot enter the working directory /home/mallory/work at launch: Permission denied. Nothing was started.');
  assert.equal(describeSpawnFailure(status('exec', 'No such file or directory'), context), 'mallory (uid 1001) cannot run /bin/true at launch: No such file or directory. Nothing was started.');
  assert.equal(describeSpawnFailure(status('verify', 'root could be regained'), context), 'The engine could not become mallory (uid 1001) to start the job (verify: root could be regained). Nothing was started.');
});

test('the engine runs as root only a program that root alone can change, along its whole path', { skip: process.getuid?.() === 0 ? false : 'needs root: the files are given to another user' }, (t) => {
  const area = mkdtempSync('/tmp/gpushare-launcher-rootonly-');
  t.after(() => rmSync(area, { recursive: true, force: true }));
  chmodSync(area, 0o755);
  const helper = join(area, 'gpushare-spawn');
  writeFileSync(helper, '#!/bin/sh\n', { mode: 0o755 });
  assert.equal(rootOnlyProblem(helper), null);
  chmodSync(helper, 0o775);
  assert.equal(rootOnlyProblem(helper), `${helper} can be written by its group`);
  chmodSync(helper, 0o755);
  chownSync(area, 65534, 65534);
  assert.equal(rootOnlyProblem(helper), `${area} belongs to uid 65534, not root`);
  chownSync(area, 0, 0);
  const link = join(area, 'link');
  const elsewhere = join(area, 'open');
  mkdirSync(elsewhere);
  chmodSync(elsewhere, 0o777);
  writeFileSync(join(elsewhere, 'gpushare-spawn'), '', { mode: 0o755 });
  symlinkSync(join(elsewhere, 'gpushare-spawn'), link);
  assert.equal(rootOnlyProblem(link), `${elsewhere} can be written by its group and others`, 'where a symlink leads counts too');
  assert.match(rootOnlyProblem(join(area, 'missing'))!, /missing \(build it with `npm run build:native`\)/);
});

test("checked as another user, by their mode bits: a directory they cannot search is named, a file they cannot run is refused, and nothing below a closed directory is told", (t) => {
  const me = { uid: process.getuid!(), gid: process.getgid!() };
  const stranger: UserCheck = { identity: { uid: me.uid + 54321, gid: me.gid + 54321, groups: [] }, user: 'stranger' };
  const member: UserCheck = { identity: { uid: me.uid + 54321, gid: me.gid + 54321, groups: [me.gid] }, user: 'member' };
  const area = mkdtempSync('/tmp/gpushare-launcher-access-'); // every user can traverse to it, unlike a private TMPDIR
  t.after(() => rmSync(area, { recursive: true, force: true }));
  const closed = join(area, 'closed');
  const groupOnly = join(area, 'group-only');
  mkdirSync(join(closed, 'inner'), { recursive: true });
  mkdirSync(groupOnly);
  chmodSync(area, 0o755);
  chmodSync(closed, 0o700);
  chmodSync(groupOnly, 0o750);
  writeFileSync(join(groupOnly, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(groupOnly, 'run.sh'), 0o754);

  checkDirectory(groupOnly, member);
  // as another user, every way a directory fails them is one sentence: what lies behind a closed directory is not told
  const cannotUse = (who: UserCheck, path: string) => `${who.user} (uid ${who.identity.uid}) cannot use the working directory ${path}: it does not exist, is not a directory, or it or a directory on the way is closed to them. Nothing was started.`;
  assert.throws(() => checkDirectory(groupOnly, stranger), (e: Error) => e.message === cannotUse(stranger, groupOnly));
  assert.throws(() => checkDirectory(join(closed, 'inner'), member), (e: Error) => e.message === cannotUse(member, join(closed, 'inner')));
  assert.throws(() => checkDirectory(join(closed, 'no-such'), member), (e: Error) => e.message === cannotUse(member, join(closed, 'no-such')));
  assert.throws(() => checkDirectory(join(area, 'no-such'), member), (e: Error) => e.message === cannotUse(member, join(area, 'no-such')));
  assert.throws(() => checkDirectory(join(area, 'no-such')), /^ApiError: Working directory .*no-such does not exist\. Nothing was started\.$/, 'as the engine itself: said as it is');

  assert.equal(resolveCommand('run.sh', { path: groupOnly, cwd: area, as: member }), join(groupOnly, 'run.sh'), 'group bits: r-x');
  assert.throws(() => resolveCommand('run.sh', { path: groupOnly, cwd: area, as: stranger }), (e: Error) => e.message === 'stranger cannot use run.sh: it is not found on PATH, or a directory on the way is closed to them. Nothing was started.');
  assert.throws(() => resolveCommand('no-such.sh', { path: area, cwd: area, as: stranger }), (e: Error) => e.message === 'stranger cannot use no-such.sh: it is not found on PATH, or a directory on the way is closed to them. Nothing was started.');
  chmodSync(area, 0o711);
  chmodSync(groupOnly, 0o755);
  assert.throws(() => resolveCommand(join(groupOnly, 'run.sh'), { path: '', cwd: area, as: stranger }), /run\.sh is not executable by stranger \(chmod \+x it/, 'other bits: r--');
});
