// Resolving a job's command as a shell would (or as the job's user would), planning how it is
// spawned, and refusals that say what is wrong.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkDirectory, findSetpriv, planSpawn, resolveCommand, type UserCheck } from './launcher.js';
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

test("another user's job is planned through setpriv with their uid, gid and the system's groups, execing the job itself; the engine's own user's job directly", () => {
  const context = { engineUid: 0, setpriv: '/usr/bin/setpriv' };
  assert.deepEqual(planSpawn(spec(account(1000, 'alice')), context), {
    file: '/usr/bin/setpriv',
    args: ['--reuid=1000', '--regid=500', '--init-groups', '--', '/usr/bin/python3', 'train.py', '--epochs', '3'],
    argv0: '/usr/bin/setpriv',
    cwd: '/home/alice',
    env: { HOME: '/home/alice' },
  });
  assert.deepEqual(planSpawn(spec(account(0, 'root')), context), { file: '/usr/bin/python3', args: ['train.py', '--epochs', '3'], argv0: 'python3', cwd: '/home/alice', env: { HOME: '/home/alice' } });
  assert.deepEqual(planSpawn(spec(null), { engineUid: 1000, setpriv: null }).file, '/usr/bin/python3');
  assert.deepEqual(planSpawn(spec(account(4242, '4242')), context).args.slice(0, 3), ['--reuid=4242', '--regid=500', '--clear-groups'], 'a uid without an account has no groups to look up');
  assert.throws(() => planSpawn(spec(account(1000, 'alice')), { engineUid: 0, setpriv: null }), /^Error: setpriv \(util-linux\) is not installed on this box, and the engine needs it to run alice's job as alice with their groups\. Install util-linux\. Nothing was started\.$/);
});

test('setpriv is found on PATH or where distributions put it', () => {
  const bin = join(dir, 'setpriv-bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'setpriv'), '#!/bin/sh\n');
  chmodSync(join(bin, 'setpriv'), 0o755);
  assert.equal(findSetpriv(`relative:${bin}`), join(bin, 'setpriv'));
  const found = findSetpriv('');
  assert.ok(found === null || ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv', '/sbin/setpriv'].includes(found), String(found));
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
