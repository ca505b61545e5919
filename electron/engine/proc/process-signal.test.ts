// The addon's signalIfSame (pidfd_open, start time read through /proc after it, pidfd_send_signal), and the
// engine's signaller around it: where the kernel has no pidfds it checks then kills, and says so once.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { test, type TestContext } from 'node:test';
import { requireNativeAddon } from '../gpu/nvml-addon.js';
import { until } from '../../testing/until.js';
import { readProcStatus } from './proc-status.js';
import { pidfdSignaller, type SignalNative } from './process-signal.js';

const native = requireNativeAddon() as unknown as SignalNative;
const SIG = constants.signals;

function sleeper(t: TestContext, options: { detached?: boolean; command?: string[] } = {}): ChildProcess & { pid: number } {
  const [program, ...args] = options.command ?? ['sleep', '60'];
  const child = spawn(program, args, { stdio: 'ignore', detached: options.detached });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(options.detached ? -child.pid! : child.pid!, 'SIGKILL');
  });
  return child as ChildProcess & { pid: number };
}

const startTicks = (pid: number): number => readProcStatus(pid)!.startTicks;
const exited = (child: ChildProcess): Promise<unknown> => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit'));

test('signalIfSame: the process named by its pid and start time gets the signal', async (t) => {
  const child = sleeper(t);
  assert.equal(native.signalIfSame(child.pid, startTicks(child.pid), SIG.SIGTERM, false), 'sent');
  await exited(child);
  assert.equal(child.signalCode, 'SIGTERM');
});

test('signalIfSame: a child that has exited (its start time recorded) is gone, and nothing is sent', async (t) => {
  const child = sleeper(t);
  const ticks = startTicks(child.pid);
  child.kill('SIGKILL');
  await exited(child); // reaped: the pid names nobody now
  assert.equal(native.signalIfSame(child.pid, ticks, SIG.SIGTERM, false), 'gone');
});

test('signalIfSame: a live process with another start time than the one given is "other" and gets no signal', async (t) => {
  const child = sleeper(t);
  const ticks = startTicks(child.pid);
  assert.equal(native.signalIfSame(child.pid, ticks + 1, SIG.SIGTERM, false), 'other');
  // a SIGTERM sent above would have ended it (its default action takes effect when sent); so it dies of this one
  assert.equal(native.signalIfSame(child.pid, ticks, SIG.SIGKILL, false), 'sent');
  await exited(child);
  assert.equal(child.signalCode, 'SIGKILL', 'the earlier SIGTERM never reached it');
});

test('signalIfSame with group: every process of the group the process leads gets it', async (t) => {
  const leader = sleeper(t, { detached: true, command: ['sh', '-c', 'sleep 60 & wait'] });
  const member = await until('the group\'s second process', () => readFileSync(`/proc/${leader.pid}/task/${leader.pid}/children`, 'latin1').trim().split(' ').map(Number).find((p) => p > 0));
  const memberTicks = startTicks(member);
  let outcome: string;
  try {
    outcome = native.signalIfSame(leader.pid, startTicks(leader.pid), SIG.SIGKILL, true);
  } catch (error) {
    if ((error as { code?: string }).code === 'EINVAL') return t.skip('this kernel cannot signal a group through a pidfd (Linux < 6.9)');
    throw error;
  }
  assert.equal(outcome, 'sent');
  await exited(leader);
  assert.equal(leader.signalCode, 'SIGKILL');
  await until('the member ended too', () => {
    const status = readProcStatus(member);
    return status === null || status.startTicks !== memberTicks || status.state === 'Z'; // a zombie until whoever adopted it reaps it
  });
});

test('signalIfSame refuses arguments that name no process or signal, with a TypeError', () => {
  assert.throws(() => native.signalIfSame(0, 1, SIG.SIGTERM, false), { name: 'TypeError', message: /pid must be a whole number/ });
  assert.throws(() => native.signalIfSame(1.5, 1, SIG.SIGTERM, false), { name: 'TypeError', message: /pid must be a whole number/ });
  assert.throws(() => native.signalIfSame(1, -1, SIG.SIGTERM, false), { name: 'TypeError', message: /startTicks must be a whole number/ });
  assert.throws(() => native.signalIfSame(1, 1, 99, false), { name: 'TypeError', message: /signal must be a whole number from 0 to 64/ });
});

test('the engine\'s signaller passes the signal\'s number and the group to the addon, and its answer back', () => {
  const calls: unknown[][] = [];
  const signal = pidfdSignaller({ signalIfSame: (...args) => (calls.push(args), 'other') }, () => assert.fail('nothing to log'));
  assert.equal(signal({ pid: 4242, startTicks: 7 }, 'SIGSTOP', { group: true }), 'other');
  assert.deepEqual(calls, [[4242, 7, SIG.SIGSTOP, true]]);
});

test('without pidfds (ENOSYS: Linux < 5.3) it checks the start time, then kills, and says so once in the log', async (t) => {
  const logged: string[] = [];
  const noPidfds: SignalNative = {
    signalIfSame: () => {
      throw Object.assign(new Error('pidfd_open(1) failed: ENOSYS (38): Function not implemented'), { code: 'ENOSYS' });
    },
  };
  const signal = pidfdSignaller(noPidfds, (line) => logged.push(line));
  const child = sleeper(t);
  const ticks = startTicks(child.pid);
  assert.equal(signal({ pid: child.pid, startTicks: ticks + 1 }, 'SIGTERM'), 'other');
  assert.equal(signal({ pid: child.pid, startTicks: ticks }, 'SIGKILL'), 'sent');
  await exited(child);
  assert.equal(child.signalCode, 'SIGKILL', 'the SIGTERM to another start time was never sent');
  assert.equal(signal({ pid: child.pid, startTicks: ticks }, 'SIGTERM'), 'gone');
  assert.equal(logged.length, 1, logged.join('\n'));
  assert.match(logged[0], /no pidfds \(Linux < 5\.3\): signals are sent by pid after a start-time check/);
});

test('pidfd_open refused by a seccomp filter (EPERM) falls back, said once, as a kernel without pidfds does', async (t) => {
  const logged: string[] = [];
  const filtered: SignalNative = {
    signalIfSame: () => {
      throw Object.assign(new Error('pidfd_open(1) failed: EPERM (1): Operation not permitted'), { code: 'EPERM', call: 'pidfd_open' });
    },
  };
  const signal = pidfdSignaller(filtered, (line) => logged.push(line));
  const child = sleeper(t);
  assert.equal(signal({ pid: child.pid, startTicks: startTicks(child.pid) }, 'SIGKILL'), 'sent');
  await exited(child);
  assert.equal(child.signalCode, 'SIGKILL');
  assert.equal(logged.length, 1);
  assert.match(logged[0], /pidfd_open is refused here \(EPERM: a seccomp filter/);
});

test('a kernel that cannot signal a group through a pidfd (EINVAL: Linux < 6.9): groups are checked then killed, said once; single processes keep pidfds', async (t) => {
  const logged: string[] = [];
  const calls: boolean[] = [];
  const before69: SignalNative = {
    signalIfSame: (pid, ticks, signal, group) => {
      calls.push(group);
      if (group) throw Object.assign(new Error('pidfd_send_signal(process group 1, 9) failed: EINVAL (22): Invalid argument'), { code: 'EINVAL', call: 'pidfd_send_signal' });
      return native.signalIfSame(pid, ticks, signal, group);
    },
  };
  const signal = pidfdSignaller(before69, (line) => logged.push(line));
  const leader = sleeper(t, { detached: true });
  const single = sleeper(t);
  assert.equal(signal({ pid: leader.pid, startTicks: startTicks(leader.pid) }, 'SIGKILL', { group: true }), 'sent');
  await exited(leader);
  assert.equal(leader.signalCode, 'SIGKILL');
  assert.equal(signal({ pid: leader.pid, startTicks: 1 }, 'SIGKILL', { group: true }), 'gone', 'the next group signal goes straight to the fallback');
  assert.equal(signal({ pid: single.pid, startTicks: startTicks(single.pid) }, 'SIGKILL'), 'sent');
  await exited(single);
  assert.deepEqual(calls, [true, false], 'the addon was asked for one group signal only, then for the single process');
  assert.equal(logged.length, 1);
  assert.match(logged[0], /cannot signal a process group through a pidfd \(Linux < 6\.9\)/);
});

test('a refused signal (EPERM from pidfd_send_signal) reaches the caller as the addon said it, with no fallback', () => {
  const signal = pidfdSignaller({ signalIfSame: () => { throw Object.assign(new Error('pidfd_send_signal(pid 4190999, 15) failed: EPERM (1): Operation not permitted'), { code: 'EPERM', call: 'pidfd_send_signal' }); } }, () => assert.fail('nothing to log'));
  assert.throws(() => signal({ pid: 4_190_999, startTicks: 0 }, 'SIGTERM'), { code: 'EPERM' }); // a fallback would answer 'gone': no such pid
});

/** A thread of this process that is not its leader: its id is a pid number /proc answers for, but names no process. */
function nonLeaderThread(): { tid: number; ticks: number } {
  const tid = readdirSync('/proc/self/task').map(Number).find((id) => id !== process.pid);
  assert.ok(tid, 'node runs more than one thread');
  return { tid, ticks: Number(readFileSync(`/proc/${tid}/stat`, 'latin1').split(') ')[1].split(' ')[19]) };
}

test("signalIfSame on a recorded pid that is now another process's thread: 'other', nothing sent, for a process and a group alike", () => {
  const { tid, ticks } = nonLeaderThread(); // a pid reused as a thread id: pidfd_open refuses it (EINVAL, ENOENT since Linux 6.?)
  assert.equal(native.signalIfSame(tid, ticks, 0, false), 'other');
  assert.equal(native.signalIfSame(tid, ticks, 0, true), 'other');
});

test("an EINVAL from pidfd_open (a thread's id, on kernels before ENOENT) is not the kernel refusing group pidfds: the next group signal still goes through one", () => {
  const logged: string[] = [];
  const calls: number[] = [];
  const threadThenLeader: SignalNative = {
    signalIfSame: (pid) => {
      calls.push(pid);
      if (pid === 77) throw Object.assign(new Error('pidfd_open(77) failed: EINVAL (22): Invalid argument'), { code: 'EINVAL', call: 'pidfd_open' });
      return 'sent';
    },
  };
  const signal = pidfdSignaller(threadThenLeader, (line) => logged.push(line));
  assert.throws(() => signal({ pid: 77, startTicks: 1 }, 'SIGCONT', { group: true }), { code: 'EINVAL' });
  assert.equal(signal({ pid: 4242, startTicks: 7 }, 'SIGCONT', { group: true }), 'sent');
  assert.deepEqual(calls, [77, 4242], 'the second group signal went to the addon, not to check-then-kill');
  assert.deepEqual(logged, []);
});
