// A user's groups as the lab policy names them: the primary group (passwd gid) and every group listing them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cachedGroupsOf, readGroupsOf, systemGroupNames } from './account-groups.js';

test('groups: the primary group by gid and supplementary membership; an unknown file or user gives none', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-groups-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const passwd = join(dir, 'passwd');
  const group = join(dir, 'group');
  writeFileSync(passwd, 'root:x:0:0:root:/root:/bin/bash\nalice:x:1001:2000::/home/alice:/bin/sh\nbob:x:1002:1002::/home/bob:/bin/sh\n');
  writeFileSync(group, '# comment\nroot:x:0:\nlab:x:2000:\nstudents:x:3000:carol,alice\nstaff:x:3001:bob\nalicefans:x:3002:alicex\n');
  const files = { passwd, group };
  assert.deepEqual(readGroupsOf('alice', 1001, files), ['lab', 'students']);
  assert.deepEqual(readGroupsOf('bob', 1002, files), ['staff']);
  assert.deepEqual(readGroupsOf('carol', 1003, files), ['students'], 'not in passwd, still a listed member');
  assert.deepEqual(readGroupsOf('alice', 1001, { passwd, group: join(dir, 'missing') }), []);

  let now = 0;
  const cached = cachedGroupsOf((user, uid) => readGroupsOf(user, uid, files), () => now);
  assert.deepEqual(cached('bob', 1002), ['staff']);
  writeFileSync(group, 'staff:x:3001:\nadmins:x:3003:bob\n');
  assert.deepEqual(cached('bob', 1002), ['staff'], 'read again at most once a minute');
  now = 60_000;
  assert.deepEqual(cached('bob', 1002), ['admins'], 'a group change applies within a minute');
});

test('a real account\'s groups: root is in group root', () => {
  assert.ok(systemGroupNames('root', 0).includes('root'));
});
