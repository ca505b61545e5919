// The lab policy as the box daemon's scheduler applies it: limits per user and group, fair share
// by recent usage, a default priority for unmanaged processes, idle memory holders. The one owner
// of the policy in effect: the scheduler asks it (admission, queue order, idle holders) and
// `policy.set` replaces the policy here, whole or not at all.
import { resolveLimits, type LabPolicy, type LabPolicyStatus, type ResolvedLimits } from '../../../../shared/lab-policy.js';
import { formatByteSize as fmt, type JobState, type JobView, type Priority } from '../../../../shared/jobs.js';
import { ApiError } from '../../api/api-error.js';
import { cachedGroupsOf, type GroupsOf } from './account-groups.js';
import { IdleHolders, type IdleDecision } from './idle-holders.js';
import { declaredMemory, emptyLoad, highHoursReason, highJobsLimitReason, LimitAdmission, loadsOf, occupies, type AccountView } from './limits.js';
import { RecentUsage, type UsageSource } from './recent-usage.js';
import type { JobRecord } from '../job-table.js';
import type { AdmissionLimits } from '../policies.js';

export interface LabPolicyOptions {
  policy: LabPolicy;
  /** Keeps a new policy (the daemon's config file) before it applies; absent: it lives in memory only. */
  persist?: ((policy: LabPolicy) => unknown) | null;
  /** The usage store (fair share, high-priority hours); absent: everyone's usage reads as none. */
  usage?: UsageSource | null;
  /** A user's group names (default: the system's, asked again at most once a minute). */
  groupsOf?: GroupsOf;
  /** The clock for idle holders and usage (tests). */
  now?: () => number;
}

/** What a new job asks for, as the submit command knows it. */
export interface Submission {
  owner: string;
  uid: number;
  priority: Priority;
  memoryQuotaBytes: number | null;
  memoryRequestBytes: number | null;
  /** The GPUs it asks for (absent: one); its memory is per GPU. */
  gpuCount?: number;
}

const HOUR_MS = 3_600_000;

/** Until recent usage is first read (at start, or after the half-life changed), queued jobs wait a moment. */
const READING_USAGE: AdmissionLimits = {
  holdsBack: () => 'the lab policy is reading recent usage from the store (a moment)',
  holdsBackOn: () => null,
  admitted: () => null,
};

export class LabPolicyEnforcer {
  private current: LabPolicy;
  readonly usage: RecentUsage;
  private readonly idle = new IdleHolders();
  private readonly groupsOf: GroupsOf;
  readonly now: () => number;
  private setting: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LabPolicyOptions) {
    this.current = structuredClone(options.policy);
    this.now = options.now ?? Date.now;
    this.groupsOf = options.groupsOf ?? cachedGroupsOf(undefined, this.now);
    this.usage = new RecentUsage(options.usage ?? null, () => this.current.fairShare.halfLifeHours * HOUR_MS, this.now);
  }

  get policy(): LabPolicy {
    return this.current;
  }

  groups(user: string, uid: number): string[] {
    return this.groupsOf(user, uid);
  }

  limitsOf(user: string, uid: number): ResolvedLimits {
    return resolveLimits(this.current, user, this.groupsOf(user, uid));
  }

  private account(job: Pick<JobView, 'owner' | 'uid'>): AccountView {
    return { limits: this.limitsOf(job.owner, job.uid), highGpuSecondsToday: this.usage.current.highGpuSecondsToday.get(job.owner) ?? 0 };
  }

  // ---- what the scheduler asks on each evaluation ----

  /** The admission hook for this evaluation (the usage figures are refreshed in the background when a minute old). */
  admission(jobs: readonly JobView[]): AdmissionLimits {
    this.usage.refreshIfStale();
    if (this.options.usage && this.usage.current.asOf === null) return READING_USAGE; // the queue order and high-priority hours need it
    return new LimitAdmission(jobs, (job) => this.account(job));
  }

  /** Fair share: the owner with less recent usage first; null when the policy turns it off. */
  queueOrder(): ((a: JobView, b: JobView) => number) | null {
    if (!this.current.fairShare.enabled) return null;
    const usage = this.usage.current.decayedGpuSeconds;
    return (a, b) => (usage.get(a.owner) ?? 0) - (usage.get(b.owner) ?? 0);
  }

  /** Idle holders among the live jobs, at the enforcer's clock. */
  idleHolders(records: readonly JobRecord[]): IdleDecision {
    return this.idle.observe(records, this.now(), this.current.idleHolders);
  }

  /** The priority a user's unmanaged GPU process gets when first seen. */
  defaultPriority(user: string, uid: number): Priority {
    return this.limitsOf(user, uid).defaultPriority?.value ?? 'normal';
  }

  /** A high-priority job about to start past its owner's high GPU-hours: why it runs as normal, else null. */
  demotion(job: JobView): string | null {
    if (job.priority !== 'high') return null;
    const account = this.account(job);
    return highHoursReason(job.owner, account.limits, account.highGpuSecondsToday);
  }

  // ---- what commands ask ----

  /** Refuse a job that could never start under its owner's limits. */
  checkSubmission(job: Submission): void {
    const limits = this.limitsOf(job.owner, job.uid);
    const gpus = job.gpuCount ?? 1;
    const need = declaredMemory(job) * gpus; // per GPU
    const refuse = (why: string): never => {
      throw new ApiError('forbidden', `The job was not submitted: ${why}. Nothing was started.`);
    };
    if (limits.maxMemory && need > limits.maxMemory.value) {
      const what = job.memoryQuotaBytes !== null ? 'memory quota' : 'memory request';
      refuse(`its ${what} ${gpus > 1 ? `of ${fmt(declaredMemory(job))} on each of ${gpus} GPUs, ${fmt(need)} in all,` : fmt(need)} is more than ${job.owner} may hold at once (${fmt(limits.maxMemory.value)}, lab policy, ${limits.maxMemory.from}); ask for at most that`);
    }
    if (limits.maxGpus?.value === 0) refuse(`${job.owner} may use no GPU (lab policy, ${limits.maxGpus.from})`);
    if (limits.maxGpus && gpus > limits.maxGpus.value) refuse(`it asks for ${gpus} GPUs, and ${job.owner} may use at most ${limits.maxGpus.value} at once (lab policy, ${limits.maxGpus.from})`);
    if (job.priority === 'high' && limits.maxHighPriorityJobs?.value === 0) {
      refuse(`${job.owner} may run no high-priority job (lab policy, ${limits.maxHighPriorityJobs.from}); submit it as normal`);
    }
  }

  /**
   * Refuse raising a job on the GPU to high priority past its owner's limits (a queued job waits for admission instead).
   * `state`: the state the job will be in (a move that unparks it checks it as running).
   */
  checkPriority(record: JobRecord, priority: Priority, jobs: readonly JobView[], state: JobState = record.view.state): void {
    const job = record.view;
    if (priority !== 'high' || job.priority === 'high' || !occupies({ ...job, state })) return;
    const account = this.account(job);
    const others = jobs.filter((j) => j.id !== job.id);
    const load = loadsOf(others).get(job.owner) ?? emptyLoad();
    const why = highHoursReason(job.owner, account.limits, account.highGpuSecondsToday) ?? (job.managed ? highJobsLimitReason(job.owner, account.limits, load) : null);
    if (why) throw new ApiError('forbidden', `Cannot raise ${job.id} to high priority: ${why}. It keeps its ${job.priority} priority.`);
  }

  /**
   * Refuse a memory quota that would let a started job's owner hold more than their memory limit: the quotas of
   * their running jobs are what hold it (none, on a job under a limit, is no limit at all). A queued job's quota
   * is held to the limit itself; admission does the rest.
   */
  checkQuota(record: JobRecord, bytes: number | null, jobs: readonly JobView[], state: JobState = record.view.state): void {
    const job = { ...record.view, state };
    const max = this.limitsOf(job.owner, job.uid).maxMemory;
    if (!max || !job.managed || (bytes !== null && bytes <= (job.memoryQuotaBytes ?? -1))) return; // lowering is always fine
    const gpus = Math.max(1, job.gpus.length, job.gpuCount ?? 1); // the quota is per GPU
    if (!occupies(job) && (bytes === null || bytes * gpus <= max.value)) return; // admission gives it a quota within what is left
    const others = occupies(job) ? (loadsOf(jobs.filter((j) => j.id !== job.id)).get(job.owner) ?? emptyLoad()).memoryBytes : 0;
    if (bytes !== null && bytes * gpus <= max.value - others) return;
    const what = bytes === null ? 'remove the memory quota' : `raise the memory quota to ${fmt(bytes)}${gpus > 1 ? ` per GPU (${fmt(bytes * gpus)} on its ${gpus} GPUs)` : ''}`;
    const held = others > 0 ? `, and ${job.owner}'s other running jobs hold ${fmt(others)}` : '';
    const kept = job.memoryQuotaBytes === null ? 'It is unchanged' : `It keeps its ${fmt(job.memoryQuotaBytes)} quota`;
    throw new ApiError('forbidden', `Cannot ${what} of ${job.id}: ${job.owner} may hold at most ${fmt(max.value)} of GPU memory at once (lab policy, ${max.from})${held}. ${kept}.`);
  }

  /**
   * The hard quota of a job that enrolled (it cannot wait in the queue: it runs already): what it asked, within what
   * its owner's memory limit leaves beside their running jobs; with a limit and nothing asked, all that is left.
   */
  quotaForEnrolled(owner: string, uid: number, asked: number | null, jobs: readonly JobView[]): { bytes: number | null; fromPolicy: boolean } {
    const max = this.limitsOf(owner, uid).maxMemory;
    if (!max) return { bytes: asked, fromPolicy: false };
    const left = Math.max(0, max.value - (loadsOf(jobs).get(owner) ?? emptyLoad()).memoryBytes);
    return asked !== null && asked <= left ? { bytes: asked, fromPolicy: false } : { bytes: left, fromPolicy: true };
  }

  /** Replace the policy: kept first (the daemon's config), then applied; a failure to keep it applies nothing. Serialised. */
  set(policy: LabPolicy): Promise<void> {
    const next = this.setting.then(async () => {
      await this.options.persist?.(policy);
      const halfLifeChanged = policy.fairShare.halfLifeHours !== this.current.fairShare.halfLifeHours;
      this.current = structuredClone(policy);
      if (halfLifeChanged) this.usage.invalidate();
    });
    this.setting = next.catch(() => undefined);
    return next;
  }

  /** policy.get for one caller. */
  status(caller: { user: string; uid: number }, jobs: readonly JobView[], rights: { mayChange: boolean; administrators: string }): LabPolicyStatus {
    const usage = this.usage.current;
    const load = loadsOf(jobs).get(caller.user) ?? emptyLoad();
    const decayed = new Map(usage.decayedGpuSeconds);
    if (!decayed.has(caller.user)) decayed.set(caller.user, 0);
    const ranked = [...decayed].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
    return {
      enforced: true,
      policy: structuredClone(this.current),
      mayChange: rights.mayChange,
      administrators: rights.administrators,
      you: {
        user: caller.user,
        groups: this.groupsOf(caller.user, caller.uid),
        limits: this.limitsOf(caller.user, caller.uid),
        using: { gpus: load.gpus.size, memoryBytes: load.memoryBytes, highPriorityJobs: load.highJobs.length },
        highPriorityGpuHoursToday: (usage.highGpuSecondsToday.get(caller.user) ?? 0) / 3600,
      },
      fairShare: ranked.map(([user, seconds], i) => ({ user, gpuHours: seconds / 3600, rank: i + 1 })),
      usageAsOf: usage.asOf,
    };
  }
}
