// `gpushare mig plan` as a user runs it: the built command.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { CLI_ENV, CLI_PATH } from '../testing/compiled-cli.js';

function gpushare(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // this tree's CLI (CLI_ENV), not whatever dist/ holds
    execFile(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...CLI_ENV } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

test('mig plan --json prints the layout, what is not placed and the commands', async () => {
  const { code, stdout, stderr } = await gpushare(['mig', 'plan', '--model', 'H100-80GB', '--jobs', '30G,10G:0.2,19G,90G@high', '--gpu', '2', '--json']);
  assert.equal(code, 0, stderr);
  const plan = JSON.parse(stdout);
  assert.deepEqual(Object.keys(plan), ['model', 'slices', 'unplaced', 'commands']);
  assert.equal(plan.model, 'H100-80GB');
  assert.deepEqual(plan.slices, [
    { profile: '3g.40gb', profileId: 9, placement: { start: 0, size: 4 }, job: { id: 'job1', spec: '30G', priority: 'normal' } },
    { profile: '2g.20gb', profileId: 14, placement: { start: 4, size: 2 }, job: { id: 'job2', spec: '10G:0.2', priority: 'normal' } },
    { profile: '1g.20gb', profileId: 15, placement: { start: 6, size: 2 }, job: { id: 'job3', spec: '19G', priority: 'normal' } },
  ]);
  assert.deepEqual(plan.unplaced, [
    { job: { id: 'job4', spec: '90G@high', priority: 'high' }, reason: 'needs 90G but the largest profile on H100-80GB, 7g.80gb, has 79.3G' },
  ]);
  assert.deepEqual(plan.commands, ['nvidia-smi mig -i 2 -cgi 9:0 -C', 'nvidia-smi mig -i 2 -cgi 14:4 -C', 'nvidia-smi mig -i 2 -cgi 15:6 -C']);
});

test('20G is 20 GiB as everywhere: it does not fit an H100 1g.20gb (19.62 GiB), so it gets a 3g.40gb', async () => {
  const { code, stdout, stderr } = await gpushare(['mig', 'plan', '--model', 'H100-80GB', '--jobs', '20G', '--json']);
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout).slices.map((s: { profile: string }) => s.profile), ['3g.40gb']);
  const fits = await gpushare(['mig', 'plan', '--model', 'H100-80GB', '--jobs', '19.5GiB', '--json']);
  assert.deepEqual(JSON.parse(fits.stdout).slices.map((s: { profile: string }) => s.profile), ['1g.20gb']);
});

test('mig plan prints each slice with its placement and job, then the commands', async () => {
  const { code, stdout } = await gpushare(['mig', 'plan', '--model', 'NVIDIA A100-SXM4-40GB', '--jobs', '15G,8G@best-effort,12G@high', '--no-mps']);
  assert.equal(code, 0);
  assert.match(stdout, /^MIG plan for A100-40GB/);
  assert.match(stdout, /0-3\s+3g\.20gb\s+9\s+0:4\s+job\d  1\dG/);
  assert.match(stdout, /4-7\s+3g\.20gb\s+9\s+4:4\s+job\d  1\dG/);
  assert.match(stdout, /job2  8G@best-effort: no room: it needs at least a 1g\.10gb and the slices went to higher-priority jobs \(job3, job1\)/);
  assert.match(stdout, /nvidia-smi mig -i 0 -cgi 9:0 -C\n  nvidia-smi mig -i 0 -cgi 9:4 -C/);
  // without --no-mps the three share a 7g.40gb through MPS (35G of its 39.25G): all placed, and the plan says so
  const shared = await gpushare(['mig', 'plan', '--model', 'NVIDIA A100-SXM4-40GB', '--jobs', '15G,8G@best-effort,12G@high']);
  assert.match(shared.stdout, /0-7\s+7g\.40gb\s+0\s+0:8\s+job3\+job1\+job2  \(MPS\)/);
  assert.match(shared.stdout, /Shared through MPS .*\n  7g\.40gb at 0: job3 100%, job1 100%, job2 100%/);
  assert.doesNotMatch(shared.stdout, /Not placed/);
});

test('bad input: exit code 2 and a message naming the problem', async () => {
  const cases: [string[], RegExp][] = [
    [['--model', 'V100', '--jobs', '10G'], /Unknown GPU model "V100".*A100-40GB, A100-80GB, H100-80GB, H200-141GB/],
    [['--model', 'H100-80GB', '--jobs', '10G,abc'], /Job 2 "abc": memory "abc" is not a number/],
    [['--model', 'H100-80GB', '--jobs', '10G:1.5'], /Job 1 "10G:1.5": SM share must be more than 0 and at most 1/],
    [['--model', 'H100-80GB', '--jobs', '10G:250%'], /SM share must be 1-100%, got 250%/],
    [['--model', 'H100-80GB', '--jobs', '10G,-5G'], /Job 2 "-5G": memory must be more than 0/],
    [['--model', 'H100-80GB', '--jobs=-5G'], /Job 1 "-5G": memory must be more than 0/],
    [['--model', 'H100-80GB', '--jobs', '10G@urgent'], /unknown priority "urgent"/],
    [['--model', 'H100-80GB'], /--jobs is missing/],
    [['--jobs', '10G'], /--model is missing/],
    [['--model', 'H100-80GB', '--jobs', '10G', '--gpu', 'one'], /--gpu must be a GPU index/],
    [['--model', 'H100-80GB', '--jobs', '10G', '--colour'], /--colour/],
  ];
  for (const [args, message] of cases) {
    const { code, stderr } = await gpushare(['mig', 'plan', ...args]);
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
    assert.match(stderr, message, args.join(' '));
  }
  const apply = await gpushare(['mig', 'apply']);
  assert.equal(apply.code, 2);
  assert.match(apply.stderr, /--gpu N is needed/);
  const unknown = await gpushare(['mig', 'split']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Unknown mig subcommand "split": plan, layout or apply/);
});
