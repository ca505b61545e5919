// The guardian, whatever dies first: a killed guardian is respawned by its engine, and an
// engine that is stopped (Ctrl-Z) counts as gone once its heartbeat stops.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { startFixtureEngine } from './testing/fixture-engine.js';
import { readProcStatus } from '../proc/proc-status.js';
import { untilWith } from '../../testing/until.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function recordPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-guardian-'));
  dirs.push(dir);
  return join(dir, 'suspended.json');
}

const until = untilWith({ timeoutMs: 15_000 });

/** A process to suspend, killed after the test. */
function sleeper(t: TestContext): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.after(() => {
    child.kill('SIGKILL');
  });
  return child as ChildProcess & { pid: number };
}

const stateOf = (pid: number) => readProcStatus(pid)?.state;

/** The live guardian the engine started: its child running guardian.js. */
function guardianOf(enginePid: number): number | null {
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const status = readProcStatus(pid);
    if (!status || status.ppid !== enginePid || status.state === 'Z') continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('guardian.js')) return pid;
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

test('a killed guardian is respawned: a later SIGKILL of the engine still resumes what it suspended', async (t) => {
  const engine = await startFixtureEngine(t, { recordPath: recordPath() });
  const first = await until('the engine has a guardian', () => guardianOf(engine.pid));
  process.kill(first, 'SIGKILL');
  const second = await until(`the engine started a new guardian after guardian ${first} was killed`, () => {
    const g = guardianOf(engine.pid);
    return g !== null && g !== first ? g : null;
  });
  assert.notEqual(second, first);

  const job = sleeper(t);
  await engine.call({ op: 'suspend', pid: job.pid, jobId: 'j1' });
  await until(`pid ${job.pid} is stopped`, () => stateOf(job.pid) === 'T');
  engine.child.kill('SIGKILL');
  await until(`pid ${job.pid} is resumed after the engine was killed`, () => stateOf(job.pid) !== 'T');
});

test('a stopped engine (Ctrl-Z) counts as gone: the guardian resumes what it suspended, the engine hears so when it wakes, and it stays guarded', async (t) => {
  const engine = await startFixtureEngine(t, { recordPath: recordPath(), heartbeatIntervalMs: 100, staleAfterMs: 1000 });
  const job = sleeper(t);
  await engine.call({ op: 'suspend', pid: job.pid, jobId: 'j1' });
  await until(`pid ${job.pid} is stopped`, () => stateOf(job.pid) === 'T');

  // Ctrl-Z sends SIGTSTP, which the kernel discards for a process in an orphaned process group (as a test's child may be): SIGSTOP stops it the same way, always
  engine.child.kill('SIGSTOP');
  await until('the engine is stopped', () => stateOf(engine.pid) === 'T');
  await until(`pid ${job.pid} is resumed while its engine is stopped`, () => stateOf(job.pid) !== 'T');
  assert.equal(stateOf(engine.pid), 'T', 'the engine is still stopped: the guardian resumed it');

  engine.child.kill('SIGCONT');
  const released = await engine.next('released');
  assert.deepEqual(
    (released.entries as Array<{ pid: number; jobId: string }>).map((e) => [e.pid, e.jobId]),
    [[job.pid, 'j1']],
    'the engine is told which holds the guardian released',
  );

  const later = sleeper(t);
  await engine.call({ op: 'suspend', pid: later.pid, jobId: 'j2' });
  await until(`pid ${later.pid} is stopped`, () => stateOf(later.pid) === 'T');
  engine.child.kill('SIGKILL');
  await until(`pid ${later.pid}, suspended after the engine woke, is resumed when it dies`, () => stateOf(later.pid) !== 'T');
});

test('a hung engine (its event loop busy) counts as gone: the guardian resumes what it suspended, and the engine hears so when it is free again', async (t) => {
  const record = recordPath();
  const engine = await startFixtureEngine(t, { recordPath: record, heartbeatIntervalMs: 100, staleAfterMs: 1000 });
  const job = sleeper(t);
  await engine.call({ op: 'suspend', pid: job.pid, jobId: 'j1' });
  await until(`pid ${job.pid} is stopped`, () => stateOf(job.pid) === 'T');

  const marker = `${record}.free`;
  const hung = engine.call({ op: 'hang', until: marker });
  await until(`pid ${job.pid} is resumed while its engine is hung`, () => stateOf(job.pid) !== 'T');
  assert.notEqual(stateOf(engine.pid), 'T', 'the engine was not stopped: it is busy');
  writeFileSync(marker, '');
  await hung;
  const released = await engine.next('released');
  assert.deepEqual((released.entries as Array<{ pid: number }>).map((e) => e.pid), [job.pid]);
});

test('an engine whose heartbeat goes on keeps its holds: the guardian does not resume them', async (t) => {
  const engine = await startFixtureEngine(t, { recordPath: recordPath(), heartbeatIntervalMs: 100, staleAfterMs: 1500 });
  const job = sleeper(t);
  await engine.call({ op: 'suspend', pid: job.pid, jobId: 'j1' });
  await until(`pid ${job.pid} is stopped`, () => stateOf(job.pid) === 'T');
  await sleep(4000); // well past staleAfterMs, with a live engine beating every 100 ms
  assert.equal(stateOf(job.pid), 'T');
  await engine.call({ op: 'resume', pid: job.pid });
  await until(`pid ${job.pid} runs again once its engine resumes it`, () => stateOf(job.pid) !== 'T');
});
