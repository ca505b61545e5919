// Never leave a job frozen: an engine (`gpushare serve` as a child process) that suspended a
// process and then dies — by SIGKILL or SIGTERM — leaves it running; so does the next start.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { connectToEngine } from '../../cli/engine-client.js';
import { SimulatedDriver } from '../gpu/simulated-driver.js';
import { packageRoot } from '../paths.js';
import { Freezer } from './freezer.js';
import { readProcStatus } from '../proc/proc-status.js';
import { writeSuspendRecord } from './suspend-record.js';
import { until } from '../../testing/until.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A `gpushare serve --simulate a100-40gb` with its own runtime dir, on the simulated box the test drives too. */
async function startEngine(t: TestContext): Promise<{ engine: ChildProcess; driver: SimulatedDriver; socket: string }> {
  const home = mkdtempSync(join(tmpdir(), 'gpushare-frozen-'));
  dirs.push(home);
  const runtime = join(home, 'gpushare');
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const driver = await SimulatedDriver.create({ scenario: 'a100-40gb', statePath: join(runtime, 'sim-a100-40gb.state') });
  t.after(() => driver.dispose());
  const engine = spawn(process.execPath, [join(packageRoot(), 'electron', 'cli', 'gpushare.js'), 'serve', '--simulate', 'a100-40gb', '--rate', '10'], {
    env: { ...process.env, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => engine.kill('SIGKILL'));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    engine.stdout!.on('data', (d: Buffer) => (output += d.toString()).includes('engine socket:') && resolve());
    engine.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    engine.once('exit', (code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
  });
  return { engine, driver, socket: join(runtime, 'engine.sock') };
}

/** Start a training fakejob and have the engine suspend it. */
async function suspendThroughEngine(t: TestContext, driver: SimulatedDriver, socket: string): Promise<number> {
  const train = driver.spawnFakejob(['--device', '0', '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
  t.after(async () => {
    train.kill('SIGKILL');
    await train.exited;
  });
  await train.ready;
  const client = await connectToEngine(socket);
  try {
    await until(`p${train.pid} listed`, async () => (await client.call('jobs.list', {})).some((j) => j.id === `p${train.pid}`), { timeoutMs: 5_000, intervalMs: 100 });
    const job = await client.call('jobs.suspend', { job: `p${train.pid}` });
    assert.equal(job.state, 'suspended');
  } finally {
    client.close();
  }
  await stoppedBy([train.pid], 15_000);
  return train.pid;
}

/** Waits until every pid is stopped (state T): a SIGSTOP takes effect once the target is next scheduled. */
async function stoppedBy(pids: number[], limitMs: number): Promise<void> {
  await until(`pids ${pids.join(', ')} all stopped`, () => pids.every((pid) => readProcStatus(pid)?.state === 'T'), { timeoutMs: limitMs, intervalMs: 20 });
}

test('SIGKILL of the engine: its guardian resumes the suspended process', async (t) => {
  const { engine, driver, socket } = await startEngine(t);
  const pid = await suspendThroughEngine(t, driver, socket);
  engine.kill('SIGKILL');
  await until(`pid ${pid} resumed after the engine was killed`, () => readProcStatus(pid)?.state !== 'T', { timeoutMs: 15_000 });
});

test('SIGTERM of the engine: it resumes what it suspended before it exits', async (t) => {
  const { engine, driver, socket } = await startEngine(t);
  const pid = await suspendThroughEngine(t, driver, socket);
  const exited = new Promise((resolve) => engine.once('exit', resolve));
  engine.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.notEqual(readProcStatus(pid)?.state, 'T');
});

test('the next start resumes what a dead engine recorded, and never signals a reused pid', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'gpushare-record-'));
  dirs.push(home);
  const [stopped, bystander] = [spawn('sleep', ['30']), spawn('sleep', ['30'])];
  t.after(() => [stopped, bystander].forEach((p) => p.kill('SIGKILL')));
  for (const p of [stopped, bystander]) process.kill(p.pid!, 'SIGSTOP');
  await stoppedBy([stopped.pid!, bystander.pid!], 15_000);
  const record = join(home, 'suspended.json');
  writeSuspendRecord(record, [
    { pid: stopped.pid!, startTicks: readProcStatus(stopped.pid!)!.startTicks, jobId: `p${stopped.pid}` },
    { pid: bystander.pid!, startTicks: readProcStatus(bystander.pid!)!.startTicks + 1, jobId: 'p-old' }, // same pid, another process
  ]);
  assert.deepEqual(Freezer.recoverLeftovers(record), [stopped.pid]);
  await sleep(50);
  assert.notEqual(readProcStatus(stopped.pid!)?.state, 'T');
  assert.equal(readProcStatus(bystander.pid!)?.state, 'T', 'a pid whose start time differs is left alone');
  assert.deepEqual(Freezer.recoverLeftovers(record), [], 'the record is cleared once handled');
});
