// Slurm jobs on a box: what the prolog tells the daemon of a job Slurm placed here, how the daemon's
// config maps a QOS (or a partition) to a lane, and what the epilog gets back. Slurm schedules;
// gpushare enforces inside the node what gres/shard and gres/mps only count.
import { PRIORITIES, type Priority } from './jobs.js';
import { array, nullable, number, object, oneOf, optional, string, type Infer } from './schema.js';

/** Slurm's job ids: digits, or an array task's "1234_7" (the prolog sends SLURM_JOB_ID, always digits). */
export const slurmJobIdSchema = string({ min: 1, max: 20, pattern: /^\d{1,18}$/, describe: 'a Slurm job id like "1234"' });
const SLURM_NAME = /^[A-Za-z0-9_.+-]{1,64}$/;
const slurmName = string({ min: 1, max: 64, pattern: SLURM_NAME, describe: 'a Slurm QOS or partition name' });
const slurmAccountName = string({ min: 1, max: 64, pattern: SLURM_NAME, describe: 'a Slurm account name' });
/** A QOS, partition or account name the daemon takes (letters, digits, _ . + -, at most 64): the prolog drops any other. */
export const isSlurmName = (name: string): boolean => SLURM_NAME.test(name);

/** `slurm.prolog`: a job Slurm started on this node, as the prolog read it from Slurm (never from the job). */
export const slurmPrologSchema = object({
  jobId: slurmJobIdSchema,
  /** SLURM_JOB_UID: the daemon checks the account exists, and joins only that user's processes to it. */
  uid: number({ integer: true, min: 0, max: 2 ** 32 - 2 }),
  /** The node's GPU indices Slurm gave it (SLURM_JOB_GPUS, or the IDX of its gres in `squeue --json`'s gres_detail). */
  gpus: array(number({ integer: true, min: 0, max: 63 }), { max: 64 }),
  /** gres/shard it holds on this node, and shards configured per GPU here (`scontrol show node`): its memory quota is their ratio of the GPU. */
  shards: optional(nullable(number({ integer: true, min: 1, max: 100_000 }))),
  shardsPerGpu: optional(nullable(number({ integer: true, min: 1, max: 100_000 }))),
  /** gres/mps it holds, as a percentage of one GPU (Slurm's own unit for a GPU configured with mps:100). */
  mpsPercent: optional(nullable(number({ integer: true, min: 1, max: 100 }))),
  qos: optional(nullable(slurmName)),
  partition: optional(nullable(slurmName)),
  /** The Slurm account it is billed to (`squeue --json`'s account): each usage row says it. */
  account: optional(nullable(slurmAccountName)),
  node: optional(nullable(string({ min: 1, max: 64 }))),
});
export type SlurmPrologParams = Infer<typeof slurmPrologSchema>;

export const slurmEpilogSchema = object({ jobId: slurmJobIdSchema });

/** The daemon's `slurm` config: lanes by QOS (then by partition), and the highest lane each QOS may be dragged to. */
const laneMapSchema = array(object({ name: slurmName, lane: oneOf(PRIORITIES), maxLane: optional(oneOf(PRIORITIES)) }), { max: 256 });
export const slurmConfigSchema = object({
  qosLanes: optional(laneMapSchema),
  partitionLanes: optional(laneMapSchema),
});
/** name: a QOS or partition; lane: where its jobs start; maxLane: the highest their owners may drag them to. */
export interface SlurmLaneMap {
  name: string;
  lane: Priority;
  maxLane?: Priority;
}
export interface SlurmConfig {
  qosLanes: SlurmLaneMap[];
  partitionLanes: SlurmLaneMap[];
}
export const DEFAULT_SLURM_CONFIG: SlurmConfig = { qosLanes: [], partitionLanes: [] };

export function parseSlurmConfig(value: unknown, path = 'slurm'): SlurmConfig {
  const input = slurmConfigSchema.parse(value ?? {}, path);
  return { qosLanes: input.qosLanes ?? [], partitionLanes: input.partitionLanes ?? [] };
}

/** The lane a Slurm job starts in: its QOS's, else its partition's, else normal. */
export function slurmLane(config: SlurmConfig, job: { qos?: string | null; partition?: string | null }): { lane: Priority; from: string; maxLane: Priority | null } {
  const byQos = job.qos ? config.qosLanes.find((m) => m.name === job.qos) : undefined;
  if (byQos) return { lane: byQos.lane, from: `QOS ${byQos.name}`, maxLane: byQos.maxLane ?? null };
  const byPartition = job.partition ? config.partitionLanes.find((m) => m.name === job.partition) : undefined;
  if (byPartition) return { lane: byPartition.lane, from: `partition ${byPartition.name}`, maxLane: byPartition.maxLane ?? null };
  return { lane: 'normal', from: 'the default', maxLane: null };
}

/** How a Slurm job is named wherever it shows (the console's card, `gpushare jobs`): "slurm job 1234 · partition gpu · QOS high". */
export function slurmJobLabel(job: { jobId: string; partition: string | null; qos: string | null }): string {
  return `slurm job ${job.jobId}${job.partition ? ` · partition ${job.partition}` : ''}${job.qos ? ` · QOS ${job.qos}` : ''}`;
}

/** A Slurm job as the daemon keeps it (and the console shows it). */
export interface SlurmJobView {
  jobId: string;
  user: string;
  uid: number;
  partition: string | null;
  qos: string | null;
  /** The Slurm account it is billed to; null: Slurm named none (or the prolog predates accounts). */
  account: string | null;
  gpus: number[];
  /** The hard memory quota its shards give it on its GPU; null: none (a whole GPU, or no shards). */
  memoryQuotaBytes: number | null;
  lane: Priority;
  /** Where its lane came from: "QOS high", "partition gpu", "the default". */
  laneFrom: string;
  /** The highest lane its owner may drag it to (its QOS's or partition's maxLane); null: the lab policy alone. */
  maxLane: Priority | null;
  mpsPercent: number | null;
  /** Its tasks are MPS clients of their GPU's daemon at mpsPercent of its SMs (gres/mps): 'started', or why not; null: no gres/mps. */
  mps: { started: true } | { started: false; why: string } | null;
  /** The Slurm node it runs on here (SLURMD_NODENAME): the slurmd the daemon asks which job a process is in. */
  node: string | null;
  /** Milliseconds since the epoch: the prolog's call. */
  since: number;
}

/** `slurm.taskEnv`: what the task prolog exports into a task of the Slurm job its own process is in (null: none here). */
export interface SlurmTaskEnv {
  jobId: string | null;
  /** The MPS client's variables where the job asked for gres/mps (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE…). */
  env: Record<string, string>;
}

/** What the epilog gets back: the job's usage, and its processes still on a GPU. */
export interface SlurmEpilogResult {
  jobId: string;
  /** gpushare's jobs that were this Slurm job's (one per GPU its tasks used). */
  jobs: string[];
  usage: { gpuSeconds: number; smSeconds: number; memoryGiBHours: number; peakMemoryBytes: number; gatedSeconds: number; parkedSeconds: number };
  /** Its processes a GPU still lists (pid and GPU): left running after the job. */
  leftOnGpu: Array<{ pid: number; gpu: number }>;
  /** gres/mps: why its GPU's MPS daemon, its last holder gone, could not be stopped; absent when nothing failed. */
  mpsFailure?: string;
  /** Held processes let go and parked ones brought back at its end. */
  released: number;
}

/** One Slurm job's usage as its epilog settled it: a row of `gpushare report --by slurm-job` (and `reports.slurmJobs`). */
export interface SlurmUsageRow {
  /** Slurm's job id (SLURM_JOB_ID, the raw id): sacct's JobIDRaw. */
  jobId: string;
  user: string;
  partition: string | null;
  qos: string | null;
  /** Milliseconds since the epoch: the prolog's call and the epilog's. */
  start: number;
  end: number;
  gpuHours: number;
  smHours: number;
  memoryGiBHours: number;
  peakMemoryBytes: number;
  gatedSeconds: number;
  parkedSeconds: number;
  /** The Slurm account it was billed to; null: not recorded (a row from before gpushare kept it, or Slurm named none). */
  account: string | null;
  /** The GPUs and MIG slices its processes ran on, as the driver listed them: "GPU 0, GPU 1 · 3g.40gb" (slurmGpusText); "" none; null: not recorded (an older row). */
  gpus: string | null;
}

/** One place a Slurm job's processes ran: a whole GPU (profile and gpuInstanceId null) or a MIG slice of it. */
export interface SlurmGpuPlace {
  gpu: number;
  gpuInstanceId: number | null;
  /** The slice's profile, "3g.40gb"; null where the driver does not say. */
  profile: string | null;
}

/** A usage row's GPUs, as a lab admin reads them: "GPU 0, GPU 1 · 3g.40gb, GPU 2 · 2× 1g.10gb", by index. */
export function slurmGpusText(places: Iterable<SlurmGpuPlace>): string {
  const byGpu = new Map<number, { whole: boolean; slices: Map<string, Set<number>> }>();
  for (const p of places) {
    const gpu = byGpu.get(p.gpu) ?? { whole: false, slices: new Map() };
    byGpu.set(p.gpu, gpu);
    if (p.gpuInstanceId === null) gpu.whole = true;
    else {
      const name = p.profile ?? 'MIG slice';
      gpu.slices.set(name, (gpu.slices.get(name) ?? new Set()).add(p.gpuInstanceId));
    }
  }
  const parts: string[] = [];
  for (const [index, gpu] of [...byGpu].sort((a, b) => a[0] - b[0])) {
    if (gpu.whole) parts.push(`GPU ${index}`);
    for (const [name, ids] of [...gpu.slices].sort((a, b) => a[0].localeCompare(b[0], 'en', { numeric: true }))) parts.push(`GPU ${index} · ${ids.size > 1 ? `${ids.size}× ` : ''}${name}`);
  }
  return parts.join(', ');
}

/** What `reports.slurmJobs` answers: the rows of Slurm jobs that ended in [since, until). */
export interface SlurmUsageReport {
  by: 'slurm-job';
  since: number;
  until: number;
  /** Oldest end first; at most SLURM_REPORT_MAX_ROWS, the newest kept. */
  rows: SlurmUsageRow[];
  /** Rows left out past SLURM_REPORT_MAX_ROWS (the oldest): a shorter range lists them. */
  leftOut: number;
}

/** The most rows one `reports.slurmJobs` answers (about 300 bytes each). */
export const SLURM_REPORT_MAX_ROWS = 50_000;
