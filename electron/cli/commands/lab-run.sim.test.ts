// `gpushare lab where` and `gpushare run --box` against a box that is `gpushare serve --simulate
// h100x2-mig` on a socket (GPU 1 in MIG mode: 3g.40gb, 2g.20gb, 1g.10gb ×2): a job that fits only in a
// slice is told that slice and, started as printed, runs in it (the simulated driver's execution
// record); a job sent to the box gets the box's login environment, not this shell's.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FINAL_STATES, type JobView } from '../../../shared/jobs.js';
import type { WhereAnswer } from '../../../shared/lab-where.js';
import { LOGIN_PATH } from '../../engine/scheduler/job-env.js';
import { fakegpuBuildDir } from '../../engine/paths.js';
import { processEnvironment } from '../../testing/proc-environ.js';
import { until } from '../../testing/until.js';
import { useSimLabBox } from '../testing/sim-lab-box.js';

const { home, gpushare } = useSimLabBox('h100x2-mig', 'gpushare-lab-run-');
const fakejob = join(fakegpuBuildDir(), 'fakejob');
const train = (mem: string, seconds = 60): string[] => [fakejob, '--mem', mem, 'train', '--kernel-ms', '5', '--duration', String(seconds)];

test('lab where names the MIG slice a job fits only in, with the run flags that start it there, and the job started so runs in that slice', async () => {
  // GPU 0 (whole, 80G) nearly full: 15G fits only in the 3g.40gb or the 2g.20gb of GPU 1
  const filler = await gpushare(['run', '--gpu', '0', '--mem', '70G', '--wait', '5', '--json', '--', ...train('70G', 120)]);
  assert.equal(filler.code, 0, filler.stderr);
  assert.equal((JSON.parse(filler.stdout) as JobView).state, 'running');
  const where = await gpushare(['lab', 'where', '--mem', '15G', '--json']);
  assert.equal(where.code, 0, where.stderr);
  const answer = JSON.parse(where.stdout) as WhereAnswer & { places: Array<{ run: string[] }> };
  assert.equal(answer.places.length, 1, where.stdout);
  const place = answer.places[0]!;
  assert.deepEqual([place.box, place.gpus, place.slice?.profile], ['sim', [1], '3g.40gb'], 'the roomiest idle slice');
  assert.match(place.slice!.uuid, /^MIG-/);
  assert.deepEqual(place.run, ['--box', 'sim', '--mig-slice', place.slice!.uuid, '--mem', '15G']);
  const text = await gpushare(['lab', 'where', '--mem', '15G']);
  assert.match(text.stdout, new RegExp(`^→ sim: GPU 1, MIG slice 3g\\.40gb ${place.slice!.uuid} \\(\\d+(\\.\\d)?G free; nothing queued ahead; utilization 0%\\)$`, 'm'));
  assert.match(text.stdout, new RegExp(`^Run it there: gpushare run --box sim --mig-slice ${place.slice!.uuid} --mem 15G -- COMMAND$`, 'm'));

  const run = await gpushare(['run', ...place.run, '--wait', '5', '--json', '--', ...train('1G')]);
  assert.equal(run.code, 0, run.stderr);
  const job = JSON.parse(run.stdout) as JobView;
  assert.deepEqual([job.state, job.gpu, job.mode, job.migSlice], ['running', 1, 'mig', place.slice!.uuid]);
  const state = processEnvironment(job.pid!).GPUSHARE_FAKEGPU_STATE;
  assert.ok(state, 'a simulated job knows its driver state');
  const records = (gi: number): Array<{ pid: number }> =>
    execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['execlog', '--state', state, '--device', '1', '--mig', String(gi)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { pid: number });
  await until('its kernels in the slice', () => records(place.slice!.gpuInstanceId).some((r) => r.pid === job.pid) || undefined, { timeoutMs: 10_000, intervalMs: 100 });
  for (const gi of [2, 3, 4]) assert.ok(!records(gi).some((r) => r.pid === job.pid), `none of its kernels ran in GPU instance ${gi}`);
  for (const id of [job.id, (JSON.parse(filler.stdout) as JobView).id]) assert.equal((await gpushare(['set', id, '--terminate'])).code, 0);
});

test("run --box: the job gets the box's login environment for the person, LANG/LC_*/TERM/TZ from here and only the variables --env names; run here keeps this shell's", async () => {
  const local = { LAB_TEST_SECRET: 'x', VIRTUAL_ENV: '/home/someone/venv', PATH: `/home/someone/venv/bin:${process.env.PATH}`, LD_LIBRARY_PATH: '/opt/here/lib', SSH_AUTH_SOCK: '/tmp/ssh-here/agent.1', DISPLAY: ':7', LANG: 'C.UTF-8', LC_TIME: 'C', TERM: 'xterm-test', TZ: 'Europe/Berlin', KEEP_ME: 'k' };
  const there = await gpushare(['run', '--box', 'sim', '--env', 'KEEP_ME', '--env', 'SET_ME=a=b', '--wait', '5', '--json', '--', ...train('1G')], local);
  assert.equal(there.code, 0, there.stderr);
  const job = JSON.parse(there.stdout) as JobView;
  assert.equal(job.state, 'running');
  const got = processEnvironment(job.pid!);
  const me = userInfo(); // this box's passwd entry for the caller's uid
  assert.deepEqual(
    Object.fromEntries(['HOME', 'USER', 'LOGNAME', 'SHELL', 'PATH', 'LANG', 'LC_TIME', 'TERM', 'TZ', 'KEEP_ME', 'SET_ME'].map((k) => [k, got[k]])),
    { HOME: me.homedir, USER: me.username, LOGNAME: me.username, SHELL: me.shell ?? '/bin/sh', PATH: LOGIN_PATH, LANG: 'C.UTF-8', LC_TIME: 'C', TERM: 'xterm-test', TZ: 'Europe/Berlin', KEEP_ME: 'k', SET_ME: 'a=b' },
  );
  for (const name of ['LAB_TEST_SECRET', 'VIRTUAL_ENV', 'SSH_AUTH_SOCK', 'DISPLAY', 'XDG_RUNTIME_DIR', 'XDG_STATE_HOME']) assert.equal(got[name], undefined, `${name} stays here`);
  assert.notEqual(got.LD_LIBRARY_PATH, '/opt/here/lib', "this shell's LD_LIBRARY_PATH stays here");

  const here = await gpushare(['run', '--env', 'SET_HERE=1', '--wait', '5', '--json', '--', ...train('1G')], local);
  assert.equal(here.code, 0, here.stderr);
  const hereJob = JSON.parse(here.stdout) as JobView;
  const gotHere = processEnvironment(hereJob.pid!);
  assert.deepEqual([gotHere.LAB_TEST_SECRET, gotHere.VIRTUAL_ENV, gotHere.HOME, gotHere.SET_HERE], ['x', '/home/someone/venv', home, '1'], 'run without --box sends this shell as it is, and --env on top');
  for (const id of [job.id, hereJob.id]) assert.equal((await gpushare(['set', id, '--terminate'])).code, 0);
});

test('run --box in words: the job runs on which GPU of which box, and its log is on that box', async () => {
  const run = await gpushare(['run', '--box', 'sim', '--wait', '5', '--', ...train('1G')]);
  assert.equal(run.code, 0, run.stderr);
  const said = /^(j\d+) running on GPU \d of sim, pid \d+\nlog \(on sim\): \S+\/\1\.log\n$/.exec(run.stdout);
  assert.ok(said, run.stdout);
  assert.equal((await gpushare(['set', said[1]!, '--terminate'])).code, 0);
});

test('run --env refuses a variable gpushare sets itself, one not set here and a bad name, starting nothing', async () => {
  const before = (await gpushare(['jobs', '--json', '--all'])).stdout;
  for (const [flag, says] of [
    ['LD_PRELOAD=/tmp/x.so', /--env LD_PRELOAD: gpushare sets LD_PRELOAD itself for every job; it cannot be passed/],
    ['CUDA_VISIBLE_DEVICES', /--env CUDA_VISIBLE_DEVICES: gpushare sets/],
    ['NOT_SET_HERE_X', /--env NOT_SET_HERE_X: NOT_SET_HERE_X is not set here; give its value as --env NOT_SET_HERE_X=VALUE/],
    ['1BAD=x', /"1BAD" is not a variable name/],
  ] as const) {
    const out = await gpushare(['run', '--box', 'sim', '--env', flag, '--', ...train('1G')], { CUDA_VISIBLE_DEVICES: '0' });
    assert.equal(out.code, 2, `${flag}: ${out.stderr}`);
    assert.match(out.stderr, says);
  }
  assert.equal((await gpushare(['jobs', '--json', '--all'])).stdout, before, 'no job was submitted');
});

test('jobs and set --box follow and change a job on the box, each line naming the box, with no engine answering here', async () => {
  const noEngineHere = { GPUSHARE_SOCKET: join(home, 'no-engine-here.sock') }; // only the box can answer
  const run = await gpushare(['run', '--box', 'sim', '--wait', '5', '--json', '--', ...train('1G')], noEngineHere);
  assert.equal(run.code, 0, run.stderr);
  const id = (JSON.parse(run.stdout) as JobView).id;
  const onBox = async (): Promise<JobView | undefined> => {
    const out = await gpushare(['jobs', '--box', 'sim', '--json', '--all'], noEngineHere);
    assert.equal(out.code, 0, out.stderr);
    return (JSON.parse(out.stdout) as JobView[]).find((j) => j.id === id);
  };
  assert.equal((await onBox())?.state, 'running');
  const table = await gpushare(['jobs', '--box', 'sim'], noEngineHere);
  assert.equal(table.code, 0, table.stderr);
  const [header, ...rows] = table.stdout.trimEnd().split('\n');
  assert.match(header!, /^BOX\s+ID\s+STATE\s/);
  assert.ok(rows.length > 0 && rows.every((r) => r.startsWith('sim ')), table.stdout);
  assert.ok(rows.some((r) => new RegExp(`^sim\\s+${id}\\s+running\\s`).test(r)), table.stdout);

  const suspend = await gpushare(['set', id, '--box', 'sim', '--suspend'], noEngineHere);
  assert.equal(suspend.code, 0, suspend.stderr);
  assert.match(suspend.stdout, new RegExp(`^${id} suspended on sim: .+\\n$`));
  assert.equal((await onBox())?.state, 'suspended');
  const lower = await gpushare(['set', '--box', 'sim', id, '--priority', 'best-effort'], noEngineHere);
  assert.equal(lower.code, 0, lower.stderr);
  assert.equal(lower.stdout, `${id} suspended on sim (priority best-effort set)\n`);
  const end = await gpushare(['set', id, '--box', 'sim', '--terminate'], noEngineHere);
  assert.equal(end.code, 0, end.stderr);
  assert.match(end.stdout, new RegExp(`^${id} \\S+ on sim\\b`));
  await until(`${id} ended on sim`, async () => FINAL_STATES.has((await onBox())!.state) || undefined, { timeoutMs: 10_000, intervalMs: 100 });
  const here = await gpushare(['jobs'], noEngineHere);
  assert.notEqual(here.code, 0, 'without --box it asks this box, where no engine answers');
});
