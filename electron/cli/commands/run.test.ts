// `gpushare run`, `jobs` and `set` as a user types them, against `gpushare serve --simulate`.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { fakegpuBuildDir, packageRoot } from '../../engine/paths.js';
import { readProcStatus } from '../../engine/control/proc-status.js';

const GiB = 1024 ** 3;
const home = mkdtempSync(join(tmpdir(), 'gpushare-run-'));
const env = { ...process.env, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') };
const cli = join(packageRoot(), 'electron', 'cli', 'gpushare.js');
const fakejob = join(fakegpuBuildDir(), 'fakejob');
let engine: ChildProcess;

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env, cwd: home }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

const jobs = async (all = false): Promise<JobView[]> => JSON.parse((await gpushare(['jobs', '--json', ...(all ? ['--all'] : [])])).stdout) as JobView[];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  engine = spawn(process.execPath, [cli, 'serve', '--simulate', 'a100-40gb', '--rate', '10'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    engine.stdout!.on('data', (d: Buffer) => (output += d.toString()).includes('engine socket:') && resolve());
    engine.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    engine.once('exit', (code) => reject(new Error(`gpushare serve exited (${code}): ${output}`)));
  });
});

after(async () => {
  const exited = new Promise((r) => engine.once('exit', r));
  engine.kill('SIGTERM');
  await exited;
  rmSync(home, { recursive: true, force: true });
});

test('without an engine, run says how to start one', async () => {
  const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(process.execPath, [cli, 'jobs'], { env: { ...env, XDG_RUNTIME_DIR: join(home, 'nowhere') } }, (error, _out, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr })),
  );
  assert.equal(code, 1);
  assert.match(stderr, /No gpushare engine is running .*gpushare serve/);
});

test('gpushare run: a fakejob runs on its GPU with its quota, then finishes with its exit status and a log', async () => {
  const run = await gpushare(['run', '--gpu', '0', '--mem', '2G', '--priority', 'high', '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '1.5']);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^j1 running on GPU 0, pid \d+\nlog: .*\/gpushare\/logs\/j1\.log\n$/);

  let listed: JobView | undefined;
  for (let i = 0; i < 30 && !(listed?.usedMemory); i++) {
    await sleep(100);
    listed = (await jobs()).find((j) => j.id === 'j1');
  }
  assert.ok(listed);
  assert.equal(listed.state, 'running');
  assert.equal(listed.managed, true);
  assert.equal(listed.gpu, 0);
  assert.equal(listed.priority, 'high');
  assert.equal(listed.memoryQuotaBytes, 2 * GiB);
  assert.equal(listed.usedMemory, GiB, 'its allocation is counted to the job, not shown as a stray process');
  assert.deepEqual(listed.argv, [fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '1.5']);
  assert.equal((await jobs()).some((j) => j.id === `p${listed!.pid}`), false);
  const table = await gpushare(['jobs']);
  assert.match(table.stdout, /^ID\s+STATE\s+PRIORITY\s+GPU\s+MEM\/QUOTA\s+SM\s+USER\s+COMMAND/);
  assert.match(table.stdout, /\nj1\s+running\s+high\s+0\s+1\.00G\/2\.00G/);

  let done: JobView | undefined;
  for (let i = 0; i < 60 && (!done || done.state === 'running'); i++) {
    await sleep(100);
    done = (await jobs(true)).find((j) => j.id === 'j1');
  }
  assert.equal(done?.state, 'finished');
  assert.equal(done.exitCode, 0);
  assert.equal(done.signal, null);
  assert.deepEqual(done.history.map((h) => [h.state, h.reason.replace(/\d+/g, 'N')]), [
    ['queued', 'submitted by ' + done.owner],
    ['running', 'started on GPU N as pid N'],
    ['finished', 'exit code N'],
  ]);
  assert.equal((await jobs()).some((j) => j.id === 'j1'), false, 'finished jobs only with --all');
  assert.ok(existsSync(done.logPath!));
  const log = readFileSync(done.logPath!, 'utf8');
  assert.match(log, /"event":"ready","pid":\d+,"device":0,"name":"NVIDIA A100-SXM4-40GB","allocated":1073741824/);
  assert.match(log, /"event":"done"/);
});

test('gpushare set: suspend, resume, reprioritise and terminate a managed job', async () => {
  const run = await gpushare(['run', '--', fakejob, '--mem', '256M', 'train', '--kernel-ms', '2', '--duration', '60']);
  assert.equal(run.code, 0, run.stderr);
  const id = run.stdout.split(' ')[0];
  const pid = (await jobs()).find((j) => j.id === id)!.pid!;
  const gated = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').some((e) => e.startsWith('GPUSHARE_GATE='));
  assert.match((await gpushare(['set', id, '--suspend'])).stdout, new RegExp(`^${id} suspended: suspended by `));
  // with the preload library the launch gate pauses it (no signal); without, SIGSTOP
  assert.equal(readProcStatus(pid)?.state === 'T', !gated);
  let sm: number | null | undefined = 100;
  for (let i = 0; i < 30 && sm !== 0; i++) {
    await sleep(150);
    sm = (await jobs()).find((j) => j.id === id)?.smPercent;
  }
  assert.equal(sm, 0, 'a suspended job computes nothing');
  assert.match((await gpushare(['set', id, '--resume', '--priority', 'best-effort'])).stdout, new RegExp(`^${id} running`));
  assert.notEqual(readProcStatus(pid)?.state, 'T');
  assert.equal((await jobs()).find((j) => j.id === id)?.priority, 'best-effort');
  assert.equal((await gpushare(['set', id, '--terminate'])).code, 0);
  let done: JobView | undefined;
  for (let i = 0; i < 60 && (!done || !['finished', 'failed'].includes(done.state)); i++) {
    await sleep(100);
    done = (await jobs(true)).find((j) => j.id === id);
  }
  // fakejob ends cleanly on SIGTERM (exit 0); a job that dies of it would be "failed (SIGTERM)"
  assert.ok(done && ['finished', 'failed'].includes(done.state), JSON.stringify(done));
  assert.match(done.history.at(-1)!.reason, /terminated by /);
});

test('bad input on the command line: a clear message, exit code 2 for usage, nothing submitted', async () => {
  const before = JSON.stringify(await jobs(true));
  const missing = await gpushare(['run', '--', 'no-such-command-gpushare', '--flag']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /command not found: no-such-command-gpushare/);
  const badSize = await gpushare(['run', '--mem', '-3G', '--', fakejob, 'hold']);
  assert.equal(badSize.code, 2);
  assert.match(badSize.stderr, /--mem: "-3G" is not a memory size/);
  const badPriority = await gpushare(['set', 'j1', '--priority', 'urgent']);
  assert.equal(badPriority.code, 2);
  assert.match(badPriority.stderr, /--priority must be one of high, normal, best-effort; got "urgent"/);
  const unknown = await gpushare(['set', 'j99', '--suspend']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No job j99/);
  const tooBig = await gpushare(['run', '--gpu', '0', '--mem', '100G', '--', fakejob, 'hold']);
  assert.match(tooBig.stderr, /100G is more than GPU 0 has \(40G\)/);
  assert.equal(JSON.stringify(await jobs(true)), before);
});
