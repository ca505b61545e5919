// The one API between the engine and its clients (the console over IPC or WebSocket,
// the CLI over the unix socket). Every request is checked against these schemas first.
import { consolePreferencesSchema, type ConsolePreferences } from './settings.js';
import { PRIORITIES, SHARING_MODES, type Alert, type AlertKind, type AuditEntry, type EngineKind, type JobView } from './jobs.js';
import { array, boolean, nullable, number, object, oneOf, optional, string, union, type Infer, type Schema } from './schema.js';
import { labPolicyValue, type LabPolicyStatus } from './lab-policy.js';
import { RECENT_SAMPLES_MAX_SECONDS, type RecentSamples } from './recent-samples.js';
import type { Snapshot } from './snapshot.js';
import type { StoreStatus } from './store-status.js';
import type { MigApplyResult, MigLayoutView, MpsGpuStatus } from './spatial.js';
import { slurmEpilogSchema, slurmPrologSchema, type SlurmEpilogResult, type SlurmJobView } from './slurm.js';
import { REPORT_EXPORT_FORMATS, REPORT_GROUPINGS, type ReportFile, type UsageReport } from './usage-report.js';

/** The most audit entries one audit.list answers (a page of rows of at most ~3 KB each). */
export const AUDIT_PAGE_MAX = 1000;

const jobId = string({ max: 24, pattern: /^(j\d+|p\d+)$/, describe: 'a job id like "j12" (managed) or "p4242" (a process)' });
const gpuIndex = number({ integer: true, min: 0, max: 63 });
const bytes = number({ integer: true, min: 0, max: 2 ** 50, unit: 'bytes' }); // 1 PiB
const mpsShare = number({ integer: true, min: 1, max: 100, unit: '%' });
/** One argument or environment entry (Linux refuses longer ones at exec: MAX_ARG_STRLEN). */
const ARGUMENT_MAX = 128 * 1024;
const PATH_MAX = 4096;
/** The earliest and latest time a report may name (2000-01-01, 2100-01-01). */
export const REPORT_EARLIEST = Date.UTC(2000, 0, 1);
export const REPORT_LATEST = Date.UTC(2100, 0, 1);
/** A report's bounds (the engine also keeps `until` within a day of now and the span within what the store keeps). */
const reportTime = number({ integer: true, min: REPORT_EARLIEST, max: REPORT_LATEST, unit: 'ms since the epoch', describeBound: (n) => new Date(n).toISOString().slice(0, 10) });
const migSlice = string({ max: 128, pattern: /^MIG-[0-9A-Za-z/-]+$/, describe: 'a MIG slice UUID ("MIG-…")' });

/** Every alert kind (the same list as AlertKind in jobs.ts). */
export const ALERT_KINDS = ['contention', 'quota', 'out-of-memory', 'waiting', 'finished', 'failed', 'suspended', 'resumed', 'parked', 'gpu-lost', 'idle'] as const satisfies readonly AlertKind[];
export const SEVERITIES = ['info', 'warning', 'error'] as const;

/** A condition that holds now (a GPU is lost, two jobs contend): the tray and the console show these; an alert is a condition's onset. */
export const activeConditionSchema = object({
  kind: oneOf(ALERT_KINDS),
  severity: oneOf(SEVERITIES),
  gpu: nullable(gpuIndex),
  jobId: nullable(jobId),
  message: string({ min: 1 }), // the engine's own sentence (not a client's field): a process's argv[0] in it may be long
});
export type ActiveCondition = Infer<typeof activeConditionSchema>;

export const apiSchemas = {
  'snapshot.latest': object({}),
  /** The samples the engine holds from the last `seconds` (at most 600): a console's timelines start from them. */
  'samples.recent': object({ seconds: optional(number({ integer: true, min: 1, max: RECENT_SAMPLES_MAX_SECONDS, unit: 's' })) }),
  'jobs.list': object({ includeFinished: optional(boolean()) }),
  'jobs.submit': object({
    argv: array(string({ min: 1, max: ARGUMENT_MAX }), { min: 1, max: 4096 }),
    cwd: optional(string({ min: 1, max: PATH_MAX })),
    gpu: union(gpuIndex, oneOf(['auto'] as const), 'a GPU index or "auto"'),
    priority: optional(oneOf(PRIORITIES)),
    memoryQuotaBytes: optional(nullable(bytes)),
    memoryRequestBytes: optional(nullable(bytes)),
    mode: optional(oneOf(SHARING_MODES)),
    /** MPS mode: the job's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (required there); its quota becomes the pinned memory limit. */
    mpsSharePercent: optional(mpsShare),
    /** MIG mode: the slice to run in (required there); the job sees only it (CUDA_VISIBLE_DEVICES=MIG-…). */
    migSlice: optional(migSlice),
    /** Never park it to give its idle memory to another job (automatic parking skips it). */
    keepResident: optional(boolean()),
    /** The submitter's environment as NAME=value entries (the CLI sends its own); default: the engine's. */
    env: optional(array(string({ max: ARGUMENT_MAX, pattern: /^[A-Za-z_][A-Za-z0-9_]*=/, describe: 'an environment entry NAME=value' }), { max: 4096 })),
  }),
  'jobs.setPriority': object({ job: jobId, priority: oneOf(PRIORITIES) }),
  'jobs.setQuota': object({ job: jobId, bytes: nullable(bytes) }),
  'jobs.setMode': object({
    job: jobId,
    mode: oneOf(SHARING_MODES),
    mpsSharePercent: optional(mpsShare),
    migSlice: optional(migSlice),
  }),
  'jobs.place': object({ job: jobId, gpu: gpuIndex }),
  'jobs.suspend': object({ job: jobId }),
  'jobs.resume': object({ job: jobId }),
  'jobs.park': object({ job: jobId }),
  'jobs.unpark': object({ job: jobId }),
  'jobs.terminate': object({ job: jobId }),
  'alerts.list': object({}),
  /** The conditions that hold now (the 'conditions' event sends the same list whenever it changes). */
  'alerts.active': object({}),
  /** One page of the audit log, newest first: at most `limit` entries older than the cursor `before` (an entry's id). */
  'audit.list': object({ limit: optional(number({ integer: true, min: 1, max: AUDIT_PAGE_MAX })), before: optional(number({ integer: true, min: 1, max: Number.MAX_SAFE_INTEGER })) }),
  'sampler.setRate': object({ hz: number({ min: 0.2, max: 10, unit: 'Hz' }) }),
  /** Who the engine takes this connection to be (the console's "mine" filter). */
  'session.whoami': object({}),
  /** Stop this personal engine as SIGTERM does (`gpushare stop`): only its own user may; the box daemon refuses. */
  'engine.stop': object({}),
  /** Per GPU: is an MPS daemon running, and whose ("MPS held by user NAME")? */
  'mps.status': object({}),
  /** Start (or stop) the engine's MPS control daemon for one GPU; refused while another user's holds the box. */
  'mps.start': object({ gpu: gpuIndex }),
  /** With gpuInstanceId: the daemon inside that MIG slice of the GPU (a slice whose daemon runs is kept by mig apply). */
  'mps.stop': object({ gpu: gpuIndex, gpuInstanceId: optional(number({ integer: true, min: 0, max: 1000 })) }),
  /** A GPU's MIG layout: GPU/compute instances, profiles, placements and the processes in each slice. */
  'mig.layout': object({ gpu: gpuIndex }),
  /**
   * Plan a layout for a job mix (jobs: "30G,10G:0.2,20G@high", as `gpushare mig plan`) or take one
   * (layout: ["3g.40gb@4", "2g.20gb"]), then apply it when the slices it changes are idle and the engine may.
   */
  'mig.apply': object({
    gpu: gpuIndex,
    jobs: optional(string({ min: 1, max: 512, describe: 'job specs MEMORY[:SMSHARE][@PRIORITY], comma-separated' })),
    layout: optional(array(string({ max: 32, pattern: /^[0-9a-z.+]+(@[0-7])?$/, describe: 'a MIG profile, optionally @START, e.g. "3g.40gb@4"' }), { min: 1, max: 7 })),
    dryRun: optional(boolean()),
  }),
  /** Usage by user, job, GPU or container over [since, until) (ms since the epoch; until defaults to now). */
  'reports.query': object({
    since: reportTime,
    until: optional(reportTime),
    by: oneOf(REPORT_GROUPINGS),
  }),
  /** The same report as a file (HTML with charts, CSV or JSON), for the console to save. */
  'reports.export': object({
    since: reportTime,
    until: optional(reportTime),
    by: oneOf(REPORT_GROUPINGS),
    format: oneOf(REPORT_EXPORT_FORMATS),
  }),
  /** The lab policy, the caller's limits under it, their fair-share usage and rank. */
  'policy.get': object({}),
  /** Is usage being recorded, and if not why and where. */
  'store.status': object({}),
  /** Replace the lab policy (administrators only): checked whole, kept in the daemon's config, then applied. */
  'policy.set': object({ policy: labPolicyValue }),
  /** The console's remembered choices (timeline window, filters, window size): the caller's own, in their config file. */
  'settings.get': object({}),
  /** Keep the console's choices: those given replace the kept ones (null clears a filter); the result is all of them. */
  'settings.set': object({ preferences: consolePreferencesSchema }),
  /** `gpushare enrol -- CMD`: the options its command enrols with, kept for the calling process (the kernel's pid) while it runs. */
  'enrol.register': object({ priority: optional(oneOf(PRIORITIES)), memoryQuotaBytes: optional(nullable(bytes)), keepResident: optional(boolean()) }),
  /** Slurm's prolog (root, on the node): a job Slurm placed here, to be enforced when its tasks enrol (administrators only). */
  'slurm.prolog': slurmPrologSchema,
  /** Slurm's epilog: the job ended; its record is closed, its holds let go, its usage written (administrators only). */
  'slurm.epilog': slurmEpilogSchema,
  /** The Slurm jobs this box knows, running or ended since the daemon started. */
  'slurm.jobs': object({}),
} satisfies Record<string, Schema<unknown>>;

export type ApiMethod = keyof typeof apiSchemas;

/**
 * Whether each method only reads or asks for a change: changes are written to the audit log, reads
 * never. The compiler holds every method to one entry here, so a new method cannot be left out.
 */
export const METHOD_KINDS = {
  'snapshot.latest': 'read',
  'samples.recent': 'read',
  'jobs.list': 'read',
  'jobs.submit': 'change',
  'jobs.setPriority': 'change',
  'jobs.setQuota': 'change',
  'jobs.setMode': 'change',
  'jobs.place': 'change',
  'jobs.suspend': 'change',
  'jobs.resume': 'change',
  'jobs.park': 'change',
  'jobs.unpark': 'change',
  'jobs.terminate': 'change',
  'alerts.list': 'read',
  'alerts.active': 'read',
  'audit.list': 'read',
  'sampler.setRate': 'change',
  'session.whoami': 'read',
  'engine.stop': 'change',
  'mps.status': 'read',
  'mps.start': 'change',
  'mps.stop': 'change',
  'mig.layout': 'read',
  'mig.apply': 'change',
  'reports.query': 'read',
  'reports.export': 'read',
  'policy.get': 'read',
  'store.status': 'read',
  'policy.set': 'change',
  'settings.get': 'read',
  'settings.set': 'change',
  'enrol.register': 'change',
  'slurm.prolog': 'change',
  'slurm.epilog': 'change',
  'slurm.jobs': 'read',
} as const satisfies Record<ApiMethod, 'read' | 'change'>;

export const isReadMethod = (method: ApiMethod): boolean => METHOD_KINDS[method] === 'read';
export type ApiParams<M extends ApiMethod> = Infer<(typeof apiSchemas)[M]>;

export interface ApiResults {
  'snapshot.latest': Snapshot | null;
  'samples.recent': RecentSamples;
  'jobs.list': JobView[];
  'jobs.submit': JobView;
  'jobs.setPriority': JobView;
  'jobs.setQuota': JobView;
  'jobs.setMode': JobView;
  'jobs.place': JobView;
  'jobs.suspend': JobView;
  'jobs.resume': JobView;
  'jobs.park': JobView;
  'jobs.unpark': JobView;
  'jobs.terminate': JobView;
  'alerts.list': Alert[];
  'alerts.active': ActiveCondition[];
  'audit.list': AuditEntry[];
  'sampler.setRate': { hz: number };
  'session.whoami': {
    user: string;
    uid: number;
    admin: boolean;
    engine: { kind: EngineKind; owner: string; pid: number };
    /** Other users' gpushare engines on this box: each schedules the GPUs without knowing the others. */
    otherEngines: OtherEngine[];
    /** The browser console this engine serves (with its token); only its own user is told. */
    consoleUrl: string | null;
    /** The caller's connections to the engine's socket and the bytes written to them not yet read, against their bounds (maxOpen null: root, never refused); null: no socket. */
    connections?: { open: number; maxOpen: number | null; unreadBytes: number; maxUnreadBytes: number } | null;
  };
  'engine.stop': { pid: number };
  'reports.query': UsageReport;
  'reports.export': ReportFile;
  'mps.status': MpsGpuStatus[];
  'mps.start': MpsGpuStatus;
  'mps.stop': MpsGpuStatus;
  'mig.layout': MigLayoutView;
  'mig.apply': MigApplyResult;
  'policy.get': LabPolicyStatus;
  'store.status': StoreStatus;
  'policy.set': LabPolicyStatus;
  'settings.get': ConsolePreferences;
  'settings.set': ConsolePreferences;
  'enrol.register': { pid: number };
  'slurm.prolog': SlurmJobView;
  'slurm.epilog': SlurmEpilogResult;
  'slurm.jobs': SlurmJobView[];
}

/** How another engine on the box was started: `gpushare serve|start|engine|daemon`, or the packaged desktop app. */
export type OtherEngineKind = 'serve' | 'start' | 'engine' | 'daemon' | 'app';
export interface OtherEngine {
  user: string;
  pid: number;
  kind: OtherEngineKind;
}

/** What the engine pushes to every client. */
export interface ApiEvents {
  snapshot: Snapshot;
  jobs: JobView[];
  alert: Alert;
  /** The active conditions, whenever the list changes. */
  conditions: ActiveCondition[];
  /** The usage store's status, whenever recording stops, changes why, starts dropping, or resumes. */
  store: StoreStatus;
}
export type ApiEvent = keyof ApiEvents;

export const isApiMethod = (name: unknown): name is ApiMethod => typeof name === 'string' && Object.hasOwn(apiSchemas, name);

/** The typed surface every transport offers the renderer and the CLI. */
export interface GpushareApi {
  call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]>;
  on<E extends ApiEvent>(event: E, listener: (data: ApiEvents[E]) => void): () => void;
}

// Wire messages (JSON), the same on the unix socket, the WebSocket and Electron IPC.
export interface RequestMessage {
  kind: 'request';
  id: number;
  method: string;
  params: unknown;
}
export type ResponseMessage =
  | { kind: 'response'; id: number; ok: true; result: unknown }
  | { kind: 'response'; id: number; ok: false; error: ApiErrorBody };
export interface EventMessage {
  kind: 'event';
  event: ApiEvent;
  data: unknown;
}

export interface ApiErrorBody {
  /** "invalid-request", "not-found", "forbidden", "conflict", "unsupported", "rate-limited", "internal". */
  code: string;
  message: string;
}
/** A client asks for events (the console wants all; a CLI command usually none). */
export interface SubscribeMessage {
  kind: 'subscribe';
  events: ApiEvent[];
}
export const API_EVENTS: readonly ApiEvent[] = ['snapshot', 'jobs', 'alert', 'conditions', 'store'];
