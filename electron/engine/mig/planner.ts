// The MIG partition planner: an exact search over placements for the job mix of one GPU, starting from
// today's layout: busy slices are kept as they are, and a plan changes as few slices as it can.
import { PRIORITIES } from '../../../shared/jobs.js';
import { jobMemoryBytes, type JobPriority, type MigInstance, type MigJobNeed } from './layout.js';
import { MPS_MAX_CLIENTS, mpsShares, setPartitions } from './mps-sharing.js';
import { fits, noRoomReason, tooLargeReason } from './plan-reasons.js';
import { fullGpuSmCount, type MigProfile, type MigProfileTable } from './profiles.js';

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
  score: {
    placed: Record<JobPriority, number>;
    /** Jobs put beside running work in a busy slice (it had the memory free now). */
    besideRunning: number;
    /** Jobs sharing a slice with other planned jobs through MPS. */
    sharingThroughMps: number;
    /** Today's instances destroyed plus new ones created. */
    changes: number;
    slicesHandedOut: number;
    keptInstances: number;
  };
}

/** Seven compute slices: no GPU holds more than seven MIG instances, so more jobs are never searched. */
export const MAX_PLANNED_JOBS = 7;


interface Job {
  id: string;
  bytes: number;
  sms: number;
  rank: number;
  order: number;
  /** Jobs placed when this one is, per priority rank: [1,0,0] for one high job; more for an MPS group. */
  counts: [number, number, number];
  /** The jobs of an MPS group sharing one slice; [itself] for a job on its own. */
  members: Job[];
}

/** One place an instance can go: a profile at a start, maybe the very instance that exists today. */
interface Slot {
  profile: MigProfile;
  profileIndex: number;
  start: number;
  mask: number;
  /** Index into today's layout when this slot is an instance that exists now. */
  current: number;
  /** Memory + compute slices it hands out: the waste measure, smaller is better (0 beside running work). */
  slices: number;
  /** A busy instance of today: the job joins the running work within the memory free now. */
  busy: boolean;
}

/** The value of the best completion from a search state; placed is per priority rank. */
interface Outcome {
  placed: [number, number, number];
  /** Jobs in MPS groups (only the grouping search makes them). */
  mps: number;
  beside: number;
  changes: number;
  slices: number;
  kept: number;
  roomLeft: number;
}

/**
 * Constraint first: a busy slice of today (processes in it) is never destroyed or moved; the engine refuses
 * to touch one, so a plan that needs it could not be applied. Then the objective, lexicographic:
 * (1) place the most jobs by priority, high first, so a high job is never left out to place lower ones;
 * (2) put the fewest jobs in MPS groups (so groups appear only where they place more jobs);
 * (3) put the fewest jobs beside running work (an idle slice that fits comes first);
 * (4) change the fewest slices: today's instances destroyed plus new ones created;
 * (5) hand out the fewest memory + compute slices (least waste);
 * (6) leave the largest placement free for the next job.
 */
function compareOutcomes(a: Outcome, b: Outcome): number {
  for (let r = 0; r < PRIORITIES.length; r++) if (a.placed[r] !== b.placed[r]) return a.placed[r] - b.placed[r];
  if (a.mps !== b.mps) return b.mps - a.mps;
  if (a.beside !== b.beside) return b.beside - a.beside;
  if (a.changes !== b.changes) return b.changes - a.changes;
  if (a.slices !== b.slices) return b.slices - a.slices;
  return a.roomLeft - b.roomLeft;
}

export interface PlanOptions {
  /** Let small jobs share a slice through MPS when that places more of them (default true). */
  mps?: boolean;
}

/**
 * Plan a MIG layout for the jobs on one GPU: the most jobs placed with the least waste, keeping what exists
 * in `current` where that costs nothing. Exact: a depth-first search over each job's slots (or leaving it
 * out), memoised on the state of the slices, finds the best outcome under compareOutcomes. Then, only if
 * some job is left out, every grouping of the jobs into MPS groups is searched the same way: sharing a
 * slice through MPS is chosen only where it places more jobs (by priority), and then as few as possible.
 */
export function planMigLayout(table: MigProfileTable, jobs: MigJobNeed[], current: MigInstance[] = [], options: PlanOptions = {}): MigPlan {
  const fullSms = fullGpuSmCount(table);
  const unplaced: UnplacedJob[] = [];
  const all: Job[] = jobs.map((job, order) => {
    const rank = PRIORITIES.indexOf(job.priority ?? 'normal');
    const counts: [number, number, number] = [0, 0, 0];
    counts[rank] = 1;
    const single: Job = { id: job.id, bytes: jobMemoryBytes(job), sms: (job.smShare ?? 0) * fullSms, rank, order, counts, members: [] };
    single.members.push(single);
    return single;
  });

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
  let search = new SlotSearch(table, candidates, slots, current);
  let best = search.best();
  let groups = candidates;
  if (options.mps !== false && placedCount(best) < candidates.length) {
    const shared = searchMpsGroups(table, candidates, slots, current, best);
    if (shared) ({ search, best, groups } = shared);
  }
  const choices = search.choices();

  const instances: MigInstance[] = [];
  choices.forEach((slot, i) => {
    if (!slot) return;
    const existing = slot.current >= 0 ? current[slot.current] : undefined;
    const instance: MigInstance = { ...instanceAt(slot, existing), jobId: groups[i].id };
    if (groups[i].members.length > 1) {
      instance.jobId = groups[i].members[0].id;
      instance.mps = mpsShares(groups[i].members, slot.profile.smCount);
    }
    instances.push(instance);
  });
  const keep = (index: number) => instances.push({ ...current[index], placement: { ...current[index].placement }, jobId: null });
  const besideRunning = new Set(choices.flatMap((slot) => (slot?.busy ? [slot.current] : [])));
  current.forEach((c, index) => c.busy && !besideRunning.has(index) && keep(index));
  for (const index of search.keptIdle(choices)) keep(index);
  instances.sort((a, b) => a.placement.start - b.placement.start || b.placement.size - a.placement.size);

  const placedJobs = groups.flatMap((group, i) => (choices[i] ? group.members : []));
  groups.forEach((group, i) => {
    if (choices[i]) return;
    for (const job of group.members) unplaced.push({ jobId: job.id, reason: noRoomReason(table, job, placedJobs, current) });
  });
  const order = new Map(all.map((j) => [j.id, j.order]));
  unplaced.sort((a, b) => order.get(a.jobId)! - order.get(b.jobId)!);

  return {
    model: table.model,
    instances,
    unplaced,
    score: {
      placed: Object.fromEntries(PRIORITIES.map((p, r) => [p, best.placed[r]])) as Record<JobPriority, number>,
      besideRunning: best.beside,
      sharingThroughMps: best.mps,
      changes: best.changes,
      slicesHandedOut: best.slices,
      keptInstances: best.kept,
    },
  };
}

const placedCount = (outcome: Outcome): number => outcome.placed[0] + outcome.placed[1] + outcome.placed[2];

/**
 * The best plan over every grouping of the jobs into MPS groups (a group of one is a job on its own slice),
 * or null when none beats `alone`. A group must fit one profile with its members' memory and SMs summed.
 */
function searchMpsGroups(table: MigProfileTable, jobs: Job[], slots: Slot[], current: MigInstance[], alone: Outcome) {
  const plannable = table.profiles.filter((p) => !p.mediaExtensions);
  const groupFits = (group: number[]) =>
    group.length === 1 ||
    (group.length <= MPS_MAX_CLIENTS && plannable.some((p) => fits(merged(group.map((i) => jobs[i])), p)));
  let found: { search: SlotSearch; best: Outcome; groups: Job[] } | null = null;
  let bar = alone;
  for (const partition of setPartitions(jobs.length, groupFits)) {
    if (partition.length === jobs.length) continue; // every job alone: that is `alone`
    const sharing = partition.reduce((sum, group) => sum + (group.length > 1 ? group.length : 0), 0);
    if (placedCount(bar) === jobs.length && sharing >= bar.mps) continue; // all placed already, with no more sharing
    const groups = partition.map((group) => (group.length === 1 ? jobs[group[0]] : merged(group.map((i) => jobs[i]))));
    groups.sort((a, b) => a.rank - b.rank || a.order - b.order);
    const search = new SlotSearch(table, groups, slots, current);
    const best = search.best();
    if (compareOutcomes(best, bar) > 0) {
      found = { search, best, groups };
      bar = best;
    }
  }
  return found;
}

/** An MPS group as one job: memory and SMs summed, placed counts per priority, the first member's order. */
function merged(members: Job[]): Job {
  const counts: [number, number, number] = [0, 0, 0];
  for (const m of members) counts[m.rank]++;
  return {
    id: members.map((m) => m.id).join('+'),
    bytes: members.reduce((sum, m) => sum + m.bytes, 0),
    sms: members.reduce((sum, m) => sum + m.sms, 0),
    rank: Math.min(...members.map((m) => m.rank)),
    order: Math.min(...members.map((m) => m.order)),
    counts,
    members,
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
  if (existing?.busy) instance.busy = { pids: [...existing.busy.pids], memoryFreeBytes: existing.busy.memoryFreeBytes };
  return instance;
}

/**
 * Every legal (profile, start) of the table clear of today's busy slices, plus today's idle instances of
 * profiles the planner does not hand out, plus one slot per busy slice (a job beside its running work).
 */
function placementSlots(table: MigProfileTable, current: MigInstance[]): Slot[] {
  const currentAt = (profile: MigProfile, start: number) =>
    current.findIndex((c) => c.profileId === profile.id && c.placement.start === start);
  const busyMask = current.reduce((m, c) => (c.busy ? m | maskOf(c.placement.start, c.placement.size) : m), 0);
  const slots: Slot[] = [];
  table.profiles.forEach((profile, profileIndex) => {
    for (const start of profile.placementStarts) {
      if (start + profile.memorySlices > table.memorySlices) continue;
      const now = currentAt(profile, start);
      const mask = maskOf(start, profile.memorySlices);
      if (mask & busyMask) {
        if (now >= 0 && current[now].busy) slots.push({ profile, profileIndex, start, mask: 0, current: now, slices: 0, busy: true });
        continue;
      }
      if (profile.mediaExtensions && now < 0) continue;
      slots.push({ profile, profileIndex, start, mask, current: now, slices: profile.memorySlices + profile.computeSlices, busy: false });
    }
  });
  return slots;
}

const maskOf = (start: number, size: number): number => ((1 << size) - 1) << start;

/** Where the search stands after some jobs are decided. */
interface State {
  mask: number;
  compute: number;
  /** Bits of today's instances already holding a job (reused idle ones, or busy ones with a job beside). */
  reused: number;
  counts: number[];
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
  /** Today's busy slices, taken before any job is placed. */
  private readonly start: State;
  private readonly idleToday: number;

  constructor(
    private readonly table: MigProfileTable,
    private readonly jobs: Job[],
    slots: Slot[],
    private readonly current: MigInstance[],
  ) {
    // Tightest slots first, so ties keep the first (smallest, lowest) choice.
    this.jobSlots = jobs.map((job) =>
      slots
        .filter((s) => !(s.busy && job.members.length > 1) && fits(job, s.profile, s.busy ? current[s.current].busy!.memoryFreeBytes : Infinity))
        .sort((a, b) => a.slices - b.slices || a.start - b.start));
    this.currentProfiles = current.map((c) => table.profiles.find((p) => p.id === c.profileId));
    this.currentMasks = current.map((c) => maskOf(c.placement.start, c.placement.size));
    this.freeSlots = slots.filter((s) => !s.profile.mediaExtensions && !s.busy);
    this.limited = table.profiles.flatMap((p, i) => (p.maxInstances < p.placementStarts.length ? [i] : []));
    const states = (jobs.length + 1) * 2 ** table.memorySlices * (table.computeSlices + 1) * 2 ** current.length * 8 ** this.limited.length;
    this.numericKeys = states < Number.MAX_SAFE_INTEGER;
    this.start = { mask: 0, compute: 0, reused: 0, counts: new Array(table.profiles.length).fill(0) };
    current.forEach((c, i) => {
      if (!c.busy) return;
      const profile = this.currentProfiles[i];
      this.start.mask |= this.currentMasks[i];
      this.start.compute += profile?.computeSlices ?? 0;
      if (profile) this.start.counts[table.profiles.indexOf(profile)]++;
    });
    this.idleToday = current.filter((c) => !c.busy).length;
  }

  best(): Outcome {
    const { mask, compute, reused, counts } = this.start;
    return this.visit(0, mask, compute, reused, [...counts]);
  }

  /** The slot chosen for each job (null: left out), replayed from the memo along the best path. */
  choices(): (Slot | null)[] {
    const state = { ...this.start, counts: [...this.start.counts] };
    const chosen: (Slot | null)[] = [];
    for (let i = 0; i < this.jobs.length; i++) {
      const slot = this.memo.get(this.key(i, state.mask, state.compute, state.reused, state.counts))!.choice;
      chosen.push(slot);
      if (slot) this.take(state, slot);
    }
    return chosen;
  }

  /** Today's idle instances that stay as they are, idle, once these choices are made. */
  keptIdle(choices: (Slot | null)[]): number[] {
    const state = { ...this.start, counts: [...this.start.counts] };
    for (const slot of choices) if (slot) this.take(state, slot);
    return this.idleKeepers(state.mask, state.compute, state.reused, state.counts).indexes;
  }

  private take(state: State, slot: Slot): void {
    if (slot.current >= 0) state.reused |= 1 << slot.current;
    if (slot.busy) return; // the slice is already counted in the start state
    state.mask |= slot.mask;
    state.compute += slot.profile.computeSlices;
    state.counts[slot.profileIndex]++;
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

    const job = this.jobs[i];
    let best = this.visit(i + 1, mask, compute, reused, counts);
    let choice: Slot | null = null;
    for (const slot of this.jobSlots[i]) {
      const profile = slot.profile;
      let rest: Outcome;
      if (slot.busy) {
        if (reused & (1 << slot.current)) continue; // one job beside a slice's running work
        rest = this.visit(i + 1, mask, compute, reused | (1 << slot.current), counts);
      } else {
        if (slot.mask & mask) continue;
        if (compute + profile.computeSlices > this.table.computeSlices) continue;
        if (counts[slot.profileIndex] >= profile.maxInstances) continue;
        counts[slot.profileIndex]++;
        rest = this.visit(i + 1, mask | slot.mask, compute + profile.computeSlices, slot.current >= 0 ? reused | (1 << slot.current) : reused, counts);
        counts[slot.profileIndex]--;
      }
      const placed: [number, number, number] = [rest.placed[0] + job.counts[0], rest.placed[1] + job.counts[1], rest.placed[2] + job.counts[2]];
      const outcome: Outcome = {
        placed,
        mps: rest.mps + (job.members.length > 1 ? job.members.length : 0),
        beside: rest.beside + (slot.busy ? 1 : 0),
        changes: rest.changes + (slot.current < 0 ? 1 : 0),
        slices: rest.slices + slot.slices,
        kept: rest.kept,
        roomLeft: rest.roomLeft,
      };
      if (compareOutcomes(outcome, best) > 0) {
        best = outcome;
        choice = slot;
      }
    }
    this.memo.set(key, { outcome: best, choice });
    return best;
  }

  /** All jobs decided: count what is kept from today, what is destroyed, and how large a placement is still free. */
  private leaf(mask: number, compute: number, reused: number, counts: number[]): Outcome {
    const idle = this.idleKeepers(mask, compute, reused, counts);
    let reusedIdle = 0;
    this.current.forEach((c, i) => {
      if (!c.busy && reused & (1 << i)) reusedIdle++;
    });
    const kept = idle.indexes.length + reusedIdle;
    let roomLeft = 0;
    for (const slot of this.freeSlots) {
      if (slot.mask & idle.occupied || idle.compute + slot.profile.computeSlices > this.table.computeSlices) continue;
      roomLeft = Math.max(roomLeft, slot.profile.memorySlices * 8 + slot.profile.computeSlices);
    }
    return { placed: [0, 0, 0], mps: 0, beside: 0, changes: this.idleToday - kept, slices: 0, kept, roomLeft };
  }

  /** Today's idle instances not reused for a job that can stay: clear of every new instance, within the limits. */
  private idleKeepers(mask: number, compute: number, reused: number, counts: number[]) {
    const indexes: number[] = [];
    const taken = [...counts];
    this.currentMasks.forEach((m, i) => {
      const profile = this.currentProfiles[i];
      if (this.current[i].busy || reused & (1 << i) || m & mask) return;
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
