// `gpushare run`, `jobs` and `set` as a user types them, against `gpushare serve --simulate`.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { UsageReport } from '../../../shared/usage-report.js';
import { fakegpuBuildDir, packageRoot } from '../../engine/paths.js';
import { readProcStatus } from '../../engine/proc/proc-status.js';
import { CLI_ENV } from '../testing/compiled-cli.js';

const GiB = 1024 ** 3;
const home = mkdtempSync(join(tmpdir(), 'gpushare-run-'));
const env = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') };
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
  const run = await gpushare(['run', '--gpu', '0', '--mem', '2G', '--priority', 'high', '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '4']);
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
  assert.deepEqual(listed.argv, [fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '4']);
  assert.equal((await jobs()).some((j) => j.id === `p${listed!.pid}`), false);
  const table = await gpushare(['jobs']);
  assert.match(table.stdout, /^ID\s+STATE\s+PRIORITY\s+GPU\s+MEM\/QUOTA\s+SM\s+USER\s+COMMAND/);
  assert.match(table.stdout, /\nj1\s+running\s+high\s+0\s+1\.00G\/2\.00G/);

  let done: JobView | undefined;
  for (let i = 0; i < 150 && (!done || done.state === 'running'); i++) {
    await sleep(100);
    done = (await jobs(true)).find((j) => j.id === 'j1');
  }
  assert.equal(done?.state, 'finished');
  assert.equal(done.exitCode, 0);
  assert.equal(done.signal, null);
  assert.deepEqual(done.history.map((h) => [h.state, h.reason.replace(/\d+/g, 'N')]), [
    ['queued', 'submitted by ' + done.owner],
    ['starting', 'starting on GPU N'],
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
  // one line per change, in the order made: the priority (still suspended), then the resume
  assert.match((await gpushare(['set', id, '--resume', '--priority', 'best-effort'])).stdout, new RegExp(`^${id} suspended \\(priority best-effort set\\)\n${id} running: resumed by `));
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
  // the job ids and states, not their live readings: a job still running elsewhere may change those
  const listed = async (): Promise<string> => JSON.stringify((await jobs(true)).map((j) => [j.id, j.state, j.history.length]));
  const before = await listed();
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
  assert.equal(await listed(), before);
});

const idOf = (stdout: string): string => stdout.split(/[ :]/)[0];

test('gpushare run: a command that fails at once says so and exits non-zero', async () => {
  const run = await gpushare(['run', '--wait', '60', '--', '/bin/sh', '-c', 'exit 3']);
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(run.stdout, /^j\d+ failed: exit code 3\nlog: /);
});

test('gpushare run: a command that cannot start says so and exits non-zero', async () => {
  const notExecutable = join(home, 'not-executable.sh');
  writeFileSync(notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  const run = await gpushare(['run', '--wait', '60', '--', notExecutable]);
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(run.stdout + run.stderr, /(failed: could not start|not executable|permission denied|EACCES|command not found: .*Nothing was started)/i);
});

test('gpushare run: a job that has to wait says it is queued and what for', async () => {
  const holder = await gpushare(['run', '--gpu', '0', '--mem', '30G', '--', fakejob, '--mem', '30G', 'hold']);
  assert.equal(holder.code, 0, holder.stderr);
  const holderId = idOf(holder.stdout);
  try {
    const waiter = await gpushare(['run', '--gpu', '0', '--request', '20G', '--wait', '60', '--', fakejob, '--mem', '1G', 'hold']);
    assert.equal(waiter.code, 0, waiter.stderr);
    const id = idOf(waiter.stdout);
    assert.match(waiter.stdout, new RegExp(`^${id} queued: .*GPU 0 has \\d+(\\.\\d+)?G free and ${id} needs 20G`));
    assert.equal((await jobs()).find((j) => j.id === id)?.state, 'queued');
    assert.match((await gpushare(['set', id, '--terminate'])).stdout, new RegExp(`^${id} `));
  } finally {
    await gpushare(['set', holderId, '--terminate']);
  }
});

test('gpushare set: each change prints the state it led to', async () => {
  const run = await gpushare(['run', '--', fakejob, '--mem', '256M', 'train', '--kernel-ms', '2', '--duration', '60']);
  const id = idOf(run.stdout);
  const set = await gpushare(['set', id, '--priority', 'best-effort', '--mem', '1G', '--suspend']);
  assert.equal(set.code, 0, set.stderr);
  const lines = set.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 3, set.stdout);
  assert.match(lines[0], new RegExp(`^${id} running \\(priority best-effort set\\)$`));
  assert.match(lines[1], new RegExp(`^${id} running \\(memory quota 1\\.00G set\\)$`));
  assert.match(lines[2], new RegExp(`^${id} suspended: suspended by `));
  await gpushare(['set', id, '--terminate']);
});

test('gpushare set --park / --unpark: the job leaves the GPU and comes back, and the command says where it ended up', async () => {
  const run = await gpushare(['run', '--gpu', '0', '--', fakejob, '--mem', '2G', 'train', '--kernel-ms', '2', '--duration', '60']);
  const id = idOf(run.stdout);
  let listed: JobView | undefined;
  for (let i = 0; i < 50 && !(listed?.usedMemory); i++) {
    await sleep(100);
    listed = (await jobs()).find((j) => j.id === id);
  }
  assert.equal(listed?.usedMemory, 2 * GiB);
  const park = await gpushare(['set', id, '--park']);
  assert.equal(park.code, 0, park.stdout + park.stderr);
  assert.match(park.stdout, new RegExp(`^${id} parked: `));
  const unpark = await gpushare(['set', id, '--unpark']);
  assert.equal(unpark.code, 0, unpark.stdout + unpark.stderr);
  assert.match(unpark.stdout, new RegExp(`^${id} running: `));
  await gpushare(['set', id, '--terminate']);
});

test('a job behind a wrapper script: its child is the job\'s, live and in the report, and the report agrees by user and by job', async () => {
  const run = await gpushare(['run', '--gpu', '0', '--', '/bin/sh', '-c', `${fakejob} --mem 512M train --kernel-ms 2 --duration 3; exit 0`]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const id = idOf(run.stdout);
  let listed: JobView | undefined;
  for (let i = 0; i < 50 && !(listed?.usedMemory); i++) {
    await sleep(100);
    listed = (await jobs()).find((j) => j.id === id);
  }
  assert.equal(listed?.usedMemory, 512 * 1024 ** 2, 'the child fakejob\'s memory counts for the job');
  let done: JobView | undefined;
  for (let i = 0; i < 100 && (!done || done.state !== 'finished'); i++) {
    await sleep(100);
    done = (await jobs(true)).find((j) => j.id === id);
  }
  assert.equal(done?.state, 'finished');
  const range = ['--since', new Date(done.history[0].at - 60_000).toISOString(), '--until', new Date(Date.now() + 60_000).toISOString()];
  const report = async (by: string): Promise<UsageReport> => JSON.parse((await gpushare(['report', ...range, '--by', by, '--format', 'json'])).stdout) as UsageReport;
  let row: UsageReport['rows'][number] | undefined;
  for (let i = 0; i < 30 && !(row && row.gpuSeconds > 0); i++) {
    await sleep(200); // the store writes every 250 ms
    row = (await report('job')).rows.find((r) => r.key === id);
  }
  assert.ok(row && row.gpuSeconds > 1 && row.memoryGiBHours > 0, `${id} has GPU time from its child: ${JSON.stringify(row)}`);
  const [byJob, byUser, byGpu] = await Promise.all(['job', 'user', 'gpu'].map(report));
  for (const field of ['gpuSeconds', 'smSeconds', 'memoryGiBHours'] as const) {
    assert.ok(Math.abs(byJob.totals[field] - byUser.totals[field]) < 1e-9 && Math.abs(byJob.totals[field] - byGpu.totals[field]) < 1e-9, `${field} totals agree: ${byJob.totals[field]} / ${byUser.totals[field]} / ${byGpu.totals[field]}`);
  }
});

test('gpushare run --keep-resident: the job is submitted as one never parked to give its memory to another job', async () => {
  const run = await gpushare(['run', '--gpu', '0', '--keep-resident', '--json', '--', fakejob, '--mem', '256M', 'hold', '--duration', '1']);
  assert.equal(run.code, 0, run.stderr);
  const job = JSON.parse(run.stdout) as JobView;
  assert.equal(job.keepResident, true);
  const plain = await gpushare(['run', '--gpu', '0', '--json', '--', fakejob, '--mem', '256M', 'hold', '--duration', '1']);
  assert.equal((JSON.parse(plain.stdout) as JobView).keepResident, undefined, 'without the flag it may be parked');
  const bad = await gpushare(['run', '--keep-resident=yes', '--', fakejob, 'hold']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--keep-resident takes no value, got "--keep-resident=yes"/);
});
