// The box daemon's configuration and lab policy (/etc/gpushare/config.json): the shape,
// checked key by key, so a bad file is an error naming the key and nothing half-applies.
import { PRIORITIES, parseByteSize, type Priority } from './jobs.js';
import { parseSlurmConfig, slurmConfigSchema, type SlurmConfig } from './slurm.js';
import { array, boolean, nullable, number, object, oneOf, optional, string, ValidationError, type Infer, type Schema } from './schema.js';

export const DEFAULT_ADMIN_GROUP = 'gpushare-admin';

const accountName = string({ min: 1, max: 64, pattern: /^[A-Za-z_][A-Za-z0-9_.-]*\$?$/, describe: 'a user or group name' });

/** A memory size: bytes, or "40G" (K/M/G/T are powers of 1024). */
const memorySizeText = string({ min: 1, max: 32 });
const memorySizeBytes = number({ integer: true, min: 1, max: 2 ** 53 - 1, unit: 'bytes' });
const memorySize: Schema<number> = {
  info: { type: 'either', options: [memorySizeText, memorySizeBytes] },
  parse(value, path = '') {
    if (typeof value === 'string') {
      memorySizeText.parse(value, path);
      try {
        return parseByteSize(value);
      } catch (error) {
        throw new ValidationError(path, (error as Error).message);
      }
    }
    return memorySizeBytes.parse(value, path);
  },
};

/**
 * Limits for one user, one group, or (neither named) everyone. A field a user's own entry
 * leaves out comes from the strictest of their groups' entries that set it, then everyone's.
 */
export const labLimitSchema = object({
  user: optional(accountName),
  group: optional(accountName),
  /** GPUs their running jobs may occupy at once. */
  maxGpus: optional(number({ integer: true, min: 0, max: 64 })),
  /** GPU memory their managed jobs may hold (the sum of quotas, or of usage where no quota). */
  maxMemory: optional(memorySize),
  /** Managed high-priority jobs running at once. */
  maxHighPriorityJobs: optional(number({ integer: true, min: 0, max: 10_000 })),
  /** High-priority GPU-hours per day (the last 24 h); past it, new high-priority jobs run as normal. */
  highPriorityGpuHoursPerDay: optional(number({ min: 0, max: 24 * 64, unit: 'GPU-hours' })),
  /** The priority their unmanaged GPU processes get. */
  defaultPriority: optional(oneOf(PRIORITIES)),
});
export type LabLimit = Infer<typeof labLimitSchema>;

export const fairShareSchema = object({
  enabled: optional(boolean()),
  /** Usage this many hours old counts half. */
  halfLifeHours: optional(number({ min: 0.1, max: 24 * 365, unit: 'hours' })),
});

export const idleHoldersSchema = object({
  /** A process holding GPU memory with no SM activity this long is reported to its owner. */
  notifyAfterMinutes: optional(number({ min: 1, max: 7 * 24 * 60, unit: 'minutes' })),
  /** And, when park is on, parked this long after the notice. */
  graceMinutes: optional(number({ min: 0, max: 7 * 24 * 60, unit: 'minutes' })),
  park: optional(boolean()),
});

export const labPolicySchema = object({
  limits: optional(array(labLimitSchema, { max: 1000 })),
  fairShare: optional(fairShareSchema),
  idleHolders: optional(idleHoldersSchema),
});
export type LabPolicyInput = Infer<typeof labPolicySchema>;

/** What the daemon's socket clients may hold of it: connections, and answers written to them they have not read. */
export const connectionLimitsSchema = object({
  /** Connections one user may have open at once (root is never refused). */
  perUser: optional(number({ integer: true, min: 1, max: 100_000 })),
  /** Connections of all users together. */
  total: optional(number({ integer: true, min: 1, max: 1_000_000 })),
  /** Bytes written to one user's connections and not yet read, all of them together. */
  unreadBytesPerUser: optional(memorySize),
  /** The same, every user's together. */
  unreadBytesTotal: optional(memorySize),
});
export type ConnectionLimits = Required<Infer<typeof connectionLimitsSchema>>;

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { perUser: 64, total: 1024, unreadBytesPerUser: 64 * 1024 ** 2, unreadBytesTotal: 512 * 1024 ** 2 };

export function parseConnectionLimits(value: unknown, path = 'connections'): ConnectionLimits {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...connectionLimitsSchema.parse(value ?? {}, path) };
  if (limits.perUser > limits.total) throw new ValidationError(`${path}.perUser`, `is ${limits.perUser}, more than ${path}.total (${limits.total}): one user could hold every connection`);
  if (limits.unreadBytesPerUser > limits.unreadBytesTotal) throw new ValidationError(`${path}.unreadBytesPerUser`, `is ${limits.unreadBytesPerUser} bytes, more than ${path}.unreadBytesTotal (${limits.unreadBytesTotal})`);
  return limits;
}

/** A box's name as people say it: a host name's letters, digits, dots, dashes and underscores. */
export const boxNameSchema = string({ min: 1, max: 63, pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/, describe: 'a box name (letters, digits, ".", "-", "_"), like "gpu3"' });

export const daemonConfigSchema = object({
  /** Members of this group may act on anyone's jobs and change the box (root always may). */
  adminGroup: optional(accountName),
  /** Samples per second. */
  rateHz: optional(number({ min: 0.2, max: 10, unit: 'Hz' })),
  /** Serve Prometheus metrics at [ADDR:]PORT (the engine checks the address); null: none. */
  metrics: optional(nullable(string({ min: 1, max: 64, describe: 'a port or ADDRESS:PORT, like "9400" or "0.0.0.0:9400"' }))),
  /** The box's name in its metrics (gpushare_engine_info's `box` label); null or absent: the host name. */
  boxName: optional(nullable(boxNameSchema)),
  policy: optional(labPolicySchema),
  /** Park a managed job idle this long when a queued job needs its memory; it comes back on its next CUDA call. Absent or null: off. */
  autoParkIdleSeconds: optional(nullable(number({ integer: true, min: 10, max: 86_400, unit: 's' }))),
  connections: optional(connectionLimitsSchema),
  /** Jobs one user may have queued at once (administrators too); a submission past it is refused. */
  maxQueuedJobsPerUser: optional(number({ integer: true, min: 1, max: 100_000, unit: 'jobs' })),
  /** Slurm jobs on this node: the lane each QOS (else partition) starts in. */
  slurm: optional(slurmConfigSchema),
});
export type DaemonConfigInput = Infer<typeof daemonConfigSchema>;

/** The policy with every default filled in: what the daemon enforces and the console shows. */
export interface LabPolicy {
  limits: LabLimit[];
  fairShare: { enabled: boolean; halfLifeHours: number };
  idleHolders: { notifyAfterMinutes: number; graceMinutes: number; park: boolean };
}

export interface DaemonConfig {
  adminGroup: string;
  rateHz: number;
  /** Where the metrics endpoint listens ([ADDR:]PORT); null: no endpoint. */
  metrics: string | null;
  /** The box's name in its metrics; null: the host name. */
  boxName: string | null;
  policy: LabPolicy;
  /** Idle memory given back after this long (auto-park); absent: off. */
  autoParkIdleSeconds?: number;
  /** What each user's clients may hold of the daemon, and all of them together. */
  connections: ConnectionLimits;
  /** Jobs one user may have queued at once. */
  maxQueuedJobsPerUser: number;
  /** Slurm jobs' lanes by QOS and partition. */
  slurm: SlurmConfig;
}

/** Enough for a sweep of runs; few enough that no user's queue slows the box for others. */
export const DEFAULT_MAX_QUEUED_JOBS_PER_USER = 100;

export const DEFAULT_LAB_POLICY: LabPolicy = {
  limits: [],
  fairShare: { enabled: true, halfLifeHours: 24 },
  idleHolders: { notifyAfterMinutes: 30, graceMinutes: 30, park: false },
};

/** A limit entry names a user or a group or neither, never both. */
function checkLimits(limits: readonly LabLimit[], path: string): void {
  limits.forEach((limit, i) => {
    if (limit.user !== undefined && limit.group !== undefined) throw new ValidationError(`${path}[${i}]`, 'names both a user and a group: one entry is for one of them (or, naming neither, for everyone)');
  });
}

export function parseLabPolicy(value: unknown, path = 'policy'): LabPolicy {
  const input = labPolicySchema.parse(value ?? {}, path);
  const limits = input.limits ?? [];
  checkLimits(limits, `${path}.limits`);
  return {
    limits,
    fairShare: { ...DEFAULT_LAB_POLICY.fairShare, ...input.fairShare },
    idleHolders: { ...DEFAULT_LAB_POLICY.idleHolders, ...input.idleHolders },
  };
}

/** Check a whole config file's content; throws a ValidationError naming the key. */
export function parseDaemonConfig(value: unknown): DaemonConfig {
  const input = daemonConfigSchema.parse(value, '');
  return {
    adminGroup: input.adminGroup ?? DEFAULT_ADMIN_GROUP,
    rateHz: input.rateHz ?? 1,
    metrics: input.metrics ?? null,
    boxName: input.boxName ?? null,
    policy: parseLabPolicy(input.policy ?? {}, 'policy'),
    ...(input.autoParkIdleSeconds ? { autoParkIdleSeconds: input.autoParkIdleSeconds } : {}),
    connections: parseConnectionLimits(input.connections, 'connections'),
    maxQueuedJobsPerUser: input.maxQueuedJobsPerUser ?? DEFAULT_MAX_QUEUED_JOBS_PER_USER,
    slurm: parseSlurmConfig(input.slurm, 'slurm'),
  };
}

/** The numeric limits, in the order the console lists them. */
export const LIMIT_KEYS = ['maxGpus', 'maxMemory', 'maxHighPriorityJobs', 'highPriorityGpuHoursPerDay'] as const;
export type LimitKey = (typeof LIMIT_KEYS)[number];

/** One limit as it applies to an account, and the entry it comes from ("user alice", "group students", "everyone"). */
export interface ResolvedLimit<T> {
  value: T;
  from: string;
}
export type ResolvedLimits = { [K in LimitKey]?: ResolvedLimit<number> } & { defaultPriority?: ResolvedLimit<Priority> };

/**
 * The limits that apply to one account and where each comes from: its own entries' fields, then
 * the strictest of its groups' entries (the lowest number, the lowest default priority), then everyone's.
 */
export function resolveLimits(policy: LabPolicy, user: string, groups: readonly string[]): ResolvedLimits {
  const tiers: Array<Array<{ entry: LabLimit; from: string }>> = [
    policy.limits.filter((l) => l.user === user).map((entry) => ({ entry, from: `user ${user}` })),
    policy.limits.filter((l) => l.group !== undefined && groups.includes(l.group)).map((entry) => ({ entry, from: `group ${entry.group}` })),
    policy.limits.filter((l) => l.user === undefined && l.group === undefined).map((entry) => ({ entry, from: 'everyone' })),
  ];
  const strictest = <T>(value: (e: LabLimit) => T | undefined, stricter: (a: T, b: T) => boolean): ResolvedLimit<T> | undefined => {
    for (const tier of tiers) {
      let best: ResolvedLimit<T> | undefined;
      for (const { entry, from } of tier) {
        const v = value(entry);
        if (v !== undefined && (best === undefined || stricter(v, best.value))) best = { value: v, from };
      }
      if (best) return best;
    }
    return undefined;
  };
  const out: ResolvedLimits = {};
  for (const key of LIMIT_KEYS) {
    const limit = strictest((e) => e[key], (a, b) => a < b);
    if (limit) out[key] = limit;
  }
  const rank = (p: Priority): number => PRIORITIES.indexOf(p);
  const priority = strictest((e) => e.defaultPriority, (a, b) => rank(a) > rank(b));
  if (priority) out.defaultPriority = priority;
  return out;
}

/** The policy as an API parameter: what a config file may say, checked as the file is (the handler gets it with defaults filled in). */
export const labPolicyValue: Schema<LabPolicyInput> = { info: { type: 'either', options: [labPolicySchema] }, parse: (value, path = 'policy') => parseLabPolicy(value, path) };

/** What `policy.get` answers: the lab's rules, and where the caller stands under them. */
export interface LabPolicyStatus {
  /** False in a personal engine: no lab policy applies (only the box daemon enforces one). */
  enforced: boolean;
  policy: LabPolicy;
  /** The caller may change it (policy.set). */
  mayChange: boolean;
  /** Who may change it, in words. */
  administrators: string;
  you: {
    user: string;
    groups: string[];
    limits: ResolvedLimits;
    /** What the caller's jobs hold now, as the limits count it. */
    using: { gpus: number; memoryBytes: number; highPriorityJobs: number };
    /** High-priority GPU-hours in the last 24 h. */
    highPriorityGpuHoursToday: number;
  };
  /** Every user with recent usage (and the caller), least first: the queue's order between users. */
  fairShare: Array<{ user: string; gpuHours: number; rank: number }>;
  /** When the usage figures were read from the store (ms); null: not yet, or no store. */
  usageAsOf: number | null;
}
