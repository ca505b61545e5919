// The independent validator catches each kind of illegal layout and each command order the driver refuses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migCommands } from './commands.js';
import type { MigInstance } from './layout.js';
import { builtInMigProfileTable, type MigProfileTable } from './profiles.js';
import { validateMigCommands, validateMigLayout } from './validator.js';

const h100 = builtInMigProfileTable('H100-80GB')!;
const at = (profile: string, start: number, extra: Partial<MigInstance> = {}): MigInstance => {
  const p = h100.profiles.find((q) => q.name === profile)!;
  return { profile, profileId: p.id, placement: { start, size: p.memorySlices }, jobId: null, ...extra };
};
const problems = (table: MigProfileTable, layout: MigInstance[]) => validateMigLayout(table, layout).problems.join('\n');

test('legal layouts pass', () => {
  for (const layout of [
    [at('3g.40gb', 0)],
    [at('4g.40gb', 0), at('3g.40gb', 4)],
    [at('2g.20gb', 0), at('2g.20gb', 2), at('2g.20gb', 4), at('1g.10gb', 6)],
    [0, 1, 2, 3, 4, 5, 6].map((s) => at(s === 3 ? '1g.10gb+me' : '1g.10gb', s)),
    [at('1g.20gb', 0), at('1g.20gb', 2), at('1g.20gb', 4), at('1g.20gb', 6)],
    [at('7g.80gb', 0)],
  ]) {
    assert.deepEqual(validateMigLayout(h100, layout).problems, [], JSON.stringify(layout));
  }
});

test('illegal layouts are caught, each with the reason', () => {
  assert.match(problems(h100, [at('3g.40gb', 2)]), /3g\.40gb may start only at \{0,4\}/);
  assert.match(problems(h100, [at('2g.20gb', 6)]), /may start only at \{0,2,4\}/);
  assert.match(problems(h100, [at('3g.40gb', 0), at('2g.20gb', 2)]), /memory slice 2 is already used by 3g\.40gb at 0:4/);
  assert.match(problems(h100, [at('1g.10gb', 7)]), /may start only at|runs past/);
  assert.match(problems(h100, [{ ...at('2g.20gb', 0), placement: { start: 0, size: 1 } }]), /spans 2 memory slices, not 1/);
  assert.match(problems(h100, [at('1g.10gb+me', 0), at('1g.10gb+me', 1)]), /2 instances of 1g\.10gb\+me; at most 1/);
  assert.match(problems(h100, [{ ...at('1g.10gb', 0), profileId: 42 }]), /profile id 42 is not offered/);
  assert.match(problems(h100, [{ ...at('1g.10gb', 0), profile: '1g.20gb' }]), /profile id 19 is 1g\.10gb/);
  assert.match(problems(h100, [at('1g.10gb', 0, { jobId: 'a' }), at('1g.10gb', 1, { jobId: 'a' })]), /job a is in 2 instances/);
  const misfit = validateMigLayout(h100, [at('1g.10gb', 0, { jobId: 'a' })], [{ id: 'a', memoryBytes: 15e9, smShare: 0.5 }]).problems.join('\n');
  assert.match(misfit, /job a needs 15000000000 bytes, more than 9984 MiB/);
  assert.match(misfit, /job a needs 0\.5 of 132 SMs, more than 16/);
  // Compute slices are checked on their own, for tables where placements alone would allow too many.
  const wide: MigProfileTable = { ...h100, profiles: h100.profiles.map((p) => (p.id === 14 ? { ...p, computeSlices: 3 } : p)) };
  assert.match(problems(wide, [at('2g.20gb', 0), at('2g.20gb', 2), at('2g.20gb', 4)]), /9 compute slices; H100-80GB has 7/);
});

const today: MigInstance[] = [
  { ...at('3g.40gb', 0), gpuInstanceId: 1, computeInstanceIds: [0] },
  { ...at('3g.40gb', 4), gpuInstanceId: 2, computeInstanceIds: [0, 1] },
];
const argv = (line: string) => line.split(' ');

test('a command list that the driver accepts passes, and reaches the planned layout', () => {
  const planned = [today[0], at('2g.20gb', 4), at('1g.20gb', 6)];
  const commands = migCommands(today, planned, 0).map((c) => c.argv);
  assert.deepEqual(commands.map((c) => c.join(' ')), [
    'nvidia-smi mig -dci -i 0 -gi 2 -ci 0',
    'nvidia-smi mig -dci -i 0 -gi 2 -ci 1',
    'nvidia-smi mig -dgi -i 0 -gi 2',
    'nvidia-smi mig -i 0 -cgi 14:4 -C',
    'nvidia-smi mig -i 0 -cgi 15:6 -C',
  ]);
  assert.deepEqual(validateMigCommands(h100, today, commands, planned).problems, []);
});

test('command lists in an order the driver refuses are caught', () => {
  const check = (lines: string[], expected?: MigInstance[]) => validateMigCommands(h100, today, lines.map(argv), expected).problems.join('\n');
  assert.match(check(['nvidia-smi mig -dgi -i 0 -gi 2']), /GPU instance 2 still has compute instances; destroy them first/);
  assert.match(check(['nvidia-smi mig -i 0 -cgi 14:4 -C']), /memory slices 4-5 overlap 3g\.40gb at 4; destroy it first/);
  assert.match(check(['nvidia-smi mig -dci -i 0 -gi 2 -ci 0', 'nvidia-smi mig -dci -i 0 -gi 2 -ci 1', 'nvidia-smi mig -dgi -i 0 -gi 2', 'nvidia-smi mig -i 0 -cgi 14 -C']), /no explicit placement/);
  assert.match(check(['nvidia-smi mig -dci -i 0 -gi 2 -ci 0', 'nvidia-smi mig -dci -i 0 -gi 2 -ci 1', 'nvidia-smi mig -dgi -i 0 -gi 2', 'nvidia-smi mig -i 0 -cgi 14:6 -C']), /2g\.20gb cannot start at 6/);
  assert.match(check(['nvidia-smi mig -dci -i 0 -gi 7 -ci 0']), /no GPU instance 7/);
  assert.match(check(['nvidia-smi mig -dci -i 1 -gi 2 -ci 0', 'nvidia-smi mig -dci -i 0 -gi 2 -ci 1']), /GPU 0, but the others act on GPU 1/);
  assert.match(check(['nvidia-smi mig -dci -gi 2 -ci 0']), /no -i GPU/);
  assert.match(check(['nvidia-smi mig -dci -i 0 -gi 2 -ci 0', 'nvidia-smi mig -dci -i 0 -gi 2 -ci 1', 'nvidia-smi mig -dgi -i 0 -gi 2', 'nvidia-smi mig -i 0 -cgi 14:4']), /ends with no compute instance/);
  assert.match(check(['nvidia-smi mig -dci -i 0 -gi 2 -ci 0', 'nvidia-smi mig -dci -i 0 -gi 2 -ci 1', 'nvidia-smi mig -dgi -i 0 -gi 2'], today), /not the planned/);
  assert.match(check(['rm -rf /']), /not an nvidia-smi mig command/);
});
