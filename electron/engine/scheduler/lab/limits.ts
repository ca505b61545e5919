// The lab policy's limits per user, counted from the jobs the scheduler knows: which GPUs a
// user's jobs occupy, the memory their managed jobs hold, their high-priority jobs. A queued job
// that would pass a limit waits, with the limit and the entry it comes from as its reason.
import type { ResolvedLimit, ResolvedLimits } from '../../../../shared/lab-policy.js';
import { FINAL_STATES, formatByteSize, gpuDemand, type JobView } from '../../../../shared/jobs.js';
import type { AdmissionLimits } from '../policies.js';

/** What one user's jobs hold now, as the limits count it. */
export interface AccountLoad {
  /** GPUs their jobs (managed or not) occupy. */
  gpus: Set<number>;
  /** Their managed jobs' memory: each one's quota, else its request, else what it uses. */
  memoryBytes: number;
  /** Their managed jobs running at high priority. */
  highJobs: string[];
}

/** A job on its GPU: everything live but queued and parked (a parked job's memory is in host memory). */
export const occupies = (job: JobView): boolean => !FINAL_STATES.has(job.state) && job.state !== 'queued' && job.state !== 'parked' && job.gpu !== null;

/** The memory a managed job counts for against its owner's limit. */
export const countedMemory = (job: JobView): number => {
  const perGpu = job.memoryQuotaBytes ?? job.memoryRequestBytes;
  return perGpu === null ? (job.usedMemory ?? 0) : perGpu * Math.max(1, job.gpus.length); // quotas and requests are per GPU
};

/**
 * The hard quota a managed job starts with under its owner's memory limit, so that the limit is held, not
 * only checked at admission: what it declared (its quota, else its request), else the rest of the owner's
 * allowance. Null: no memory limit applies. The quotas of a user's running jobs never sum past the limit.
 */
export function limitQuota(limits: ResolvedLimits, load: AccountLoad, job: Pick<JobView, 'managed' | 'memoryQuotaBytes' | 'memoryRequestBytes'>, gpuCount = 1): number | null {
  const max = limits.maxMemory;
  if (!max || !job.managed) return null;
  const rest = Math.floor(Math.max(0, max.value - load.memoryBytes) / gpuCount); // quotas are per GPU
  const declared = job.memoryQuotaBytes ?? job.memoryRequestBytes;
  return declared === null ? rest : Math.min(declared, rest);
}

/** The memory a job not yet started will count for (unknown: nothing, until it uses some). */
export const declaredMemory = (job: Pick<JobView, 'memoryQuotaBytes' | 'memoryRequestBytes'>): number => job.memoryQuotaBytes ?? job.memoryRequestBytes ?? 0;

export function emptyLoad(): AccountLoad {
  return { gpus: new Set(), memoryBytes: 0, highJobs: [] };
}

/** Each owner's load, from the jobs the scheduler knows. */
export function loadsOf(jobs: readonly JobView[]): Map<string, AccountLoad> {
  const loads = new Map<string, AccountLoad>();
  for (const job of jobs) {
    if (!occupies(job)) continue;
    let load = loads.get(job.owner);
    if (!load) loads.set(job.owner, (load = emptyLoad()));
    addToLoad(load, job, job.gpus.length ? job.gpus : [job.gpu!]);
  }
  return loads;
}

function addToLoad(load: AccountLoad, job: JobView, gpus: readonly number[]): void {
  for (const gpu of gpus) load.gpus.add(gpu);
  if (!job.managed) return;
  load.memoryBytes += countedMemory(job);
  if (job.priority === 'high') load.highJobs.push(job.id);
}

const rule = (limit: ResolvedLimit<unknown>): string => `(lab policy, ${limit.from})`;
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const gpuList = (gpus: Iterable<number>): string => {
  const list = [...gpus].sort((a, b) => a - b);
  return `GPU${list.length === 1 ? '' : 's'} ${list.join(', ')}`;
};

/** Why this user may not add a GPU to those they use, or null. */
export function gpuLimitReason(user: string, limits: ResolvedLimits, load: AccountLoad, gpus: readonly number[]): string | null {
  const max = limits.maxGpus;
  const added = gpus.filter((gpu) => !load.gpus.has(gpu)).length;
  if (!max || added === 0 || load.gpus.size + added <= max.value) return null;
  if (gpus.length > 1 && gpus.length > max.value) return `${user} may use at most ${plural(max.value, 'GPU')} at once ${rule(max)}, and the job needs ${gpus.length}`;
  if (max.value === 0) return `${user} may use no GPU ${rule(max)}`;
  return `${user} may use at most ${plural(max.value, 'GPU')} at once ${rule(max)} and already uses ${gpuList(load.gpus)}`;
}

/** Why this user may not start a job that holds `bytes` more (0: not known yet), or null. */
export function memoryLimitReason(user: string, limits: ResolvedLimits, load: AccountLoad, job: Pick<JobView, 'id'>, bytes: number): string | null {
  const max = limits.maxMemory;
  if (!max) return null;
  const over = bytes === 0 ? load.memoryBytes >= max.value : load.memoryBytes + bytes > max.value;
  if (!over) return null;
  const asks = bytes === 0 ? `${job.id} declares no memory, and nothing is left` : `${job.id} asks for ${formatByteSize(bytes)}`;
  return `${user} may hold at most ${formatByteSize(max.value)} of GPU memory at once ${rule(max)}; ${user}'s running jobs hold ${formatByteSize(load.memoryBytes)} and ${asks}`;
}

/** Why this user may not run one more high-priority job, or null. */
export function highJobsLimitReason(user: string, limits: ResolvedLimits, load: AccountLoad): string | null {
  const max = limits.maxHighPriorityJobs;
  if (!max || load.highJobs.length < max.value) return null;
  if (max.value === 0) return `${user} may run no high-priority job ${rule(max)}`;
  return `${user} may run at most ${plural(max.value, 'high-priority job')} at once ${rule(max)}; ${load.highJobs.join(', ')} ${load.highJobs.length === 1 ? 'runs' : 'run'} at high`;
}

/** Past the day's high-priority GPU-hours: why a new high-priority job runs as normal, or null. */
export function highHoursReason(user: string, limits: ResolvedLimits, usedGpuSeconds: number): string | null {
  const max = limits.highPriorityGpuHoursPerDay;
  if (!max) return null;
  const used = usedGpuSeconds / 3600;
  if (used < max.value) return null;
  return `${user} used ${used.toFixed(1)} of ${plural(max.value, 'high-priority GPU-hour')} in the last 24 h ${rule(max)}`;
}

export interface AccountView {
  limits: ResolvedLimits;
  highGpuSecondsToday: number;
}

/**
 * The admission hook for one evaluation: each owner's load as it is, plus the jobs this plan
 * has placed so far (two queued jobs of one user must not both take the last GPU they may use).
 */
export class LimitAdmission implements AdmissionLimits {
  private readonly loads: Map<string, AccountLoad>;
  /** Each owner's limits, resolved once per evaluation (asked per job and per GPU). */
  private readonly accounts = new Map<string, AccountView>();

  constructor(
    jobs: readonly JobView[],
    private readonly resolve: (job: JobView) => AccountView,
  ) {
    this.loads = loadsOf(jobs);
  }

  private account(job: JobView): AccountView {
    const key = `${job.uid}:${job.owner}`;
    let account = this.accounts.get(key);
    if (!account) this.accounts.set(key, (account = this.resolve(job)));
    return account;
  }

  private load(owner: string): AccountLoad {
    let load = this.loads.get(owner);
    if (!load) this.loads.set(owner, (load = emptyLoad()));
    return load;
  }

  /** A high job past its owner's high GPU-hours runs as normal, so no high-job limit holds it. */
  private runsHigh(job: JobView, account: AccountView): boolean {
    return job.priority === 'high' && highHoursReason(job.owner, account.limits, account.highGpuSecondsToday) === null;
  }

  holdsBack(job: JobView): string | null {
    const account = this.account(job);
    const load = this.load(job.owner);
    if (job.managed) {
      const memory = memoryLimitReason(job.owner, account.limits, load, job, declaredMemory(job) * gpuDemand(job).count); // per GPU
      if (memory) return memory;
    }
    return job.managed && this.runsHigh(job, account) ? highJobsLimitReason(job.owner, account.limits, load) : null;
  }

  holdsBackOn(job: JobView, gpus: readonly number[]): string | null {
    return gpuLimitReason(job.owner, this.account(job).limits, this.load(job.owner), gpus);
  }

  admitted(job: JobView, gpus: readonly number[]): number | null {
    const account = this.account(job);
    const load = this.load(job.owner);
    for (const gpu of gpus) load.gpus.add(gpu);
    if (!job.managed) return null;
    const quota = limitQuota(account.limits, load, job, gpus.length);
    load.memoryBytes += (quota ?? declaredMemory(job)) * gpus.length;
    if (this.runsHigh(job, account)) load.highJobs.push(job.id);
    return quota;
  }
}
