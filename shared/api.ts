// The one API between the engine and its clients (the console over IPC or WebSocket, the CLI over
// the unix socket), described once: each method's params, result, whether it reads, who may call it;
// each event's payload. Every request is checked against these schemas first.
import { consolePreferencesSchema, type ConsolePreferences } from './settings.js';
import { MAX_JOB_GPUS, PRIORITIES, SHARING_MODES, type Alert, type AlertKind, type AuditEntry, type EngineKind, type JobView } from './jobs.js';
import { array, boolean, nullable, number, object, oneOf, optional, string, union, type Infer, type Schema } from './schema.js';
import { labPolicyValue, type LabPolicyStatus } from './lab-policy.js';
import { RECENT_SAMPLES_MAX_SECONDS, type RecentSamples } from './recent-samples.js';
import type { Snapshot } from './snapshot.js';
import type { SnapshotDelta } from './snapshot-delta.js';
import type { StoreStatus } from './store-status.js';
import type { MigApplyResult, MigLayoutView, MpsGpuStatus } from './spatial.js';
import { slurmEpilogSchema, slurmPrologSchema, type SlurmEpilogResult, type SlurmJobView, type SlurmTaskEnv, type SlurmUsageReport } from './slurm.js';
import { ALL_REPORT_GROUPINGS, REPORT_EXPORT_FORMATS, REPORT_GROUPINGS, type ReportFile, type UsageReport } from './usage-report.js';

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
/** What a lane move may do to the job's state besides its settings (jobs.move). */
export const MOVE_ACTIONS = ['suspend', 'resume', 'park', 'unpark'] as const;
export type MoveAction = (typeof MOVE_ACTIONS)[number];
const MPS_IS_SHARED = 'the MPS daemon serves every user of the GPU';
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

/** Who may call a method. Everyone sees everything and may submit; the dispatcher checks the rest before the handler runs. */
export type Who<P> =
  | { kind: 'anyone' }
  /** The owner of the job named by params.job, or an administrator; `action` names what is refused ("suspend", "change the priority of"). */
  | { kind: 'job-owner'; action: string }
  /** An administrator of the box (or the engine's own user); `unless`: params that open it to everyone (a dry run). */
  | { kind: 'admin'; action: (params: P) => string; because: string; unless?: (params: P) => boolean }
  /** The engine's own user only; `refusal` says what they alone may do. */
  | { kind: 'engine-user'; refusal: string };

/** A result type, carried by the compiler only. */
export interface Returns<R> {
  readonly result?: R;
}
const returns = <R>(): Returns<R> => ({});

/**
 * One API method, declared once: the schema its params are checked against, what it answers, whether
 * it only reads (reads are never audited, changes always are), who may call it, and the `gpushare`
 * command that calls it (a test holds the CLI to it).
 */
export interface MethodEntry<S extends Schema<unknown>, R> {
  params: S;
  result: Returns<R>;
  reads: boolean;
  who: Who<Infer<S>>;
  /** The `gpushare` commands (with a subcommand or option) through which a user reaches it, e.g. "set --priority"; absent: the console's own. */
  cli?: readonly string[];
}
const read = <S extends Schema<unknown>, R>(entry: Omit<MethodEntry<S, R>, 'reads'>): MethodEntry<S, R> => ({ ...entry, reads: true });
const change = <S extends Schema<unknown>, R>(entry: Omit<MethodEntry<S, R>, 'reads'>): MethodEntry<S, R> => ({ ...entry, reads: false });
const anyone = { kind: 'anyone' } as const;
const jobOwner = (action: string) => ({ kind: 'job-owner', action }) as const;
const admin = <P>(action: string | ((params: P) => string), because: string, unless?: (params: P) => boolean): Who<P> => ({
  kind: 'admin',
  action: typeof action === 'string' ? () => action : action,
  because,
  ...(unless ? { unless } : {}),
});

const jobRef = object({ job: jobId });

/** Every method of the engine's API. A new method is one entry here and one handler (dispatcher.register). */
export const API_METHODS = {
  'snapshot.latest': read({ params: object({}), result: returns<Snapshot | null>(), who: anyone, cli: ['ps'] }),
  /** The samples the engine holds from the last `seconds` (at most 600): a console's timelines start from them. */
  'samples.recent': read({ params: object({ seconds: optional(number({ integer: true, min: 1, max: RECENT_SAMPLES_MAX_SECONDS, unit: 's' })) }), result: returns<RecentSamples>(), who: anyone }),
  'jobs.list': read({ params: object({ includeFinished: optional(boolean()) }), result: returns<JobView[]>(), who: anyone, cli: ['jobs'] }),
  'jobs.submit': change({
    params: object({
      argv: array(string({ min: 1, max: ARGUMENT_MAX }), { min: 1, max: 4096 }),
      cwd: optional(string({ min: 1, max: PATH_MAX })),
      /** A GPU index, "auto", or the GPUs of a job on several, in the order its CUDA_VISIBLE_DEVICES lists them (`gpushare run --gpu 0,2`). */
      gpu: union(union(gpuIndex, oneOf(['auto'] as const), 'a GPU index or "auto"'), array(gpuIndex, { min: 1, max: MAX_JOB_GPUS }), `a GPU index, "auto", or a list of at most ${MAX_JOB_GPUS} GPU indexes`),
      /** With gpu "auto": how many GPUs the job runs on (`gpushare run --gpus N`), each with its memory request and quota free; default 1. */
      gpuCount: optional(number({ integer: true, min: 1, max: MAX_JOB_GPUS })),
      priority: optional(oneOf(PRIORITIES)),
      /** Per GPU: the job's processes hold at most this much on each of its GPUs (on several GPUs the gate counts it over them together: GPUs × this). */
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
      /** `env` goes on top of this box's login environment for the caller (HOME, USER, LOGNAME, SHELL from its passwd, the login PATH), as ssh would start it: what `gpushare run --box` asks. */
      loginEnv: optional(boolean()),
    }),
    result: returns<JobView>(),
    who: anyone,
    cli: ['run'],
  }),
  'jobs.setPriority': change({ params: object({ job: jobId, priority: oneOf(PRIORITIES) }), result: returns<JobView>(), who: jobOwner('change the priority of') }),
  'jobs.setQuota': change({ params: object({ job: jobId, bytes: nullable(bytes) }), result: returns<JobView>(), who: jobOwner('change the memory quota of') }),
  'jobs.setMode': change({
    params: object({ job: jobId, mode: oneOf(SHARING_MODES), mpsSharePercent: optional(mpsShare), migSlice: optional(migSlice) }),
    result: returns<JobView>(),
    who: jobOwner('change the sharing mode of'),
  }),
  /**
   * A move, whole or not at all: a queued job's GPU and sharing mode, the priority, the memory quota and
   * a change of state (suspend, resume, park, unpark) are all checked before any is applied, so a refusal
   * changes nothing.
   */
  'jobs.move': change({
    params: object({
      job: jobId,
      priority: optional(oneOf(PRIORITIES)),
      memoryQuotaBytes: optional(nullable(bytes)),
      action: optional(oneOf(MOVE_ACTIONS)),
      gpu: optional(gpuIndex),
      mode: optional(oneOf(SHARING_MODES)),
      mpsSharePercent: optional(mpsShare),
      migSlice: optional(migSlice),
    }),
    result: returns<JobView>(),
    who: jobOwner('move'),
    cli: ['set --priority', 'set --mem', 'set --suspend', 'set --resume', 'set --park', 'set --unpark'],
  }),
  'jobs.place': change({ params: object({ job: jobId, gpu: gpuIndex }), result: returns<JobView>(), who: jobOwner('place') }),
  'jobs.suspend': change({ params: jobRef, result: returns<JobView>(), who: jobOwner('suspend') }),
  'jobs.resume': change({ params: jobRef, result: returns<JobView>(), who: jobOwner('resume') }),
  'jobs.park': change({ params: jobRef, result: returns<JobView>(), who: jobOwner('park') }),
  'jobs.unpark': change({ params: jobRef, result: returns<JobView>(), who: jobOwner('unpark') }),
  'jobs.terminate': change({ params: jobRef, result: returns<JobView>(), who: jobOwner('terminate'), cli: ['set --terminate'] }),
  'alerts.list': read({ params: object({}), result: returns<Alert[]>(), who: anyone }),
  /** The conditions that hold now (the 'conditions' event sends the same list whenever it changes). */
  'alerts.active': read({ params: object({}), result: returns<ActiveCondition[]>(), who: anyone, cli: ['run --wait', 'set --park'] }),
  /** One page of the audit log, newest first: at most `limit` entries older than the cursor `before` (an entry's id); a user reads their own. */
  'audit.list': read({
    params: object({ limit: optional(number({ integer: true, min: 1, max: AUDIT_PAGE_MAX })), before: optional(number({ integer: true, min: 1, max: Number.MAX_SAFE_INTEGER })) }),
    result: returns<AuditEntry[]>(),
    who: anyone,
    cli: ['audit'],
  }),
  'sampler.setRate': change({ params: object({ hz: number({ min: 0.2, max: 10, unit: 'Hz' }) }), result: returns<{ hz: number }>(), who: admin('change the sampling rate', 'every user of the box sees the GPUs at that rate') }),
  /** Who the engine takes this connection to be (the console's "mine" filter). */
  'session.whoami': read({ params: object({}), result: returns<Whoami>(), who: anyone, cli: ['status', 'stop', 'console'] }),
  /** Stop this personal engine as SIGTERM does (`gpushare stop`): only its own user may; the box daemon refuses. */
  'engine.stop': change({ params: object({}), result: returns<{ pid: number }>(), who: { kind: 'engine-user', refusal: "Only a personal engine's own user may stop it" }, cli: ['stop'] }),
  /** Per GPU: is an MPS daemon running, and whose ("MPS held by user NAME")? */
  'mps.status': read({ params: object({}), result: returns<MpsGpuStatus[]>(), who: anyone, cli: ['mps status'] }),
  /** Start (or stop) the engine's MPS control daemon for one GPU; refused while another user's holds the box. */
  'mps.start': change({ params: object({ gpu: gpuIndex }), result: returns<MpsGpuStatus>(), who: admin('start MPS', MPS_IS_SHARED), cli: ['mps start'] }),
  /** With gpuInstanceId: the daemon inside that MIG slice of the GPU (a slice whose daemon runs is kept by mig apply). */
  'mps.stop': change({
    params: object({ gpu: gpuIndex, gpuInstanceId: optional(number({ integer: true, min: 0, max: 1000 })) }),
    result: returns<MpsGpuStatus>(),
    who: admin('stop MPS', MPS_IS_SHARED),
    cli: ['mps stop'],
  }),
  /** A GPU's MIG layout: GPU/compute instances, profiles, placements and the processes in each slice. */
  'mig.layout': read({ params: object({ gpu: gpuIndex }), result: returns<MigLayoutView>(), who: anyone, cli: ['mig layout'] }),
  /**
   * Plan a layout for a job mix (jobs: "30G,10G:0.2,20G@high", as `gpushare mig plan`) or take one
   * (layout: ["3g.40gb@4", "2g.20gb"]), then apply it when the slices it changes are idle and the engine may.
   */
  'mig.apply': change({
    params: object({
      gpu: gpuIndex,
      jobs: optional(string({ min: 1, max: 512, describe: 'job specs MEMORY[:SMSHARE][@PRIORITY], comma-separated' })),
      layout: optional(array(string({ max: 32, pattern: /^[0-9a-z.+]+(@[0-7])?$/, describe: 'a MIG profile, optionally @START, e.g. "3g.40gb@4"' }), { min: 1, max: 7 })),
      dryRun: optional(boolean()),
    }),
    result: returns<MigApplyResult>(),
    who: admin<{ gpu: number; dryRun?: boolean }>((p) => `change the MIG layout of GPU ${p.gpu}`, 'it removes slices other users may hold (a dry run is open to all)', (p) => p.dryRun === true),
    cli: ['mig apply'],
  }),
  /** Usage by user, job, GPU or container over [since, until) (ms since the epoch; until defaults to now); another's job by its program only. */
  'reports.query': read({ params: object({ since: reportTime, until: optional(reportTime), by: oneOf(REPORT_GROUPINGS) }), result: returns<UsageReport>(), who: anyone, cli: ['report'] }),
  /** Usage per Slurm job whose epilog ran in [since, until), as reports are, lab-wide: Slurm shows every job's id, user and partition to all (squeue). */
  'reports.slurmJobs': read({ params: object({ since: reportTime, until: optional(reportTime) }), result: returns<SlurmUsageReport>(), who: anyone, cli: ['report --by'] }),
  /** The same report as a file (HTML with charts, CSV or JSON), for the console to save; by "slurm-job": reports.slurmJobs's rows. */
  'reports.export': read({
    params: object({ since: reportTime, until: optional(reportTime), by: oneOf(ALL_REPORT_GROUPINGS), format: oneOf(REPORT_EXPORT_FORMATS) }),
    result: returns<ReportFile>(),
    who: anyone,
  }),
  /** The lab policy, the caller's limits under it, their fair-share usage and rank. */
  'policy.get': read({ params: object({}), result: returns<LabPolicyStatus>(), who: anyone }),
  /** Is usage being recorded, and if not why and where. */
  'store.status': read({ params: object({}), result: returns<StoreStatus>(), who: anyone, cli: ['status'] }),
  /** Replace the lab policy: checked whole, kept in the daemon's config, then applied. */
  'policy.set': change({ params: object({ policy: labPolicyValue }), result: returns<LabPolicyStatus>(), who: admin('change the lab policy', 'it sets the limits and the queue order of every user of the box') }),
  /** The console's remembered choices (timeline window, filters, window size): the caller's own, in their config file. */
  'settings.get': read({ params: object({}), result: returns<ConsolePreferences>(), who: anyone }),
  /** Keep the console's choices: those given replace the kept ones (null clears a filter); the result is all of them. */
  'settings.set': change({ params: object({ preferences: consolePreferencesSchema }), result: returns<ConsolePreferences>(), who: anyone }),
  /** `gpushare enrol -- CMD`: the options its command enrols with, kept for the calling process (the kernel's pid) while it runs. */
  'enrol.register': change({
    params: object({ priority: optional(oneOf(PRIORITIES)), memoryQuotaBytes: optional(nullable(bytes)), keepResident: optional(boolean()) }),
    result: returns<{ pid: number }>(),
    who: anyone,
    cli: ['enrol'],
  }),
  /** Slurm's prolog (root, on the node): a job Slurm placed here, to be enforced when its tasks enrol. */
  'slurm.prolog': change({ params: slurmPrologSchema, result: returns<SlurmJobView>(), who: admin<{ jobId: string }>((p) => `register Slurm job ${p.jobId}`, "only root (Slurm's prolog) or an administrator registers Slurm jobs"), cli: ['slurm prolog'] }),
  /** Slurm's epilog: the job ended; its record is closed, its holds let go, its usage written. */
  'slurm.epilog': change({ params: slurmEpilogSchema, result: returns<SlurmEpilogResult>(), who: admin<{ jobId: string }>((p) => `end Slurm job ${p.jobId}`, "only root (Slurm's epilog) or an administrator ends Slurm jobs"), cli: ['slurm epilog'] }),
  /** Slurm's task prolog (as the job's user): the environment of the Slurm job the calling process is in, by the kernel's word (its cgroup, or slurmd's pidinfo). */
  'slurm.taskEnv': read({ params: object({}), result: returns<SlurmTaskEnv>(), who: anyone, cli: ['slurm task-prolog'] }),
  /** The Slurm jobs this box knows, running or ended since the daemon started. */
  'slurm.jobs': read({ params: object({}), result: returns<SlurmJobView[]>(), who: anyone }),
};

export type ApiMethod = keyof typeof API_METHODS;
export type ApiParams<M extends ApiMethod> = Infer<(typeof API_METHODS)[M]['params']>;
export type ApiResults = { [M in ApiMethod]: (typeof API_METHODS)[M]['result'] extends Returns<infer R> ? R : never };

/** Reads are never written to the audit log; every change asked is. */
export const isReadMethod = (method: ApiMethod): boolean => API_METHODS[method].reads;

/** What session.whoami answers. */
export interface Whoami {
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
}

/** How another engine on the box was started: `gpushare serve|start|engine|daemon`, or the packaged desktop app. */
export type OtherEngineKind = 'serve' | 'start' | 'engine' | 'daemon' | 'app';
export interface OtherEngine {
  user: string;
  pid: number;
  kind: OtherEngineKind;
}

/** What the engine pushes to the clients that subscribe, each event with its payload. */
export const API_EVENT_PAYLOADS = {
  snapshot: returns<Snapshot>(),
  /** What changed since the last snapshot this client was sent, for clients that subscribe with snapshotDeltas (snapshot-delta.ts). */
  'snapshot.delta': returns<SnapshotDelta>(),
  jobs: returns<JobView[]>(),
  alert: returns<Alert>(),
  /** The active conditions, whenever the list changes. */
  conditions: returns<ActiveCondition[]>(),
  /** The usage store's status, whenever recording stops, changes why, starts dropping, or resumes. */
  store: returns<StoreStatus>(),
};
export type ApiEvent = keyof typeof API_EVENT_PAYLOADS;
export type ApiEvents = { [E in ApiEvent]: (typeof API_EVENT_PAYLOADS)[E] extends Returns<infer P> ? P : never };
export const API_EVENTS = Object.keys(API_EVENT_PAYLOADS) as readonly ApiEvent[];

export const isApiMethod = (name: unknown): name is ApiMethod => typeof name === 'string' && Object.hasOwn(API_METHODS, name);

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
  /**
   * The client applies `snapshot.delta` events (applySnapshotDelta): after one whole `snapshot` it gets each tick as a
   * delta from the last one it was sent, and asks for `snapshot.latest` when a delta's baseSeq is not its snapshot's seq.
   */
  snapshotDeltas?: boolean;
}
