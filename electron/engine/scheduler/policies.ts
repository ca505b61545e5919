// The scheduler's decisions as pure functions of the jobs and the latest snapshot:
// what is active, which queued job may start where, who is held for priority,
// and which contention conditions hold right now.
import { formatByteSize, gpuDemand, gpusPhrase, PRIORITY_RANK, quotaOverItsGpus, type AlertKind, type JobView } from '../../../shared/jobs.js';
import type { GpuView } from '../../../shared/snapshot.js';
import type { JobRecord } from './job-table.js';

/** A job that computed within this window still counts as active (bursty jobs do not flap). */
export const ACTIVE_HOLD_MS = 3000;
/** An out-of-memory condition lasts this long after the last refused allocation (so a burst of refusals is one onset). */
export const OOM_HOLD_MS = 10_000;
/** GPU memory use above this share of the total is contention. */
export const MEMORY_PRESSURE = 0.9;

const name = (job: JobView): string => `${job.id} (${job.argv[0]?.split('/').pop() ?? '?'}, ${job.owner})`;

/** Computing now or within ACTIVE_HOLD_MS, and not held back. */
export function isActive(record: JobRecord, now: number, holdMs = ACTIVE_HOLD_MS): boolean {
  const { state, smPercent } = record.view;
  if (state !== 'running' && state !== 'gated') return false;
  if (record.holds.size > 0) return false;
  return (smPercent ?? 0) > 0 || now - record.lastActiveAt < holdMs;
}

/** Where jobs compete for SMs: a whole GPU, or one MIG slice of it (slices are isolated from each other); a job on several GPUs: each of them. */
export const sharingDomains = (job: JobView): string[] => (job.gpus.length ? job.gpus : [job.gpu]).map((gpu) => `${gpu}/${job.migSlice ?? ''}`);

/** The two jobs compete somewhere: on a GPU (or slice) both run on. */
export const shareDomain = (a: JobView, b: JobView): boolean => {
  const mine = sharingDomains(a);
  return sharingDomains(b).some((d) => mine.includes(d));
};

/** Memory a job said it needs: its request, else its own quota (a cap the lab policy gave it is no need), else nothing. */
export const declaredNeed = (job: JobView): number => job.memoryRequestBytes ?? (job.memoryQuotaFromPolicy ? null : job.memoryQuotaBytes) ?? 0;

/** The lab policy's say in admission (electron/engine/scheduler/lab/): limits per user, checked as jobs are placed. */
export interface AdmissionLimits {
  /** Why the job may not start now on any GPU (its owner is at a limit), or null. */
  holdsBack(job: JobView): string | null;
  /** Why it may not start on these GPUs together (its owner may use no more GPUs), or null. */
  holdsBackOn(job: JobView, gpus: readonly number[]): string | null;
  /** It was placed on `gpus`: the next jobs of this plan see it. Returns the hard quota (per GPU) the policy gives it (null: none). */
  admitted(job: JobView, gpus: readonly number[]): number | null;
}

export interface AdmissionOptions {
  blocked?: (job: JobView, gpu: GpuView) => string | null;
  limits?: AdmissionLimits | null;
  /** The queue's first key (fair share: the owner's recent usage); then priority, then submission order. */
  queueOrder?: ((a: JobView, b: JobView) => number) | null;
}

export interface AdmissionPlan {
  /** `gpus`: where it starts, all at once, in order; `quotaBytes`: the hard memory quota per GPU the lab policy gives the job (absent: its own, if any). */
  start: Array<{ jobId: string; gpus: number[]; quotaBytes?: number }>;
  /** Why each job that stays queued waits: one sentence. */
  waiting: Map<string, string>;
}

/**
 * Which queued jobs start now, and where. A job on several GPUs starts only when every one of them
 * can take it, all in the same plan (reserved in one step: it never holds some while waiting for the
 * rest, so two such jobs cannot each hold half of what the other needs); `auto` takes the GPUs with
 * the most free memory, in index order. A job starts when its GPU has the memory it
 * declared free (after what running jobs declared but do not use yet) and its mode is
 * available: `exclusive` needs an otherwise empty GPU, and nothing joins an exclusive job.
 * `auto` takes the GPU with the most free memory that fits. The queue order (fair share, when
 * given) first, then higher priority, then submission order; a lower job never takes a GPU a
 * higher job is waiting for. A job a lab limit holds back waits for its owner, not for a GPU.
 */
export function planAdmission(gpus: readonly GpuView[], live: readonly JobRecord[], options: AdmissionOptions = {}): AdmissionPlan {
  const placed = live.filter((r) => r.view.state !== 'queued' && r.view.gpu !== null);
  const free = new Map<number, number>();
  const occupied = new Set<number>();
  const exclusiveOn = new Map<number, string>();
  for (const gpu of gpus) free.set(gpu.index, gpu.memoryFree ?? gpu.memoryTotal - (gpu.memoryUsed ?? 0));
  /** MIG slice → memory spoken for there beyond what the driver shows used (declared, not yet allocated; placed this tick). */
  const sliceSpoken = new Map<string, number>();
  const unallocated = (job: JobView): number => Math.max(0, declaredNeed(job) - (job.usedMemory ?? 0));
  const unallocatedPerGpu = (job: JobView): number => (job.gpus.length > 1 ? Math.max(0, declaredNeed(job) - (job.usedMemory ?? 0) / job.gpus.length) : unallocated(job));
  for (const r of placed) {
    for (const g of r.view.gpus.length ? r.view.gpus : [r.view.gpu!]) {
      occupied.add(g);
      if (r.view.mode === 'exclusive') exclusiveOn.set(g, r.view.id);
      // memory a started job declared but has not allocated yet is spoken for (a job on several GPUs: per GPU, of what it uses on all)
      if (r.view.managed) free.set(g, (free.get(g) ?? 0) - unallocatedPerGpu(r.view));
    }
    if (r.view.managed && r.view.mode === 'mig' && r.view.migSlice) sliceSpoken.set(r.view.migSlice, (sliceSpoken.get(r.view.migSlice) ?? 0) + unallocated(r.view));
  }
  const queued = live
    .filter((r) => r.view.state === 'queued')
    .sort((a, b) => (options.queueOrder?.(a.view, b.view) ?? 0) || PRIORITY_RANK[a.view.priority] - PRIORITY_RANK[b.view.priority] || a.view.history[0].at - b.view.history[0].at || Number(a.view.id.slice(1)) - Number(b.view.id.slice(1)));
  const limits = options.limits ?? null;
  const blockedBelow = new Map<number, number>(); // GPU → rank of the highest job waiting for it
  const heldFor = new Map<number, string>(); // GPU → the exclusive job on several GPUs that waits for its others and has this one
  const plan: AdmissionPlan = { start: [], waiting: new Map() };

  const whyNot = (job: JobView, gpu: GpuView): string | null => {
    if (gpu.lost) return `GPU ${gpu.index} is lost`;
    if (gpu.migEnabled && job.mode !== 'mig') return `GPU ${gpu.index} is in MIG mode: run the job in one of its slices (mode mig with a MIG slice UUID)`;
    if (job.mode === 'mig') {
      const slice = gpu.migSlices.find((s) => s.uuid === job.migSlice);
      if (!gpu.migEnabled || !slice) return `MIG slice ${job.migSlice} is not on GPU ${gpu.index} (any more)`;
      const sliceFree = (slice.memoryTotal ?? 0) - (slice.memoryUsed ?? 0) - (sliceSpoken.get(slice.uuid) ?? 0);
      if (declaredNeed(job) > sliceFree) return `MIG slice ${slice.profileName ?? slice.uuid} has ${formatByteSize(Math.max(0, sliceFree))} free and ${job.id} needs ${formatByteSize(declaredNeed(job))}`;
    }
    const blocked = options.blocked?.(job, gpu);
    if (blocked) return blocked;
    if ((blockedBelow.get(gpu.index) ?? Infinity) < PRIORITY_RANK[job.priority]) return `a higher-priority job is waiting for GPU ${gpu.index}`;
    if (exclusiveOn.has(gpu.index)) return `GPU ${gpu.index} runs ${exclusiveOn.get(gpu.index)} exclusively`;
    if (heldFor.has(gpu.index)) return `GPU ${gpu.index} is held for ${heldFor.get(gpu.index)}, which waits for the rest of its GPUs to run on it exclusively`;
    if (job.mode === 'exclusive' && occupied.has(gpu.index)) return `GPU ${gpu.index} is not empty and ${job.id} asked for it exclusively`;
    const need = job.mode === 'mig' ? 0 : declaredNeed(job); // a slice's memory is its own, checked above
    const available = free.get(gpu.index) ?? 0;
    if (need > available) return `GPU ${gpu.index} has ${formatByteSize(Math.max(0, available))} free and ${job.id} needs ${formatByteSize(need)}`;
    return null;
  };

  /**
   * A job on several GPUs that waits keeps what fits it now from the jobs after it in the queue: its memory on
   * each such GPU (the whole GPU, exclusive), so that a stream of smaller jobs cannot starve it. Planned anew
   * every step, it holds nothing while it waits: no deadlock.
   */
  const holdWhatFits = (job: JobView, named: readonly number[] | null): void => {
    for (const g of gpus) {
      if ((named && !named.includes(g.index)) || whyNot(job, g) !== null || limits?.holdsBackOn(job, [g.index])) continue;
      free.set(g.index, (free.get(g.index) ?? 0) - declaredNeed(job));
      occupied.add(g.index);
      if (job.mode === 'exclusive') heldFor.set(g.index, job.id);
    }
  };

  for (const r of queued) {
    const job = r.view;
    const demand = gpuDemand(job);
    let chosen: GpuView[] | null = null;
    const ownerLimit = limits?.holdsBack(job) ?? null;
    let reason: string | null = ownerLimit;
    const limitOn = (gs: readonly GpuView[]): string | null => limits?.holdsBackOn(job, gs.map((g) => g.index)) ?? null;
    const byFree = (a: GpuView, b: GpuView): number => (free.get(b.index) ?? 0) - (free.get(a.index) ?? 0) || a.index - b.index;
    if (reason) {
      // held for its owner's limit: it waits for no GPU, so it holds no lower job back
    } else if (demand.named === null) {
      const fits = gpus.filter((g) => whyNot(job, g) === null && limitOn([g]) === null).sort(byFree);
      const taken = fits.length >= demand.count ? fits.slice(0, demand.count).sort((a, b) => a.index - b.index) : null;
      const limitedTogether = taken && demand.count > 1 ? limitOn(taken) : null;
      if (taken && !limitedTogether) chosen = taken;
      else if (limitedTogether) reason = limitedTogether;
      else {
        const usable = gpus.filter((g) => !g.lost && !g.migEnabled);
        const allowed = usable.filter((g) => limitOn([g]) === null);
        const best = allowed.filter((g) => !fits.includes(g)).sort(byFree)[0];
        const limited = allowed.length < usable.length ? limitOn([usable.find((g) => limitOn([g]) !== null)!]) : null;
        const fitting = demand.count > 1 ? `${fits.length} of the ${demand.count} GPUs it needs fit${fits.length === 1 ? 's' : ''} it now` : 'no GPU fits it now';
        if (limited) reason = best ? `${limited}, and ${whyNot(job, best)}` : limited;
        else if (usable.length < demand.count) reason = `it needs ${demand.count} GPUs and ${usable.length} can run it (the others are lost or in MIG mode)`;
        else reason = best ? `${fitting} (${whyNot(job, best)})` : `no GPU can run it (all are lost or in MIG mode)`;
      }
    } else {
      const named = demand.named.map((index) => ({ index, gpu: gpus.find((g) => g.index === index) }));
      const missing = named.find((n) => !n.gpu);
      const present = named.flatMap((n) => (n.gpu ? [n.gpu] : []));
      reason = missing ? `GPU ${missing.index} does not exist` : limitOn(present) ?? present.map((g) => whyNot(job, g)).find((why) => why !== null) ?? null;
      if (reason === null) chosen = present;
      else if (missing || limitOn(present) === null) for (const { index } of named) blockedBelow.set(index, Math.min(blockedBelow.get(index) ?? Infinity, PRIORITY_RANK[job.priority])); // reserved: no lower job takes any of them meanwhile
    }
    if (!chosen) {
      plan.waiting.set(job.id, `${name(job)} is queued: ${reason}.`);
      if (demand.count > 1 && !ownerLimit) holdWhatFits(job, demand.named);
      continue;
    }
    const on = chosen.map((g) => g.index);
    const quotaBytes = limits?.admitted(job, on) ?? null;
    plan.start.push({ jobId: job.id, gpus: on, ...(quotaBytes === null ? {} : { quotaBytes }) });
    for (const g of on) {
      free.set(g, (free.get(g) ?? 0) - declaredNeed(job));
      occupied.add(g);
      if (job.mode === 'exclusive') exclusiveOn.set(g, job.id);
    }
    if (job.mode === 'mig' && job.migSlice) sliceSpoken.set(job.migSlice, (sliceSpoken.get(job.migSlice) ?? 0) + declaredNeed(job));
  }
  return plan;
}

export interface PriorityDecision {
  /** Jobs to hold (SIGSTOP, or a gate pause above an unmanaged process): job → the higher job that is active. */
  hold: Map<string, string>;
}

/**
 * Priority enforcement where the launch gate cannot do it, by the driver's SM use: a best-effort
 * process is suspended while a higher-priority job is active on its GPU; a job under the gate has
 * its slot paused while a higher job the gate does not see (no slot) is active. Between jobs under
 * the gate the gate itself holds back, and says so in its counters (decideGating).
 */
export function decidePriority(live: readonly JobRecord[], now: number, options: { gateFor: (r: JobRecord) => boolean; holdMs?: number }): PriorityDecision {
  const decision: PriorityDecision = { hold: new Map() };
  const active = live.filter((r) => r.view.gpu !== null && isActive(r, now, options.holdMs));
  for (const r of live) {
    const { gpu, priority, state } = r.view;
    if (gpu === null || (state !== 'running' && state !== 'gated' && state !== 'suspended')) continue;
    const higher = active.filter((a) => a !== r && shareDomain(a.view, r.view) && PRIORITY_RANK[a.view.priority] < PRIORITY_RANK[priority]);
    if (higher.length === 0) continue;
    if (options.gateFor(r)) {
      // the gate sees only managed jobs: above an unmanaged process the engine pauses the slot itself
      const unseen = higher.find((a) => !options.gateFor(a));
      if (unseen) decision.hold.set(r.view.id, unseen.view.id);
    } else if (priority === 'best-effort') {
      decision.hold.set(r.view.id, higher[0].view.id);
    }
  }
  return decision;
}

/** What the launch gate shows of a job under it. */
export interface GateSight {
  /** When its launches last waited for a higher job (its gatedNs counter grew; ms), or null. */
  waitedAt: number | null;
  /** Threads of it inside a launch now, and when its latest launch returned (CLOCK_MONOTONIC ns). */
  inLaunch: number;
  lastLaunchNs: bigint;
}

/**
 * Jobs under the launch gate that it holds back: gated while the preload library counted waits for
 * a higher job within `holdMs` (so a job between bursts does not flap), named after the higher job
 * of its domain that launched last. Job → that higher job. A job with no higher job under the gate
 * in its domain is held by nobody the gate knows.
 */
export function decideGating(live: readonly JobRecord[], now: number, options: { sightOf: (r: JobRecord) => GateSight | null; holdMs?: number }): Map<string, string> {
  const holdMs = options.holdMs ?? ACTIVE_HOLD_MS;
  const gated = new Map<string, string>();
  const sights = new Map<JobRecord, GateSight>();
  for (const r of live) {
    const sight = r.view.gpu === null ? null : options.sightOf(r);
    if (sight) sights.set(r, sight);
  }
  for (const [r, sight] of sights) {
    const { state, priority } = r.view;
    if ((state !== 'running' && state !== 'gated') || sight.waitedAt === null || now - sight.waitedAt >= holdMs) continue;
    let by: JobRecord | null = null;
    let byLaunch = -1n;
    for (const [h, seen] of sights) {
      if (h === r || !shareDomain(h.view, r.view) || PRIORITY_RANK[h.view.priority] >= PRIORITY_RANK[priority]) continue;
      const launch = seen.inLaunch > 0 ? BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n : seen.lastLaunchNs; // mid-launch: the latest of all
      if (launch > byLaunch) [by, byLaunch] = [h, launch];
    }
    if (by) gated.set(r.view.id, by.view.id);
  }
  return gated;
}

export interface Condition {
  /** Identifies the condition across ticks: an alert is raised once per onset. */
  key: string;
  kind: AlertKind;
  severity: 'info' | 'warning' | 'error';
  gpu: number | null;
  jobId: string | null;
  message: string;
}

/**
 * Contention, defined: (1) a job waits in the queue; (2) a job is held back (gated or
 * suspended) for a higher-priority one; (3) a GPU's memory is more than 90 % used;
 * (4) a job uses more memory than its quota; (5) two or more jobs are active on one GPU
 * and one of them is high priority.
 */
export function detectContention(gpus: readonly GpuView[], live: readonly JobRecord[], waiting: ReadonlyMap<string, string>, now: number, holdMs?: number, jobOf?: (id: string) => JobView | undefined): Condition[] {
  const conditions: Condition[] = [];
  const lookup = jobOf ?? ((byId) => (id: string) => byId.get(id))(new Map(live.map((r) => [r.view.id, r.view]))); // by id, never a scan per waiting job
  for (const [jobId, message] of waiting) {
    const job = lookup(jobId);
    conditions.push({ key: `waiting:${jobId}`, kind: 'waiting', severity: 'info', gpu: job && job.requestedGpu !== 'auto' ? job.requestedGpu : null, jobId, message });
  }
  for (const r of live) {
    const job = r.view;
    if (job.state === 'gated' || r.holds.has('priority')) {
      const verb = job.state === 'gated' ? 'is gated' : 'is suspended';
      conditions.push({ key: `held:${job.id}`, kind: 'contention', severity: 'info', gpu: job.gpu, jobId: job.id, message: `${name(job)} ${verb} on ${gpusPhrase(job)} while a higher-priority job runs ${job.gpus.length > 1 ? 'on one of them' : 'there'}.` });
    }
    if (r.oomAt !== null && now - r.oomAt < OOM_HOLD_MS) conditions.push(outOfMemoryCondition(r));
    const quota = quotaOverItsGpus(job);
    if (quota !== null && (job.usedMemory ?? 0) > quota) {
      conditions.push({
        key: `quota:${job.id}`,
        kind: 'quota',
        severity: 'warning',
        gpu: job.gpu,
        jobId: job.id,
        message: `${name(job)} uses ${formatByteSize(job.usedMemory!)} of GPU memory, over its ${formatByteSize(quota)} quota${job.gpus.length > 1 ? ` (${formatByteSize(job.memoryQuotaBytes!)} on each of its ${job.gpus.length} GPUs)` : ''}.`,
      });
    }
  }
  for (const gpu of gpus) {
    if (gpu.lost || gpu.memoryUsed === null || gpu.memoryTotal <= 0) continue;
    if (gpu.memoryUsed / gpu.memoryTotal > MEMORY_PRESSURE) {
      conditions.push({
        key: `memory:${gpu.index}`,
        kind: 'contention',
        severity: 'warning',
        gpu: gpu.index,
        jobId: null,
        message: `GPU ${gpu.index} memory is ${Math.round((100 * gpu.memoryUsed) / gpu.memoryTotal)}% used (${formatByteSize(gpu.memoryUsed)} of ${formatByteSize(gpu.memoryTotal)}); new allocations may fail.`,
      });
    }
    const activeByDomain = new Map<string, JobRecord[]>();
    for (const r of live) {
      if (!(r.view.gpus.length ? r.view.gpus : [r.view.gpu]).includes(gpu.index) || !isActive(r, now, holdMs)) continue;
      const domain = `${gpu.index}/${r.view.migSlice ?? ''}`;
      activeByDomain.set(domain, [...(activeByDomain.get(domain) ?? []), r]);
    }
    for (const [domain, active] of activeByDomain) {
      const high = active.find((r) => r.view.priority === 'high');
      if (active.length < 2 || !high) continue;
      const slice = high.view.migSlice ? ` (slice ${high.view.migSlice})` : '';
      conditions.push({
        key: `shared-high:${high.view.migSlice ? domain : gpu.index}`,
        kind: 'contention',
        severity: 'warning',
        gpu: gpu.index,
        jobId: high.view.id,
        message: `High-priority ${name(high.view)} shares GPU ${gpu.index}${slice} with ${active.length - 1} other active job${active.length > 2 ? 's' : ''}.`,
      });
    }
  }
  return conditions;
}

/** Allocations over a managed job's quota were refused (its program saw CUDA_ERROR_OUT_OF_MEMORY). */
export function outOfMemoryCondition(r: JobRecord): Condition {
  const job = r.view;
  const quota = job.memoryQuotaBytes === null ? '' : ` over its ${formatByteSize(job.memoryQuotaBytes)} quota`;
  const count = `${r.oomCount} allocation${r.oomCount === 1 ? ' was' : 's were'} refused so far`;
  return { key: `oom:${job.id}`, kind: 'out-of-memory', severity: 'error', gpu: job.gpu, jobId: job.id, message: `${name(job)} ran out of GPU memory${quota}: ${count}; its program saw CUDA_ERROR_OUT_OF_MEMORY.` };
}

/** Raise each condition once when it starts; it may be raised again after it has cleared. */
export class ConditionTracker {
  private readonly current = new Set<string>();

  active(key: string): boolean {
    return this.current.has(key);
  }

  /** The conditions that just started. */
  update(conditions: readonly Condition[]): Condition[] {
    const now = new Set(conditions.map((c) => c.key));
    const started = conditions.filter((c) => !this.current.has(c.key));
    for (const key of this.current) if (!now.has(key)) this.current.delete(key);
    for (const c of started) this.current.add(c.key);
    return started;
  }
}
