// Job logs: where they go, job numbers found in them, and (root) a user's folder that they may have
// filled with traps: a symlink, a hard link, a FIFO, a planted file. None makes the engine write elsewhere,
// hand over a file it did not create, or hang.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { highestLoggedJobNumber, jobLogPath, openJobLog } from './job-log.js';

const SKIP_ROOT = process.getuid?.() === 0 ? false : 'needs root: logs are given to their users with chown';

test("a personal engine's logs are in logs/, another user's in their own folder, named by their name or else their uid", () => {
  assert.equal(jobLogPath('/s/logs', 'j3', null), '/s/logs/j3.log');
  assert.equal(jobLogPath('/s/logs', 'j3', { uid: 1000, name: 'alice' }), '/s/logs/alice/j3.log');
  assert.equal(jobLogPath('/s/logs', 'j3', { uid: 1000, name: 'ad$' }), '/s/logs/ad$/j3.log', 'a machine account (Samba) is a name');
  assert.equal(jobLogPath('/s/logs', 'j3', { uid: 4242, name: '4242' }), '/s/logs/uid-4242/j3.log');
  assert.equal(jobLogPath('/s/logs', 'j3', { uid: 7, name: '..' }), '/s/logs/uid-7/j3.log');
});

test("job numbers continue after every log, in logs/ and in each user's folder; a number past 9 digits is nobody's", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-joblog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal(highestLoggedJobNumber(join(dir, 'none')), 0);
  mkdirSync(join(dir, 'alice'));
  mkdirSync(join(dir, 'bob'));
  for (const path of ['j3.log', 'alice/j12.log', 'bob/j7.log', 'bob/j99999999999.log', 'bob/notes.txt']) writeFileSync(join(dir, path), '');
  assert.equal(highestLoggedJobNumber(dir), 12);
});

test("a user's log folder is the engine's (root, 0711) in a root-owned 0755 logs/; each log is created new and given to its user: a symlink, hard link, FIFO or file already at its name is refused, and what it points at untouched", { skip: SKIP_ROOT }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-joblog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const logs = join(dir, 'logs');
  mkdirSync(logs, { mode: 0o700 }); // as an earlier personal engine left it
  const owner = { uid: 65534, gid: 65534, name: 'nobody' };
  const fd = openJobLog(jobLogPath(logs, 'j1', owner), owner);
  writeSync(fd, 'hello\n');
  closeSync(fd);
  const mode = (path: string) => { const s = statSync(path); return [s.uid, s.gid, s.mode & 0o7777]; };
  assert.deepEqual(mode(logs), [0, 0, 0o755]);
  assert.deepEqual(mode(join(logs, 'nobody')), [0, 0, 0o711]);
  assert.deepEqual(mode(join(logs, 'nobody', 'j1.log')), [65534, 65534, 0o600]);
  assert.throws(() => openJobLog(jobLogPath(logs, 'j1', owner), owner), /j1\.log already exists; the engine writes a job's log only to a file it creates new\. An administrator can remove it \(the folder is the engine's\)\./, 'not even its own earlier log is adopted');

  const secret = join(dir, 'secret');
  writeFileSync(secret, 'root only\n', { mode: 0o600 });
  symlinkSync(secret, join(logs, 'nobody', 'j2.log'));
  linkSync(secret, join(logs, 'nobody', 'j3.log'));
  execFileSync('mkfifo', [join(logs, 'nobody', 'j4.log')]);
  writeFileSync(join(logs, 'nobody', 'j5.log'), 'planted\n', { mode: 0o600 });
  for (const id of ['j2', 'j3', 'j4', 'j5']) assert.throws(() => openJobLog(jobLogPath(logs, id, owner), owner), new RegExp(`${id}\\.log already exists`), `${id}: refused at once, not followed, adopted or waited on`);
  assert.deepEqual(mode(secret), [0, 0, 0o600]);
  assert.equal(readFileSync(secret, 'utf8'), 'root only\n');
  assert.deepEqual(mode(join(logs, 'nobody', 'j5.log')), [0, 0, 0o600]);
});

test("a log folder an older engine gave its user (theirs, 0700) is taken back: root's, 0711; a symlink in its place is refused, not followed", { skip: SKIP_ROOT }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-joblog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const logs = join(dir, 'logs');
  const owner = { uid: 65534, gid: 65534, name: 'nobody' };
  mkdirSync(join(logs, 'nobody'), { recursive: true, mode: 0o700 });
  chownSync(join(logs, 'nobody'), 65534, 65534);
  closeSync(openJobLog(jobLogPath(logs, 'j1', owner), owner));
  const s = statSync(join(logs, 'nobody'));
  assert.deepEqual([s.uid, s.gid, s.mode & 0o7777], [0, 0, 0o711]);

  const elsewhere = join(dir, 'elsewhere');
  mkdirSync(elsewhere, { mode: 0o700 });
  const other = { uid: 65533, gid: 65533, name: 'other' };
  symlinkSync(elsewhere, join(logs, 'other'));
  assert.throws(() => openJobLog(jobLogPath(logs, 'j2', other), other), /other is not a directory; remove it so job logs can go there\./);
  const e = statSync(elsewhere);
  assert.deepEqual([e.uid, e.mode & 0o7777], [0, 0o700], 'where it pointed is untouched');
  assert.equal(existsSync(join(elsewhere, 'j2.log')), false);
});
