// Every signal the actuators send to a job's process goes through the ProcessControl's signaller (the kernel's
// pidfds in the daemon), with the pid and start time the engine checked. The signaller here records and sends
// nothing: the real child staying asleep shows no signal went around it. One that answers "other" stands for
// the pid taken by another process between the check and the signal.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { Freezer } from '../holds/freezer.js';
import { ProcessControl } from '../holds/process-control.js';
import { resumeRecorded } from '../holds/suspend-record.js';
import { readProcStatus } from '../proc/proc-status.js';
import type { ProcessSignaller, SignalOutcome } from '../proc/process-signal.js';
import { JobActuators } from './actuators.js';
import { JobTable, newJobView, type JobRecord } from './job-table.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpushare-pidfd-signals-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let rigs = 0;

function rig(answer: SignalOutcome = 'sent') {
  const sent: string[] = [];
  const signaller: ProcessSignaller = (target, signal, options = {}) => {
    sent.push(`${signal} ${target.pid}@${target.startTicks}${options.group ? ' group' : ''}`);
    return answer;
  };
  const logged: string[] = [];
  const control = new ProcessControl({ signaller });
  const freezer = new Freezer({ recordPath: join(scratch, `suspended-${++rigs}.json`), control, guardian: false });
  const act = new JobActuators({ control, freezer, gate: null, checkpointer: null as never, mps: null, log: (line) => logged.push(line), terminateGraceMs: 10 });
  after(() => {
    freezer.stop();
    control.dispose();
  });
  return { sent, act, freezer, control };
}

/** A real process in its own session (a managed job's shape): the signaller names it; nothing may reach it otherwise. */
function sleeper(t: TestContext): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore', detached: true });
  t.after(() => child.kill('SIGKILL'));
  return child as ChildProcess & { pid: number };
}

function job(child: { pid: number }, managed: boolean): JobRecord {
  const view = newJobView({ id: `j${child.pid}`, managed, owner: 'ann', uid: process.getuid!(), argv: ['sleep'], gpu: 0, pid: child.pid }, 'running', 'started');
  return new JobTable().add(view, { startTicks: readProcStatus(child.pid)!.startTicks });
}

const realState = (pid: number): string => readProcStatus(pid)!.state;

test('pause, unpause, terminate and the engine\'s stop send every signal through the signaller, naming the process checked', async (t) => {
  const { sent, act, freezer } = rig();
  const child = sleeper(t);
  const record = job(child, false);
  const me = `${child.pid}@${record.startTicks}`;
  act.pause(record);
  act.unpause(record);
  act.pause(record);
  freezer.forget(child.pid); // the driver stopped listing it: let go of the hold
  act.pause(record);
  freezer.stop(); // a clean engine stop resumes what it holds
  act.terminate(record);
  await new Promise((r) => setTimeout(r, 50)); // past the grace period: the SIGKILL too
  assert.deepEqual(sent, [
    `SIGSTOP ${me}`, `SIGCONT ${me}`,
    `SIGSTOP ${me}`, `SIGCONT ${me}`,
    `SIGSTOP ${me}`, `SIGCONT ${me}`,
    `SIGTERM ${me}`, `SIGCONT ${me}`, `SIGKILL ${me}`,
  ]);
  assert.equal(realState(child.pid), 'S', 'nothing reached the process but through the signaller');
});

test('a managed job\'s holds and its terminate go to its process group, through the signaller', async (t) => {
  const { sent, act } = rig();
  const child = sleeper(t);
  const record = job(child, true);
  const group = `${child.pid}@${record.startTicks} group`;
  act.pause(record);
  act.unpause(record);
  act.terminate(record);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(sent, [`SIGSTOP ${group}`, `SIGCONT ${group}`, `SIGTERM ${group}`, `SIGCONT ${group}`, `SIGKILL ${group}`]);
  assert.equal(realState(child.pid), 'S');
});

test('what the guardian and a restarted engine let go of goes through a signaller too', (t) => {
  const child = sleeper(t);
  const startTicks = readProcStatus(child.pid)!.startTicks;
  const sent: string[] = [];
  const signaller: ProcessSignaller = (target, signal, options = {}) => (sent.push(`${signal} ${target.pid}@${target.startTicks}${options.group ? ' group' : ''}`), 'sent');
  const resumed = resumeRecorded([{ pid: child.pid, startTicks, jobId: 'j1', hold: 'stop' }, { pid: child.pid, startTicks, jobId: 'j1', hold: 'group' }], '/proc', signaller);
  assert.deepEqual(resumed, [child.pid, child.pid]);
  assert.deepEqual(sent, [`SIGCONT ${child.pid}@${startTicks}`, `SIGCONT ${child.pid}@${startTicks} group`]);
});

test('a pid taken by another process between the check and the signal ("other"): nothing held, the job is told it has exited', (t) => {
  const { sent, act, freezer } = rig('other');
  const child = sleeper(t);
  const record = job(child, false);
  assert.throws(() => act.pause(record), { code: 'not-found', message: /has exited \(another process has its pid now\)/ });
  assert.equal(freezer.isSuspended(child.pid), false, 'no hold kept on a process that was never stopped');
  assert.throws(() => act.terminate(record), { code: 'not-found', message: /has exited \(another process has its pid now\)/ });
  assert.equal(sent.length, 2);
});
