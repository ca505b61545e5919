// `gpushare report` as a user who is not root, on a box whose daemon keeps its store root's alone (0600):
// the report is asked of the daemon, which answers as it answers the console (reports are lab-wide), and
// Slurm usage rows an earlier gpushare left in slurm-usage.jsonl are in the store after the daemon's start.
// Slurm itself is not needed: the prolog's and epilog's calls are made as root, as Slurm's hooks make them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { SlurmUsageRow } from '../../../shared/slurm.js';
import { copyApp } from '../../cli/app-copy.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { isRoot, LabBox, type LabUser } from '../daemon/testing/lab-box.js';

const SKIP = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates users';
let box: LabBox;
let alice: LabUser;
let bob: LabUser;
let cli: { path: string; env: Record<string, string> };
const legacy = (): string => join(box.dir, 'lib', 'slurm-usage.jsonl');
const earlier: SlurmUsageRow = { jobId: '900', user: 'someone', partition: 'gpu', qos: null, start: Date.now() - 20 * 60_000, end: Date.now() - 10 * 60_000, gpuHours: 0.1, smHours: 0.05, memoryGiBHours: 0.4, peakMemoryBytes: 4 * 1024 ** 3, gatedSeconds: 1.5, parkedSeconds: 0, account: null, gpus: null };
/** The row as an earlier gpushare wrote it: without account and GPUs. */
const writtenBefore = (): Omit<SlurmUsageRow, 'account' | 'gpus'> => {
  const { account: _account, gpus: _gpus, ...row } = earlier;
  return row;
};

before(async () => {
  if (SKIP) return;
  box = new LabBox(String(process.pid % 100000));
  alice = box.user('alice');
  bob = box.user('bob');
  earlier.user = alice.name;
  mkdirSync(join(box.dir, 'lib'), { recursive: true, mode: 0o755 });
  writeFileSync(legacy(), JSON.stringify(writtenBefore()) + '\n{"jobId":"901","user":"cut sh', { mode: 0o600 }); // a row, then one cut short by a crash
  await box.start({ rateHz: 2 }, 'a100-40gb');
  // their gpushare: this checkout's where they can read it, else a copy of the compiled CLI (a checkout under a 0700 home)
  try {
    box.as(bob, '/usr/bin/test', ['-r', CLI_PATH, '-a', '-x', process.execPath]);
    cli = { path: CLI_PATH, env: CLI_ENV };
  } catch {
    copyApp(join(box.dir, 'cli-copy'));
    cli = { path: join(box.dir, 'cli-copy', 'electron', 'cli', 'gpushare.js'), env: {} };
  }
});
after(async () => {
  if (SKIP) return;
  await box.dispose();
});

/** `gpushare report ARGS` as `user`: its exit status, output and error. */
function report(user: LabUser, args: string[]): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = box.as(user, process.execPath, [cli.path, 'report', ...args], { env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', ...cli.env, GPUSHARE_DAEMON_SOCKET: box.socketPath } });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

const jobIds = (csv: string): string[] => csv.trim().split('\n').slice(1).map((line) => line.split(',')[0]);

test("the daemon's start imports the rows of an earlier gpushare's slurm-usage.jsonl into its store once, and renames the file aside", { skip: SKIP }, () => {
  assert.match(box.output, /Imported 1 Slurm job usage row from .*slurm-usage\.jsonl into the usage store \(0 already there; 1 line was not a row \(cut short\) and was left out\); the file is kept as .*slurm-usage\.jsonl\.imported\./);
  assert.equal(existsSync(legacy()), false);
  assert.equal(readFileSync(`${legacy()}.imported`, 'utf8').split('\n')[0], JSON.stringify(writtenBefore()));
  const asRoot = execFileSync(process.execPath, [CLI_PATH, 'report', '--by', 'slurm-job', '--since', '1h', '--format', 'json', '--db', box.dbPath], { encoding: 'utf8', env: { ...process.env, ...CLI_ENV, GPUSHARE_DAEMON_SOCKET: box.socketPath } });
  assert.deepEqual((JSON.parse(asRoot) as { rows: SlurmUsageRow[] }).rows, [earlier], 'root reads the store itself: the imported row, as it was (no account or GPUs recorded)');
});

test('a user who is not root gets `report --by slurm-job` (with --db naming the daemon\'s store, or without) from the daemon: every Slurm job\'s row, lab-wide as reports are; `--by user` too; the calls of his console (reports.slurmJobs, reports.export by slurm-job) answer the same rows and CSV; with the daemon stopped a sentence says why, not "permission denied"', { skip: SKIP }, async () => {
  await box.ok(null, 'slurm.prolog', { jobId: '901', uid: bob.uid, gpus: [0], partition: 'gpu', account: 'physics' });
  const ended = await box.ok(null, 'slurm.epilog', { jobId: '901' });
  assert.equal(ended.jobId, '901');

  let cliCsv = '';
  for (const db of [['--db', box.dbPath], []]) {
    const run = report(bob, ['--by', 'slurm-job', '--since', '1h', ...db]);
    cliCsv = run.stdout;
    assert.equal(run.code, 0, `report ${db.join(' ')} as bob: ${run.stderr}`);
    assert.match(run.stdout, /^JobID,User,Partition,QOS,Start,End,GPUHours,SMHours,MemoryGiBHours,PeakMemoryGiB,GatedSeconds,ParkedSeconds,Account,GPUs\n/);
    assert.deepEqual(jobIds(run.stdout), ['900', '901'], `his job and alice's: reports are lab-wide (${db.join(' ') || 'no --db'})`);
    assert.deepEqual(run.stdout.trim().split('\n').slice(1).map((l) => l.split(',')[1]), [alice.name, bob.name]);
  }
  const json = report(bob, ['--by', 'slurm-job', '--since', '1h', '--format', 'json']);
  assert.deepEqual((JSON.parse(json.stdout) as { rows: SlurmUsageRow[] }).rows[0], earlier, 'the row the daemon answers is the one imported');
  const bobs = (JSON.parse(json.stdout) as { rows: SlurmUsageRow[] }).rows[1];
  assert.deepEqual([bobs.account, bobs.gpus], ['physics', ''], "bob's job: the account its prolog sent, and no GPU (none of its processes was on one)");
  // bob's console (the desktop app on the daemon's socket, or his browser proxy) asks the daemon as he does: the Reports view's calls
  const range = { since: Date.now() - 3_600_000 };
  const asConsole = await box.ok(bob, 'reports.slurmJobs', range);
  assert.deepEqual(asConsole.rows, (JSON.parse(json.stdout) as { rows: SlurmUsageRow[] }).rows, "his console's rows are his CLI's, no more");
  assert.deepEqual((await box.ok(null, 'reports.slurmJobs', range)).rows, asConsole.rows, 'and what root reads: the rows are lab-wide');
  assert.equal((await box.ok(bob, 'reports.export', { ...range, by: 'slurm-job', format: 'csv' })).content, cliCsv, "the console's saved CSV is the one his CLI prints");
  const byUser = report(bob, ['--by', 'user', '--since', '1h', '--format', 'json']);
  assert.equal(byUser.code, 0, byUser.stderr);
  assert.equal((JSON.parse(byUser.stdout) as { by: string }).by, 'user');

  await box.stop();
  const stopped = report(bob, ['--by', 'slurm-job', '--since', '1h', '--db', box.dbPath]);
  assert.equal(stopped.code, 1);
  assert.match(stopped.stderr, /may not read .*usage\.db, and no box daemon answers at .* to ask instead/);
  assert.doesNotMatch(stopped.stderr, /EACCES/);
});
