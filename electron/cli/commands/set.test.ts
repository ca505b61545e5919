// `gpushare set` with several changes at once is one lane move: the engine checks them all before it
// applies any, so a refusal of one leaves the job exactly as it was (the README's promise).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { FINAL_STATES, type JobView } from '../../../shared/jobs.js';
import { fakegpuBuildDir } from '../../engine/paths.js';
import { until } from '../../testing/until.js';
import { cliRig } from '../testing/cli-rig.js';

const rig = cliRig('set');
const fakejob = join(fakegpuBuildDir(), 'fakejob');

before(async () => {
  await rig.serve('a100-40gb');
});
after(() => rig.dispose());

const jobOf = async (id: string): Promise<JobView | undefined> => (JSON.parse((await rig.gpushare(['jobs', '--json', '--all'])).stdout) as JobView[]).find((j) => j.id === id);
/** The job as it is asked and kept, without its live readings (memory and SM in use move on their own). */
const asKept = ({ usedMemory: _memory, smPercent: _sm, ...rest }: JobView): Omit<JobView, 'usedMemory' | 'smPercent'> => rest;

async function runningJob(): Promise<string> {
  const run = await rig.gpushare(['run', '--gpu', '0', '--', fakejob, '--mem', '256M', 'train', '--kernel-ms', '2', '--duration', '60']);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const id = run.stdout.split(/[ :]/)[0];
  await until(`${id} running`, async () => (await jobOf(id))?.state === 'running', { intervalMs: 100 });
  return id;
}

test('a move refused half-way (a quota beyond the GPU, after a priority and a resume) leaves the job exactly as before', async () => {
  const id = await runningJob();
  assert.equal((await rig.gpushare(['set', id, '--suspend'])).code, 0);
  const before = await jobOf(id);
  const set = await rig.gpushare(['set', id, '--resume', '--priority', 'best-effort', '--mem', '100G']);
  assert.notEqual(set.code, 0, set.stdout);
  assert.match(set.stderr, /100G is more than GPU 0 has \(40G\)/);
  assert.deepEqual(asKept((await jobOf(id))!), asKept(before!));
  await rig.gpushare(['set', id, '--terminate']);
});

test('a move that is accepted applies every change and prints one line for it', async () => {
  const id = await runningJob();
  assert.equal((await rig.gpushare(['set', id, '--suspend'])).code, 0);
  const set = await rig.gpushare(['set', id, '--resume', '--priority', 'best-effort', '--mem', '1G']);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, new RegExp(`^${id} running: resumed by \\S+ \\(priority best-effort, memory quota 1\\.00G set\\)\n$`));
  const after = await jobOf(id);
  assert.deepEqual([after?.state, after?.priority, after?.memoryQuotaBytes], ['running', 'best-effort', 1024 ** 3]);
  await rig.gpushare(['set', id, '--terminate']);
});

test("dragging a running MPS job out of best-effort says its MPS clients keep the client priority they started with (CUDA reads it only at client start); a drag that keeps it says nothing more", async () => {
  const run = await rig.gpushare(['run', '--gpu', '0', '--mode', 'mps', '--mps-share', '50', '--priority', 'best-effort', '--', fakejob, '--mem', '256M', 'train', '--kernel-ms', '2', '--duration', '60']);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const id = run.stdout.split(/[ :]/)[0];
  await until(`${id} running`, async () => (await jobOf(id))?.state === 'running', { intervalMs: 100 });
  assert.equal((await jobOf(id))?.mpsClientPriority, 'below-normal');
  const up = await rig.gpushare(['set', id, '--priority', 'high']);
  assert.equal(up.code, 0, up.stderr);
  const [line, note, ...rest] = up.stdout.trimEnd().split('\n');
  assert.match(line, new RegExp(`^${id} running \\(priority high set\\)$`));
  assert.equal(note, `${id}'s MPS clients keep client priority below normal, which they started with: CUDA MPS reads CUDA_MPS_CLIENT_PRIORITY only when a client connects. Its lane (the gate) and CPU priority are high now; restart the job to change its MPS priority too.`);
  assert.deepEqual(rest, []);
  const after = await jobOf(id);
  assert.deepEqual([after?.priority, after?.mpsClientPriority], ['high', 'below-normal']);
  const sideways = await rig.gpushare(['set', id, '--priority', 'normal']);
  assert.equal(sideways.stdout.trimEnd().split('\n').length, 2, 'still below normal: still said');
  const back = await rig.gpushare(['set', id, '--priority', 'best-effort']);
  assert.match(back.stdout, new RegExp(`^${id} running \\(priority best-effort set\\)\n$`), 'back where its clients are: nothing more to say');
  await rig.gpushare(['set', id, '--terminate']);
});

test('--terminate follows the job until it has ended and says how, not "running (terminate set)"', async () => {
  const id = await runningJob();
  const end = await rig.gpushare(['set', id, '--terminate']);
  assert.equal(end.code, 0, end.stdout + end.stderr);
  const ended = await jobOf(id);
  assert.ok(ended && FINAL_STATES.has(ended.state), `ended: ${ended?.state}`);
  assert.equal(end.stdout, `${id} ${ended.state}: ${ended.history.at(-1)!.reason}\n`);
});
