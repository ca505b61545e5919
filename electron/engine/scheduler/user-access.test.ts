// Reach as another user, from mode bits: one class of bits applies (owner, else group, else other),
// and a symlink on the way counts through where it leads.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { permitsExecute, reach } from './user-access.js';

const dirStats = (mode: number, uid: number, gid: number) => ({ mode, uid, gid, isDirectory: () => true });
const fileStats = (mode: number, uid: number, gid: number) => ({ mode, uid, gid, isDirectory: () => false });

test('the owner class decides for the owner and the group class for a member, even where others may', () => {
  const alice = { uid: 1000, gid: 1000, groups: [1000, 2000] };
  assert.equal(permitsExecute(dirStats(0o601, 1000, 3000), alice), false, 'owner bits rw-: others\' x does not help the owner');
  assert.equal(permitsExecute(dirStats(0o061, 1, 2000), alice), false, 'group bits rw- through a supplementary group');
  assert.equal(permitsExecute(dirStats(0o010, 1, 2000), alice), true, 'group x through a supplementary group');
  assert.equal(permitsExecute(dirStats(0o001, 1, 3000), alice), true, 'other x');
  assert.equal(permitsExecute(dirStats(0o000, 1, 3000), { uid: 0, gid: 0, groups: [] }), true, 'root searches any directory');
  assert.equal(permitsExecute(fileStats(0o644, 1, 3000), { uid: 0, gid: 0, groups: [] }), false, 'root runs only what has an x bit');
  assert.equal(permitsExecute(fileStats(0o100, 1, 3000), { uid: 0, gid: 0, groups: [] }), true);
});

test('a symlink into a closed directory is closed where it leads, whether or not the path behind it exists', (t) => {
  const area = mkdtempSync('/tmp/gpushare-access-'); // every user can traverse to it, unlike a private TMPDIR
  t.after(() => rmSync(area, { recursive: true, force: true }));
  chmodSync(area, 0o755);
  const stranger = { uid: process.getuid!() + 54321, gid: process.getgid!() + 54321, groups: [] };
  mkdirSync(join(area, 'closed', 'open'), { recursive: true });
  chmodSync(join(area, 'closed'), 0o700);
  chmodSync(join(area, 'closed', 'open'), 0o777);
  symlinkSync(join(area, 'closed', 'open'), join(area, 'link'));
  assert.deepEqual(reach(join(area, 'link'), stranger), { ok: false, problem: 'closed', at: join(area, 'closed') });
  assert.deepEqual(reach(join(area, 'link', 'x'), stranger), { ok: false, problem: 'closed', at: join(area, 'closed') }, 'not "missing": nothing is told of what lies behind it');
  assert.deepEqual(reach(join(area, 'nothing', 'x'), stranger), { ok: false, problem: 'missing', at: join(area, 'nothing') });
  assert.deepEqual(reach(join(area, 'closed', 'open'), stranger), { ok: false, problem: 'closed', at: join(area, 'closed') });
});
