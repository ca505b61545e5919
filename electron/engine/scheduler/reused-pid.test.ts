// A pid names a process only together with its start time: once a held or parked process exits, the
// kernel may give its pid to another user's process, which the root daemon must then never touch.
// The kernel cannot be made to reuse a pid on demand, so the actuators read a fake /proc whose stat
// files the test rewrites ("the process exited and another took its pid"); signals go to a real child
// so the test can see whether one was sent (its own /proc state), and checkpoint calls to a recorder.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import type { ProcStatus } from '../proc/proc-status.js';
import { Freezer } from '../holds/freezer.js';
import { ProcessControl } from '../holds/process-control.js';
import { until } from '../../testing/until.js';
import { JobActuators } from './actuators.js';
import { decideAdoption } from './adoption.js';
import type { JobGate } from './job-gate.js';
import { JobTable, newJobView, type JobRecord } from './job-table.js';
import { parkJob, unparkJob, type ParkStepContext } from './parking.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpushare-reused-pid-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let rigs = 0;

/** A fake /proc: `put` writes a process's stat line (its start time in field 22), `drop` makes it gone. */
function fakeProc() {
  const root = join(scratch, `proc-${++rigs}`);
  mkdirSync(root);
  return {
    root,
    put(pid: number, startTicks: number, state = 'S', uid = 0) {
      mkdirSync(join(root, String(pid)), { recursive: true });
      writeFileSync(join(root, String(pid), 'stat'), `${pid} (job) ${state} 1 ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${startTicks} 0 0\n`);
      chownSync(join(root, String(pid)), uid, uid); // the owner /proc shows
    },
    drop(pid: number) {
      rmSync(join(root, String(pid)), { recursive: true, force: true });
    },
  };
}

function rig(gate: JobGate | null = null) {
  const proc = fakeProc();
  const calls: string[] = [];
  const logged: string[] = [];
  const checkpointer: ProcessCheckpointer = {
    supported: () => null,
    lock: async (pid) => void calls.push(`lock ${pid}`),
    checkpoint: async (pid) => void calls.push(`checkpoint ${pid}`),
    restore: async (pid) => void calls.push(`restore ${pid}`),
    unlock: async (pid) => void calls.push(`unlock ${pid}`),
  };
  const control = new ProcessControl({ procRoot: proc.root });
  const freezer = new Freezer({ recordPath: join(proc.root, '..', `suspended-${rigs}.json`), control, guardian: false });
  const act = new JobActuators({ control, freezer, gate, checkpointer, mps: null, log: (line) => logged.push(line) });
  after(() => freezer.stop());
  return { proc, calls, logged, act, freezer };
}

function job(pid: number, startTicks: number, extra: Partial<JobRecord> = {}): JobRecord {
  const view = newJobView({ id: `p${pid}`, managed: false, owner: 'ann', uid: 0, argv: ['python3'], gpu: 0, pid }, 'running', 'seen on GPU 0');
  return new JobTable().add(view, { startTicks, ...extra });
}

function parkLoop(act: JobActuators, pids: number[]): ParkStepContext {
  return { act, fire: () => true, settle: () => undefined, raiseAlert: () => undefined, memoryFree: () => null, gpuPids: () => pids };
}

/** A real process to signal: the fake /proc says it is pid `pid` with start time `startTicks`. */
function sleeper(t: TestContext): ChildProcess {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  return child;
}

const realState = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
};

test('a parked worker that exits and whose pid another process takes is not restored: the rest are, and the log says why', async () => {
  const { proc, calls, logged, act } = rig();
  proc.put(4_190_001, 500);
  proc.put(4_190_002, 600);
  const record = job(4_190_001, 500);
  const loop = parkLoop(act, [4_190_001, 4_190_002]);
  await parkJob(loop, record, 'ann');
  assert.deepEqual(record.parked?.processes, [{ pid: 4_190_001, startTicks: 500 }, { pid: 4_190_002, startTicks: 600 }], 'each parked process by pid and start time');
  proc.put(4_190_002, 900); // the worker exited; a new process has its pid
  calls.length = 0;
  await unparkJob(loop, record, 'ann');
  assert.deepEqual(calls, ['restore 4190001', 'unlock 4190001'], 'nothing sent to the process that took the worker\'s pid');
  assert.equal(logged.length, 1);
  assert.match(logged[0], /pid 4190002 of p4190001 exited while parked and the pid now names another process \(started at tick 900, not 600\): it is not restored/);
});

test('a parked job kept by an earlier engine with bare pids: the main process is known by the job\'s start time, the other pids are dropped with a log line', async () => {
  const { proc, calls, logged, act } = rig();
  proc.put(4_190_011, 700);
  proc.put(4_190_012, 710);
  const record = job(4_190_011, 700, { parked: { gpu: 0, bytes: 1, at: 0, pids: [4_190_011, 4_190_012] } });
  record.view.state = 'parked';
  await unparkJob(parkLoop(act, []), record, 'ann');
  assert.deepEqual(calls, ['restore 4190011', 'unlock 4190011']);
  assert.equal(logged.length, 1);
  assert.match(logged[0], /p4190011's park record names pid 4190012 without its start time .*not restored/);
});

test('a suspended process that exits and whose pid another process takes is not continued; the log says so', async (t) => {
  const { proc, logged, act, freezer } = rig();
  const child = sleeper(t);
  const pid = child.pid!;
  proc.put(pid, 800);
  const record = job(pid, 800);
  act.pause(record);
  await until('the process stopped', () => realState(pid) === 'T');
  proc.put(pid, 1200); // it exited and another took its pid (the real one stays stopped: it stands for the newcomer)
  act.unpause(record);
  assert.equal(realState(pid), 'T', 'no SIGCONT went to the new process');
  assert.equal(freezer.isSuspended(pid), false, 'the hold is forgotten: the process it held is gone');
  assert.match(logged.join('\n'), new RegExp(`pid ${pid} \\(p${pid}\\) exited and the pid now names another process \\(started at tick 1200, not 800\\): not resumed`));
  child.kill('SIGCONT');
});

test('terminating a job whose pid another process took sends no signal: the job is treated as gone', async (t) => {
  const { proc, logged, act } = rig();
  const child = sleeper(t);
  const pid = child.pid!;
  proc.put(pid, 1500); // the job's process was started at tick 1000 and has exited
  const record = job(pid, 1000);
  assert.throws(() => act.terminate(record), /exited/);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(child.exitCode, null, 'still running');
  assert.equal(child.signalCode, null, 'never signalled');
  assert.match(logged.join('\n'), new RegExp(`pid ${pid} \\(p${pid}\\) exited and the pid now names another process \\(started at tick 1500, not 1000\\): not terminated`));
});

test('renicing best-effort leaves a process that took the job\'s pid alone', (t) => {
  const { proc, act } = rig();
  const child = sleeper(t);
  const pid = child.pid!;
  proc.put(pid, 2000);
  const record = job(pid, 1900);
  record.view.priority = 'best-effort';
  act.applyPriority(record);
  const nice = Number(readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ')[16]);
  assert.equal(nice, 0, 'its niceness unchanged');
});

test('a running job an earlier engine kept without its start time is lost, not adopted: its pid alone may be another process\'s now', () => {
  const view = newJobView({ id: 'j4', managed: true, owner: 'ann', uid: 0, argv: ['train'], gpu: 0, pid: process.pid }, 'running', 'started');
  const adoption = decideAdoption(view, null, () => true);
  assert.deepEqual(adoption, { kind: 'lose', reason: `an earlier engine kept pid ${process.pid} without its start time, so it cannot be told from a process that took the pid since: not adopted` });
  assert.deepEqual(decideAdoption(view, 42, () => true), { kind: 'adopt', restore: false }, 'with a start time (the same process: alive), it is adopted');
});

test('terminating an enrolled job signals only the processes its slot lists that are its user\'s: the job writes that list itself', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root: the fake /proc gives a process another owner with chown');
  const child = sleeper(t);
  const listed = [{ pid: child.pid!, alive: true, usedBytes: 0 }]; // a root process the job wrote into its slot
  const gate = { readSlot: () => ({ processes: listed }), setPaused: () => undefined } as unknown as JobGate;
  const { proc, act } = rig(gate);
  proc.put(4_190_031, 3000, 'S', 4242); // the job's own process (gone from the real /proc: its signal finds nobody)
  proc.put(child.pid!, 3100, 'S', 0);
  const view = newJobView({ id: 'j31', managed: true, owner: 'ann', uid: 4242, argv: ['python3'], gpu: 0, pid: 4_190_031, enrolled: { by: 'tree', group: 'tree:j31', name: null, pgid: 4_190_031, sid: 4_190_031 } }, 'running', 'enrolled');
  const record = new JobTable().add(view, { startTicks: 3000, slot: 3 });
  assert.throws(() => act.terminate(record), /no such process/, 'its own process had exited; nothing else was signalled');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(child.signalCode, null, 'the root process the slot named was never signalled');
});

test("terminating an enrolled job: a listed process whose pid another takes between the owner check and the signal gets nothing", (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root: as another user the engine could signal neither process');
  const sent: Array<[number, number, string]> = [];
  const reads = new Map<number, ProcStatus[]>(); // /proc's successive answers for a pid (the last one stays)
  class ScriptedProc extends ProcessControl {
    override status(pid: number): ProcStatus | null {
      const answers = reads.get(pid);
      return !answers ? null : answers.length > 1 ? answers.shift()! : answers[0];
    }
  }
  const control = new ScriptedProc({ signaller: (target, signal) => (sent.push([target.pid, target.startTicks, signal]), 'sent') });
  t.after(() => control.dispose());
  const freezer = new Freezer({ recordPath: join(scratch, 'suspended-scripted.json'), control, guardian: false });
  t.after(() => freezer.stop());
  const gate = { readSlot: () => ({ processes: [{ pid: 4_190_042, alive: true, usedBytes: 0 }] }), setPaused: () => undefined } as unknown as JobGate;
  const act = new JobActuators({ control, freezer, gate, checkpointer: {} as ProcessCheckpointer, mps: null, log: () => undefined });
  const status = (pid: number, uid: number, startTicks: number): ProcStatus => ({ pid, uid, ppid: 1, state: 'S', startTicks });
  reads.set(4_190_041, [status(4_190_041, 4242, 3000)]); // the job's first process
  reads.set(4_190_042, [status(4_190_042, 4242, 3200), status(4_190_042, 0, 3300)]); // its user's when listed; then it exits and root's process takes the pid
  const view = newJobView({ id: 'j41', managed: true, owner: 'ann', uid: 4242, argv: ['python3'], gpu: 0, pid: 4_190_041, enrolled: { by: 'tree', group: 'tree:j41', name: null, pgid: 4_190_041, sid: 4_190_041 } }, 'running', 'enrolled');
  try {
    act.terminate(new JobTable().add(view, { startTicks: 3000, slot: 3 }));
  } catch {
    // the member's refusal: the first process was still signalled
  }
  assert.deepEqual(sent.filter(([pid]) => pid === 4_190_042), [], 'the process that took the listed pid got no signal');
  assert.deepEqual(sent.filter(([pid]) => pid === 4_190_041).map(([, ticks, signal]) => [ticks, signal]), [[3000, 'SIGTERM'], [3000, 'SIGCONT']]);
});
