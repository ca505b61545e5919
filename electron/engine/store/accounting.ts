// The accounting: what one sample contributes, defined once here, in JS (for rollups) and
// in SQL (for raw samples) side by side. Rollups store the contributions' sums and maxima,
// so a report reads the same figures from raw samples or rollups, up to float rounding.

/** Consecutive ticks further apart than this many nominal intervals are a gap (the engine was down). */
export const GAP_FACTOR = 3;
export const GIB = 2 ** 30;

/** One GPU process in one tick, attributed to a user and a job. */
export interface ProcessSample {
  gpu: number;
  pid: number;
  user: string;
  /** "j12" for a managed job, "p4242" for an unmanaged process. */
  job: string;
  smPercent: number | null;
  usedMemory: number | null;
  /** The short id of the container it ran in, '-' for none (absent: '-'). */
  container?: string;
  /** Its MIG slice (GPU instance id) on its GPU; null or absent: the whole GPU. */
  gpuInstanceId?: number | null;
  /** The share of its GPU its place is, for GPU time: a MIG slice's compute slices of the GPU's (3/7 for a 3g slice); absent: 1. */
  gpuShare?: number;
}

/** A sample's contribution to each figure; a group is this sample's job, user or GPU on its GPU in its tick. */
export interface Contribution {
  /** On its job's first sample on this GPU in this tick: the job's share of the GPU's dt (dt / jobs on the GPU), else 0. */
  gpuSJob: number;
  /** On its user's first sample on this GPU in this tick: the user's jobs' shares (dt × their jobs / jobs on the GPU), else 0. */
  gpuSUser: number;
  /** dt if it is the first sample on this GPU in this tick, else 0. */
  gpuSGpu: number;
  /** SM% × dt / 100 (SM-seconds; additive across processes, jobs, users and GPUs). */
  smS: number;
  /** memory held / 2^30 × dt / 3600 (GiB-hours; additive). */
  memGiBH: number;
  /** Its job's total memory on this GPU in this tick, on the job's first sample (else 0); the peak is the max. */
  peakJob: number;
  /** Its user's total memory on this GPU in this tick, on the user's first sample (else 0). */
  peakUser: number;
  /** The GPU's total process memory in this tick, on the GPU's first sample (else 0). */
  peakGpu: number;
  /** dt if its GPU is contended (≥ 2 jobs running kernels) and it is its job's first busy sample there, else 0. */
  contSJob: number;
  /** dt if its GPU is contended and it is its user's first busy sample there, else 0. */
  contSUser: number;
  /** dt if its GPU is contended and it is the GPU's first busy sample, else 0. */
  contSGpu: number;
}

export const CONTRIBUTION_FIELDS = [
  'gpuSJob', 'gpuSUser', 'gpuSGpu', 'smS', 'memGiBH', 'peakJob', 'peakUser', 'peakGpu', 'contSJob', 'contSUser', 'contSGpu',
] as const satisfies ReadonlyArray<keyof Contribution>;
/** Fields combined by max (the rest by sum). */
export const PEAK_FIELDS: ReadonlySet<keyof Contribution> = new Set(['peakJob', 'peakUser', 'peakGpu']);

/** Which "first of its group in this tick" a sample is (the group's dt is counted on that sample only). */
export const FLAGS = { firstOfJob: 1, firstOfUser: 2, firstOfGpu: 4, firstBusyOfJob: 8, firstBusyOfUser: 16, firstBusyOfGpu: 32, contended: 64 } as const;

/**
 * GPU time is shared out: a GPU in use for dt by n jobs gives each dt / n, so a day's GPU time is the
 * same summed by job, by user or by GPU. The counts ride in the flags (the samples table has no other
 * room): jobs on the GPU in bits 8–18, the user's jobs there in bits 19–29. Rows written before they were
 * stored read as 0, taken as 1: their old meaning (dt once per group). On a GPU with MIG slices in use each
 * slice is shared out at its share of the GPU instead, and the sample stores the seconds (shareGpuTime).
 */
export const SHARE_BITS = { jobsShift: 8, userJobsShift: 19, mask: 2047 } as const;
export const MAX_JOBS_PER_GPU = SHARE_BITS.mask;

const jobsOnGpu = (flags: number): number => Math.max(1, (flags >> SHARE_BITS.jobsShift) & SHARE_BITS.mask);
const userJobsOnGpu = (flags: number): number => Math.max(1, (flags >> SHARE_BITS.userJobsShift) & SHARE_BITS.mask);

/** A raw sample as stored: the process reading, its interval and its place in the tick's groups. */
export interface AccountedSample extends ProcessSample {
  /** The tick's time, ms since the epoch; the sample covers (t − dt, t]. */
  t: number;
  /** Seconds this sample accounts for. */
  dt: number;
  /** FLAGS bits. */
  flags: number;
  /** Its job's / user's / GPU's total memory on this GPU in this tick, on that group's first sample (else 0). */
  peakJob: number;
  peakUser: number;
  peakGpu: number;
  /**
   * Its job's, user's and GPU's GPU-seconds on this GPU in this tick, on that group's first sample (else 0), where a MIG
   * slice of its GPU is in use: each slice shared out among the jobs on it, at its share of the GPU. Null on a GPU without
   * slices in use, and in rows stored before they were kept: the flags' counts then say (dt shared among the GPU's jobs).
   */
  gpuSJob: number | null;
  gpuSUser: number | null;
  gpuSGpu: number | null;
}

/** What one raw sample contributes. CONTRIBUTION_SQL below is the same, field by field, over a stored row. */
export function contribution(s: AccountedSample): Contribution {
  const contended = (s.flags & FLAGS.contended) !== 0;
  return {
    gpuSJob: s.gpuSJob ?? (s.flags & FLAGS.firstOfJob ? s.dt / jobsOnGpu(s.flags) : 0), // the job's share of the GPU for dt
    gpuSUser: s.gpuSUser ?? (s.flags & FLAGS.firstOfUser ? (s.dt * userJobsOnGpu(s.flags)) / jobsOnGpu(s.flags) : 0), // its jobs' shares
    gpuSGpu: s.gpuSGpu ?? (s.flags & FLAGS.firstOfGpu ? s.dt : 0), // the GPU was in use for dt
    smS: ((s.smPercent ?? 0) * s.dt) / 100, // SM-seconds: SM% × dt / 100
    memGiBH: (((s.usedMemory ?? 0) / GIB) * s.dt) / 3600, // GiB-hours: memory × dt
    peakJob: s.peakJob, // the job's memory on this GPU now (max is the peak)
    peakUser: s.peakUser,
    peakGpu: s.peakGpu,
    contSJob: contended && s.flags & FLAGS.firstBusyOfJob ? s.dt : 0, // the job ran kernels on a contended GPU for dt
    contSUser: contended && s.flags & FLAGS.firstBusyOfUser ? s.dt : 0,
    contSGpu: contended && s.flags & FLAGS.firstBusyOfGpu ? s.dt : 0,
  };
}

const ifFlag = (bit: number): string => `(CASE WHEN flags & ${bit} THEN dt ELSE 0 END)`;
const ifContended = (bit: number): string => `(CASE WHEN flags & ${FLAGS.contended} AND flags & ${bit} THEN dt ELSE 0 END)`;

const JOBS_SQL = `max(1, (flags >> ${SHARE_BITS.jobsShift}) & ${SHARE_BITS.mask})`;
const USER_JOBS_SQL = `max(1, (flags >> ${SHARE_BITS.userJobsShift}) & ${SHARE_BITS.mask})`;

/** contribution() as SQL over a row of the samples table: the same operations in the same order, so the same floats. */
export const CONTRIBUTION_SQL: Record<keyof Contribution, string> = {
  gpuSJob: `coalesce(gpuSJob, (CASE WHEN flags & ${FLAGS.firstOfJob} THEN dt / ${JOBS_SQL} ELSE 0 END))`,
  gpuSUser: `coalesce(gpuSUser, (CASE WHEN flags & ${FLAGS.firstOfUser} THEN (dt * ${USER_JOBS_SQL}) / ${JOBS_SQL} ELSE 0 END))`,
  gpuSGpu: `coalesce(gpuSGpu, ${ifFlag(FLAGS.firstOfGpu)})`,
  smS: '((coalesce(smPercent, 0) * dt) / 100)',
  memGiBH: `(((coalesce(usedMemory, 0) / ${GIB}.0) * dt) / 3600)`,
  peakJob: 'peakJob',
  peakUser: 'peakUser',
  peakGpu: 'peakGpu',
  contSJob: ifContended(FLAGS.firstBusyOfJob),
  contSUser: ifContended(FLAGS.firstBusyOfUser),
  contSGpu: ifContended(FLAGS.firstBusyOfGpu),
};

/**
 * Seconds a tick accounts for: the actual time since the previous tick while sampling is continuous
 * (so late and early timer ticks tile time exactly), one nominal interval at the first tick or after
 * a gap (nothing is invented for the time the engine was down).
 */
export function tickSeconds(gapMs: number | null, nominalMs: number): number {
  if (gapMs === null || gapMs <= 0 || gapMs > GAP_FACTOR * nominalMs) return nominalMs / 1000;
  return gapMs / 1000;
}

/**
 * Account one tick. A process listed on a GPU is using it. A GPU is contended in a tick when
 * processes of two or more jobs run kernels on it (SM% > 0). Groups: the sample's job, user and GPU on its GPU.
 */
export function accountTick(t: number, dt: number, samples: readonly ProcessSample[]): AccountedSample[] {
  const memOf = (s: ProcessSample): number => s.usedMemory ?? 0;
  const busy = (s: ProcessSample): boolean => (s.smPercent ?? 0) > 0;
  const totals = new Map<string, number>();
  const busyJobs = new Map<number, Set<string>>();
  /** Distinct jobs per GPU (`g…`) and per user on a GPU (`u…`). */
  const jobCounts = new Map<string, number>();
  const gpuTime = shareGpuTime(dt, samples);
  for (const s of samples) {
    const jobKey = `j\0${s.gpu}\0${s.job}`;
    if (!totals.has(jobKey)) {
      for (const key of [`g\0${s.gpu}`, `u\0${s.gpu}\0${s.user}`]) jobCounts.set(key, (jobCounts.get(key) ?? 0) + 1);
    }
    for (const key of [jobKey, `u\0${s.gpu}\0${s.user}`, `g\0${s.gpu}`]) totals.set(key, (totals.get(key) ?? 0) + memOf(s));
    if (busy(s)) {
      let jobs = busyJobs.get(s.gpu);
      if (!jobs) busyJobs.set(s.gpu, (jobs = new Set()));
      jobs.add(s.job);
    }
  }
  const seen = new Set<string>();
  const seenBusy = new Set<string>();
  const first = (set: Set<string>, key: string): boolean => !set.has(key) && (set.add(key), true);
  return samples.map((s) => {
    const job = `j\0${s.gpu}\0${s.job}`;
    const user = `u\0${s.gpu}\0${s.user}`;
    const gpu = `g\0${s.gpu}`;
    let flags = Math.min(MAX_JOBS_PER_GPU, jobCounts.get(gpu)!) << SHARE_BITS.jobsShift;
    if (first(seen, job)) flags |= FLAGS.firstOfJob;
    if (first(seen, user)) flags |= FLAGS.firstOfUser | (Math.min(MAX_JOBS_PER_GPU, jobCounts.get(user)!) << SHARE_BITS.userJobsShift);
    if (first(seen, gpu)) flags |= FLAGS.firstOfGpu;
    if (busy(s)) {
      if (first(seenBusy, job)) flags |= FLAGS.firstBusyOfJob;
      if (first(seenBusy, user)) flags |= FLAGS.firstBusyOfUser;
      if (first(seenBusy, gpu)) flags |= FLAGS.firstBusyOfGpu;
      if ((busyJobs.get(s.gpu)?.size ?? 0) >= 2) flags |= FLAGS.contended;
    }
    // listed field by field: an object spread here costs ~20× more per sample
    return {
      gpu: s.gpu,
      pid: s.pid,
      user: s.user,
      job: s.job,
      smPercent: s.smPercent,
      usedMemory: s.usedMemory,
      container: s.container ?? NO_CONTAINER,
      t,
      dt,
      flags,
      peakJob: flags & FLAGS.firstOfJob ? totals.get(job)! : 0,
      peakUser: flags & FLAGS.firstOfUser ? totals.get(user)! : 0,
      peakGpu: flags & FLAGS.firstOfGpu ? totals.get(gpu)! : 0,
      gpuSJob: !gpuTime?.gpus.has(s.gpu) ? null : flags & FLAGS.firstOfJob ? gpuTime.seconds.get(job)! : 0,
      gpuSUser: !gpuTime?.gpus.has(s.gpu) ? null : flags & FLAGS.firstOfUser ? gpuTime.seconds.get(user)! : 0,
      gpuSGpu: !gpuTime?.gpus.has(s.gpu) ? null : flags & FLAGS.firstOfGpu ? gpuTime.seconds.get(gpu)! : 0,
    };
  });
}

/**
 * GPU-seconds of one tick by job, user and GPU on each GPU with a MIG slice in use (keys as accountTick's): each
 * place (a slice, or the whole GPU) gives dt × its share of the GPU, shared out among the jobs on it. Null for a
 * GPU without slices in use, whose samples keep null and are counted by the flags' counts (the same figures, stored smaller).
 */
function shareGpuTime(dt: number, samples: readonly ProcessSample[]): { gpus: Set<number>; seconds: Map<string, number> } | null {
  let gpus: Set<number> | null = null;
  for (const s of samples) if (s.gpuInstanceId !== undefined && s.gpuInstanceId !== null) (gpus ??= new Set()).add(s.gpu);
  if (gpus === null) return null;
  const places = new Map<string, { gpu: number; share: number; jobs: Map<string, string> }>();
  for (const s of samples) {
    if (!gpus.has(s.gpu)) continue;
    const key = `${s.gpu}\0${s.gpuInstanceId ?? ''}`;
    let place = places.get(key);
    if (!place) places.set(key, (place = { gpu: s.gpu, share: s.gpuShare ?? 1, jobs: new Map() }));
    place.jobs.set(s.job, s.user);
  }
  const seconds = new Map<string, number>();
  const add = (key: string, value: number): void => void seconds.set(key, (seconds.get(key) ?? 0) + value);
  for (const place of places.values()) {
    const each = (dt * place.share) / place.jobs.size;
    add(`g\0${place.gpu}`, dt * place.share);
    for (const [job, user] of place.jobs) {
      add(`j\0${place.gpu}\0${job}`, each);
      add(`u\0${place.gpu}\0${user}`, each);
    }
  }
  return { gpus, seconds };
}

/** Combine contributions (a rollup of several samples, or of several rollups): sums, and maxima for peaks. */
export function addContribution(into: Contribution, c: Contribution): void {
  // field by field rather than a loop over names: this runs for every sample of every flush
  into.gpuSJob += c.gpuSJob;
  into.gpuSUser += c.gpuSUser;
  into.gpuSGpu += c.gpuSGpu;
  into.smS += c.smS;
  into.memGiBH += c.memGiBH;
  if (c.peakJob > into.peakJob) into.peakJob = c.peakJob;
  if (c.peakUser > into.peakUser) into.peakUser = c.peakUser;
  if (c.peakGpu > into.peakGpu) into.peakGpu = c.peakGpu;
  into.contSJob += c.contSJob;
  into.contSUser += c.contSUser;
  into.contSGpu += c.contSGpu;
}

export const emptyContribution = (): Contribution => ({
  gpuSJob: 0, gpuSUser: 0, gpuSGpu: 0, smS: 0, memGiBH: 0, peakJob: 0, peakUser: 0, peakGpu: 0, contSJob: 0, contSUser: 0, contSGpu: 0,
});

/** A sample that ran in no container; rows stored before containers were kept read '?'. */
export const NO_CONTAINER = '-';

/** The contribution columns a report by user, job, container or GPU reads. */
export const FIGURES_BY = {
  job: { gpuS: 'gpuSJob', peak: 'peakJob', contS: 'contSJob' },
  // a container's jobs' shares add up; its peak is its largest job's, its contention counts each busy job's dt
  container: { gpuS: 'gpuSJob', peak: 'peakJob', contS: 'contSJob' },
  user: { gpuS: 'gpuSUser', peak: 'peakUser', contS: 'contSUser' },
  gpu: { gpuS: 'gpuSGpu', peak: 'peakGpu', contS: 'contSGpu' },
} as const satisfies Record<string, Record<string, keyof Contribution>>;
