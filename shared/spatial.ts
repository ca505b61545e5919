// Spatial sharing as the API shows it: MPS daemons per GPU, MIG layouts and what applying a plan did.

/** off: no MPS daemon serves the GPU; ours: the engine's user runs it; held: another user's runs on the box. */
export type MpsState = 'off' | 'ours' | 'held';

/** Who the engine's daemon runs for: its jobs (stopped with the last one) or a person's request (kept until stopped). */
export type MpsStartedFor = 'jobs' | 'request';

export interface MpsGpuStatus {
  gpu: number;
  state: MpsState;
  /** The user whose daemon/server serves this GPU (or holds the box), when not off. */
  user: string | null;
  /** Set when state is 'held': who holds MPS on this box ("MPS held by user NAME"). */
  heldBy?: string;
  controlPid: number | null;
  serverPids: number[];
  pipeDir: string | null;
  /** One sentence for the console, e.g. "MPS held by user alice (nvidia-cuda-mps-control pid 812)". */
  message: string;
  /**
   * Why our daemon runs (state 'ours' only): 'jobs', the engine started it for jobs and stops it when the last
   * one ends; 'request', a person started it (`gpushare mps start`, the console) and it runs until stopped.
   */
  startedFor?: MpsStartedFor;
  /** The GPU's MIG slices with an MPS daemon of their own (jobs in mode mig with an MPS share); absent: none. */
  slices?: MpsSliceStatus[];
}

/** The MPS daemon inside one MIG slice (started with CUDA_VISIBLE_DEVICES=MIG-…, its own pipe directory). */
export interface MpsSliceStatus extends Omit<MpsGpuStatus, 'slices'> {
  gpuInstanceId: number;
  /** The slice's MIG-… UUID. */
  uuid: string;
  /** A daemon (anyone's, as far as this engine can see) runs inside this slice: mig apply keeps the slice. */
  daemonRunning: boolean;
  /** Whose daemon that is, when known. */
  daemonUser?: string;
}

export interface MigSliceProcess {
  pid: number;
  user: string | null;
  command: string | null;
  computeInstanceId: number | null;
}

/** One GPU instance with its compute instances (the MIG devices NVML lists). */
export interface MigSliceView {
  gpuInstanceId: number;
  computeInstanceIds: number[];
  profile: string;
  profileId: number;
  placement: { start: number; size: number };
  /** MIG-… UUIDs of its compute instances (what CUDA_VISIBLE_DEVICES takes). */
  uuids: string[];
  memoryTotal: number | null;
  smCount: number | null;
  /** SM activity since the driver's previous reading of it (GPM, Hopper and later), 0..100; null where unknown. */
  smPercent?: number | null;
  processes: MigSliceProcess[];
}

export interface MigProfileView {
  name: string;
  id: number;
  memoryMiB: number;
  smCount: number;
  maxInstances: number;
  placementStarts: number[];
}

export interface MigLayoutView {
  gpu: number;
  name: string;
  /** null: the GPU cannot do MIG. */
  migEnabled: boolean | null;
  migPending: boolean | null;
  /** The profiles of this GPU model (built-in tables), null when unknown. */
  profiles: MigProfileView[] | null;
  memorySlices: number | null;
  slices: MigSliceView[];
  /** Memory slices no GPU instance holds. */
  freeMemorySlices: number[];
}

export interface MigPlannedSlice {
  profile: string;
  profileId: number;
  placement: { start: number; size: number };
  /** The job spec it is for ("j1" for the first of --jobs), null when idle or kept. */
  jobId: string | null;
  /** Set when the instance exists today and is kept. */
  gpuInstanceId: number | null;
  /** A busy slice (kept as it is): its processes and the memory they leave free now; a job here runs beside them. */
  busy?: { pids: number[]; memoryFreeBytes: number };
  /** Planned jobs sharing the slice through MPS (jobId is the first), each with its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE. */
  mps?: Array<{ jobId: string; activeThreadPercentage: number }>;
}

export interface MigApplyResult {
  gpu: number;
  dryRun: boolean;
  applied: boolean;
  planned: MigPlannedSlice[];
  unplaced: Array<{ jobId: string; reason: string }>;
  /** The nvidia-smi command lines, in order. */
  commands: string[];
  /** What blocks applying (empty when nothing does); a dry run lists them instead of failing. */
  blockers: string[];
  /** The layout after applying (or today's, for a dry run). */
  layout: MigLayoutView | null;
}
