// Idle memory holders on a fake clock: a notice after notifyAfterMinutes, a park after the grace
// when the policy parks, none when it does not or the job is high priority.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../../../shared/jobs.js';
import { JobTable, newJobView, type JobRecord } from '../job-table.js';
import { IdleHolders } from './idle-holders.js';

const G = 1024 ** 3;
const MIN = 60_000;

function holder(table: JobTable, fields: Partial<JobView> & { id: string }): JobRecord {
  return table.add(newJobView({ managed: true, owner: 'alice', uid: 1000, argv: ['/usr/bin/python3'], gpu: 0, usedMemory: 12 * G, smPercent: 0, ...fields }, 'running', 'test'));
}

/** Observe every minute from 0 to `untilMin`; returns, per minute, the conditions' job ids and the parks asked. */
function run(idle: IdleHolders, records: JobRecord[], untilMin: number, policy: { notifyAfterMinutes: number; graceMinutes: number; park: boolean }, each?: (minute: number) => void) {
  const log: Array<{ minute: number; idle: string[]; park: string[] }> = [];
  for (let minute = 0; minute <= untilMin; minute++) {
    each?.(minute);
    const d = idle.observe(records, minute * MIN, policy);
    log.push({ minute, idle: d.conditions.map((c) => c.jobId!), park: d.park.map((r) => r.view.id) });
  }
  return log;
}

test('an idle holder is reported after notifyAfterMinutes and parked once after the grace when park is on', () => {
  const t = new JobTable();
  const j1 = holder(t, { id: 'j1' });
  const idle = new IdleHolders();
  const log = run(idle, [j1], 12, { notifyAfterMinutes: 5, graceMinutes: 3, park: true });
  assert.deepEqual(log.filter((l) => l.idle.length > 0).map((l) => l.minute), [5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(log.filter((l) => l.park.length > 0).map((l) => l.minute), [8], 'asked once, not every tick');
  const first = idle.observe([j1], 5 * MIN, { notifyAfterMinutes: 5, graceMinutes: 3, park: true }).conditions[0];
  assert.equal(first.kind, 'idle');
  assert.equal(first.key, 'idle:j1');
  assert.equal(first.message, 'j1 (python3, alice) holds 12G of GPU 0 memory and has not computed for 5 min. It will be parked in 3 min unless it computes (lab policy); unpark it when you need it again.');
});

test('activity, a hold of the scheduler\'s, or no memory starts the idle clock afresh', () => {
  const t = new JobTable();
  const j1 = holder(t, { id: 'j1' });
  const j2 = holder(t, { id: 'j2' });
  const j3 = holder(t, { id: 'j3', usedMemory: 0 });
  const log = run(new IdleHolders(), [j1, j2, j3], 10, { notifyAfterMinutes: 5, graceMinutes: 0, park: true }, (minute) => {
    j1.view.smPercent = minute === 3 ? 40 : 0; // computed at minute 3
    if (minute === 2) j2.holds.add('priority'); // held back by the scheduler for minutes 2..4
    if (minute === 5) j2.holds.delete('priority');
  });
  assert.deepEqual(log.find((l) => l.minute === 7)!.idle, [], 'j1 idle since 4, j2 since 5');
  assert.deepEqual(log.find((l) => l.minute === 9)!.idle, ['j1']);
  assert.deepEqual(log.find((l) => l.minute === 10)!.idle, ['j1', 'j2']);
  assert.deepEqual(log.find((l) => l.minute === 10)!.park, ['j2']);
  assert.ok(log.every((l) => !l.idle.includes('j3')), 'holding no memory is not holding');
});

test('no park when the policy does not park, nor for a high-priority job: the notice says to free it', () => {
  const t = new JobTable();
  const j1 = holder(t, { id: 'j1' });
  const j2 = holder(t, { id: 'j2', priority: 'high' });
  const off = run(new IdleHolders(), [j1], 30, { notifyAfterMinutes: 5, graceMinutes: 1, park: false });
  assert.ok(off.every((l) => l.park.length === 0));
  assert.deepEqual(off.at(-1)!.idle, ['j1']);
  const idle = new IdleHolders();
  const high = run(idle, [j2], 30, { notifyAfterMinutes: 5, graceMinutes: 1, park: true });
  assert.ok(high.every((l) => l.park.length === 0));
  assert.match(idle.observe([j2], 31 * MIN, { notifyAfterMinutes: 5, graceMinutes: 1, park: true }).conditions[0].message, /has not computed for 31 min\. Free it if it is no longer needed \(lab policy\)\.$/);
});
