// The bounded reads over fixture files: what each keeps, what it counts, and where a variable or a cut falls across
// the reader's 64 KB chunks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readEnvironVariables, readHead, readStart, readStateFile } from './bounded-read.js';

const dir = mkdtempSync(join(tmpdir(), 'gpushare-bounded-read-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const CHUNK = 64 * 1024;

test('a variable is found wherever it falls across the chunks, its value cut to the bound; names that only look alike are not', () => {
  const names = new Set(['SSH_TTY', 'HOSTNAME']);
  const file = join(dir, 'environ');
  for (let start = CHUNK - 12; start <= CHUNK + 12; start++) {
    const pad = `A=${'x'.repeat(start - 3)}`; // its NUL is byte start - 1: SSH_TTY starts at `start`
    writeFileSync(file, [pad, 'SSH_TTY=/dev/pts/3', 'XHOSTNAME=no', 'HOSTNAMEX=no', `HOSTNAME=${'h'.repeat(5000)}`, ''].join('\0'));
    const found = readEnvironVariables(file, names, 100)!;
    assert.equal(found.get('SSH_TTY'), '/dev/pts/3', `starting at byte ${start}`);
    assert.equal(found.get('HOSTNAME'), 'h'.repeat(100), 'cut to 100 bytes');
    assert.equal(found.size, 2);
  }
  assert.equal(readEnvironVariables(join(dir, 'absent'), names, 100), null);
});

test('the head of a file and its whole length, NULs and last byte, past several chunks', () => {
  const file = join(dir, 'cmdline');
  const args = Array.from({ length: 40 }, (_, i) => String(i).repeat(7000));
  writeFileSync(file, args.join('\0') + '\0');
  const whole = readHead(file, 4096)!;
  assert.equal(whole.head.toString(), args.join('\0').slice(0, 4096));
  assert.equal(whole.bytes, args.join('\0').length + 1);
  assert.equal(whole.nuls, 40);
  assert.equal(whole.endsWithNul, true);
  writeFileSync(file, 'no NUL at all');
  assert.deepEqual({ ...readHead(file, 4096)!, head: null }, { head: null, bytes: 13, nuls: 0, endsWithNul: false });
  assert.equal(readStart(file, 5), 'no NU');
});

test('a state file is read only as a regular file within its bound', () => {
  const file = join(dir, 'state.json');
  writeFileSync(file, '{"a":1}');
  assert.equal(readStateFile(file, 100), '{"a":1}');
  assert.equal(readStateFile(file, 6), null, 'larger than its bound');
  const zero = join(dir, 'zero.json');
  symlinkSync('/dev/zero', zero);
  assert.equal(readStateFile(zero, 100), null, 'a symlink (to a device) is not followed');
  const fifo = join(dir, 'fifo.json');
  execFileSync('mkfifo', [fifo]);
  assert.equal(readStateFile(fifo, 100), null, 'a FIFO is not read');
});
