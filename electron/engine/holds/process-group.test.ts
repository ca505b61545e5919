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
import { readSuspendRecord, writeSuspendRecord } from './suspend-record.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function recordPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-group-'));
  dirs.push(dir);
  return join(dir, 'suspended.json');
}

/** Wait until `check` holds (generous deadline: this is about whether, not how fast). */
async function until<T>(check: () => T | null | false, what: string, limitMs = 10_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = check();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still not so after ${limitMs} ms`);
    await sleep(20);
  }
}

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
  const child = await until(() => childOf(job.pid!), 'the job started its child');
  return [job.pid!, child];
}

const bothStopped = (pids: number[]) => pids.every((p) => stateOf(p) === 'T');
const noneStopped = (pids: number[]) => pids.every((p) => stateOf(p) !== 'T');

test('a group hold stops the job and the child it started, records it as a group, and resume continues both', async (t) => {
  const record = recordPath();
  const freezer = new Freezer({ recordPath: record, control: new ProcessControl(), guardian: false });
  const [job, child] = await jobWithChild(t);
  freezer.suspend(job, 'j1', { group: true });
  await until(() => bothStopped([job, child]), `job ${job} and its child ${child} are both stopped (state T)`);
  assert.deepEqual(readSuspendRecord(record).map((e) => [e.pid, e.hold]), [[job, 'group']]);
  freezer.resume(job);
  await until(() => noneStopped([job, child]), 'both run again');
  assert.deepEqual(readSuspendRecord(record), []);
});

test('a group hold on a process that does not lead its own group is refused, and nothing is stopped or recorded', async (t) => {
  const record = recordPath();
  const freezer = new Freezer({ recordPath: record, control: new ProcessControl(), guardian: false });
  const plain: ChildProcess = spawn('sleep', ['60'], { stdio: 'ignore' }); // in the test's own process group
  t.after(() => {
    plain.kill('SIGKILL');
  });
  await until(() => stateOf(plain.pid!) !== undefined, 'the process started');
  assert.throws(() => freezer.suspend(plain.pid!, 'j1', { group: true }), /does not lead one/);
  assert.notEqual(stateOf(plain.pid!), 'T');
  assert.deepEqual(readSuspendRecord(record), []);
});

test('the guardian continues a stopped group when its engine is killed', async (t) => {
  const engine = await startFixtureEngine(t, { recordPath: recordPath() });
  const [job, child] = await jobWithChild(t);
  await engine.call({ op: 'suspend', pid: job, jobId: 'j1', group: true });
  await until(() => bothStopped([job, child]), 'both are stopped');
  engine.child.kill('SIGKILL');
  await until(() => noneStopped([job, child]), 'both run again after the engine died');
});

test('the next start continues a group a dead engine left stopped', async (t) => {
  const record = recordPath();
  const [job, child] = await jobWithChild(t);
  process.kill(-job, 'SIGSTOP');
  await until(() => bothStopped([job, child]), 'both are stopped');
  writeSuspendRecord(record, [{ pid: job, startTicks: readProcStatus(job)!.startTicks, jobId: 'j1', hold: 'group' }]);
  assert.deepEqual(Freezer.recoverLeftovers(record), [job]);
  await until(() => noneStopped([job, child]), 'both run again');
});

test('a group whose leader exited while stopped is continued when the engine forgets the leader', async (t) => {
  const freezer = new Freezer({ recordPath: recordPath(), control: new ProcessControl(), guardian: false });
  const [job, child] = await jobWithChild(t);
  freezer.suspend(job, 'j1', { group: true });
  await until(() => bothStopped([job, child]), 'both are stopped');
  process.kill(job, 'SIGKILL'); // the leader goes; its child stays stopped in the group
  await until(() => stateOf(job) === undefined || stateOf(job) === 'Z' ? true : null, 'the leader is gone');
  freezer.forget(job);
  await until(() => stateOf(child) !== 'T', `the orphaned child ${child} runs again`);
});
