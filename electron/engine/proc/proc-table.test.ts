import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

test('a command line of megabytes is read through a small buffer and shown as its first 4 KB, with its whole size noted', () => {
  const { root, passwd } = fakeProc();
  try {
    const stat = readFileSync(join(root, '4242', 'stat'));
    const cases: Array<[string, string[], string]> = [
      ['plain', ['python3', 'train.py', ...Array.from({ length: 60 }, () => 'x'.repeat(100_000))], '\0'],
      ['control characters (six bytes of JSON each)', ['python3', '\x01'.repeat(3 * 1024 * 1024)], '\0'],
      ['multibyte, cut inside a character', ['python3', 'é'.repeat(3 * 1024 * 1024)], '\0'],
      ['rewritten by its process (no NULs)', ['python3 ' + 'y'.repeat(5 * 1024 * 1024)], ''],
    ];
    for (const [what, args, end] of cases) {
      const raw = Buffer.from(args.join('\0') + end);
      mkdirSync(join(root, '77'), { recursive: true });
      writeFileSync(join(root, '77', 'stat'), stat);
      writeFileSync(join(root, '77', 'cmdline'), raw);
      const who = new ProcTable(root, passwd).lookup(77);
      const shown = Buffer.byteLength(JSON.stringify(who.argv));
      assert.ok(shown <= 4096 && shown > 3000, `${what}: argv shown in at most 4 KB of JSON (${shown})`);
      assert.deepEqual(who.argvCut, { bytes: raw.length, args: args.length }, `${what}: its whole size noted`);
      const last = who.argv.length - 1;
      assert.deepEqual(who.argv.slice(0, last), args.slice(0, last), `${what}: the arguments before the cut are whole`);
      assert.ok(args[last].startsWith(who.argv[last]), `${what}: the last one shown is the start of that argument`);
      assert.ok(!who.argv[last].includes('\ufffd'), `${what}: no half character`);
      if (!what.startsWith('rewritten')) assert.equal(who.command, 'python3');
      else assert.ok(who.command!.startsWith('python3 yyy') && who.command!.endsWith('…') && Buffer.byteLength(JSON.stringify(who.command)) <= 256, `${what}: its name is a line`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a short command line is whole: no cut noted', () => {
  const { root, passwd } = fakeProc();
  try {
    assert.equal(new ProcTable(root, passwd).lookup(4242).argvCut, null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
