// After an engine restart an enrolled job's members come back from its gate slot's process table, which the
// job's own processes write: only the listed processes the kernel says are the job's user's count, each known
// from then on by its start time; another user's process listed there neither keeps the job alive nor joins it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import type { Scheduler } from '../scheduler/scheduler.js';
import { JobTable, newJobView } from '../scheduler/job-table.js';
import { readProcStatus } from '../proc/proc-status.js';
import { until } from '../../testing/until.js';
import { Enrolment } from './enrolment.js';

test("an enrolled job lives on through its slot's listed processes only where they are its user's", async (t) => {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const pid = child.pid!;
  const me = process.getuid!();
  await until('the listed process running', () => readProcStatus(pid) !== null);
  const joined: Array<[number, number]> = [];
  const scheduler = {
    gate: { readSlot: () => ({ processes: [{ pid, alive: true, usedBytes: 0 }] }) },
    ownership: { member: (_job: string, p: number, startTicks: number) => joined.push([p, startTicks]) },
  } as unknown as Scheduler;
  const enrolment = new Enrolment(scheduler);
  const job = (uid: number) =>
    new JobTable().add(
      newJobView({ id: 'j5', managed: true, owner: 'ann', uid, argv: ['python'], gpu: 0, pid: 0x3ffffff0, enrolled: { by: 'tree', group: 'tree:j5', name: null, pgid: 1, sid: 1 } }, 'running', 'enrolled'),
      { startTicks: 1, slot: 2 }, // its first process is gone (no such pid)
    );
  assert.equal(enrolment.alive(job(me + 4242)), false, "another user's process listed in the slot keeps nobody's job alive");
  assert.deepEqual(joined, [], 'nor joins it');
  assert.equal(enrolment.alive(job(me)), true, "the same list for a job of the process's own user");
  assert.deepEqual(joined, [[pid, readProcStatus(pid)!.startTicks]], 'a member by pid and start time');
});
