// A process a user suspended must not stay stopped when the driver stops listing it: a lost GPU or
// a driver-wide NVML failure drops it from the snapshot, and the engine resumes it before forgetting it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { readProcStatus } from '../proc/proc-status.js';
import { readSuspendRecord } from '../holds/suspend-record.js';
import { fakejobFor, useSimulatedRig, type SimulatedRig } from '../testing/simulated-rig.js';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';

let box: SimulatedRig;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-frozen-fault-', (rig) => (box = rig));

/** The process's state once it is `want`, or its last state after a bounded number of looks: a running process takes its SIGSTOP when next scheduled. */
async function stateOnceSettled(pid: number, want: string): Promise<string | undefined> {
  let state = readProcStatus(pid)?.state;
  for (let look = 0; look < 500 && state !== want; look++) {
    await new Promise((r) => setTimeout(r, 10));
    state = readProcStatus(pid)?.state;
  }
  return state;
}

type NamedRig = SchedulerRig & { name: string };
const rig = (name: string): NamedRig => ({ ...schedulerRig(box, name, {}, cleanups), name });

/** A training process on GPU 0 that the scheduler sees and a user suspends (SIGSTOP: state T). */
async function suspendedTrainer(t: TestContext, r: NamedRig): Promise<{ pid: number; id: string }> {
  const train = fakejobFor(t, box.driver, ['--device', '0', '--mem', '256M', 'train', '--kernel-ms', '5', '--duration', '60']);
  await train.ready;
  const id = `p${train.pid}`;
  await r.until('the process on the GPU', async () => (await r.job(id)) !== undefined);
  const suspended = await r.engine.call('jobs.suspend', { job: id });
  assert.equal(suspended.state, 'suspended');
  assert.equal(await stateOnceSettled(train.pid, 'T'), 'T');
  assert.deepEqual(held(r), [train.pid]);
  return { pid: train.pid, id };
}

/** The pids the engine's suspend record (what the guardian and the next start would resume) holds. */
const held = (r: NamedRig): number[] => readSuspendRecord(join(box.dir, r.name, 'run', 'suspended.json')).map((e) => e.pid);

async function droppedAndResumed(r: NamedRig, pid: number, id: string): Promise<void> {
  await r.until('the process to leave the snapshot and the job table', async () => (await r.job(id)) === undefined);
  // continued: running or sleeping, or already exited (its driver calls fail on a lost GPU) and not yet reaped
  const state = readProcStatus(pid)?.state;
  assert.ok(state === 'S' || state === 'R' || state === 'Z', `the process runs again (state ${state}), not left stopped`);
  assert.deepEqual(held(r), [], 'and the engine holds nothing on record');
}

test('a lost GPU drops a suspended process from the snapshot: it is resumed (SIGCONT) before it is forgotten', async (t) => {
  const r = rig('lost');
  const { pid, id } = await suspendedTrainer(t, r);
  await box.driver.fault(['--device', '0', '--lost', 'on']);
  t.after(() => box.driver.fault(['--device', '0', '--lost', 'off']));
  await droppedAndResumed(r, pid, id);
});

test('a driver-wide NVML failure (every GPU unreachable) drops a suspended process: it is resumed before it is forgotten', async (t) => {
  const r = rig('nvml-down');
  const { pid, id } = await suspendedTrainer(t, r);
  await box.driver.fault(['--call', 'nvmlDeviceGetCount_v2', '--code', '999']);
  t.after(() => box.driver.fault(['--call', 'nvmlDeviceGetCount_v2', '--code', '0']));
  const snapshot = r.engine.sampler.tick();
  assert.equal(snapshot.processes.length, 0, 'the fault empties the process list');
  await droppedAndResumed(r, pid, id);
});

test('a suspended process that exits is forgotten without a signal to its pid', async (t) => {
  const r = rig('exit');
  const { pid, id } = await suspendedTrainer(t, r);
  process.kill(pid, 'SIGKILL');
  await r.until('the exited process to leave the job table', async () => (await r.job(id)) === undefined);
  assert.deepEqual(held(r), []);
});
