// Commands from today's layout to the planned one: destroy what changes, then create largest first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migCommands } from './commands.js';
import type { MigInstance } from './layout.js';

const instance = (profile: string, profileId: number, start: number, size: number, extra: Partial<MigInstance> = {}): MigInstance =>
  ({ profile, profileId, placement: { start, size }, jobId: null, ...extra });

test('new instances are created largest first, each at its explicit placement with its compute instance', () => {
  const planned = [instance('1g.10gb', 19, 0, 1, { jobId: 'c' }), instance('2g.20gb', 14, 2, 2, { jobId: 'b' }), instance('3g.40gb', 9, 4, 4, { jobId: 'a' })];
  const commands = migCommands([], planned, 3);
  assert.deepEqual(commands.map((c) => c.argv.join(' ')), [
    'nvidia-smi mig -i 3 -cgi 9:4 -C',
    'nvidia-smi mig -i 3 -cgi 14:2 -C',
    'nvidia-smi mig -i 3 -cgi 19:0 -C',
  ]);
  assert.match(commands[0].why, /3g\.40gb on memory slices 4-7 for a/);
});

test('a kept GPU instance without a compute instance gets one; kept ones are otherwise left alone', () => {
  const today = [instance('3g.40gb', 9, 0, 4, { gpuInstanceId: 1, computeInstanceIds: [] }), instance('3g.40gb', 9, 4, 4, { gpuInstanceId: 2, computeInstanceIds: [0] })];
  assert.deepEqual(migCommands(today, today, 0).map((c) => c.argv.join(' ')), ['nvidia-smi mig -cci -i 0 -gi 1']);
});
