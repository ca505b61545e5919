// The registrations file: what register() wrote comes back; the dead, a bad entry, a file others could write and
// more than a user's bound are not believed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { readProcStatus } from '../proc/proc-status.js';
import { MAX_REGISTRATIONS_PER_USER, REGISTRATIONS_FILE, Registrations } from './registrations.js';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gpushare-reg-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const me = readProcStatus(process.pid)!;
const mine = { uid: me.uid, pid: process.pid, startTicks: me.startTicks };
const file = (): string => join(dir, REGISTRATIONS_FILE);

test('a registration is on disk (0600, replaced whole) and read back by the next engine', () => {
  new Registrations({ dir }).add({ ...mine, priority: 'best-effort', memoryQuotaBytes: 1024 });
  assert.equal(statSync(file()).mode & 0o777, 0o600);
  assert.deepEqual(new Registrations({ dir }).get(process.pid, me.startTicks), { ...mine, priority: 'best-effort', memoryQuotaBytes: 1024 });
});

test('a dead process, another start time, a bad field and a file others may write are not believed', () => {
  const entries = [
    { ...mine, startTicks: me.startTicks + 1 }, // the pid reused
    { ...mine, pid: 0x3ffffff0 }, // no such process
    { ...mine, priority: 'root' },
    { ...mine, memoryQuotaBytes: -1 },
    { ...mine, uid: me.uid + 1 }, // not the process's user
  ];
  writeFileSync(file(), JSON.stringify({ registrations: entries }), { mode: 0o600 });
  const r = new Registrations({ dir });
  assert.equal(r.liveCountOf(me.uid) + r.liveCountOf(me.uid + 1), 0);
  assert.deepEqual(JSON.parse(readFileSync(file(), 'utf8')), { registrations: [] }, 'dropped on disk too');
  writeFileSync(file(), JSON.stringify({ registrations: [mine] }), { mode: 0o600 });
  chmodSync(file(), 0o666);
  assert.equal(new Registrations({ dir }).get(process.pid, me.startTicks), undefined, 'a world-writable file is ignored');
});

test('an older file\'s entry without its process\'s start time is dropped, with a line in the log', () => {
  writeFileSync(file(), JSON.stringify({ registrations: [{ uid: me.uid, pid: process.pid }, mine] }), { mode: 0o600 });
  const logged: string[] = [];
  const r = new Registrations({ dir, log: (line) => logged.push(line) });
  assert.equal(r.liveCountOf(me.uid), 1, 'only the entry with a start time, though both name a live process of the user');
  assert.deepEqual(logged, [`${file()}: pid ${process.pid}'s registration has no start time (an older file), so it cannot be told from a process that took the pid since: dropped`]);
});

test('no more than a user\'s bound come back from the file', (t) => {
  const sleepers = Array.from({ length: MAX_REGISTRATIONS_PER_USER + 2 }, () => spawn('sleep', ['30']));
  t.after(() => sleepers.forEach((c) => c.kill('SIGKILL')));
  const entries = sleepers.map((c) => ({ uid: me.uid, pid: c.pid!, startTicks: readProcStatus(c.pid!)!.startTicks }));
  writeFileSync(file(), JSON.stringify({ registrations: entries }), { mode: 0o600 });
  assert.equal(new Registrations({ dir }).liveCountOf(me.uid), MAX_REGISTRATIONS_PER_USER);
});
