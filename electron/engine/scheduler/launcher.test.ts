// Resolving a job's command as a shell would, with refusals that say what is wrong.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { resolveCommand } from './launcher.js';

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
