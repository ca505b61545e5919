// Stopping `gpushare serve` (Ctrl-C) never kills a managed job, and the engine really exits;
// the next `gpushare serve` re-adopts the job (same pid, managed) and never reuses its id.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { readProcStatus } from '../../engine/proc/proc-status.js';
import { fakegpuBuildDir, packageRoot } from '../../engine/paths.js';
import { CLI_ENV } from '../testing/compiled-cli.js';
import { untilWith } from '../../testing/until.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-serve-'));
const env = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') };
const cli = join(packageRoot(), 'electron', 'cli', 'gpushare.js');
const fakejob = join(fakegpuBuildDir(), 'fakejob');
const started: number[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

after(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(home, { recursive: true, force: true });
});

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env, cwd: home }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

async function serve(): Promise<ChildProcess> {
  const engine = spawn(process.execPath, [cli, 'serve', '--simulate', 'a100-40gb', '--rate', '10'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    engine.stdout!.on('data', (d: Buffer) => (output += d.toString()).includes('engine socket:') && resolve());
    engine.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    engine.once('exit', (code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
  });
  return engine;
}

const job = async (id: string): Promise<JobView | undefined> => (JSON.parse((await gpushare(['jobs', '--json', '--all'])).stdout) as JobView[]).find((j) => j.id === id);

const until = untilWith({ intervalMs: 100, timeoutMs: 10_000 });

test('Ctrl-C on gpushare serve leaves a running job running and the engine exits; the next serve re-adopts it', async () => {
  const first = await serve();
  const run = await gpushare(['run', '--gpu', '0', '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '120']);
  assert.equal(run.code, 0, run.stderr);
  const running = await until('j1 running', async () => {
    const j = await job('j1');
    return j?.state === 'running' && j.pid !== null ? j : undefined;
  });
  started.push(running.pid!);
  const startTicks = readProcStatus(running.pid!)!.startTicks;

  const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
  first.kill('SIGINT');
  const stoppedAt = Date.now();
  const code = await Promise.race([exited, sleep(30_000).then(() => 'still running' as const)]);
  if (code === 'still running') first.kill('SIGKILL');
  assert.equal(code, 0, 'one Ctrl-C stops the engine');
  process.stdout.write(`# gpushare serve stopped ${Date.now() - stoppedAt} ms after SIGINT\n`);
  assert.equal(readProcStatus(running.pid!)?.startTicks, startTicks, 'the job still runs');

  const second = await serve();
  try {
    const adopted = await until('j1 back', async () => job('j1'));
    assert.equal(adopted.state, 'running');
    assert.equal(adopted.pid, running.pid);
    assert.equal(adopted.managed, true);
    const next = await gpushare(['run', '--gpu', '0', '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '120']);
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stdout, /^j2 /, 'the next job is j2, never j1 again');
    const j2 = await until('j2 running', async () => ((await job('j2'))?.pid ?? undefined) || undefined);
    started.push(j2);
  } finally {
    second.kill('SIGTERM');
    await new Promise((r) => second.once('exit', r));
  }
});

test('a job still queued when gpushare serve stops waits on in the next serve, and its id is not given again', async () => {
  const first = await serve();
  // a process that is not a job holds most of the GPU, so the job waits in the queue (no process, no log yet)
  const hog = spawn(process.execPath, [cli, 'sim', 'fakejob', '--scenario', 'a100-40gb', '--', '--mem', '30G', 'hold', '--duration', '120'], { env, stdio: 'ignore' });
  started.push(hog.pid!);
  await until('the hog on the GPU', async () => JSON.parse((await gpushare(['jobs', '--json'])).stdout).some((j: JobView) => !j.managed) || undefined);
  const queued = await gpushare(['run', '--gpu', '0', '--mem', '20G', '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60']);
  const id = /^(j\d+) queued/.exec(queued.stdout)?.[1];
  assert.ok(id, `queued: ${queued.stdout}${queued.stderr}`);
  const exited = new Promise((r) => first.once('exit', r));
  first.kill('SIGINT');
  await exited;

  const second = await serve();
  try {
    const next = await gpushare(['run', '--gpu', '0', '--mem', '20G', '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60']);
    const nextId = /^(j\d+) /.exec(next.stdout)?.[1];
    assert.equal(nextId, `j${Number(id.slice(1)) + 1}`, `after ${id} comes the next number, never ${id} again: ${next.stdout}`);
    const kept = await until(`${id} back`, async () => job(id));
    assert.equal(kept.state, 'queued', 'it waits on');
    assert.equal(kept.pid, null);
  } finally {
    second.kill('SIGTERM');
    await new Promise((r) => second.once('exit', r));
  }
});
