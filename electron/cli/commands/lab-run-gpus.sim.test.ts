// `gpushare lab where --gpus 2` and `gpushare run --gpus N / --gpu a,b` against a box that is `gpushare serve
// --simulate h100x8` on a socket: the run line names two GPUs, and the job started as printed runs on both
// (the simulated driver's execution record); bad GPU counts are refused with a sentence, starting nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import type { WhereAnswer } from '../../../shared/lab-where.js';
import { fakegpuBuildDir } from '../../engine/paths.js';
import { processEnvironment } from '../../testing/proc-environ.js';
import { until } from '../../testing/until.js';
import { useSimLabBox } from '../testing/sim-lab-box.js';

const { gpushare } = useSimLabBox('h100x8', 'gpushare-lab-run-gpus-');
const fakejob = join(fakegpuBuildDir(), 'fakejob');
const train = (mem: string, seconds = 60): string[] => [fakejob, '--mem', mem, 'train', '--kernel-ms', '5', '--duration', String(seconds)];

const jobsNow = async (): Promise<JobView[]> => JSON.parse((await gpushare(['jobs', '--json', '--all'])).stdout) as JobView[];
/** One process per GPU of the job, device i of its CUDA_VISIBLE_DEVICES, as torchrun starts them. */
const perGpu = (n: number, mem: string): string[] => ['/bin/sh', '-c', [...Array(n).keys()].map((d) => [fakejob, '--device', String(d), ...train(mem).slice(1)].join(' ')).join(' & ') + ' & wait'];
const kernelsOf = (state: string, device: number, pids: readonly number[]): number =>
  execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['execlog', '--state', state, '--device', String(device)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\n')
    .filter(Boolean)
    .filter((l) => pids.includes((JSON.parse(l) as { pid: number }).pid)).length;
/** The processes of the simulated job `id` (its GPUSHARE_JOB_ID), children included. */
const processesOf = (id: string, state: string): number[] =>
  execFileSync('ps', ['-eo', 'pid='], { encoding: 'utf8' })
    .split('\n')
    .map(Number)
    .filter((pid) => {
      try {
        const e = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        return e.includes(`GPUSHARE_JOB_ID=${id}`) && e.includes(`GPUSHARE_FAKEGPU_STATE=${state}`);
      } catch {
        return false;
      }
    });

test('lab where --gpus 2 prints a run line with --gpu a,b; started as printed, the job runs on both GPUs', async () => {
  const filler = await gpushare(['run', '--gpu', '0', '--mem', '70G', '--wait', '5', '--json', '--', ...train('70G', 120)]);
  assert.equal(filler.code, 0, filler.stderr);
  const where = await gpushare(['lab', 'where', '--mem', '20G', '--gpus', '2', '--json']);
  assert.equal(where.code, 0, where.stderr);
  const place = (JSON.parse(where.stdout) as WhereAnswer & { places: Array<{ run: string[] }> }).places[0]!;
  assert.deepEqual(place.gpus, [1, 2], 'the two idlest with most free, GPU 0 being nearly full');
  assert.deepEqual(place.run, ['--box', 'sim', '--gpu', '1,2', '--mem', '20G']);
  assert.match((await gpushare(['lab', 'where', '--mem', '20G', '--gpus', '2'])).stdout, /^Run it there: gpushare run --box sim --gpu 1,2 --mem 20G -- COMMAND$/m);

  const said = await gpushare(['run', '--gpus', '2', '--mem', '1G', '--wait', '5', '--', ...perGpu(2, '1G')]);
  assert.match(said.stdout, /^j\d+ running on GPUs \d,\d, pid \d+$/m, 'what run says of a job on two GPUs');
  assert.equal((await gpushare(['set', said.stdout.split(' ')[0]!, '--terminate'])).code, 0);
  const run = await gpushare(['run', ...place.run, '--wait', '5', '--json', '--', ...perGpu(2, '1G')]);
  assert.equal(run.code, 0, run.stderr);
  const job = JSON.parse(run.stdout) as JobView;
  assert.deepEqual([job.state, job.gpu, job.gpus, job.requestedGpus, job.gpuCount], ['running', 1, [1, 2], [1, 2], 2]);
  const env = processEnvironment(job.pid!);
  assert.equal(env.CUDA_VISIBLE_DEVICES?.split(',').length, 2, `two GPUs visible: ${env.CUDA_VISIBLE_DEVICES}`);
  const state = env.GPUSHARE_FAKEGPU_STATE!;
  await until('its kernels on GPUs 1 and 2', () => {
    const pids = processesOf(job.id, state);
    return (kernelsOf(state, 1, pids) > 0 && kernelsOf(state, 2, pids) > 0) || undefined;
  }, { timeoutMs: 10_000, intervalMs: 100 });
  const listed = (await jobsNow()).find((j) => j.id === job.id)!;
  assert.deepEqual(listed.gpus, [1, 2], 'gpushare jobs --json shows both');
  assert.match((await gpushare(['jobs'])).stdout, new RegExp(`^${job.id}\\s.*\\b1,2\\b`, 'm'), 'the jobs table shows both GPUs');
  for (const id of [job.id, (JSON.parse(filler.stdout) as JobView).id]) assert.equal((await gpushare(['set', id, '--terminate'])).code, 0);
});

test('run --gpus and --gpu lists: each bad one refused with a sentence, nothing started', async () => {
  const before = (await jobsNow()).length;
  const refused = async (args: string[], message: RegExp): Promise<void> => {
    const r = await gpushare(['run', ...args, '--', ...train('1G', 1)]);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.stderr, message, args.join(' '));
  };
  await refused(['--gpus', '9'], /--gpus 9: there are only 8 GPUs on this box/);
  await refused(['--gpus', '0'], /--gpus 0: a job runs on at least 1 GPU/);
  await refused(['--gpu', '0,0'], /--gpu 0,0 names GPU 0 twice/);
  await refused(['--gpu', '0,8'], /--gpu 0,8: there is no GPU 8; this box has 8 GPUs, indexes 0-7/);
  await refused(['--gpus', '2', '--mode', 'mps', '--mps-share', '50'], /--mode mps shares one GPU through MPS: not with --gpus 2/);
  assert.equal((await jobsNow()).length, before, 'nothing was submitted');
});
