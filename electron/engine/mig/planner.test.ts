// The planner against an exhaustive search and the independent validator, on all four built-in GPUs.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { migCommands } from './commands.js';
import type { JobPriority, MigInstance, MigJobNeed } from './layout.js';
import { planMigLayout } from './planner.js';
import { BUILT_IN_MIG_MODELS, builtInMigProfileTable, type MigProfile, type MigProfileTable } from './profiles.js';
import { validateMigCommands, validateMigLayout } from './validator.js';
import { seededRandom } from '../testing/seeded-random.js';

const GB = 1e9;
const tableFor = (model: string): MigProfileTable => builtInMigProfileTable(model)!;
const PRIORITY_ORDER: JobPriority[] = ['high', 'normal', 'best-effort'];

/** Small, seeded, reproducible: the same draws on every run. */
const prng = (seed: number): (() => number) => seededRandom(seed).next;

/** A job mix around the table's profile sizes, some too large, some wanting SMs, mixed priorities. */
function randomJobs(table: MigProfileTable, random: () => number, count: number): MigJobNeed[] {
  const biggest = Math.max(...table.profiles.map((p) => p.memoryMiB)) * 2 ** 20;
  return Array.from({ length: count }, (_, i) => {
    const profile = table.profiles[Math.floor(random() * table.profiles.length)];
    const memoryBytes = random() < 0.05 ? Math.round(biggest * (1 + random() * 0.2)) : Math.max(1, Math.round(profile.memoryMiB * 2 ** 20 * (0.3 + random() * 0.75)));
    const job: MigJobNeed = { id: `j${i}`, memoryBytes };
    if (random() < 0.4) job.smShare = Math.round((0.02 + random() * 0.6) * 100) / 100;
    const p = random();
    job.priority = p < 0.25 ? 'high' : p < 0.8 ? 'normal' : 'best-effort';
    return job;
  });
}

// --- The reference: every subset of legal placements, every assignment of jobs to it. -----------------------

interface Placed {
  profile: MigProfile;
  start: number;
}

const jobFits = (table: MigProfileTable, job: MigJobNeed, profile: MigProfile): boolean => {
  const sms = Math.max(...table.profiles.map((p) => p.smCount));
  return profile.memoryMiB * 2 ** 20 >= (job.memoryBytes ?? 0) && profile.smCount + 1e-9 >= (job.smShare ?? 0) * sms;
};

/** Every set of non-overlapping legal placements (any profile, +me included) within the compute and count limits. */
function allPackings(table: MigProfileTable): Placed[][] {
  const placements: Placed[] = table.profiles.flatMap((profile) =>
    profile.placementStarts.filter((s) => s + profile.memorySlices <= table.memorySlices).map((start) => ({ profile, start })));
  const packings: Placed[][] = [];
  const chosen: Placed[] = [];
  const walk = (k: number) => {
    if (k === placements.length) {
      packings.push([...chosen]);
      return;
    }
    walk(k + 1);
    const p = placements[k];
    const overlaps = chosen.some((c) => p.start < c.start + c.profile.memorySlices && c.start < p.start + p.profile.memorySlices);
    const compute = chosen.reduce((sum, c) => sum + c.profile.computeSlices, 0) + p.profile.computeSlices;
    const count = chosen.filter((c) => c.profile.id === p.profile.id).length + 1;
    if (overlaps || compute > table.computeSlices || count > p.profile.maxInstances) return;
    chosen.push(p);
    walk(k + 1);
    chosen.pop();
  };
  walk(0);
  return packings;
}

interface Best {
  placed: number[];
  slices: number;
}

const better = (a: Best, b: Best): boolean => {
  for (let r = 0; r < 3; r++) if (a.placed[r] !== b.placed[r]) return a.placed[r] > b.placed[r];
  return a.slices < b.slices;
};

/** The best (placed per priority, fewest slices handed out) over all packings whose every instance holds a job. */
function bruteForce(table: MigProfileTable, packings: Placed[][], jobs: MigJobNeed[]): Best {
  let best: Best = { placed: [0, 0, 0], slices: 0 };
  for (const packing of packings) {
    if (packing.length === 0 || packing.length > jobs.length) continue;
    const slices = packing.reduce((sum, p) => sum + p.profile.memorySlices + p.profile.computeSlices, 0);
    let packingBest: number[] | null = null;
    const used = new Set<number>();
    const placed = [0, 0, 0];
    const assign = (k: number) => {
      if (k === packing.length) {
        if (!packingBest || better({ placed, slices: 0 }, { placed: packingBest, slices: 0 })) packingBest = [...placed];
        return;
      }
      jobs.forEach((job, j) => {
        if (used.has(j) || !jobFits(table, job, packing[k].profile)) return;
        const r = PRIORITY_ORDER.indexOf(job.priority ?? 'normal');
        used.add(j);
        placed[r]++;
        assign(k + 1);
        placed[r]--;
        used.delete(j);
      });
    };
    assign(0);
    if (packingBest && better({ placed: packingBest, slices }, best)) best = { placed: packingBest, slices };
  }
  return best;
}

function slicesHandedOut(table: MigProfileTable, instances: MigInstance[]): number {
  return instances
    .filter((i) => i.jobId !== null)
    .reduce((sum, i) => {
      const p = table.profiles.find((q) => q.id === i.profileId)!;
      return sum + p.memorySlices + p.computeSlices;
    }, 0);
}

function placedByPriority(plan: ReturnType<typeof planMigLayout>, jobs: MigJobNeed[]): number[] {
  const placed = [0, 0, 0];
  for (const i of plan.instances) {
    if (i.jobId === null) continue;
    placed[PRIORITY_ORDER.indexOf(jobs.find((j) => j.id === i.jobId)!.priority ?? 'normal')]++;
  }
  return placed;
}

// --- Properties over random mixes ----------------------------------------------------------------------------

for (const model of BUILT_IN_MIG_MODELS) {
  test(`${model}: 200 random mixes of 1-7 jobs are valid, replayable and as good as exhaustive search`, () => {
    const table = tableFor(model);
    const packings = allPackings(table);
    const random = prng(0x5eed + model.length * 7919 + model.charCodeAt(0));
    for (let mix = 0; mix < 200; mix++) {
      const jobs = randomJobs(table, random, 1 + Math.floor(random() * 7));
      const plan = planMigLayout(table, jobs, [], { mps: false });
      const at = `${model} mix ${mix}: ${JSON.stringify(jobs)} -> ${JSON.stringify(plan.instances)}`;

      const layout = validateMigLayout(table, plan.instances, jobs);
      assert.ok(layout.ok, `${at}\n${layout.problems.join('\n')}`);
      const commands = migCommands([], plan.instances).map((c) => c.argv);
      const replay = validateMigCommands(table, [], commands, plan.instances);
      assert.ok(replay.ok, `${at}\n${replay.problems.join('\n')}`);

      const placedIds = plan.instances.flatMap((i) => (i.jobId ? [i.jobId] : []));
      assert.deepEqual([...placedIds, ...plan.unplaced.map((u) => u.jobId)].sort(), jobs.map((j) => j.id).sort(), at);
      for (const u of plan.unplaced) assert.ok(u.reason.length > 10, at);

      const best = bruteForce(table, packings, jobs);
      assert.deepEqual(placedByPriority(plan, jobs), best.placed, `${at}: places fewer jobs than exhaustive search`);
      assert.equal(slicesHandedOut(table, plan.instances), best.slices, `${at}: wastes more slices than exhaustive search`);
    }
  });

  test(`${model}: around today's layout with random busy slices, as good as exhaustive search (100 mixes, seeded)`, () => {
    const table = tableFor(model);
    const all = allPackings(table);
    const packings = all.filter((p) => p.length > 0);
    const random = prng(0xc0ffee + model.length);
    for (let mix = 0; mix < 100; mix++) {
      const today = packings[Math.floor(random() * packings.length)];
      const current: MigInstance[] = today.map((p, i) => {
        const instance: MigInstance = {
          profile: p.profile.name,
          profileId: p.profile.id,
          placement: { start: p.start, size: p.profile.memorySlices },
          jobId: null,
          gpuInstanceId: 3 + i * 2,
          computeInstanceIds: i % 3 === 2 ? [0, 1] : [0],
        };
        if (random() < 0.35) instance.busy = { pids: [1000 + i], memoryFreeBytes: Math.round(p.profile.memoryMiB * 2 ** 20 * random()) };
        return instance;
      });
      const jobs = randomJobs(table, random, 1 + Math.floor(random() * 7));
      const plan = planMigLayout(table, jobs, current, { mps: false });
      const at = `${model} mix ${mix}: today ${JSON.stringify(current)}, jobs ${JSON.stringify(jobs)} -> ${JSON.stringify(plan.instances)}`;

      assert.ok(validateMigLayout(table, plan.instances.map((i) => (i.busy ? { ...i, jobId: null } : i)), jobs).ok, at);
      const commands = migCommands(current, plan.instances, 0).map((c) => c.argv);
      const replay = validateMigCommands(table, current, commands, plan.instances);
      assert.ok(replay.ok, `${at}\n${replay.problems.join('\n')}`);
      for (const busy of current.filter((c) => c.busy)) {
        const kept = plan.instances.find((i) => i.gpuInstanceId === busy.gpuInstanceId);
        assert.deepEqual([kept?.profileId, kept?.placement], [busy.profileId, busy.placement], `${at}: busy GI ${busy.gpuInstanceId} touched`);
        assert.ok(!commands.some((c) => c.includes('-gi') && c[c.indexOf('-gi') + 1] === String(busy.gpuInstanceId)), `${at}: a command names busy GI ${busy.gpuInstanceId}`);
        const job = jobs.find((j) => j.id === kept!.jobId);
        if (job) assert.ok(job.memoryBytes! <= busy.busy!.memoryFreeBytes, `${at}: ${job.id} beside running work needs more than is free now`);
      }
      for (const kept of plan.instances.filter((i) => i.gpuInstanceId !== undefined)) {
        const before = current.find((c) => c.gpuInstanceId === kept.gpuInstanceId)!;
        assert.deepEqual([kept.profileId, kept.placement], [before.profileId, before.placement], at);
      }

      const best = bruteForceAround(table, all, current, jobs);
      assert.deepEqual(placedByPriority(plan, jobs), best.placed, `${at}: places fewer jobs than exhaustive search`);
      assert.equal(plan.score.besideRunning, best.beside, `${at}: puts more jobs beside running work than exhaustive search`);
      assert.equal(changedSlices(current, plan.instances), best.changes, `${at}: changes more slices than exhaustive search`);
      assert.equal(plan.score.changes, best.changes, at);
      assert.equal(slicesHandedOut(table, plan.instances.filter((i) => !i.busy)), best.slices, `${at}: wastes more slices than exhaustive search`);
    }
  });
}

/** Today's instances destroyed plus new instances created, counted from the layouts themselves. */
function changedSlices(current: MigInstance[], planned: MigInstance[]): number {
  const keptIds = new Set(planned.flatMap((p) => (p.gpuInstanceId === undefined ? [] : [p.gpuInstanceId])));
  return current.filter((c) => !keptIds.has(c.gpuInstanceId!)).length + planned.filter((p) => p.gpuInstanceId === undefined).length;
}

interface BestAround {
  placed: number[];
  beside: number;
  changes: number;
  slices: number;
}

const betterAround = (a: BestAround, b: BestAround): boolean => {
  for (let r = 0; r < 3; r++) if (a.placed[r] !== b.placed[r]) return a.placed[r] > b.placed[r];
  if (a.beside !== b.beside) return a.beside < b.beside;
  if (a.changes !== b.changes) return a.changes < b.changes;
  return a.slices < b.slices;
};

/**
 * The reference around today's layout: every packing that holds each busy slice as it is, every assignment
 * of jobs to its instances (a busy one takes a job only within its memory free now), scored lexicographically:
 * most placed by priority, fewest beside running work, fewest slices changed, fewest slices handed out.
 */
function bruteForceAround(table: MigProfileTable, packings: Placed[][], current: MigInstance[], jobs: MigJobNeed[]): BestAround {
  const same = (c: MigInstance, p: Placed) => c.profileId === p.profile.id && c.placement.start === p.start;
  const busy = current.filter((c) => c.busy);
  const idleToday = current.filter((c) => !c.busy);
  let best: BestAround | null = null;
  for (const packing of packings) {
    if (!busy.every((b) => packing.some((p) => same(b, p)))) continue;
    const today = packing.map((p) => current.find((c) => same(c, p)));
    const created = today.filter((c) => !c).length;
    if (created > jobs.length) continue; // an empty new instance only adds a change
    const changes = created + idleToday.filter((c) => !packing.some((p) => same(c, p))).length;
    // best assignment of jobs (bitmask used) to instances k.., additive per instance
    const memo = new Map<string, BestAround>();
    const assign = (k: number, used: number): BestAround => {
      if (k === packing.length) return { placed: [0, 0, 0], beside: 0, changes: 0, slices: 0 };
      const key = `${k}:${used}`;
      const known = memo.get(key);
      if (known) return known;
      let here = assign(k + 1, used);
      const { profile } = packing[k];
      const free = today[k]?.busy?.memoryFreeBytes ?? Infinity;
      jobs.forEach((job, j) => {
        if (used & (1 << j) || !jobFits(table, job, profile) || (job.memoryBytes ?? 0) > free) return;
        const rest = assign(k + 1, used | (1 << j));
        const placed = [...rest.placed];
        placed[PRIORITY_ORDER.indexOf(job.priority ?? 'normal')]++;
        const withJob: BestAround = today[k]?.busy
          ? { placed, beside: rest.beside + 1, changes: 0, slices: rest.slices }
          : { placed, beside: rest.beside, changes: 0, slices: rest.slices + profile.memorySlices + profile.computeSlices };
        if (betterAround(withJob, here)) here = withJob;
      });
      memo.set(key, here);
      return here;
    };
    const outcome = { ...assign(0, 0), changes };
    if (!best || betterAround(outcome, best)) best = outcome;
  }
  return best!;
}

// --- Cases a user would recognise ----------------------------------------------------------------------------

/** The simulated h100x2-mig GPU 1: 1g.10gb at 0 and 1, 2g.20gb at 2, 3g.40gb at 4 (GI 1), busy when asked. */
function simulatedH100Mig(busyFreeGiB?: number): MigInstance[] {
  const layout: MigInstance[] = [
    { profile: '1g.10gb', profileId: 19, placement: { start: 0, size: 1 }, jobId: null, gpuInstanceId: 4, computeInstanceIds: [0] },
    { profile: '1g.10gb', profileId: 19, placement: { start: 1, size: 1 }, jobId: null, gpuInstanceId: 3, computeInstanceIds: [0] },
    { profile: '2g.20gb', profileId: 14, placement: { start: 2, size: 2 }, jobId: null, gpuInstanceId: 2, computeInstanceIds: [0] },
    { profile: '3g.40gb', profileId: 9, placement: { start: 4, size: 4 }, jobId: null, gpuInstanceId: 1, computeInstanceIds: [0] },
  ];
  if (busyFreeGiB !== undefined) layout[3].busy = { pids: [4242], memoryFreeBytes: busyFreeGiB * 2 ** 30 };
  return layout;
}

const GiB = 2 ** 30;
const held = (plan: ReturnType<typeof planMigLayout>) =>
  plan.instances.map((i) => `${i.profile}@${i.placement.start}${i.gpuInstanceId === undefined ? ' new' : ` gi${i.gpuInstanceId}`}: ${i.jobId ?? 'idle'}`);

test('the issue mix beside a busy 3g.40gb: the idle slices that fit take the jobs as they are, the busy slice stays', () => {
  const table = tableFor('H100-80GB');
  const current = simulatedH100Mig(7.9);
  // 9G, 9G and 19G fit today's 1g.10gb (9.75G), 1g.10gb and 2g.20gb (19.62G): nothing to change.
  const plan = planMigLayout(table, [{ id: 'job1', memoryBytes: 9 * GiB }, { id: 'job2', memoryBytes: 9 * GiB }, { id: 'job3', memoryBytes: 19 * GiB }], current);
  assert.deepEqual(held(plan), ['1g.10gb@0 gi4: job1', '1g.10gb@1 gi3: job2', '2g.20gb@2 gi2: job3', '3g.40gb@4 gi1: idle']);
  assert.deepEqual(migCommands(current, plan.instances, 1), []);
  assert.equal(plan.score.changes, 0);
});

test('10G,10G,20G beside a busy 3g.40gb with 7.9G free: the busy slice is neither destroyed nor given the 20G job', () => {
  const table = tableFor('H100-80GB');
  const current = simulatedH100Mig(7.9);
  const plan = planMigLayout(table, [{ id: 'job1', memoryBytes: 10 * GiB }, { id: 'job2', memoryBytes: 10 * GiB }, { id: 'job3', memoryBytes: 20 * GiB }], current);
  assert.deepEqual(held(plan), ['1g.20gb@0 new: job1', '2g.20gb@2 gi2: job2', '3g.40gb@4 gi1: idle']);
  assert.equal(plan.unplaced.length, 1);
  assert.equal(plan.unplaced[0].jobId, 'job3');
  assert.match(plan.unplaced[0].reason, /busy slices are kept as they are: 3g\.40gb at 4 \(GI 1, pid 4242, 7\.9G free now\)/);
  const commands = migCommands(current, plan.instances, 1).map((c) => c.argv.join(' '));
  assert.ok(!commands.some((c) => / -gi 1\b/.test(c)), commands.join('\n'));
});

test('the README mix beside a busy 3g.40gb with 31.6 of 39.5G used: the 30G job is not put there; with 35G free it is, and said', () => {
  const table = tableFor('H100-80GB');
  const jobs: MigJobNeed[] = [{ id: 'job1', memoryBytes: 30 * GiB }, { id: 'job2', memoryBytes: 10 * GiB, smShare: 0.2 }, { id: 'job3', memoryBytes: 19 * GiB }];
  const crowded = planMigLayout(table, jobs, simulatedH100Mig(39.5 - 31.6));
  assert.ok(!crowded.instances.some((i) => i.busy && i.jobId !== null), held(crowded).join('; '));
  assert.deepEqual(crowded.unplaced.map((u) => u.jobId), ['job1']);
  const roomy = planMigLayout(table, jobs, simulatedH100Mig(35));
  assert.deepEqual(held(roomy), ['1g.20gb@0 new: job3', '2g.20gb@2 gi2: job2', '3g.40gb@4 gi1: job1']);
  assert.equal(roomy.score.besideRunning, 1);
  assert.deepEqual(roomy.instances.find((i) => i.jobId === 'job1')?.busy, { pids: [4242], memoryFreeBytes: 35 * GiB });
});


test('the issue example 30G,10G:0.2,20G on H100-80GB: 3g.40gb + 2g.20gb (for the SM share) + 1g.20gb', () => {
  const table = tableFor('H100-80GB');
  const jobs: MigJobNeed[] = [
    { id: 'job1', memoryBytes: 30 * GB },
    { id: 'job2', memoryBytes: 10 * GB, smShare: 0.2 },
    { id: 'job3', memoryBytes: 20 * GB },
  ];
  const plan = planMigLayout(table, jobs);
  const held = Object.fromEntries(plan.instances.map((i) => [i.jobId, `${i.profile}@${i.placement.start}:${i.placement.size}`]));
  assert.deepEqual(held, { job1: '3g.40gb@0:4', job2: '2g.20gb@4:2', job3: '1g.20gb@6:2' });
  assert.deepEqual(plan.unplaced, []);
  // 0.2 of 132 SMs is 26.4: more than a 1g slice's 16 or 26, so the 10G job takes a 2g.20gb (32 SMs).
  const commands = migCommands([], plan.instances, 0).map((c) => c.argv.join(' '));
  assert.deepEqual(commands, ['nvidia-smi mig -i 0 -cgi 9:0 -C', 'nvidia-smi mig -i 0 -cgi 14:4 -C', 'nvidia-smi mig -i 0 -cgi 15:6 -C']);
  assert.ok(validateMigCommands(table, [], commands.map((c) => c.split(' ')), plan.instances).ok);
});

test('a job larger than the largest profile is unplaced with the sizes in the reason', () => {
  const plan = planMigLayout(tableFor('H100-80GB'), [{ id: 'big', memoryBytes: 90 * GB }, { id: 'small', memoryBytes: 5 * GB }]);
  assert.deepEqual(plan.unplaced, [{ jobId: 'big', reason: 'needs 83.8G but the largest profile on H100-80GB, 7g.80gb, has 79.3G' }]);
  assert.deepEqual(plan.instances.map((i) => [i.profile, i.jobId]), [['1g.10gb', 'small']]);
});

test('with room for only one, the high-priority job wins, and the other is told why', () => {
  const table = tableFor('A100-40GB');
  const plan = planMigLayout(table, [
    { id: 'notebook', memoryBytes: 30 * GB },
    { id: 'training', memoryBytes: 30 * GB, priority: 'high' },
  ]);
  assert.deepEqual(plan.instances.map((i) => [i.profile, i.jobId]), [['7g.40gb', 'training']]);
  assert.equal(plan.unplaced.length, 1);
  assert.equal(plan.unplaced[0].jobId, 'notebook');
  assert.match(plan.unplaced[0].reason, /needs at least a 7g\.40gb.*higher-priority jobs \(training\)/);

  // A high job is never left out to place two lower ones.
  const crowd = planMigLayout(table, [
    { id: 'a', memoryBytes: 4 * GB },
    { id: 'b', memoryBytes: 4 * GB },
    { id: 'vip', memoryBytes: 35 * GB, priority: 'high' },
  ]);
  assert.deepEqual(crowd.instances.map((i) => i.jobId), ['vip']);

  // And best-effort yields to normal the same way.
  const mixed = planMigLayout(table, [
    { id: 'batch', memoryBytes: 15 * GB, priority: 'best-effort' },
    { id: 'x', memoryBytes: 15 * GB },
    { id: 'y', memoryBytes: 15 * GB },
  ]);
  assert.deepEqual(mixed.instances.map((i) => i.jobId).sort(), ['x', 'y']);
});

test('each job gets the smallest profile it fits, memory and SM share both counted', () => {
  const table = tableFor('A100-80GB');
  const plan = planMigLayout(table, [
    { id: 'tiny', memoryBytes: 2 * GB },
    { id: 'wide', memoryBytes: 2 * GB, smShare: 0.25 },
    { id: 'mid', memoryMiB: 15_000 },
  ]);
  const profiles = Object.fromEntries(plan.instances.map((i) => [i.jobId, i.profile]));
  assert.deepEqual(profiles, { tiny: '1g.10gb', wide: '2g.20gb', mid: '1g.20gb' });
});

test('more than seven jobs: the first seven by priority are planned, the rest told why', () => {
  const jobs: MigJobNeed[] = Array.from({ length: 9 }, (_, i) => ({ id: `n${i}`, memoryBytes: 4 * GB, priority: i === 8 ? 'high' : 'normal' }));
  const plan = planMigLayout(tableFor('A100-40GB'), jobs);
  assert.equal(plan.instances.length, 7);
  assert.ok(plan.instances.some((i) => i.jobId === 'n8'), 'the high job is among the seven');
  assert.deepEqual(plan.unplaced.map((u) => u.jobId), ['n6', 'n7']);
  for (const u of plan.unplaced) assert.match(u.reason, /at most 7 MIG instances/);
});

test('today\'s layout is kept when it already fits: no commands at all', () => {
  const table = tableFor('H100-80GB');
  const current: MigInstance[] = [
    { profile: '3g.40gb', profileId: 9, placement: { start: 4, size: 4 }, jobId: null, gpuInstanceId: 2, computeInstanceIds: [0] },
    { profile: '2g.20gb', profileId: 14, placement: { start: 0, size: 2 }, jobId: null, gpuInstanceId: 5, computeInstanceIds: [0] },
    { profile: '1g.10gb', profileId: 19, placement: { start: 2, size: 1 }, jobId: null, gpuInstanceId: 7, computeInstanceIds: [0] },
  ];
  const plan = planMigLayout(table, [{ id: 'a', memoryBytes: 30 * GB }, { id: 'b', memoryBytes: 15 * GB, smShare: 0.2 }], current);
  assert.deepEqual(plan.instances.map((i) => [i.gpuInstanceId, i.jobId]), [[5, 'b'], [7, null], [2, 'a']]);
  assert.deepEqual(migCommands(current, plan.instances), []);
});

test('a change destroys only what is in the way, compute instances first', () => {
  const table = tableFor('H100-80GB');
  const current: MigInstance[] = [
    { profile: '3g.40gb', profileId: 9, placement: { start: 0, size: 4 }, jobId: null, gpuInstanceId: 1, computeInstanceIds: [0, 1] },
    { profile: '3g.40gb', profileId: 9, placement: { start: 4, size: 4 }, jobId: null, gpuInstanceId: 2, computeInstanceIds: [0] },
  ];
  // Four 1g slices fit only beside the 3g.40gb at 4 (a 1g cannot start at slice 7).
  const jobs: MigJobNeed[] = [{ id: 'a', memoryBytes: 30 * GB }, ...[1, 2, 3, 4].map((n) => ({ id: `s${n}`, memoryBytes: 5 * GB }))];
  const plan = planMigLayout(table, jobs, current);
  assert.deepEqual(plan.unplaced, []);
  assert.equal(plan.instances.find((i) => i.jobId === 'a')?.gpuInstanceId, 2, 'the 3g.40gb at 4 stays');
  const commands = migCommands(current, plan.instances, 1).map((c) => c.argv.join(' '));
  assert.deepEqual(commands, [
    'nvidia-smi mig -dci -i 1 -gi 1 -ci 0',
    'nvidia-smi mig -dci -i 1 -gi 1 -ci 1',
    'nvidia-smi mig -dgi -i 1 -gi 1',
    'nvidia-smi mig -i 1 -cgi 19:0 -C',
    'nvidia-smi mig -i 1 -cgi 19:1 -C',
    'nvidia-smi mig -i 1 -cgi 19:2 -C',
    'nvidia-smi mig -i 1 -cgi 19:3 -C',
  ]);
  assert.ok(validateMigCommands(table, current, commands.map((c) => c.split(' ')), plan.instances).ok);
});

test('seven tiny jobs around a full layout are all placed on every built-in model (plan times printed, not asserted)', (t) => {
  const times: number[] = [];
  for (const model of BUILT_IN_MIG_MODELS) {
    const table = tableFor(model);
    const random = prng(7 + model.length);
    const current: MigInstance[] = [0, 1, 2, 3, 4, 5, 6].map((start) => ({
      profile: table.profiles[0].name, profileId: table.profiles[0].id, placement: { start, size: 1 }, jobId: null, gpuInstanceId: start + 1, computeInstanceIds: [0],
    }));
    for (let run = 0; run < 50; run++) {
      const jobs = randomJobs(table, random, 7);
      const started = performance.now();
      planMigLayout(table, jobs, run % 2 ? current : []);
      times.push(performance.now() - started);
    }
    // The hardest mix: seven tiny jobs that fit every slot, around a full layout of today.
    const tiny = Array.from({ length: 7 }, (_, i) => ({ id: `t${i}`, memoryBytes: 1e6 }));
    const started = performance.now();
    const plan = planMigLayout(table, tiny, current);
    times.push(performance.now() - started);
    assert.deepEqual(plan.unplaced, [], `${model}: every tiny job gets a slice`);
    assert.equal(plan.instances.filter((i) => i.jobId !== null).length, 7, model);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const worst = times[times.length - 1];
  t.diagnostic(`planning 7 jobs: median ${median.toFixed(2)} ms, worst ${worst.toFixed(2)} ms over ${times.length} plans`);
});
