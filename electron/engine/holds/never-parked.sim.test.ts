// Never left checkpointed: a process parked by an engine that then dies, or is stopped, is
// restored and unlocked by the guardian through the same (simulated) libcuda; a park that a
// dead engine and its guardian both left is restored at the next start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { openCudaCheckpoint } from '../gpu/cuda-checkpoint.js';
import { SimulatedDriver, type FakejobHandle } from '../gpu/simulated-driver.js';
import { startFixtureEngine, type FixtureEngineOptions } from './testing/fixture-engine.js';
import { Freezer } from './freezer.js';
import { ProcessControl } from './process-control.js';
import { readProcStatus } from '../proc/proc-status.js';
import { untilWith } from '../../testing/until.js';
import { readSuspendRecord, writeSuspendRecord } from './suspend-record.js';

const GiB = 1024 ** 3;
let driver: SimulatedDriver;
const dirs: string[] = [];

before(async () => {
  driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath; // the fake libcuda reads it at init, here and in the guardian
});
after(async () => {
  await driver?.dispose();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function recordPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-parked-'));
  dirs.push(dir);
  return join(dir, 'suspended.json');
}

async function training(t: TestContext, mem: string): Promise<FakejobHandle> {
  const job = driver.spawnFakejob(['--device', '0', '--mem', mem, 'train', '--kernel-ms', '5', '--duration', '120']);
  t.after(async () => {
    job.kill('SIGKILL');
    await job.exited;
  });
  await job.ready;
  return job;
}

const onGpu = async (pid: number) => {
  const p = (await driver.dump()).devices[0].processes.find((x) => x.pid === pid);
  return p ? { state: p.checkpointState, used: p.usedMemory, parked: p.parkedMemory } : null;
};

const until = untilWith({ timeoutMs: 15_000 });

const engineOptions = (extra: Partial<FixtureEngineOptions> = {}): FixtureEngineOptions => ({ recordPath: recordPath(), cudaLibraryPath: driver.cudaLibraryPath, ...extra });

test('an engine SIGKILLed right after a park: its guardian restores and unlocks the process', async (t) => {
  const job = await training(t, '2G');
  const options = engineOptions();
  const engine = await startFixtureEngine(t, options);
  assert.equal(await engine.call({ op: 'park', pid: job.pid, jobId: 'j1' }), 'checkpointed');
  assert.deepEqual(await onGpu(job.pid), { state: 'checkpointed', used: 0, parked: 2 * GiB });
  assert.deepEqual(readSuspendRecord(options.recordPath).map((e) => [e.pid, e.hold]), [[job.pid, 'park']], 'on record before the engine dies');

  engine.child.kill('SIGKILL');
  await until(`fakejob ${job.pid} is restored and unlocked`, async () => (await onGpu(job.pid))?.state === 'running');
  assert.deepEqual(await onGpu(job.pid), { state: 'running', used: 2 * GiB, parked: 0 }, 'its memory is back on the GPU');
  await until('the record is cleared once handled', () => readSuspendRecord(options.recordPath).length === 0);
});

test('an engine stopped (Ctrl-Z) after a park: the guardian restores the process, and the engine hears so when it wakes', async (t) => {
  const job = await training(t, '1G');
  const engine = await startFixtureEngine(t, engineOptions({ heartbeatIntervalMs: 100, staleAfterMs: 1000 }));
  assert.equal(await engine.call({ op: 'park', pid: job.pid, jobId: 'j1' }), 'checkpointed');
  engine.child.kill('SIGSTOP'); // as Ctrl-Z stops it; SIGTSTP itself is discarded in an orphaned process group
  await until('the engine is stopped', () => readProcStatus(engine.pid)?.state === 'T');
  await until(`fakejob ${job.pid} is restored while its engine is stopped`, async () => (await onGpu(job.pid))?.state === 'running');
  assert.equal(readProcStatus(engine.pid)?.state, 'T', 'the engine is still stopped: the guardian restored it');
  engine.child.kill('SIGCONT');
  const released = await engine.next('released');
  assert.deepEqual(
    (released.entries as Array<{ pid: number; jobId: string; hold: string }>).map((e) => [e.pid, e.jobId, e.hold]),
    [[job.pid, 'j1', 'park']],
  );
});

test('the next start restores a park that a dead engine and its guardian left', async (t) => {
  const job = await training(t, '1G');
  const cuda = openCudaCheckpoint(driver.cudaLibraryPath);
  await cuda.lock(job.pid, 5000);
  await cuda.checkpoint(job.pid);
  const record = recordPath();
  writeSuspendRecord(record, [{ pid: job.pid, startTicks: readProcStatus(job.pid)!.startTicks, jobId: 'j1', hold: 'park' }]);
  assert.deepEqual(Freezer.recoverLeftovers(record, { cudaLibraryPath: driver.cudaLibraryPath }), [job.pid]);
  assert.deepEqual(await onGpu(job.pid), { state: 'running', used: 1 * GiB, parked: 0 });
  assert.deepEqual(readSuspendRecord(record), []);
});

test('a park the next start cannot restore (its GPU is full) stays on record, and the new Freezer keeps guarding it', async (t) => {
  const job = await training(t, '8G');
  const cuda = openCudaCheckpoint(driver.cudaLibraryPath);
  await cuda.lock(job.pid, 5000);
  await cuda.checkpoint(job.pid);
  const free = (await driver.dump()).devices[0];
  const hog = await training(t, `${Math.floor((free.memoryTotal - free.memoryUsed - free.memoryReserved) / 2 ** 20) - 1024}M`); // leaves less than 8G
  const record = recordPath();
  writeSuspendRecord(record, [{ pid: job.pid, startTicks: readProcStatus(job.pid)!.startTicks, jobId: 'j1', hold: 'park' }]);
  assert.deepEqual(Freezer.recoverLeftovers(record, { cudaLibraryPath: driver.cudaLibraryPath }), []);
  assert.equal((await onGpu(job.pid))?.state, 'checkpointed');
  assert.deepEqual(readSuspendRecord(record).map((e) => e.pid), [job.pid], 'still on record');
  const freezer = new Freezer({ recordPath: record, control: new ProcessControl(), guardian: false });
  assert.deepEqual(freezer.parkedEntries.map((e) => [e.pid, e.jobId]), [[job.pid, 'j1']]);

  hog.kill('SIGKILL');
  await hog.exited;
  assert.deepEqual(Freezer.recoverLeftovers(record, { cudaLibraryPath: driver.cudaLibraryPath }), [job.pid], 'restored once its memory fits');
  assert.deepEqual(await onGpu(job.pid), { state: 'running', used: 8 * GiB, parked: 0 });
});

test('an engine killed while its parked process cannot fit back: the guardian keeps trying and restores it once memory frees up', async (t) => {
  const job = await training(t, '8G');
  const options = engineOptions();
  const engine = await startFixtureEngine(t, options);
  assert.equal(await engine.call({ op: 'park', pid: job.pid, jobId: 'j1' }), 'checkpointed');
  const free = (await driver.dump()).devices[0];
  const hog = await training(t, `${Math.floor((free.memoryTotal - free.memoryUsed - free.memoryReserved) / 2 ** 20) - 1024}M`); // leaves less than 8G
  const stopped = spawn('sleep', ['60'], { stdio: 'ignore' }); // shows when the guardian has made its first pass
  t.after(() => {
    stopped.kill('SIGKILL');
  });
  await engine.call({ op: 'suspend', pid: stopped.pid!, jobId: 'j2' });
  await until('the marker process is stopped', () => readProcStatus(stopped.pid!)?.state === 'T');

  engine.child.kill('SIGKILL');
  await until('the guardian made its first pass', () => readProcStatus(stopped.pid!)?.state !== 'T');
  await until('the park that did not fit stays on record', () => readSuspendRecord(options.recordPath).map((e) => e.pid).join() === String(job.pid));
  assert.equal((await onGpu(job.pid))?.state, 'checkpointed', 'the GPU is full: it could not be restored yet');

  hog.kill('SIGKILL');
  await hog.exited;
  await until(`fakejob ${job.pid} is restored once its memory fits`, async () => (await onGpu(job.pid))?.state === 'running');
  assert.deepEqual(await onGpu(job.pid), { state: 'running', used: 8 * GiB, parked: 0 });
  await until('the record is cleared', () => readSuspendRecord(options.recordPath).length === 0);
});
