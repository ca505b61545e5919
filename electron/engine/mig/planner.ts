// The MIG partition planner: an exact search over placements for the job mix of one GPU.
import { formatByteSize } from '../../../shared/byte-size.js';
import { jobMemoryBytes, type JobPriority, type MigInstance, type MigJobNeed } from './layout.js';
import { fullGpuSmCount, largestProfile, type MigProfile, type MigProfileTable } from './profiles.js';

export interface UnplacedJob {
  jobId: string;
  reason: string;
}

export interface MigPlan {
  model: string;
  /** The layout, by placement start: every instance holds a job, or is idle (kept from today's layout). */
  instances: MigInstance[];
  unplaced: UnplacedJob[];
  /** What the search optimised, best first (see compareOutcomes). */
  score: { placed: Record<JobPriority, number>; slicesHandedOut: number; keptInstances: number };
}

/** Seven compute slices: no GPU holds more than seven MIG instances, so more jobs are never searched. */
export const MAX_PLANNED_JOBS = 7;

const PRIORITIES: JobPriority[] = ['high', 'normal', 'best-effort'];

interface Job {
  id: string;
  bytes: number;
  sms: number;
  rank: number;
  order: number;
}

/** One place an instance can go: a profile at a start, maybe the very instance that exists today. */
interface Slot {
  profile: MigProfile;
  profileIndex: number;
  start: number;
  mask: number;
  /** Index into today's layout when this slot is an instance that exists now. */
  current: number;
  /** Memory + compute slices it hands out: the waste measure, smaller is better. */
  slices: number;
}

/** The value of the best completion from a search state; placed is per priority rank. */
interface Outcome {
  placed: [number, number, number];
  slices: number;
  kept: number;
  roomLeft: number;
}

/**
 * Objective, lexicographic: (1) place the most jobs by priority, high first, so a high job is never left
 * out to place lower ones; (2) hand out the fewest memory + compute slices (least waste); (3) keep the most
 * instances that exist today (fewer changes); (4) leave the largest placement free for the next job.
 */
function compareOutcomes(a: Outcome, b: Outcome): number {
  for (let r = 0; r < PRIORITIES.length; r++) if (a.placed[r] !== b.placed[r]) return a.placed[r] - b.placed[r];
  if (a.slices !== b.slices) return b.slices - a.slices;
  if (a.kept !== b.kept) return a.kept - b.kept;
  return a.roomLeft - b.roomLeft;
}

const fits = (job: Job, profile: MigProfile): boolean =>
  profile.memoryMiB * 2 ** 20 >= job.bytes && profile.smCount + 1e-9 >= job.sms;

// sizes as the CLI and console write them: G is GiB
const formatGB = (bytes: number): string => formatByteSize(bytes);

/**
 * Plan a MIG layout for the jobs on one GPU: the most jobs placed with the least waste, keeping what exists
 * in `current` where that costs nothing. Exact: a depth-first search over each job's slots (or leaving it
 * out), memoised on the state of the slices, finds the best outcome under compareOutcomes.
 */
export function planMigLayout(table: MigProfileTable, jobs: MigJobNeed[], current: MigInstance[] = []): MigPlan {
  const fullSms = fullGpuSmCount(table);
  const unplaced: UnplacedJob[] = [];
  const all: Job[] = jobs.map((job, order) => ({
    id: job.id,
    bytes: jobMemoryBytes(job),
    sms: (job.smShare ?? 0) * fullSms,
    rank: PRIORITIES.indexOf(job.priority ?? 'normal'),
    order,
  }));

  const plannable = table.profiles.filter((p) => !p.mediaExtensions);
  const candidates: Job[] = [];
  for (const job of all) {
    if (plannable.some((p) => fits(job, p))) candidates.push(job);
    else unplaced.push({ jobId: job.id, reason: tooLargeReason(table, job, fullSms) });
  }
  candidates.sort((a, b) => a.rank - b.rank || a.order - b.order);
  for (const job of candidates.splice(MAX_PLANNED_JOBS)) {
    unplaced.push({
      jobId: job.id,
      reason: `not considered: one GPU holds at most ${MAX_PLANNED_JOBS} MIG instances and ${MAX_PLANNED_JOBS} jobs of higher or equal priority came first`,
    });
  }

  const slots = placementSlots(table, current);
  const search = new SlotSearch(table, candidates, slots, current);
  const best = search.best();
  const choices = search.choices();

  const instances: MigInstance[] = [];
  choices.forEach((slot, i) => {
    if (!slot) return;
    const existing = slot.current >= 0 ? current[slot.current] : undefined;
    instances.push({ ...instanceAt(slot, existing), jobId: candidates[i].id });
  });
  for (const index of search.keptIdle(choices)) instances.push({ ...current[index], placement: { ...current[index].placement }, jobId: null });
  instances.sort((a, b) => a.placement.start - b.placement.start || b.placement.size - a.placement.size);

  const placedJobs = candidates.filter((_, i) => choices[i]);
  candidates.forEach((job, i) => {
    if (!choices[i]) unplaced.push({ jobId: job.id, reason: noRoomReason(table, job, placedJobs) });
  });
  const order = new Map(all.map((j) => [j.id, j.order]));
  unplaced.sort((a, b) => order.get(a.jobId)! - order.get(b.jobId)!);

  return {
    model: table.model,
    instances,
    unplaced,
    score: {
      placed: Object.fromEntries(PRIORITIES.map((p, r) => [p, best.placed[r]])) as Record<JobPriority, number>,
      slicesHandedOut: best.slices,
      keptInstances: best.kept,
    },
  };
}

function instanceAt(slot: Slot, existing: MigInstance | undefined): MigInstance {
  const instance: MigInstance = {
    profile: slot.profile.name,
    profileId: slot.profile.id,
    placement: { start: slot.start, size: slot.profile.memorySlices },
    jobId: null,
  };
  if (existing?.gpuInstanceId !== undefined) {
    instance.gpuInstanceId = existing.gpuInstanceId;
    instance.computeInstanceIds = [...(existing.computeInstanceIds ?? [])];
  }
  return instance;
}

/** Every legal (profile, start) of the table, plus today's instances of profiles the planner does not hand out. */
function placementSlots(table: MigProfileTable, current: MigInstance[]): Slot[] {
  const currentAt = (profile: MigProfile, start: number) =>
    current.findIndex((c) => c.profileId === profile.id && c.placement.start === start);
  const slots: Slot[] = [];
  table.profiles.forEach((profile, profileIndex) => {
    for (const start of profile.placementStarts) {
      if (start + profile.memorySlices > table.memorySlices) continue;
      const now = currentAt(profile, start);
      if (profile.mediaExtensions && now < 0) continue;
      const mask = ((1 << profile.memorySlices) - 1) << start;
      slots.push({ profile, profileIndex, start, mask, current: now, slices: profile.memorySlices + profile.computeSlices });
    }
  });
  return slots;
}

/** The memoised depth-first search: job i goes into one of its slots, or is left out. */
class SlotSearch {
  /** Per search state: the best outcome from there on and the choice for job i that reaches it. */
  private readonly memo = new Map<number | string, { outcome: Outcome; choice: Slot | null }>();
  private readonly jobSlots: Slot[][];
  private readonly currentMasks: number[];
  private readonly currentProfiles: (MigProfile | undefined)[];
  private readonly freeSlots: Slot[];
  /** Profiles whose instance limit is tighter than their placements (the +me one): their counts are state too. */
  private readonly limited: number[];
  private readonly numericKeys: boolean;

  constructor(
    private readonly table: MigProfileTable,
    private readonly jobs: Job[],
    slots: Slot[],
    private readonly current: MigInstance[],
  ) {
    // Tightest slots first, so ties keep the first (smallest, lowest) choice.
    this.jobSlots = jobs.map((job) => slots.filter((s) => fits(job, s.profile)).sort((a, b) => a.slices - b.slices || a.start - b.start));
    this.currentProfiles = current.map((c) => table.profiles.find((p) => p.id === c.profileId));
    this.currentMasks = current.map((c) => ((1 << c.placement.size) - 1) << c.placement.start);
    this.freeSlots = slots.filter((s) => !s.profile.mediaExtensions);
    this.limited = table.profiles.flatMap((p, i) => (p.maxInstances < p.placementStarts.length ? [i] : []));
    const states = (jobs.length + 1) * 2 ** table.memorySlices * (table.computeSlices + 1) * 2 ** current.length * 8 ** this.limited.length;
    this.numericKeys = states < Number.MAX_SAFE_INTEGER;
  }

  best(): Outcome {
    return this.visit(0, 0, 0, 0, new Array(this.table.profiles.length).fill(0));
  }

  /** The slot chosen for each job (null: left out), replayed from the memo along the best path. */
  choices(): (Slot | null)[] {
    const counts = new Array(this.table.profiles.length).fill(0);
    let mask = 0;
    let compute = 0;
    let reused = 0;
    const chosen: (Slot | null)[] = [];
    for (let i = 0; i < this.jobs.length; i++) {
      const slot = this.memo.get(this.key(i, mask, compute, reused, counts))!.choice;
      chosen.push(slot);
      if (!slot) continue;
      mask |= slot.mask;
      compute += slot.profile.computeSlices;
      counts[slot.profileIndex]++;
      if (slot.current >= 0) reused |= 1 << slot.current;
    }
    return chosen;
  }

  /** Today's instances that stay as they are, idle, once these choices are made. */
  keptIdle(choices: (Slot | null)[]): number[] {
    let mask = 0;
    let compute = 0;
    let reused = 0;
    const counts = new Array(this.table.profiles.length).fill(0);
    for (const slot of choices) {
      if (!slot) continue;
      mask |= slot.mask;
      compute += slot.profile.computeSlices;
      counts[slot.profileIndex]++;
      if (slot.current >= 0) reused |= 1 << slot.current;
    }
    return this.idleKeepers(mask, compute, reused, counts).indexes;
  }

  private key(i: number, mask: number, compute: number, reused: number, counts: number[]): number | string {
    if (!this.numericKeys) return `${i}:${mask}:${compute}:${reused}:${counts.join(',')}`;
    let key = ((i * 2 ** this.table.memorySlices + mask) * (this.table.computeSlices + 1) + compute) * 2 ** this.current.length + reused;
    for (const p of this.limited) key = key * 8 + Math.min(counts[p], 7);
    return key;
  }

  private visit(i: number, mask: number, compute: number, reused: number, counts: number[]): Outcome {
    const key = this.key(i, mask, compute, reused, counts);
    const known = this.memo.get(key);
    if (known) return known.outcome;
    if (i === this.jobs.length) {
      const outcome = this.leaf(mask, compute, reused, counts);
      this.memo.set(key, { outcome, choice: null });
      return outcome;
    }

    const rank = this.jobs[i].rank;
    let best = this.visit(i + 1, mask, compute, reused, counts);
    let choice: Slot | null = null;
    for (const slot of this.jobSlots[i]) {
      const profile = slot.profile;
      if (slot.mask & mask) continue;
      if (compute + profile.computeSlices > this.table.computeSlices) continue;
      if (counts[slot.profileIndex] >= profile.maxInstances) continue;
      counts[slot.profileIndex]++;
      const rest = this.visit(i + 1, mask | slot.mask, compute + profile.computeSlices, slot.current >= 0 ? reused | (1 << slot.current) : reused, counts);
      counts[slot.profileIndex]--;
      const placed: [number, number, number] = [...rest.placed];
      placed[rank]++;
      const outcome: Outcome = { placed, slices: rest.slices + slot.slices, kept: rest.kept, roomLeft: rest.roomLeft };
      if (compareOutcomes(outcome, best) > 0) {
        best = outcome;
        choice = slot;
      }
    }
    this.memo.set(key, { outcome: best, choice });
    return best;
  }

  /** All jobs decided: count what is kept from today and how large a placement is still free. */
  private leaf(mask: number, compute: number, reused: number, counts: number[]): Outcome {
    const idle = this.idleKeepers(mask, compute, reused, counts);
    let kept = idle.indexes.length;
    for (let r = reused; r; r &= r - 1) kept++;
    let roomLeft = 0;
    for (const slot of this.freeSlots) {
      if (slot.mask & idle.occupied || idle.compute + slot.profile.computeSlices > this.table.computeSlices) continue;
      roomLeft = Math.max(roomLeft, slot.profile.memorySlices * 8 + slot.profile.computeSlices);
    }
    return { placed: [0, 0, 0], slices: 0, kept, roomLeft };
  }

  /** Today's instances not reused for a job that can stay, idle: clear of every new instance, within the limits. */
  private idleKeepers(mask: number, compute: number, reused: number, counts: number[]) {
    const indexes: number[] = [];
    const taken = [...counts];
    this.currentMasks.forEach((m, i) => {
      const profile = this.currentProfiles[i];
      if (reused & (1 << i) || m & mask) return;
      const index = profile ? this.table.profiles.indexOf(profile) : -1;
      if (compute + (profile?.computeSlices ?? 0) > this.table.computeSlices) return;
      if (profile && taken[index] >= profile.maxInstances) return;
      indexes.push(i);
      mask |= m;
      compute += profile?.computeSlices ?? 0;
      if (profile) taken[index]++;
    });
    return { indexes, occupied: mask, compute };
  }
}

function tooLargeReason(table: MigProfileTable, job: Job, fullSms: number): string {
  const largest = largestProfile(table);
  const largestBytes = largest.memoryMiB * 2 ** 20;
  if (job.bytes > largestBytes) {
    return `needs ${formatGB(job.bytes)} but the largest profile on ${table.model}, ${largest.name}, has ${formatGB(largestBytes)}`;
  }
  const mostSms = Math.max(...table.profiles.filter((p) => !p.mediaExtensions).map((p) => p.smCount));
  if (job.sms > mostSms + 1e-9) {
    return `needs ${Math.ceil(job.sms - 1e-9)} SMs (${Math.round((job.sms / fullSms) * 100)}% of the GPU) but no profile on ${table.model} has more than ${mostSms}`;
  }
  return `no profile on ${table.model} has both ${formatGB(job.bytes)} and ${Math.ceil(job.sms - 1e-9)} SMs`;
}

function noRoomReason(table: MigProfileTable, job: Job, placed: Job[]): string {
  const smallest = table.profiles
    .filter((p) => !p.mediaExtensions && fits(job, p))
    .sort((a, b) => a.memorySlices + a.computeSlices - (b.memorySlices + b.computeSlices))[0];
  const higher = placed.filter((p) => p.rank < job.rank).map((p) => p.id);
  const why = placed.length === 0
    ? 'the slices are taken'
    : higher.length > 0
    ? `the slices went to higher-priority jobs (${higher.join(', ')})`
    : `the ${table.memorySlices} memory and ${table.computeSlices} compute slices are taken by ${placed.map((p) => p.id).join(', ')}`;
  return `no room: it needs at least a ${smallest.name} and ${why}`;
}
