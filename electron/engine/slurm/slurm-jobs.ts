// Slurm jobs on this node: the prolog registers each (root only), its tasks enrol and join it by what
// the kernel says of them (the job's cgroup, or `scontrol pidinfo` where Slurm tracks processes without
// cgroups), and the epilog ends it and settles its usage. This module owns the Slurm jobs; the scheduler
// owns the gpushare jobs their tasks become (enrol/enrolment.ts asks jobOf for their quota and lane).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { FINAL_STATES } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { slurmLane, type SlurmConfig, type SlurmEpilogResult, type SlurmJobView, type SlurmPrologParams } from '../../../shared/slurm.js';
import { isNamedAccount, lookupAccount } from '../accounts.js';
import { ApiError } from '../api/api-error.js';
import type { Caller } from '../api/dispatcher.js';
import { readSmallText } from '../proc/bounded-read.js';
import { parseCgroup } from '../proc/process-context.js';
import { appendSlurmUsage } from '../reports/slurm-usage.js';
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
  /** Each one's time gated, as its slot last said (the slot is freed when its last process exits, before the epilog). */
  gatedNs: Map<string, number>;
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
    private readonly options: { config: () => SlurmConfig; pidInfo?: PidInfo; procRoot?: string; membersOf?: (jobId: string) => number[]; usageFile?: string | null },
  ) {
    scheduler.laneCap = (record) => {
      const id = record.view.enrolled?.slurm?.jobId;
      const job = id ? this.jobs.get(id) : undefined;
      return job?.view.maxLane ? { lane: job.view.maxLane, why: `Slurm job ${id}'s ${job.view.laneFrom}` } : null;
    };
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
    const view: SlurmJobView = {
      jobId: params.jobId,
      user: account.name,
      uid: params.uid,
      partition: params.partition ?? null,
      qos: params.qos ?? null,
      gpus: params.gpus,
      memoryQuotaBytes: quota,
      lane,
      laneFrom: from,
      maxLane,
      mpsPercent: params.mpsPercent ?? null,
      node: params.node ?? null,
      since: Date.now(),
    };
    const old = this.jobs.get(params.jobId);
    if (old && !old.ended && old.view.uid !== params.uid) throw new ApiError('conflict', `Slurm job ${params.jobId} is registered already for uid ${old.view.uid}; nothing was changed.`);
    this.jobs.set(params.jobId, { view, ended: false, usage: old?.usage ?? { gpuSeconds: 0, smSeconds: 0, memoryGiBHours: 0, peakMemoryBytes: 0 }, jobs: old?.jobs ?? new Set(), gatedNs: old?.gatedNs ?? new Map() });
    this.forget();
    return view;
  }

  list(): SlurmJobView[] {
    return [...this.jobs.values()].map((j) => j.view);
  }

  /**
   * The live Slurm job the enrolling process is in, by the kernel's word: its cgroup, else (no Slurm cgroup)
   * slurmd's own tracking through `scontrol pidinfo`; only a job of the process's own user. Null: none.
   */
  jobOf(proc: { pid: number; uid: number; startTicks: number }): SlurmJobView | null {
    if (![...this.jobs.values()].some((j) => !j.ended)) return null; // no Slurm job here: no /proc reads, no scontrol
    const cgroup = readSmallText(join(this.options.procRoot ?? '/proc', String(proc.pid), 'cgroup'), 64 * 1024, 'utf8');
    let id = cgroup ? parseCgroup(cgroup).slurmJobId : null;
    if (!id) {
      const key = `${proc.pid}:${proc.startTicks}`;
      if (!this.pidCache.has(key)) {
        if (this.pidCache.size > 4096) this.pidCache.clear();
        const nodes = new Set([...this.jobs.values()].filter((j) => !j.ended).map((j) => j.view.node));
        let found: string | null = null;
        for (const node of nodes) if ((found = (this.options.pidInfo ?? scontrolPidInfo)(proc.pid, node))) break;
        this.pidCache.set(key, found);
      }
      id = this.pidCache.get(key) ?? null;
    }
    const job = id ? this.jobs.get(id) : undefined;
    return job && !job.ended && job.view.uid === proc.uid ? job.view : null;
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
      const byGpu = new Map<number, { memory: number; sm: number }>();
      for (const p of mine) {
        const g = byGpu.get(p.gpuIndex) ?? { memory: 0, sm: 0 };
        g.memory += p.usedMemory ?? 0;
        g.sm += p.smPercent ?? 0;
        byGpu.set(p.gpuIndex, g);
      }
      let memory = 0;
      for (const g of byGpu.values()) {
        job.usage.gpuSeconds += seconds;
        job.usage.smSeconds += (Math.min(100, g.sm) * seconds) / 100;
        memory += g.memory;
      }
      job.usage.memoryGiBHours += (memory / GiB) * (seconds / 3600);
      job.usage.peakMemoryBytes = Math.max(job.usage.peakMemoryBytes, memory);
    }
  }

  /** The epilog's call: let go of its holds, end its gpushare jobs, and settle its usage. */
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
      if (record.view.state === 'suspended' || record.view.state === 'parked') released++;
      s.endEnrolled(record, `Slurm job ${jobId} ended (epilog)`); // its gate slot freed, holds let go, parked memory given up
    }
    job.ended = true;
    const snapshot = s.snapshot(); // already integrated by its tick: integrating it again would count one interval twice
    const leftOnGpu = snapshot.processes.filter((p) => pids.has(p.pid) || (p.uid === job.view.uid && p.context?.slurmJobId === jobId)).map((p) => ({ pid: p.pid, gpu: p.gpuIndex }));
    const usage = { ...job.usage, gatedSeconds: gatedNs / 1e9, parkedSeconds: parkedMs / 1000 };
    if (this.options.usageFile) {
      const { view } = job;
      appendSlurmUsage(this.options.usageFile, {
        jobId, user: view.user, partition: view.partition, qos: view.qos, start: view.since, end: Date.now(),
        gpuHours: usage.gpuSeconds / 3600, smHours: usage.smSeconds / 3600, memoryGiBHours: usage.memoryGiBHours, peakMemoryBytes: usage.peakMemoryBytes,
        gatedSeconds: usage.gatedSeconds, parkedSeconds: usage.parkedSeconds,
      });
    }
    return {
      jobId,
      jobs: records.map((r) => r.view.id),
      usage,
      leftOnGpu,
      released,
    };
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
