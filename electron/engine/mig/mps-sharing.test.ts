// MIG + MPS: jobs share a slice through MPS only where that places more of them, within the slice's memory and SMs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobPriority, MigJobNeed } from './layout.js';
import { mpsShares, setPartitions } from './mps-sharing.js';
import { planMigLayout } from './planner.js';
import { BUILT_IN_MIG_MODELS, builtInMigProfileTable, fullGpuSmCount, type MigProfileTable } from './profiles.js';
import { validateMigLayout } from './validator.js';
import { seededRandom } from '../testing/seeded-random.js';

const GiB = 2 ** 30;
const table = (model: string): MigProfileTable => builtInMigProfileTable(model)!;
const PRIORITIES: JobPriority[] = ['high', 'normal', 'best-effort'];

test('set partitions: Bell numbers of groupings, each one covering every item once', () => {
  const bell = [1, 1, 2, 5, 15, 52, 203, 877];
  bell.forEach((count, n) => {
    const all = [...setPartitions(n)];
    assert.equal(all.length, count, `n=${n}`);
    for (const p of all) assert.deepEqual(p.flat().sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    assert.equal(new Set(all.map((p) => JSON.stringify(p))).size, count, 'no grouping twice');
  });
  assert.equal([...setPartitions(4, (g) => g.length <= 2)].length, 10, 'pruned: groups of at most two');
});

test('MPS shares: a job\'s SMs as a percentage of the slice, rounded up; none asked: 100 (time-shared)', () => {
  assert.deepEqual(mpsShares([{ id: 'a', sms: 9.8 }, { id: 'b', sms: 0 }, { id: 'c', sms: 42 }], 42), [
    { jobId: 'a', activeThreadPercentage: 24 },
    { jobId: 'b', activeThreadPercentage: 100 },
    { jobId: 'c', activeThreadPercentage: 100 },
  ]);
});

test('five 6G jobs on an A100-40GB: one slice each places four; three share a 3g.20gb through MPS and all five are placed', () => {
  const jobs: MigJobNeed[] = Array.from({ length: 5 }, (_, i) => ({ id: `job${i + 1}`, memoryBytes: 6 * GiB, smShare: 0.1 }));
  const alone = planMigLayout(table('A100-40GB'), jobs, [], { mps: false });
  assert.equal(alone.unplaced.length, 1, '1g.10gb (9.6G, two memory slices each) fits four times');
  const plan = planMigLayout(table('A100-40GB'), jobs);
  assert.deepEqual(plan.unplaced, []);
  const shared = plan.instances.filter((i) => i.mps);
  assert.equal(shared.length, 1);
  assert.equal(shared[0].profile, '3g.20gb');
  // 0.1 of 98 SMs is 9.8 of the 3g.20gb's 42: 24 % each; 3 x 6G = 18G of its 19.5G
  assert.deepEqual(shared[0].mps!.map((m) => m.activeThreadPercentage), [24, 24, 24]);
  assert.equal(shared[0].jobId, shared[0].mps![0].jobId);
  assert.equal(plan.score.sharingThroughMps, 3, 'a pair would leave no room for the other three: three is the fewest');
  assert.deepEqual(plan.instances.filter((i) => !i.mps).map((i) => i.profile), ['1g.10gb', '1g.10gb']);
  assert.ok(validateMigLayout(table('A100-40GB'), plan.instances).ok);
});

test('no MPS where a slice each places every job, and never past a slice\'s SMs', () => {
  const three = planMigLayout(table('A100-40GB'), [1, 2, 3].map((n) => ({ id: `j${n}`, memoryBytes: 6 * GiB })));
  assert.equal(three.score.sharingThroughMps, 0);
  assert.ok(three.instances.every((i) => !i.mps));
  // 0.3 of the GPU each (29.4 SMs): a group never has more SMs than its slice
  const wide = planMigLayout(table('A100-40GB'), Array.from({ length: 5 }, (_, i) => ({ id: `w${i}`, memoryBytes: 6 * GiB, smShare: 0.3 })));
  for (const instance of wide.instances.filter((i) => i.mps)) {
    const profile = table('A100-40GB').profiles.find((p) => p.id === instance.profileId)!;
    assert.ok(instance.mps!.length * 0.3 * 98 <= profile.smCount + 1e-9, JSON.stringify(instance));
  }
});

/** Small, seeded, reproducible: the same draws on every run. */
const prng = (seed: number): (() => number) => seededRandom(seed).next;

for (const model of BUILT_IN_MIG_MODELS) {
  test(`${model}: 40 random mixes of small jobs: MPS only where it places more, every group within its slice`, () => {
    const t = table(model);
    const smallest = Math.min(...t.profiles.map((p) => p.memoryMiB)) * 2 ** 20;
    const fullSms = fullGpuSmCount(t);
    const random = prng(0x3b5 + model.length);
    for (let mix = 0; mix < 40; mix++) {
      const jobs: MigJobNeed[] = Array.from({ length: 2 + Math.floor(random() * 6) }, (_, i) => {
        const job: MigJobNeed = { id: `j${i}`, memoryBytes: Math.round(smallest * (0.2 + random() * 1.6)), priority: PRIORITIES[Math.floor(random() * 3)] };
        if (random() < 0.5) job.smShare = Math.round((0.02 + random() * 0.2) * 100) / 100;
        return job;
      });
      const plan = planMigLayout(t, jobs);
      const alone = planMigLayout(t, jobs, [], { mps: false });
      const at = `${model} mix ${mix}: ${JSON.stringify(jobs)} -> ${JSON.stringify(plan.instances)}`;
      const placed = (p: typeof plan) => PRIORITIES.map((r) => p.score.placed[r]);
      const better = placed(plan).findIndex((n, r) => n !== placed(alone)[r]);
      if (plan.score.sharingThroughMps > 0) assert.ok(better >= 0 && placed(plan)[better] > placed(alone)[better], `${at}: MPS without placing more`);
      else assert.deepEqual(placed(plan), placed(alone), at);
      assert.ok(validateMigLayout(t, plan.instances).ok, at);
      const ids = plan.instances.flatMap((i) => (i.mps ? i.mps.map((m) => m.jobId) : i.jobId ? [i.jobId] : []));
      assert.deepEqual([...ids, ...plan.unplaced.map((u) => u.jobId)].sort(), jobs.map((j) => j.id).sort(), at);
      for (const instance of plan.instances.filter((i) => i.mps)) {
        const profile = t.profiles.find((p) => p.id === instance.profileId)!;
        const members = instance.mps!.map((m) => jobs.find((j) => j.id === m.jobId)!);
        assert.ok(members.length >= 2, at);
        assert.ok(members.reduce((s, j) => s + j.memoryBytes!, 0) <= profile.memoryMiB * 2 ** 20, `${at}: memory`);
        assert.ok(members.reduce((s, j) => s + (j.smShare ?? 0) * fullSms, 0) <= profile.smCount + 1e-9, `${at}: SMs`);
      }
    }
  });
}
