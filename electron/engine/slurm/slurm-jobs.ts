// Slurm jobs on this node: the prolog registers each (root only), its tasks enrol and join it by what
// the kernel says of them (the job's cgroup, or `scontrol pidinfo` where Slurm tracks processes without
// cgroups), and the epilog ends it and settles its usage. This module owns the Slurm jobs; the scheduler
// owns the gpushare jobs their tasks become (enrol/enrolment.ts asks jobOf for their quota and lane).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { FINAL_STATES, type MpsClientPriority } from '../../../shared/jobs.js';
import { gpuShareOfPlace, type Snapshot } from '../../../shared/snapshot.js';
import { slurmGpusText, slurmLane, type SlurmConfig, type SlurmGpuPlace, type SlurmEpilogResult, type SlurmJobView, type SlurmPrologParams, type SlurmTaskEnv, type SlurmUsageRow } from '../../../shared/slurm.js';
import { isNamedAccount, lookupAccount } from '../accounts.js';
import { ApiError } from '../api/api-error.js';
import type { Caller } from '../api/dispatcher.js';
import { mpsJobEnv } from '../mps/mps-control.js';
import type { MpsDaemonRef } from '../mps/mps-daemons.js';
import { readSmallText } from '../proc/bounded-read.js';
import { readProcStatus } from '../proc/proc-status.js';
import { parseCgroup } from '../proc/process-context.js';
import { mpsDaemonKey } from '../scheduler/actuators.js';
import type { JobRecord } from '../scheduler/job-table.js';
import type { Scheduler } from '../scheduler/scheduler.js';

/** Slurm jobs remembered (live and ended); the oldest ended ones go first past it. */
export const MAX_SLURM_JOBS = 4096;
const GiB = 1024 ** 3;

interface Usage {
  gpuSeconds: number;
  smSeconds: number;
  memoryGiBHours: number;
  peakMemoryBytes: number;
}
interface SlurmJob {
  view: SlurmJobView;
  ended: boolean;
  usage: Usage;
  /** gpushare jobs its tasks became. */
  jobs: Set<string>;
  /** The GPUs and MIG slices its processes were listed on, by "gpu/gpuInstanceId". */
  places: Map<string, SlurmGpuPlace>;
  /** Each one's time gated, as its slot last said (the slot is freed when its last process exits, before the epilog). */
  gatedNs: Map<string, number>;
  /** gres/mps: the GPU's MPS daemon it holds from prolog to epilog, and what its tasks export to be its clients. */
  mps: { daemon: MpsDaemonRef; key: string; env: Record<string, string> } | null;
  /** How it shares its GPU, by its gres: Slurm allows one type per node. */
  sharing: 'shard' | 'mps' | null;
}

/** Where the epilog's usage rows go: the usage store (its slurm_usage table, written with its next flush). */
export interface SlurmUsageSink {
  recordSlurmUsage(row: SlurmUsageRow): void;
  flush(): Promise<void>;
}

/** How the daemon asks Slurm which job a pid is in (proctrack/linuxproc), of the slurmd of `node`; replaceable in tests. */
export type PidInfo = (pid: number, node: string | null) => string | null;

/**
 * `scontrol pidinfo PID`, asked of node `node`'s slurmd (SLURMD_NODENAME: a host may run several): slurmd tracks
 * the job's processes itself; the pid is the kernel's, the only argument.
 */
export function scontrolPidInfo(pid: number, node: string | null): string | null {
  const env = { PATH: '/usr/bin:/bin:/usr/sbin:/sbin', ...(process.env.SLURM_CONF ? { SLURM_CONF: process.env.SLURM_CONF } : {}), ...(node ? { SLURMD_NODENAME: node } : {}) };
  try {
    const out = execFileSync('scontrol', ['pidinfo', String(pid)], { encoding: 'utf8', timeout: 3000, stdio: ['ignore', 'pipe', 'ignore'], env });
    return /Slurm JobId=(\d+)/.exec(out)?.[1] ?? null;
  } catch {
    return null; // not in a Slurm job, or no slurmd answers
  }
}

export class SlurmJobs {
  private readonly jobs = new Map<string, SlurmJob>();
  /** `pid:startTicks` → the Slurm job scontrol named (a pid's job never changes while it lives). */
  private readonly pidCache = new Map<string, string | null>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly options: { config: () => SlurmConfig; pidInfo?: PidInfo; procRoot?: string; membersOf?: (jobId: string) => number[]; usage?: SlurmUsageSink | null },
  ) {
    scheduler.laneCap = (record) => {
      const id = record.view.enrolled?.slurm?.jobId;
      const job = id ? this.jobs.get(id) : undefined;
      return job?.view.maxLane ? { lane: job.view.maxLane, why: `Slurm job ${id}'s ${job.view.laneFrom}` } : null;
    };
    scheduler.mpsHolders = (daemon) => [...this.jobs.values()].filter((j) => !j.ended && j.mps?.key === daemon).length;
  }

  /** The prolog's call: the job as Slurm placed it; its quota from its shards of the GPU's memory, its lane from its QOS. */
  register(params: SlurmPrologParams, caller: Caller): SlurmJobView {
    if (!caller.admin) throw new ApiError('forbidden', `Cannot register Slurm job ${params.jobId}: only root (Slurm's prolog) or an administrator may; ${caller.user} (uid ${caller.uid}) is not.`);
    const account = lookupAccount(params.uid);
    if (!isNamedAccount(account)) throw new ApiError('invalid-request', `Slurm job ${params.jobId}: uid ${params.uid} has no account on this box; nothing was registered.`);
    const gpus = this.scheduler.snapshot().gpus;
    const gpu = params.gpus.length > 0 ? gpus.find((g) => g.index === params.gpus[0]) : undefined;
    if (params.gpus.length > 0 && !gpu) throw new ApiError('invalid-request', `Slurm job ${params.jobId} was given GPU ${params.gpus[0]}, which this box does not have (GPUs ${gpus.map((g) => g.index).join(', ')}); nothing was registered.`);
    let quota: number | null = null;
    if (gpu && params.shards && params.shardsPerGpu) {
      if (params.shards > params.shardsPerGpu) throw new ApiError('invalid-request', `Slurm job ${params.jobId} holds ${params.shards} shards of a GPU configured with ${params.shardsPerGpu}; nothing was registered.`);
      quota = Math.floor((gpu.memoryTotal * params.shards) / params.shardsPerGpu);
    }
    const { lane, from, maxLane } = slurmLane(this.options.config(), params);
    const old = this.jobs.get(params.jobId);
    if (old && !old.ended && old.view.uid !== params.uid) throw new ApiError('conflict', `Slurm job ${params.jobId} is registered already for uid ${old.view.uid}; nothing was changed.`);
    const mpsPercent = params.mpsPercent ?? null;
    if (mpsPercent !== null) {
      if (params.shards) throw new ApiError('invalid-request', `Slurm job ${params.jobId} holds both gres/shard and gres/mps: Slurm allows one sharing type per node (gres.conf names shard or mps, not both); nothing was registered.`);
      if (!gpu) throw new ApiError('invalid-request', `Slurm job ${params.jobId} holds gres/mps but Slurm named no GPU of this node for it (no IDX in \`squeue --json\`'s gres_detail, no SLURM_JOB_GPUS); nothing was registered.`);
    }
    const sharing = mpsPercent !== null ? 'mps' : params.shards ? 'shard' : null;
    const other = gpu && sharing ? [...this.jobs.values()].find((j) => !j.ended && j.view.jobId !== params.jobId && j.view.gpus[0] === gpu.index && j.sharing !== null && j.sharing !== sharing) : undefined;
    if (other) throw new ApiError('conflict', `Slurm job ${params.jobId} holds gres/${sharing} of GPU ${gpu!.index}, which Slurm job ${other.view.jobId} shares by gres/${other.sharing}: Slurm allows one sharing type per node (check this node's gres.conf); nothing was registered.`);
    const kept = old && !old.ended ? old.mps : null; // the prolog again for a live job: the daemon it holds already
    const mps = mpsPercent !== null && gpu ? (kept ? { client: kept } : this.startMps(gpu, mpsPercent, lane)) : null;
    const view: SlurmJobView = {
      jobId: params.jobId,
      user: account.name,
      uid: params.uid,
      partition: params.partition ?? null,
      qos: params.qos ?? null,
      account: params.account ?? null,
      gpus: params.gpus,
      memoryQuotaBytes: quota,
      lane,
      laneFrom: from,
      maxLane,
      mpsPercent,
      mps: mps === null ? null : mps.client ? { started: true } : { started: false, why: mps.why ?? 'not started' },
      node: params.node ?? null,
      since: Date.now(),
    };
    this.jobs.set(params.jobId, { view, ended: false, usage: old?.usage ?? { gpuSeconds: 0, smSeconds: 0, memoryGiBHours: 0, peakMemoryBytes: 0 }, jobs: old?.jobs ?? new Set(), places: old?.places ?? new Map(), gatedNs: old?.gatedNs ?? new Map(), mps: mps?.client ?? null, sharing });
    this.forget();
    return view;
  }

  /**
   * gres/mps: its GPU's MPS daemon runs (started for jobs unless one of ours already does) and its tasks' client
   * variables, its share as CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; else why not (the job runs without MPS, quota and lane kept).
   */
  private startMps(gpu: { index: number; uuid: string }, percent: number, lane: SlurmJobView['lane']): { client?: NonNullable<SlurmJob['mps']>; why?: string } {
    const mps = this.scheduler.act.options.mps;
    if (!mps) return { why: 'MPS is not available in this engine' };
    const daemon: MpsDaemonRef = { gpu: { index: gpu.index, uuid: gpu.uuid } };
    try {
      const [status] = mps.control.status([daemon.gpu]);
      if (status.state === 'held') return { why: status.message.replace(/\.$/, '') };
      mps.startForJob(daemon);
      return { client: { daemon, key: mpsDaemonKey({ mode: 'mps', gpu: gpu.index, migSlice: null, mpsSharePercent: percent })!, env: mpsJobEnv(mps.control, gpu.index, percent, null, lane) } };
    } catch (error) {
      return { why: `its MPS daemon could not be started: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** The task prolog's call: the MPS client variables of the live Slurm job the calling process is in (by the kernel's word), or nothing. */
  taskEnv(caller: Caller): SlurmTaskEnv {
    const status = caller.pid === null ? null : readProcStatus(caller.pid, this.options.procRoot);
    if (!status || status.uid !== caller.uid) return { jobId: null, env: {} };
    const view = this.jobOf({ pid: status.pid, uid: caller.uid, startTicks: status.startTicks });
    if (!view) return { jobId: null, env: {} };
    return { jobId: view.jobId, env: { ...(this.jobs.get(view.jobId)?.mps?.env ?? {}) } };
  }

  /** How a task of Slurm job `jobId` shares its GPU: an MPS client at its share (gres/mps), else shared as any process. */
  sharingOf(jobId: string): { mode: 'mps'; mpsSharePercent: number; mpsClientPriority: MpsClientPriority } | null {
    const job = this.jobs.get(jobId);
    // the priority its task prolog exported, from its lane at the prolog: the clients keep it whatever the lane becomes
    return job?.mps && job.view.mpsPercent !== null ? { mode: 'mps', mpsSharePercent: job.view.mpsPercent, mpsClientPriority: job.mps.env.CUDA_MPS_CLIENT_PRIORITY === '1' ? 'below-normal' : 'normal' } : null;
  }

  list(): SlurmJobView[] {
    return [...this.jobs.values()].map((j) => j.view);
  }

  /**
   * The live Slurm job the enrolling process is in, by the kernel's word: its cgroup, else (no Slurm cgroup)
   * slurmd's own tracking through `scontrol pidinfo`; only a job of the process's own user. Null: none.
   */
  jobOf(proc: { pid: number; uid: number; startTicks: number }): SlurmJobView | null {
    // only a live Slurm job of the process's own user can be its job: anyone else costs no /proc reads and no scontrol
    const theirs = [...this.jobs.values()].filter((j) => !j.ended && j.view.uid === proc.uid);
    if (theirs.length === 0) return null;
    const cgroup = readSmallText(join(this.options.procRoot ?? '/proc', String(proc.pid), 'cgroup'), 64 * 1024, 'utf8');
    let id = (cgroup ? parseCgroup(cgroup).slurmJobId : null) ?? this.stepdAbove(proc.pid);
    if (!id) {
      const key = `${proc.pid}:${proc.startTicks}`;
      if (!this.pidCache.has(key)) {
        if (this.pidCache.size > 4096) this.pidCache.clear();
        const nodes = new Set(theirs.map((j) => j.view.node));
        let found: string | null = null;
        for (const node of nodes) if ((found = (this.options.pidInfo ?? scontrolPidInfo)(proc.pid, node))) break;
        this.pidCache.set(key, found);
      }
      id = this.pidCache.get(key) ?? null;
    }
    const job = id ? this.jobs.get(id) : undefined;
    return job && !job.ended && job.view.uid === proc.uid ? job.view : null;
  }

  /**
   * The job of the root-owned slurmstepd above `pid` ("slurmstepd: [123.batch]", root's words, which the user cannot
   * change): what proctrack/linuxproc itself reads. It names the task prolog's job, where `scontrol pidinfo` named
   * none under the real Slurm of slurm.multiuser.test (the same call from the task itself did).
   */
  private stepdAbove(pid: number): string | null {
    const root = this.options.procRoot ?? '/proc';
    let at = readProcStatus(pid, root)?.ppid ?? 0;
    for (let depth = 0; depth < 32 && at > 1; depth++) {
      const status = readProcStatus(at, root);
      if (!status) return null;
      if (status.uid === 0 && readSmallText(join(root, String(at), 'comm'), 256, 'utf8')?.trim() === 'slurmstepd') {
        const cmdline = readSmallText(join(root, String(at), 'cmdline'), 4096, 'utf8') ?? '';
        return /^slurmstepd: \[(\d+)\.[A-Za-z0-9_]+\]/.exec(cmdline)?.[1] ?? null;
      }
      at = status.ppid;
    }
    return null;
  }

  /** A gpushare job was made for (a task of) Slurm job `slurmJobId`. */
  adopted(slurmJobId: string, jobId: string): void {
    this.jobs.get(slurmJobId)?.jobs.add(jobId);
  }

  /** One tick's usage, integrated over its interval, for each live Slurm job's processes. */
  sample(snapshot: Snapshot): void {
    const seconds = (snapshot.intervalMs ?? snapshot.nominalIntervalMs) / 1000;
    for (const job of this.jobs.values()) {
      if (job.ended || job.jobs.size === 0) continue;
      const pids = new Set<number>();
      for (const id of job.jobs) {
        for (const pid of this.options.membersOf?.(id) ?? []) pids.add(pid);
        const record = this.scheduler.table.get(id);
        if (record?.view.pid) pids.add(record.view.pid);
        if (record && !FINAL_STATES.has(record.view.state)) job.gatedNs.set(id, Math.max(job.gatedNs.get(id) ?? 0, this.gatedNs(record)));
      }
      const mine = snapshot.processes.filter((p) => pids.has(p.pid) && p.uid === job.view.uid);
      if (mine.length === 0) continue;
      // a MIG slice is a GPU of its own here, whose GPU-seconds are its share of its GPU (its compute slices of the GPU's)
      const byPlace = new Map<string, { memory: number; sm: number; share: number }>();
      for (const p of mine) {
        const key = `${p.gpuIndex}/${p.gpuInstanceId ?? ''}`;
        let place = byPlace.get(key);
        if (!place) {
          const gpu = snapshot.gpus.find((g) => g.index === p.gpuIndex);
          byPlace.set(key, (place = { memory: 0, sm: 0, share: gpuShareOfPlace(gpu, p.gpuInstanceId) }));
          if (!job.places.has(key) && job.places.size < 256) {
            const profile = p.gpuInstanceId === null ? null : (gpu?.migSlices.find((m) => m.gpuInstanceId === p.gpuInstanceId)?.profileName ?? null);
            job.places.set(key, { gpu: p.gpuIndex, gpuInstanceId: p.gpuInstanceId, profile });
          }
        }
        place.memory += p.usedMemory ?? 0;
        place.sm += p.smPercent ?? 0;
      }
      let memory = 0;
      for (const g of byPlace.values()) {
        job.usage.gpuSeconds += seconds * g.share;
        job.usage.smSeconds += (Math.min(100, g.sm) * seconds) / 100;
        memory += g.memory;
      }
      job.usage.memoryGiBHours += (memory / GiB) * (seconds / 3600);
      job.usage.peakMemoryBytes = Math.max(job.usage.peakMemoryBytes, memory);
    }
  }

  /**
   * The epilog's call: settle its usage and let go of its holds (a stopped process resumed, a parked one brought back);
   * its gpushare jobs end with their last processes, in their lanes until then.
   */
  async end(jobId: string, caller: Caller): Promise<SlurmEpilogResult> {
    if (!caller.admin) throw new ApiError('forbidden', `Cannot end Slurm job ${jobId}: only root (Slurm's epilog) or an administrator may; ${caller.user} (uid ${caller.uid}) is not.`);
    const job = this.jobs.get(jobId);
    if (!job) throw new ApiError('not-found', `Slurm job ${jobId} was never registered here (its prolog did not reach this daemon): nothing to end.`);
    const s = this.scheduler;
    const records = [...job.jobs].map((id) => s.table.get(id)).filter((r): r is JobRecord => r !== undefined);
    let released = 0;
    const pids = new Set<number>();
    let gatedNs = 0;
    let parkedMs = 0;
    for (const record of records) {
      for (const pid of this.options.membersOf?.(record.view.id) ?? []) pids.add(pid);
      if (record.view.pid) pids.add(record.view.pid);
      gatedNs += FINAL_STATES.has(record.view.state) ? (job.gatedNs.get(record.view.id) ?? 0) : Math.max(job.gatedNs.get(record.view.id) ?? 0, this.gatedNs(record));
      parkedMs += timeIn(record, 'parked');
      if (FINAL_STATES.has(record.view.state)) continue;
      // a process outliving its Slurm job (a SIGTERM handler, a task proctrack/linuxproc lost) keeps its lane and slot,
      // ending with its last process: a freed slot would let a held launch run ungated, under a higher job
      if (record.holds.has('user') || record.holds.has('quota')) {
        // stopped processes could not die of Slurm's signals; a resume is a move, applied by a step of the loop
        await s.requestMove(() => [() => s.resume(record, `Slurm job ${jobId}'s epilog`)]).catch(() => undefined); // refused: the job changed meanwhile
        released++;
      }
      if (record.view.state === 'parked') {
        s.requestPark(record, 'unpark', `Slurm job ${jobId}'s epilog`).catch(() => undefined); // refused (no room): it stays parked, still in its lane
        released++;
      }
    }
    job.ended = true;
    const mpsFailure = job.mps ? this.leaveMps(job.mps) : null;
    const snapshot = s.snapshot(); // already integrated by its tick: integrating it again would count one interval twice
    const leftOnGpu = snapshot.processes.filter((p) => pids.has(p.pid) || (p.uid === job.view.uid && p.context?.slurmJobId === jobId)).map((p) => ({ pid: p.pid, gpu: p.gpuIndex }));
    const usage = { ...job.usage, gatedSeconds: gatedNs / 1e9, parkedSeconds: parkedMs / 1000 };
    if (this.options.usage) {
      const { view } = job;
      this.options.usage.recordSlurmUsage({
        jobId, user: view.user, partition: view.partition, qos: view.qos, start: view.since, end: Date.now(),
        gpuHours: usage.gpuSeconds / 3600, smHours: usage.smSeconds / 3600, memoryGiBHours: usage.memoryGiBHours, peakMemoryBytes: usage.peakMemoryBytes,
        gatedSeconds: usage.gatedSeconds, parkedSeconds: usage.parkedSeconds, account: view.account, gpus: slurmGpusText(job.places.values()),
      });
      await this.options.usage.flush(); // in the store when the epilog returns: a report run after it lists the job (a store in trouble keeps it and retries)
    }
    return {
      jobId,
      ...(mpsFailure ? { mpsFailure } : {}),
      jobs: records.map((r) => r.view.id),
      usage,
      leftOnGpu,
      released,
    };
  }

  /** The job ended: its GPU's MPS daemon stops with its last holder (a job here or another Slurm job), as for a gpushare job; why a stop failed, or null. */
  private leaveMps(mps: NonNullable<SlurmJob['mps']>): string | null {
    const daemons = this.scheduler.act.options.mps;
    if (!daemons) return null;
    const others = this.scheduler.table.placed().filter((r) => mpsDaemonKey(r.view) === mps.key && !FINAL_STATES.has(r.view.state)).length + (this.scheduler.mpsHolders?.(mps.key) ?? 0);
    try {
      daemons.leave(mps.daemon, others);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  private gatedNs(record: JobRecord): number {
    const gate = this.scheduler.gate;
    if (record.slot === null || !gate?.readSlot) return 0;
    try {
      return gate.readSlot(record.slot).gatedNs ?? 0;
    } catch {
      return 0;
    }
  }

  private forget(): void {
    if (this.jobs.size <= MAX_SLURM_JOBS) return;
    for (const [id, job] of this.jobs) {
      if (this.jobs.size <= MAX_SLURM_JOBS) break;
      if (job.ended) this.jobs.delete(id);
    }
  }
}

/** Milliseconds a job spent in `state`, from its history. */
function timeIn(record: JobRecord, state: string): number {
  let total = 0;
  let since: number | null = null;
  for (const change of record.view.history) {
    if (change.state === state && since === null) since = change.at;
    else if (change.state !== state && since !== null) {
      total += change.at - since;
      since = null;
    }
  }
  return since === null ? total : total + (Date.now() - since);
}
