// The fallback hold for a job without a gate stops its whole process tree: a managed job runs in
// its own session, so its process group (pgid = its pid) holds everything it started.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { startFixtureEngine } from './testing/fixture-engine.js';
import { Freezer } from './freezer.js';
import { ProcessControl } from './process-control.js';
import { readProcStatus } from '../proc/proc-status.js';
import { untilWith } from '../../testing/until.js';
import { readSuspendRecord, writeSuspendRecord } from './suspend-record.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function recordPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-group-'));
  dirs.push(dir);
  return join(dir, 'suspended.json');
}

const until = untilWith({ timeoutMs: 10_000, intervalMs: 20 });

const stateOf = (pid: number) => readProcStatus(pid)?.state;

function childOf(pid: number): number | null {
  for (const name of readdirSync('/proc')) {
    const candidate = Number(name);
    if (Number.isInteger(candidate) && readProcStatus(candidate)?.ppid === pid) return candidate;
  }
  return null;
}

/** A job as gpushare starts one, in its own session, with a child of its own: [job pid, child pid]. */
async function jobWithChild(t: TestContext): Promise<[number, number]> {
  const job = spawn('sh', ['-c', 'sleep 60 & wait'], { detached: true, stdio: 'ignore' });
  t.after(() => {
    try {
      process.kill(-job.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const child = await until('the job started its child', () => childOf(job.pid!));
  return [job.pid!, child];
}

const bothStopped = (pids: number[]) => pids.every((p) => stateOf(p) === 'T');
const noneStopped = (pids: number[]) => pids.every((p) => stateOf(p) !== 'T');

test('a group hold stops the job and the child it started, records it as a group, and resume continues both', async (t) => {
  const record = recordPath();
  const freezer = new Freezer({ recordPath: record, control: new ProcessControl(), guardian: false });
  const [job, child] = await jobWithChild(t);
  freezer.suspend(job, 'j1', { group: true });
  await until(`job ${job} and its child ${child} are both stopped (state T)`, () => bothStopped([job, child]));
  assert.deepEqual(readSuspendRecord(record).map((e) => [e.pid, e.hold]), [[job, 'group']]);
  freezer.resume(job);
  await until('both run again', () => noneStopped([job, child]));
  assert.deepEqual(readSuspendRecord(record), []);
});

test('a group hold on a process that does not lead its own group is refused, and nothing is stopped or recorded', async (t) => {
  const record = recordPath();
  const freezer = new Freezer({ recordPath: record, control: new ProcessControl(), guardian: false });
  const plain: ChildProcess = spawn('sleep', ['60'], { stdio: 'ignore' }); // in the test's own process group
  t.after(() => {
    plain.kill('SIGKILL');
  });
  await until('the process started', () => stateOf(plain.pid!) !== undefined);
  assert.throws(() => freezer.suspend(plain.pid!, 'j1', { group: true }), /does not lead one/);
  assert.notEqual(stateOf(plain.pid!), 'T');
  assert.deepEqual(readSuspendRecord(record), []);
});

test('the guardian continues a stopped group when its engine is killed', async (t) => {
  const engine = await startFixtureEngine(t, { recordPath: recordPath() });
  const [job, child] = await jobWithChild(t);
  await engine.call({ op: 'suspend', pid: job, jobId: 'j1', group: true });
  await until('both are stopped', () => bothStopped([job, child]));
  engine.child.kill('SIGKILL');
  await until('both run again after the engine died', () => noneStopped([job, child]));
});

test('the next start continues a group a dead engine left stopped', async (t) => {
  const record = recordPath();
  const [job, child] = await jobWithChild(t);
  process.kill(-job, 'SIGSTOP');
  await until('both are stopped', () => bothStopped([job, child]));
  writeSuspendRecord(record, [{ pid: job, startTicks: readProcStatus(job)!.startTicks, jobId: 'j1', hold: 'group' }]);
  assert.deepEqual(Freezer.recoverLeftovers(record), [job]);
  await until('both run again', () => noneStopped([job, child]));
});

test('a group whose leader exited while stopped is continued when the engine forgets the leader', async (t) => {
  const freezer = new Freezer({ recordPath: recordPath(), control: new ProcessControl(), guardian: false });
  const [job, child] = await jobWithChild(t);
  freezer.suspend(job, 'j1', { group: true });
  await until('both are stopped', () => bothStopped([job, child]));
  process.kill(job, 'SIGKILL'); // the leader goes; its child stays stopped in the group
  await until('the leader is gone', () => stateOf(job) === undefined || stateOf(job) === 'Z' ? true : null);
  freezer.forget(job);
  await until(`the orphaned child ${child} runs again`, () => stateOf(child) !== 'T');
});
