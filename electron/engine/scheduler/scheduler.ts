// The scheduler: keeps the job table in step with every snapshot, starts queued jobs,
// enforces priorities and quotas, and raises one alert per contention onset.
// Commands reach it through scheduler-commands.ts; actuators are the launch gate
// (managed jobs), signals through the Freezer (everything else) and the launcher.
import { getPriority } from 'node:os';
import { FINAL_STATES } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { Engine } from '../engine.js';
import { UnavailableCheckpointer, type ProcessCheckpointer } from '../control/checkpointer.js';
import type { Freezer } from '../control/freezer.js';
import { readProcStatus } from '../control/proc-status.js';
import type { ProcessControl } from '../control/process-control.js';
import { mpsJobEnv, type MpsControl } from '../mps/mps-control.js';
import type { JobGate } from './job-gate.js';
import { JobTable, newJobView, noteSuspension, type HoldReason, type JobRecord } from './job-table.js';
import { launch, lookupAccount } from './launcher.js';
import { unparkAllOnStop } from './parking.js';
import { ACTIVE_HOLD_MS, ConditionTracker, decidePriority, detectContention, planAdmission, type Condition } from './policies.js';

export interface UnmanagedQuotaPolicy {
  /** How long a process may stay over its quota after the alert. */
  graceMs: number;
  action: 'suspend' | 'terminate';
}

export interface SchedulerOptions {
  engine: Pick<Engine, 'sampler' | 'events' | 'raiseAlert'>;
  control: ProcessControl;
  freezer: Freezer;
  gate: JobGate | null;
  checkpointer?: ProcessCheckpointer;
  /** MPS daemons for jobs in mode 'mps'; absent: such jobs cannot start. */
  mps?: MpsControl | null;
  /** Per-job log files go here. */
  logDir: string;
  /** Extra environment for every job (the simulated driver's). */
  jobEnv?: Record<string, string>;
  unmanagedQuota?: UnmanagedQuotaPolicy;
  activeHoldMs?: number;
  terminateGraceMs?: number;
}

export const DEFAULT_UNMANAGED_QUOTA: UnmanagedQuotaPolicy = { graceMs: 30_000, action: 'suspend' };
const JOBS_EVENT_INTERVAL_MS = 100;
const BEST_EFFORT_NICE = 19;

export class Scheduler {
  readonly table = new JobTable();
  readonly checkpointer: ProcessCheckpointer;
  readonly quotaPolicy: UnmanagedQuotaPolicy;
  private readonly tracker = new ConditionTracker();
  /** pid on a GPU → the managed job it belongs to (itself or a descendant of the job's process), by start time. */
  private readonly lineage = new Map<number, { startTicks: number; jobId: string | null }>();
  private readonly policyErrors = new Map<string, Condition>();
  private lastSeq = -1;
  private jobsTimer: NodeJS.Timeout | null = null;
  private lastJobsEmit = 0;
  private stopped = false;

  constructor(readonly options: SchedulerOptions) {
    this.checkpointer = options.checkpointer ?? new UnavailableCheckpointer();
    this.quotaPolicy = options.unmanagedQuota ?? DEFAULT_UNMANAGED_QUOTA;
  }

  get holdMs(): number {
    return this.options.activeHoldMs ?? ACTIVE_HOLD_MS;
  }

  /** The latest snapshot (taken now when the sampler has none yet). */
  snapshot(): Snapshot {
    return this.options.engine.sampler.latest ?? this.options.engine.sampler.tick();
  }

  /** Run every policy: on each tick and after every command or job exit. */
  evaluate(snapshot: Snapshot | null = this.options.engine.sampler.latest): void {
    if (this.stopped || !snapshot) return;
    if (snapshot.seq !== this.lastSeq) {
      this.lastSeq = snapshot.seq;
      this.ingest(snapshot);
    }
    const now = Date.now();
    const plan = planAdmission(snapshot.gpus, this.table.live(), { blocked: (job, gpu) => (job.mode === 'mps' ? this.mpsBlocked(gpu) : null) });
    for (const { jobId, gpu } of plan.start) this.start(this.table.get(jobId)!, gpu, snapshot);
    this.enforcePriority(now);
    this.enforceUnmanagedQuotas(now);
    const conditions = [...detectContention(snapshot.gpus, this.table.live(), plan.waiting, now, this.holdMs), ...this.policyErrors.values()];
    for (const c of this.tracker.update(conditions)) {
      this.options.engine.raiseAlert({ kind: c.kind, severity: c.severity, gpu: c.gpu, jobId: c.jobId, message: c.message });
    }
    this.changed();
  }

  /** Hold a job back for a reason; the first reason suspends it (gate pause or SIGSTOP). */
  hold(record: JobRecord, reason: HoldReason, why: string): void {
    if (record.holds.has(reason)) return;
    if (record.holds.size === 0) {
      if (this.gated(record)) this.options.gate!.setPaused(record.slot!, true);
      else this.options.freezer.suspend(record.view.pid!, record.view.id);
    }
    record.holds.add(reason);
    // a gate pause for priority is gating; anything else is a suspension
    const gatedOnly = this.gated(record) && record.holds.size === 1 && reason === 'priority';
    this.table.transition(record, gatedOnly ? 'gated' : 'suspended', why);
    noteSuspension(record); // a second reason may come first now
  }

  /** Drop a reason; when none is left the job runs again. */
  release(record: JobRecord, reason: HoldReason, why: string): void {
    if (!record.holds.delete(reason)) return;
    if (record.holds.size > 0) return noteSuspension(record); // still held, for another reason
    if (this.gated(record)) this.options.gate!.setPaused(record.slot!, false);
    else if (this.options.freezer.isSuspended(record.view.pid!)) this.options.freezer.resume(record.view.pid!);
    this.table.transition(record, 'running', why);
  }

  /**
   * End a job's process: an MPS client first gets `terminate_client` from its server (killing a client
   * mid-work can hang the server and every other client), then the usual SIGTERM → SIGKILL.
   */
  terminateProcess(record: JobRecord): void {
    const { pid, gpu, mode } = record.view;
    if (pid === null) return;
    if (mode === 'mps' && gpu !== null && this.options.mps) {
      try {
        this.options.mps.terminateClient(gpu, pid);
      } catch {
        // no server answers: nothing of it can hang any more
      }
    }
    this.options.control.terminate(pid, { group: record.view.managed, graceMs: this.options.terminateGraceMs });
  }

  /** Why an MPS job cannot start on this GPU now (another user's MPS), or null. */
  private mpsBlocked(gpu: Snapshot['gpus'][number]): string | null {
    if (!this.options.mps) return 'MPS is not available in this engine';
    try {
      const [status] = this.options.mps.status([{ index: gpu.index, uuid: gpu.uuid }]);
      return status.state === 'held' ? status.message.replace(/\.$/, '') : null;
    } catch (error) {
      return `MPS status unknown: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Managed jobs with a gate slot act through the gate; everything else through signals. */
  gated(record: JobRecord): boolean {
    return record.view.managed && record.slot !== null && this.options.gate !== null;
  }

  /** Priority changes also renice the process: best-effort gets the lowest CPU priority. */
  renice(record: JobRecord): void {
    const pid = record.view.pid;
    if (pid === null) return;
    if (record.view.priority === 'best-effort') {
      if (record.originalNice === null) record.originalNice = currentNice(pid);
      this.options.control.renice(pid, BEST_EFFORT_NICE);
    } else if (record.originalNice !== null) {
      this.options.control.renice(pid, record.originalNice); // raising priority may need root: best effort
    }
  }

  /** The jobs changed: tell clients, at most every 100 ms. */
  changed(): void {
    if (this.jobsTimer || this.stopped) return;
    const wait = Math.max(0, this.lastJobsEmit + JOBS_EVENT_INTERVAL_MS - Date.now());
    this.jobsTimer = setTimeout(() => {
      this.jobsTimer = null;
      this.lastJobsEmit = Date.now();
      this.options.engine.events.emit('jobs', this.table.list(true));
    }, wait);
    this.jobsTimer.unref?.();
  }

  /** Engine shutdown: resume everything suspended, unpause gated jobs, release the gate. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.jobsTimer) clearTimeout(this.jobsTimer);
    this.options.freezer.stop();
    unparkAllOnStop(this, this.table.live());
    for (const r of this.table.live()) {
      if (this.gated(r) && r.holds.size > 0) this.options.gate!.setPaused(r.slot!, false);
    }
    this.options.gate?.close();
    this.options.control.dispose();
  }

  // ---- snapshot → table ----------------------------------------------------------

  private ingest(snapshot: Snapshot): void {
    const managedByPid = new Map<number, JobRecord>();
    for (const r of this.table.live()) if (r.view.managed && r.view.pid !== null && r.view.state !== 'queued') managedByPid.set(r.view.pid, r);
    const readings = new Map<JobRecord, { mem: number; sm: number | null }>();
    const seen = new Set<number>();
    const seenPids = new Set(snapshot.processes.map((p) => p.pid));
    for (const [pid] of this.lineage) if (!seenPids.has(pid)) this.lineage.delete(pid);

    for (const p of snapshot.processes) {
      if (p.command === 'nvidia-cuda-mps-server') continue; // the MPS server holds its clients' context: never a job to hold or kill
      const owner = this.managedOwner(p.pid, managedByPid);
      let record = owner;
      if (!record) {
        record = this.unmanaged(p.pid, p, snapshot);
        if (!record) continue;
        seen.add(p.pid);
      }
      const reading = readings.get(record) ?? { mem: 0, sm: null };
      reading.mem += p.usedMemory ?? 0;
      if (p.smPercent !== null) reading.sm = Math.min(100, (reading.sm ?? 0) + p.smPercent);
      readings.set(record, reading);
    }
    for (const r of this.table.live()) {
      if (!r.view.managed && !seen.has(r.view.pid!)) {
        if (r.view.state === 'parked' && this.alive(r)) continue; // checkpointed: off the GPU's list, still ours
        this.options.freezer.forget(r.view.pid!); // left the GPU (exited): never signal its pid again
        this.table.remove(r.view.id);
        continue;
      }
      if (r.view.state === 'queued') continue;
      const reading = readings.get(r);
      if (r.view.state === 'parked') {
        r.view.usedMemory = 0; // its memory is in host memory; a reading is from before the park
        r.view.smPercent = 0;
        continue;
      }
      r.view.usedMemory = reading ? reading.mem : r.view.managed ? 0 : null;
      r.view.smPercent = reading ? reading.sm : r.view.managed ? 0 : null;
      if ((r.view.smPercent ?? 0) > 0) r.lastActiveAt = snapshot.takenAt;
    }
  }

  /** Its process still runs (same pid, same start time). */
  private alive(record: JobRecord): boolean {
    const status = record.view.pid === null ? null : readProcStatus(record.view.pid);
    return status !== null && (record.startTicks === null || status.startTicks === record.startTicks);
  }

  /** The managed job a GPU process belongs to: its pid, or an ancestor's, is the job's. */
  private managedOwner(pid: number, managedByPid: Map<number, JobRecord>): JobRecord | undefined {
    const direct = managedByPid.get(pid);
    if (direct) return direct;
    const status = readProcStatus(pid);
    if (!status) return undefined;
    const cached = this.lineage.get(pid);
    if (cached && cached.startTicks === status.startTicks) return cached.jobId ? this.table.get(cached.jobId) : undefined;
    let jobId: string | null = null;
    let parent = status.ppid;
    for (let depth = 0; depth < 32 && parent > 1 && jobId === null; depth++) {
      const owner = managedByPid.get(parent);
      if (owner) jobId = owner.view.id;
      else parent = readProcStatus(parent)?.ppid ?? 0;
    }
    this.lineage.set(pid, { startTicks: status.startTicks, jobId });
    return jobId ? this.table.get(jobId) : undefined;
  }

  /** The job "p<pid>" of a GPU process gpushare did not start; created when first seen. */
  private unmanaged(pid: number, p: Snapshot['processes'][number], snapshot: Snapshot): JobRecord | undefined {
    const at = snapshot.takenAt;
    const id = `p${pid}`;
    const status = readProcStatus(pid);
    const existing = this.table.get(id);
    if (existing && (status === null || existing.startTicks === status.startTicks)) return existing;
    if (existing) {
      // the pid was reused by a new process: the old job is gone
      this.options.freezer.forget(pid);
      this.table.remove(id);
    }
    if (!status) return undefined; // exited between the driver's list and /proc
    const uid = p.uid ?? status.uid;
    const view = newJobView(
      { id, managed: false, owner: p.user ?? lookupAccount(uid).name, uid, argv: p.argv.length ? p.argv : [p.command ?? '?'], gpu: p.gpuIndex, requestedGpu: p.gpuIndex, pid, mode: p.kind === 'mps' ? 'mps' : 'shared', migSlice: migSliceOf(snapshot, p) },
      'running',
      'seen on GPU ' + p.gpuIndex,
      at,
    );
    return this.table.add(view, { startTicks: status.startTicks });
  }

  // ---- actuation -----------------------------------------------------------------

  private start(record: JobRecord, gpu: number, snapshot: Snapshot): void {
    const job = record.view;
    const gpuView = snapshot.gpus.find((g) => g.index === gpu);
    let slotEnv: Record<string, string> = {};
    try {
      if (this.options.gate) {
        const slot = this.options.gate.allocateSlot({ jobId: job.id, gpu, priority: job.priority, quotaBytes: job.memoryQuotaBytes });
        record.slot = slot.slot;
        slotEnv = slot.env;
      }
      const base = record.launchEnv;
      const extra = this.options.jobEnv ?? {};
      const env: Record<string, string> = {
        ...base,
        ...extra,
        ...slotEnv,
        ...this.spatialEnv(job, gpu, gpuView),
        CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
        // a MIG job sees only its slice
        CUDA_VISIBLE_DEVICES: job.mode === 'mig' && job.migSlice ? job.migSlice : gpuView?.uuid || String(gpu),
        GPUSHARE_JOB_ID: job.id,
      };
      if (extra.LD_LIBRARY_PATH && base.LD_LIBRARY_PATH) env.LD_LIBRARY_PATH = `${extra.LD_LIBRARY_PATH.split(':')[0]}:${base.LD_LIBRARY_PATH}`;
      if (slotEnv.LD_PRELOAD && base.LD_PRELOAD) env.LD_PRELOAD = `${slotEnv.LD_PRELOAD}:${base.LD_PRELOAD}`;
      if (this.options.gate === null && job.memoryQuotaBytes !== null) env.GPUSHARE_MEM_QUOTA = String(job.memoryQuotaBytes);
      const child = launch({ executable: record.executable!, argv: job.argv, cwd: job.cwd!, env, logPath: job.logPath!, runAs: record.runAs });
      record.child = child;
      job.gpu = gpu;
      job.pid = child.pid ?? null;
      child.once('error', (error) => this.exited(record, null, null, `could not start: ${error.message}`));
      child.once('exit', (code, signal) => this.exited(record, code, signal, null));
      if (job.pid !== null) {
        record.startTicks = readProcStatus(job.pid)?.startTicks ?? null;
        if (record.slot !== null) this.options.gate?.setPid?.(record.slot, job.pid);
        this.renice(record);
      }
      this.table.transition(record, 'running', `started on GPU ${gpu}${job.pid !== null ? ` as pid ${job.pid}` : ''}`);
    } catch (error) {
      this.exited(record, null, null, `could not start: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** MPS mode: our daemon for the GPU (started on demand), the SM share and the quota as the pinned memory limit. */
  private spatialEnv(job: JobRecord['view'], gpu: number, gpuView: Snapshot['gpus'][number] | undefined): Record<string, string> {
    if (job.mode !== 'mps') return {};
    const mps = this.options.mps;
    if (!mps) throw new Error('MPS is not available in this engine');
    mps.start({ index: gpu, uuid: gpuView?.uuid ?? String(gpu) });
    return mpsJobEnv(mps, gpu, job.mpsSharePercent ?? 100, job.memoryQuotaBytes);
  }

  private exited(record: JobRecord, code: number | null, signal: NodeJS.Signals | null, failure: string | null): void {
    if (FINAL_STATES.has(record.view.state)) return;
    const job = record.view;
    if (record.slot !== null) this.options.gate?.releaseSlot(record.slot);
    record.slot = null;
    record.holds.clear();
    record.parked = null;
    if (job.pid !== null) this.options.freezer.forget(job.pid);
    job.exitCode = code;
    job.signal = signal;
    job.usedMemory = null;
    job.smPercent = null;
    const by = record.terminatedBy ? ` (terminated by ${record.terminatedBy})` : '';
    const reason = failure ?? (signal ? `killed by ${signal}${by}` : `exit code ${code}${by}`);
    const ok = failure === null && code === 0;
    this.table.transition(record, ok ? 'finished' : 'failed', reason);
    this.options.engine.raiseAlert({
      kind: ok ? 'finished' : 'failed',
      severity: ok ? 'info' : 'warning',
      gpu: job.gpu,
      jobId: job.id,
      message: `${job.id} (${job.argv[0].split('/').pop()}) ${ok ? 'finished' : 'failed'}: ${reason}.${job.logPath ? ` Log: ${job.logPath}` : ''}`,
    });
    this.evaluate(); // its GPU may admit a queued job now
  }

  private enforcePriority(now: number): void {
    const live = this.table.live();
    const decision = decidePriority(live, now, { gateFor: (r) => this.gated(r), holdMs: this.holdMs });
    for (const r of live) {
      const key = `hold-failed:${r.view.id}`;
      const higher = decision.hold.get(r.view.id);
      try {
        if (higher && !r.holds.has('priority')) this.hold(r, 'priority', `${higher} (higher priority) is active on GPU ${r.view.gpu}`);
        else if (!higher && r.holds.has('priority')) this.release(r, 'priority', `no higher-priority job is active on GPU ${r.view.gpu}`);
        this.policyErrors.delete(key);
      } catch (error) {
        const message = `Could not hold ${r.view.id} back for ${higher}: ${error instanceof Error ? error.message : String(error)}`;
        this.policyErrors.set(key, { key, kind: 'contention', severity: 'warning', gpu: r.view.gpu, jobId: r.view.id, message });
      }
      const gatedBy = decision.gated.get(r.view.id);
      if (r.holds.size === 0 && gatedBy && r.view.state === 'running') this.table.transition(r, 'gated', `${gatedBy} (higher priority) is active on GPU ${r.view.gpu}`);
      else if (r.holds.size === 0 && !gatedBy && r.view.state === 'gated') this.table.transition(r, 'running', `no higher-priority job is active on GPU ${r.view.gpu}`);
    }
  }

  /** Unmanaged processes (and managed jobs without a gate) only get a reactive quota. */
  private enforceUnmanagedQuotas(now: number): void {
    for (const r of this.table.live()) {
      const job = r.view;
      if (this.gated(r) || job.pid === null || job.state === 'queued' || job.state === 'parked') continue;
      const over = job.memoryQuotaBytes !== null && (job.usedMemory ?? 0) > job.memoryQuotaBytes;
      if (!over) {
        r.overQuotaSince = null;
        if (r.holds.has('quota')) this.release(r, 'quota', 'back within its memory quota');
        continue;
      }
      r.overQuotaSince ??= now;
      if (now - r.overQuotaSince < this.quotaPolicy.graceMs || r.holds.has('quota')) continue;
      try {
        if (this.quotaPolicy.action === 'terminate') {
          if (r.terminatedBy === null) {
            r.terminatedBy = 'the memory quota';
            this.terminateProcess(r);
          }
        } else {
          this.hold(r, 'quota', `over its memory quota for ${Math.round(this.quotaPolicy.graceMs / 1000)} s`);
        }
      } catch {
        // not ours to signal: the quota alert already says it is over
      }
    }
  }
}

/** The MIG slice a process runs in, by its GPU instance and compute instance. */
function migSliceOf(snapshot: Snapshot, p: Snapshot['processes'][number]): string | null {
  if (p.gpuInstanceId === null) return null;
  const gpu = snapshot.gpus.find((g) => g.index === p.gpuIndex);
  return gpu?.migSlices.find((s) => s.gpuInstanceId === p.gpuInstanceId && s.computeInstanceId === p.computeInstanceId)?.uuid ?? null;
}

function currentNice(pid: number): number | null {
  try {
    return getPriority(pid);
  } catch {
    return null;
  }
}
