// The box daemon's configuration and lab policy (/etc/gpushare/config.json): the shape,
// checked key by key, so a bad file is an error naming the key and nothing half-applies.
import { PRIORITIES, parseByteSize, type Priority } from './jobs.js';
import { array, boolean, number, object, oneOf, optional, string, ValidationError, type Infer, type Schema } from './schema.js';

export const DEFAULT_ADMIN_GROUP = 'gpushare-admin';

const accountName = string({ min: 1, max: 64, pattern: /^[A-Za-z_][A-Za-z0-9_.-]*\$?$/, describe: 'a user or group name' });

/** A memory size: bytes, or "40G" (K/M/G/T are powers of 1024). */
const memorySize: Schema<number> = {
  parse(value, path = '') {
    if (typeof value === 'string') {
      try {
        return parseByteSize(value);
      } catch (error) {
        throw new ValidationError(path, (error as Error).message);
      }
    }
    return number({ integer: true, min: 1, max: 2 ** 53 - 1, unit: 'bytes' }).parse(value, path);
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

export const daemonConfigSchema = object({
  /** Members of this group may act on anyone's jobs and change the box (root always may). */
  adminGroup: optional(accountName),
  /** Samples per second. */
  rateHz: optional(number({ min: 0.2, max: 10, unit: 'Hz' })),
  policy: optional(labPolicySchema),
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
  policy: LabPolicy;
}

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
    policy: parseLabPolicy(input.policy ?? {}, 'policy'),
  };
}

/** The limits that apply to one account: its own entry's fields, then the strictest of its groups', then everyone's. */
export function limitsFor(policy: LabPolicy, user: string, groups: readonly string[]): Omit<LabLimit, 'user' | 'group'> {
  const own = policy.limits.filter((l) => l.user === user);
  const ofGroups = policy.limits.filter((l) => l.group !== undefined && groups.includes(l.group));
  const everyone = policy.limits.filter((l) => l.user === undefined && l.group === undefined);
  const numeric = ['maxGpus', 'maxMemory', 'maxHighPriorityJobs', 'highPriorityGpuHoursPerDay'] as const;
  const out: Omit<LabLimit, 'user' | 'group'> = {};
  for (const key of numeric) {
    const pick = (entries: LabLimit[]): number | undefined => {
      const values = entries.map((e) => e[key]).filter((v): v is number => v !== undefined);
      return values.length ? Math.min(...values) : undefined;
    };
    const value = pick(own) ?? pick(ofGroups) ?? pick(everyone);
    if (value !== undefined) out[key] = value;
  }
  const rank = (p: Priority): number => PRIORITIES.indexOf(p);
  const lowest = (entries: LabLimit[]): Priority | undefined =>
    entries.map((e) => e.defaultPriority).filter((p): p is Priority => p !== undefined).sort((a, b) => rank(b) - rank(a))[0];
  const priority = lowest(own) ?? lowest(ofGroups) ?? lowest(everyone);
  if (priority !== undefined) out.defaultPriority = priority;
  return out;
}
