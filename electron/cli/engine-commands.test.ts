// Commands against a running engine on simulated GPUs (as the console runs them where there is no
// NVIDIA driver): a MIG dry run asks the engine as the real apply does, and a --gpu past the box's
// last GPU is a usage error that says how many GPUs there are.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cliRig } from './testing/cli-rig.js';

const rig = cliRig('engine-commands');
const noDriver = { GPUSHARE_NVML_LIB: '/nonexistent/libnvidia-ml.so.1' };
before(() => rig.serve('h100x2-mig'));
after(() => rig.dispose());

test('mig apply --dry-run goes through the running engine, as the real apply does, and changes nothing', async () => {
  const before = await rig.gpushare(['mig', 'layout', '--gpu', '1', '--json'], noDriver);
  assert.equal(before.code, 0, before.stderr);
  // two 30G jobs need two 3g.40gb: the one there and a new one where the idle small slices are
  const dry = await rig.gpushare(['mig', 'apply', '--gpu', '1', '--jobs', '30G,30G', '--dry-run', '--json'], noDriver);
  assert.equal(dry.code, 0, dry.stderr);
  const result = JSON.parse(dry.stdout) as { dryRun: boolean; applied: boolean; commands: string[] };
  assert.equal(result.dryRun, true);
  assert.equal(result.applied, false);
  assert.ok(result.commands.some((c) => /^nvidia-smi mig -i 1 -cgi /.test(c)), result.commands.join(' | '));
  const after = await rig.gpushare(['mig', 'layout', '--gpu', '1', '--json'], noDriver);
  // (each slice's SM % is a reading since the previous one, not part of the layout)
  const layoutOf = (stdout: string) => JSON.parse(stdout).slices.map(({ smPercent: _sm, ...slice }: { smPercent?: number | null }) => slice);
  assert.deepEqual(layoutOf(after.stdout), layoutOf(before.stdout), 'the dry run changed nothing');
});

test('--gpu 99 on a 2-GPU box: exit 2, naming the 2 GPUs, for run, mig layout, mig apply and mps', async () => {
  const cases = [
    ['run', '--gpu', '99', '--', 'true'],
    ['mig', 'layout', '--gpu', '99'],
    ['mig', 'apply', '--gpu', '99', '--jobs', '10G', '--dry-run'],
    ['mps', 'start', '--gpu', '99'],
  ];
  for (const args of cases) {
    const run = await rig.gpushare(args, noDriver);
    assert.equal(run.code, 2, `gpushare ${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /--gpu 99: there is no GPU 99; this box has 2 GPUs, indexes 0-1/, args.join(' '));
  }
  const simulated = await rig.gpushare(['mig', 'layout', '--gpu', '5', '--simulate', 'h100x2-mig']);
  assert.equal(simulated.code, 2, simulated.stderr);
  assert.match(simulated.stderr, /--gpu 5: there is no GPU 5; this box has 2 GPUs/);
});
