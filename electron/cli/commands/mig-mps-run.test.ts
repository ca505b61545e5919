// A MIG + MPS plan followed as printed, against `gpushare serve --simulate h100x2-mig` (GPU 1 in MIG mode):
// `mig apply` shares a slice through MPS and prints the `gpushare run --mig-slice … --mps-share …` line of
// each job; those lines run the jobs in that slice, each an MPS client of the slice's daemon with its share.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { until } from '../../testing/until.js';
import type { JobView } from '../../../shared/jobs.js';
import { fakegpuBuildDir, packageRoot } from '../../engine/paths.js';
import { CLI_ENV } from '../testing/compiled-cli.js';

const home = mkdtempSync(join(tmpdir(), 'gpushare-mig-mps-run-'));
const env = { ...process.env, ...CLI_ENV, XDG_RUNTIME_DIR: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data') };
const cli = join(packageRoot(), 'electron', 'cli', 'gpushare.js');
const fakejob = join(fakegpuBuildDir(), 'fakejob');
let engine: ChildProcess;

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env, cwd: home }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}
const jobs = async (): Promise<JobView[]> => JSON.parse((await gpushare(['jobs', '--json', '--all'])).stdout) as JobView[];

before(async () => {
  engine = spawn(process.execPath, [cli, 'serve', '--simulate', 'h100x2-mig', '--rate', '10'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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

test('mig apply prints a run line per job sharing a slice through MPS, and those lines run the jobs as clients of the slice daemon', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('mig apply changes the layout as root only');
  const applied = await gpushare(['mig', 'apply', '--gpu', '1', '--jobs', '15G:0.1,15G:0.1,15G:0.1,15G:0.1,15G:0.1']);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /MIG layout applied/);
  const lines = [...applied.stdout.matchAll(/^ {4}(job\d): gpushare run (--mig-slice (MIG-[0-9a-f-]+) --mps-share (\d+)) -- COMMAND$/gm)];
  assert.equal(lines.length, 5, `one run line per job, with the new slice's UUID:\n${applied.stdout}`);
  const slice = lines[0][3];
  assert.ok(lines.every((l) => l[3] === slice && l[4] === '10'), 'all five share the 7g.80gb at 10 % each');
  const layout = await gpushare(['mig', 'layout', '--gpu', '1']);
  assert.match(layout.stdout, new RegExp(`7g\\.80gb .*${slice}`), 'the UUID printed is the slice the plan made');

  const ids: string[] = [];
  for (const line of lines.slice(0, 2)) {
    const run = await gpushare(['run', ...line[2].split(' '), '--', fakejob, '--mem', '1G', 'train', '--kernel-ms', '5', '--duration', '60']);
    assert.equal(run.code, 0, run.stderr);
    ids.push(run.stdout.split(' ')[0]);
  }
  const mine = await until('all three running', async () => {
    const listed = (await jobs()).filter((j) => ids.includes(j.id));
    return listed.every((j) => j.state === 'running') ? listed : undefined;
  }, { timeoutMs: 10_000, intervalMs: 100, detail: async () => JSON.stringify((await jobs()).map((j) => [j.id, j.state])) });
  assert.deepEqual(mine.map((j) => [j.state, j.mode, j.migSlice, j.mpsSharePercent]), ids.map(() => ['running', 'mig', slice, 10]));
  const status = await gpushare(['mps', 'status', '--gpu', '1']);
  assert.match(status.stdout, /^ {2}GI \d+ {2}ours {2}MPS runs for GPU 1 slice GI \d+ \(simulated daemon/m, status.stdout);
  // the simulated driver's state, as the jobs were given it
  const statePath = /(?:^|\0)GPUSHARE_FAKEGPU_STATE=([^\0]+)/.exec(readFileSync(`/proc/${mine[0].pid}/environ`, 'latin1'))?.[1];
  assert.ok(statePath, 'a simulated job knows its driver state');
  {
    const clients = (JSON.parse(execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['mps', '--state', statePath, 'status'], { encoding: 'utf8' })) as Array<{ instances: Array<{ uuid: string; clients: Array<{ pid: number; share: number }> }> }>)[1].instances.find((i) => i.uuid === slice)!.clients;
    assert.deepEqual(clients.map((c) => [c.pid, c.share]).sort(), mine.map((j) => [j.pid, 10]).sort(), "both are clients of the slice's daemon");
  }
  for (const id of ids) assert.equal((await gpushare(['set', id, '--terminate'])).code, 0);
  await until('all three ended', async () => (await jobs()).filter((j) => ids.includes(j.id)).every((j) => ['finished', 'failed'].includes(j.state)), { timeoutMs: 10_000, intervalMs: 100 });
  const afterward = await gpushare(['mps', 'status', '--gpu', '1']);
  assert.doesNotMatch(afterward.stdout, /GI \d+ {2}ours/, 'their slice daemon stopped with the last of them');
});

test('gpushare run --mig-slice is mode mig: an unknown slice is named, a share out of range refused; mps stop --gi names an unknown slice', async () => {
  const unknown = await gpushare(['run', '--mig-slice', 'MIG-nope', '--mps-share', '50', '--', fakejob, 'hold']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No MIG slice MIG-nope on this box/);
  const share = await gpushare(['run', '--mig-slice', 'MIG-nope', '--mps-share', '150', '--', fakejob, 'hold']);
  assert.notEqual(share.code, 0);
  assert.match(share.stderr, /mpsSharePercent: must be at most 100/);
  const noSlice = await gpushare(['mps', 'stop', '--gpu', '1', '--gi', '99']);
  assert.equal(noSlice.code, 1);
  assert.match(noSlice.stderr, /GPU 1 has no MIG slice with GPU instance 99/);
  const startSlice = await gpushare(['mps', 'start', '--gpu', '1', '--gi', '1']);
  assert.equal(startSlice.code, 2);
  assert.match(startSlice.stderr, /--gi is for gpushare mps stop only \(a slice's daemon starts with its first job\)/);
});
