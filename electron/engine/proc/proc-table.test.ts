import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ProcTable } from './proc-table.js';

/** A miniature /proc with one process whose comm holds spaces and parentheses. */
function fakeProc(): { root: string; passwd: string } {
  const root = mkdtempSync(join(tmpdir(), 'gpushare-proc-'));
  writeFileSync(join(root, 'stat'), 'cpu  1 2 3\nbtime 1700000000\n');
  mkdirSync(join(root, '4242'));
  // start time (field 22) = 12345 ticks = 123.45 s after boot
  const fields = ['S', ...Array.from({ length: 18 }, (_, i) => String(i + 1)), '12345', '0'];
  writeFileSync(join(root, '4242', 'stat'), `4242 (py (worker) 1) ${fields.join(' ')}\n`);
  writeFileSync(join(root, '4242', 'cmdline'), ['python3', '/home/ada/train.py', '--epochs', '003', ''].join('\0'));
  const passwd = join(root, 'passwd');
  writeFileSync(passwd, `root:x:0:0:root:/root:/bin/bash\nada:x:${process.getuid!()}:1000::/home/ada:/bin/sh\n`);
  return { root, passwd };
}

test('reads owner, command line and start time once per pid', () => {
  const { root, passwd } = fakeProc();
  try {
    const table = new ProcTable(root, passwd);
    const who = table.lookup(4242);
    assert.equal(who.visible, true);
    assert.equal(who.user, 'ada');
    assert.equal(who.command, 'python3');
    assert.deepEqual(who.argv, ['python3', '/home/ada/train.py', '--epochs', '003']);
    assert.equal(who.startedAt, 1700000000_000 + 123_450);
    // cached: the file may go away and the identity stays while the pid is on a GPU
    rmSync(join(root, '4242'), { recursive: true });
    assert.equal(table.lookup(4242).user, 'ada');
    table.retainOnly(new Set());
    assert.equal(table.size, 0);
    assert.equal(table.lookup(4242).visible, false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a pid that is gone is reported as not visible, never thrown', () => {
  const table = new ProcTable();
  const who = table.lookup(2 ** 22 + 17); // above pid_max on every default Linux
  assert.equal(who.visible, false);
  assert.equal(who.user, null);
});

test('the real /proc resolves this very process', () => {
  const who = new ProcTable().lookup(process.pid);
  assert.equal(who.visible, true);
  assert.equal(who.uid, process.getuid!());
  assert.ok(who.argv.length > 0);
  assert.ok(Math.abs(who.startedAt! - (Date.now() - process.uptime() * 1000)) < 5000, 'start time within 5 s');
});
