// Jobs: managed ones that gpushare started, and unmanaged GPU processes it only watches.

export const PRIORITIES = ['high', 'normal', 'best-effort'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** CUDA MPS's two client priorities (CUDA_MPS_CLIENT_PRIORITY 0 and 1): best-effort runs below normal, the other lanes normal. */
export type MpsClientPriority = 'normal' | 'below-normal';
export const mpsClientPriorityOf = (priority: Priority): MpsClientPriority => (priority === 'best-effort' ? 'below-normal' : 'normal');
/** A priority's place in PRIORITIES, highest first: the launch gate's GATE_PRIORITY_* value too (checked against gate_abi.h). */
export const PRIORITY_RANK = Object.fromEntries(PRIORITIES.map((p, rank) => [p, rank])) as Record<Priority, number>;

/** Who the engine serves: the box daemon (every user a client) or one user's personal engine. */
export type EngineKind = 'daemon' | 'personal';

export const SHARING_MODES = ['shared', 'exclusive', 'mps', 'mig'] as const;
export type SharingMode = (typeof SHARING_MODES)[number];

/** The most GPUs one job may run on (the gate knows 16 GPUs). */
export const MAX_JOB_GPUS = 16;

/** Every state a job can be in; the engine's transition table is electron/engine/scheduler/job-state.ts. */
export const JOB_STATES = ['queued', 'starting', 'running', 'gated', 'suspended', 'parking', 'parked', 'unparking', 'finished', 'failed', 'lost'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** States a job never leaves ("lost": its process vanished while no engine watched, exit status unknown). */
export const FINAL_STATES: ReadonlySet<JobState> = new Set(['finished', 'failed', 'lost']);

/** Who or what suspended a job (the first that still holds it, in this order). */
export const SUSPENSION_REASONS = ['user', 'quota', 'priority'] as const;
export type SuspensionReason = (typeof SUSPENSION_REASONS)[number];

export interface JobStateChange {
  state: JobState;
  /** Milliseconds since the epoch. */
  at: number;
  /** Why, in a few words: "submitted", "quota exceeded", "exit code 1". */
  reason: string;
}

export interface JobView {
  /** "j12" for managed jobs, "p4242" for an unmanaged process. */
  id: string;
  managed: boolean;
  owner: string;
  uid: number;
  /** As shown: cut to 4 KB of JSON where longer, as a snapshot's command line (argv-bounds.ts); the job runs with its whole argv. */
  argv: string[];
  /** Set when argv is only the start of the whole one: its bytes (NULs included, as /proc/PID/cmdline) and arguments, as GpuProcessView.argvCut. */
  argvCut?: { bytes: number; args: number } | null;
  cwd: string | null;
  /** The first of `gpus` (null: none yet), for readers of one GPU; written only with `gpus`, by placeOnGpus(). */
  readonly gpu: number | null;
  /** The GPUs it runs on (or was placed on), in its CUDA_VISIBLE_DEVICES order; empty while queued for "auto". */
  gpus: number[];
  /** The GPU it asked for, or "auto"; a job that asked for several: the first of requestedGpus, or "auto" with gpuCount. */
  requestedGpu: number | 'auto';
  /** The GPUs a job on several asked for by index (`gpushare run --gpu 0,2`), in order; absent: see requestedGpu. */
  requestedGpus?: number[];
  /** How many GPUs it asked for where more than one (`--gpus N`, or requestedGpus' length); absent: one. Memory requests and quotas are per GPU. */
  gpuCount?: number;
  priority: Priority;
  /** Hard quota for managed jobs, reactive limit for unmanaged ones; null = none. */
  memoryQuotaBytes: number | null;
  /** The quota is the lab policy's (what was left of its owner's memory limit when it started), not one declared; absent = false. */
  memoryQuotaFromPolicy?: boolean;
  /** Memory the job declared it needs (used for queue admission); null = unknown. */
  memoryRequestBytes: number | null;
  mode: SharingMode;
  /** MPS active thread percentage, 1..100, in MPS mode. */
  mpsSharePercent: number | null;
  /** MIG slice UUID, in MIG mode. */
  migSlice: string | null;
  /** The MPS client priority (CUDA_MPS_CLIENT_PRIORITY) its clients started with: CUDA reads it only when a client connects. Absent: no MPS client. */
  mpsClientPriority?: MpsClientPriority;
  /**
   * A process gpushare did not start that enrolled through the preload library, and how its job was found: by a
   * `gpushare enrol` command, as a notebook kernel, a Slurm job, a systemd unit, a container, or the process tree
   * (and process group) under its first process. Absent: started by gpushare (or an unmanaged process).
   */
  enrolled?: EnrolledJob;
  /** Never parked to make room for another job, however long it is idle (opted out); absent = false. */
  keepResident?: boolean;
  state: JobState;
  /** Why it is suspended or parked: a person asked (jobs.suspend, jobs.park), a higher priority is active, or it is over its quota; null otherwise. */
  suspendedBy: SuspensionReason | null;
  pid: number | null;
  exitCode: number | null;
  signal: string | null;
  logPath: string | null;
  /** Its first entry and its latest ones (HISTORY_KEPT in job-state.ts); the store keeps every entry. */
  history: JobStateChange[];
  /** Another user's job as a non-administrator sees it: its working directory, log and submitted arguments are not shown (cwd and logPath null, argv the program's name, or the command line of its running process). */
  withheld?: true;
  /** Present once entries were dropped from history: how many, and how many of them entered each state. */
  historyDropped?: { entries: number; byState: Partial<Record<JobState, number>> };
  /** Live readings from the last tick. */
  usedMemory: number | null;
  smPercent: number | null;
}

export const ENROL_KINDS = ['command', 'notebook', 'slurm', 'unit', 'container', 'tree'] as const;
export interface EnrolledJob {
  by: (typeof ENROL_KINDS)[number];
  /** The engine's key for its group (owner, and the kernel's names for it): a new process of the group joins it. */
  group: string;
  /** What to call it: the notebook, the unit, the Slurm job; null: its command says. */
  name: string | null;
  /** The process group and session of its first process (a script's forks share them). */
  pgid: number;
  sid: number;
  /** The Slurm job it is, as Slurm's prolog registered it (by: 'slurm'); absent: none registered. */
  slurm?: { jobId: string; partition: string | null; qos: string | null };
  /**
   * Whence its GPU (and MIG slice): 'driver', the driver's process list, once it lists one of its processes;
   * until then a hint, its CUDA_VISIBLE_DEVICES at enrolment ('environment') or Slurm's allocation ('slurm'). Absent: a hint.
   */
  gpuFrom?: EnrolledGpuSource;
  /** The other GPUs (or slices) the driver lists its processes on: a job has one GPU, the one where it holds most memory. */
  alsoOn?: EnrolledPlace[];
}

export type EnrolledGpuSource = 'environment' | 'slurm' | 'driver';
/** A GPU, or a MIG slice of it, and the memory an enrolled job's processes hold there. */
export interface EnrolledPlace {
  gpu: number;
  migSlice: string | null;
  usedMemory: number;
}

export type AlertKind = 'contention' | 'quota' | 'out-of-memory' | 'waiting' | 'finished' | 'failed' | 'suspended' | 'resumed' | 'parked' | 'gpu-lost' | 'idle';

export interface Alert {
  id: number;
  kind: AlertKind;
  /** Milliseconds since the epoch. */
  at: number;
  gpu: number | null;
  jobId: string | null;
  /** One sentence a person can act on. */
  message: string;
  severity: 'info' | 'warning' | 'error';
}

export interface AuditEntry {
  id: number;
  at: number;
  /** User name of whoever asked. */
  who: string;
  /** Their uid, as the kernel named them (absent in entries kept before it was recorded). */
  uid?: number;
  /** The API method, e.g. "jobs.setPriority". */
  what: string;
  params: unknown;
  /** "ok" or the error message. */
  result: string;
  /**
   * A summary of refusals: this row stands for `count` refused requests of one user for one reason
   * (its error code) from `at` to `until`, past the first few kept in full; its result names the last one.
   */
  count?: number;
  until?: number;
}

/** Sets where a job runs: its GPUs, and `gpu` (their first) with them, so the two never disagree. */
export function placeOnGpus(view: Pick<JobView, 'gpu' | 'gpus'>, gpus: readonly number[]): void {
  (view as { gpu: number | null }).gpu = gpus[0] ?? null;
  view.gpus = [...gpus];
}

/** How many GPUs a job asked for, and which where it named them (null: the scheduler picks). */
export function gpuDemand(view: Pick<JobView, 'requestedGpu' | 'requestedGpus' | 'gpuCount'>): { count: number; named: number[] | null } {
  if (view.requestedGpus?.length) return { count: view.requestedGpus.length, named: view.requestedGpus };
  if (view.requestedGpu !== 'auto') return { count: 1, named: [view.requestedGpu] };
  return { count: view.gpuCount ?? 1, named: null };
}

/** What a job's processes may hold together: its quota (per GPU) times its GPUs; null: no quota. */
export const quotaOverItsGpus = (job: Pick<JobView, 'memoryQuotaBytes' | 'gpus'>): number | null => (job.memoryQuotaBytes === null ? null : job.memoryQuotaBytes * Math.max(1, job.gpus?.length ?? 1));

/** Where a job runs, in words: "GPU 0", "GPUs 0,2". */
export const gpusPhrase = (view: Pick<JobView, 'gpu' | 'gpus'>): string => (view.gpus?.length > 1 ? `GPUs ${view.gpus.join(',')}` : `GPU ${view.gpu ?? '?'}`);

/** A job's GPUs as one word: "0", "0,2"; "?" where it has none yet. */
export const gpusText = (view: Pick<JobView, 'gpu' | 'gpus'>): string => (view.gpus?.length ? view.gpus.join(',') : view.gpu === null ? '?' : String(view.gpu));

// sizes have one parser, shared with the console and the MIG job specs
import { formatByteSize } from './byte-size.js';
export { formatByteSize, parseByteSize } from './byte-size.js';

/** An enrolled job's GPU as the GPU column shows it: "0?" while a hint (the driver lists none of its processes yet), "0+1" where it also runs on GPU 1. */
export function enrolledGpuText(job: Pick<JobView, 'gpu' | 'enrolled'>): string {
  const e = job.enrolled;
  const others = [...new Set((e?.alsoOn ?? []).map((p) => p.gpu).filter((g) => g !== job.gpu))];
  return `${job.gpu ?? '?'}${e && e.gpuFrom !== 'driver' ? '?' : ''}${others.map((g) => `+${g}`).join('')}`;
}

/** The same in words (a title, a tooltip); null for a job whose GPU is simply its own. */
export function enrolledGpuNote(job: Pick<JobView, 'gpu' | 'migSlice' | 'enrolled'>): string | null {
  const e = job.enrolled;
  if (!e) return null;
  if (e.gpuFrom !== 'driver') return `GPU ${job.gpu} as its ${e.gpuFrom === 'slurm' ? 'Slurm allocation' : 'CUDA_VISIBLE_DEVICES'} says: not yet confirmed by the driver`;
  if (!e.alsoOn?.length) return null;
  const where = (p: EnrolledPlace): string => `GPU ${p.gpu}${p.migSlice ? ` slice ${p.migSlice}` : ''} (${formatByteSize(p.usedMemory)})`;
  return `shown on GPU ${job.gpu}${job.migSlice ? ` slice ${job.migSlice}` : ''}, where it holds most memory; also on ${e.alsoOn.map(where).join(', ')}`;
}

/**
 * What a lane change of a live MPS job cannot reach, in one sentence: its clients keep the MPS client priority they
 * started with (CUDA reads it only when a client connects), while the gate and CPU priority follow the lane. Null: they agree.
 */
export function mpsPriorityNote(view: Pick<JobView, 'id' | 'priority' | 'state' | 'mpsClientPriority'>): string | null {
  if (!view.mpsClientPriority || FINAL_STATES.has(view.state) || view.mpsClientPriority === mpsClientPriorityOf(view.priority)) return null;
  return `${view.id}'s MPS clients keep client priority ${view.mpsClientPriority.replace('-', ' ')}, which they started with: CUDA MPS reads CUDA_MPS_CLIENT_PRIORITY only when a client connects. Its lane (the gate) and CPU priority are ${view.priority} now; restart the job to change its MPS priority too.`;
}
