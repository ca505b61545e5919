// Auto-park's choices without a GPU: who is protected, which idle jobs are parked for how many bytes,
// and the park files the preload library writes (read by the engine, owned by the job's user).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Priority } from '../../../shared/jobs.js';
import { parseDaemonConfig } from '../../../shared/lab-policy.js';
import { userConfigSchema } from '../../../shared/settings.js';
import { chooseVictims, protectedFromAutoPark } from './auto-park.js';
import { JobTable, newJobView, type JobRecord } from './job-table.js';
import { ParkRequests } from './park-requests.js';

const GiB = 1024 ** 3;
const table = new JobTable();

function job(id: string, priority: Priority, usedGiB: number, extra: { managed?: boolean; keepResident?: boolean } = {}): JobRecord {
  const view = newJobView({ id, managed: extra.managed ?? true, owner: 'ada', uid: 1000, argv: ['python'], priority, usedMemory: usedGiB * GiB, keepResident: extra.keepResident }, 'running', 'test');
  return table.add(view, {});
}

test('protected from auto-park: high priority, keep resident, and processes gpushare did not start', () => {
  assert.equal(protectedFromAutoPark(job('j1', 'normal', 1)), null);
  assert.equal(protectedFromAutoPark(job('j2', 'best-effort', 1)), null);
  assert.match(protectedFromAutoPark(job('j3', 'high', 1))!, /high priority/);
  assert.match(protectedFromAutoPark(job('j4', 'normal', 1, { keepResident: true }))!, /keep resident/);
  assert.match(protectedFromAutoPark(job('p42', 'best-effort', 1, { managed: false }))!, /did not start it/);
});

test('victims: the longest idle first, only as many as the bytes need, never of higher priority than the job that needs them', () => {
  const a = job('j10', 'normal', 10);
  const b = job('j11', 'normal', 30);
  const c = job('j12', 'best-effort', 20);
  const idle = [
    { record: a, idleSince: 300 },
    { record: b, idleSince: 100 },
    { record: c, idleSince: 200 },
  ];
  assert.deepEqual(chooseVictims(idle, 25 * GiB, 'normal')?.map((r) => r.view.id), ['j11'], 'the longest idle frees enough alone');
  assert.deepEqual(chooseVictims(idle, 45 * GiB, 'normal')?.map((r) => r.view.id), ['j11', 'j12']);
  assert.equal(chooseVictims(idle, 61 * GiB, 'normal'), null, 'not enough: nobody is parked for nothing');
  assert.deepEqual(chooseVictims(idle, 15 * GiB, 'best-effort')?.map((r) => r.view.id), ['j12'], 'a best-effort job takes only best-effort memory');
  assert.equal(chooseVictims(idle, 25 * GiB, 'best-effort'), null);
  assert.deepEqual(chooseVictims(idle, 0, 'normal'), []);
});

test('park files: made fresh per job with the magic, read back as the preload library writes them, refused for ids that are not jobs', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-park-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const files = new ParkRequests(join(dir, 'park'), false);
  t.after(() => files.close());
  const path = files.create('j7', null);
  assert.equal(path, join(dir, 'park', 'j7'));
  assert.equal(statSync(path).mode & 0o777, 0o600, 'only the job (its user) may write it');
  assert.equal(statSync(join(dir, 'park')).mode & 0o777, 0o700);
  assert.deepEqual(files.read('j7'), { inCall: 0, calls: 0, lastCallNs: 0n });
  // as park.c writes it: a thread in a call, 5 calls, the last at 123 ns
  const page = Buffer.alloc(32);
  page.writeBigUInt64LE(0x31304b5241505347n, 0);
  page.writeUInt32LE(1, 8);
  page.writeBigUInt64LE(5n, 16);
  page.writeBigUInt64LE(123n, 24);
  writeFileSync(path, page, { flag: 'r+' });
  assert.deepEqual(files.read('j7'), { inCall: 1, calls: 5, lastCallNs: 123n });
  truncateSync(path, 0); // the job may truncate its own file: it then says nothing
  assert.deepEqual(files.read('j7'), { inCall: 0, calls: 0, lastCallNs: 0n });
  assert.equal(files.read('j8'), null, 'no file: no reading');
  assert.throws(() => files.create('../etc', null), /only managed jobs \(j<number>\) have one/);
  assert.throws(() => files.create('p42', null), /only managed jobs/);
  files.remove('j7');
  assert.throws(() => statSync(path), /ENOENT/);
});

test('the idle time is a setting of the daemon and of a personal engine, bounded, off when absent', () => {
  assert.equal(parseDaemonConfig({}).autoParkIdleSeconds, undefined);
  assert.equal(parseDaemonConfig({ autoParkIdleSeconds: null }).autoParkIdleSeconds, undefined);
  assert.equal(parseDaemonConfig({ autoParkIdleSeconds: 600 }).autoParkIdleSeconds, 600);
  assert.throws(() => parseDaemonConfig({ autoParkIdleSeconds: 5 }), /autoParkIdleSeconds: must be at least 10/);
  assert.throws(() => parseDaemonConfig({ autoParkIdleSeconds: 1.5 }), /autoParkIdleSeconds: must be a whole number/);
  assert.deepEqual(userConfigSchema.parse({ engine: { autoParkIdleSeconds: 300 } }, ''), { engine: { autoParkIdleSeconds: 300 } });
  assert.throws(() => userConfigSchema.parse({ engine: { autoParkIdleSeconds: 100_000 } }, ''), /engine\.autoParkIdleSeconds: must be at most 86400/);
});
