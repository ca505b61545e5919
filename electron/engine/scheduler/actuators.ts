// The one layer that acts on jobs: launch gate, signals (through the Freezer), renice,
// the launcher, MPS and the checkpointer. The control loop (scheduler.ts, with the park steps
// it runs from parking.ts; adoption.ts while an engine starts) calls these; commands never do.
// Nothing here changes a job's state: that is the state machine's (job-state.ts).
import type { ChildProcess } from 'node:child_process';
import { quotaOverItsGpus } from '../../../shared/jobs.js';
import { getPriority } from 'node:os';
import { mpsClientPriorityOf } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import type { Freezer } from '../holds/freezer.js';
import { ApiError } from '../api/api-error.js';
import { readProcStatus, type ProcessRef } from '../proc/proc-status.js';
import type { ProcessControl } from '../holds/process-control.js';
import { MPS_SERVER_COMMAND, mpsJobEnv, mpsSliceJobEnv, type SliceRef } from '../mps/mps-control.js';
import type { MpsDaemonRef, MpsDaemons } from '../mps/mps-daemons.js';
import type { GateClaim } from './activity-claims.js';
import type { GateSlotUsage, JobGate } from './job-gate.js';
import type { JobRecord } from './job-table.js';
import { launch } from './launcher.js';
import type { ParkRequests } from './park-requests.js';

export interface ActuatorOptions {
  control: ProcessControl;
  freezer: Freezer;
  gate: JobGate | null;
  checkpointer: ProcessCheckpointer;
  /** MPS daemons, started for jobs and stopped with their last client (mps-daemons.ts); null: no MPS. */
  mps: MpsDaemons | null;
  /** Extra environment for every job (the simulated driver's). */
  jobEnv?: Record<string, string>;
  terminateGraceMs?: number;
  /** Park files, through which a parked job's CUDA calls ask for its memory back (auto-park); absent: none. */
  parkRequests?: ParkRequests | null;
  /** A GPU as the latest snapshot shows it (its MIG slices, for the slice daemons of jobs an earlier engine started). */
  gpuView?: (gpu: number) => GpuView | undefined;
  /** Where a line for the daemon's log goes (a process not acted on, and why); default stderr. */
  log?: (line: string) => void;
}

const BEST_EFFORT_NICE = 19;
const NO_PIDS: ReadonlySet<number> = new Set();
type GpuView = Snapshot['gpus'][number];

/** A job about to become an MPS client: its daemon and its client environment. */
interface MpsClientPlan {
  daemon: MpsDaemonRef;
  env: Record<string, string>;
}

/** The slice whose own MPS daemon serves this job (mode mig with an MPS share), or null. */
export function mpsSliceOf(job: Pick<JobRecord['view'], 'mode' | 'migSlice' | 'mpsSharePercent'>, gpuView: GpuView | undefined): SliceRef | null {
  if (job.mode !== 'mig' || job.mpsSharePercent === null || job.migSlice === null || !gpuView) return null;
  const slice = gpuView.migSlices.find((s) => s.uuid === job.migSlice);
  return slice ? { gpu: gpuView.index, gpuInstanceId: slice.gpuInstanceId, uuid: slice.uuid } : null;
}

/** The MPS daemon a job on GPU `gpu` is a client of: the GPU's (mode mps), its slice's (`slice`: mode mig with a share), or null. */
function mpsDaemonOn(mode: JobRecord['view']['mode'], gpu: number, gpuView: GpuView | undefined, slice: SliceRef | null): MpsDaemonRef | null {
  if (mode === 'mps') return { gpu: { index: gpu, uuid: gpuView?.uuid ?? String(gpu) } };
  return slice ? { slice } : null;
}

/** Which MPS daemon a job is a client of: "gpu N" (mode mps), "slice MIG-…" (mode mig with a share), or null. */
export function mpsDaemonKey(job: Pick<JobRecord['view'], 'mode' | 'gpu' | 'migSlice' | 'mpsSharePercent'>): string | null {
  if (job.mode === 'mps' && job.gpu !== null) return `gpu ${job.gpu}`;
  if (job.mode === 'mig' && job.mpsSharePercent !== null && job.migSlice !== null) return `slice ${job.migSlice}`;
  return null;
}

/** The quota the gate holds the job's processes to together. */
const slotQuota = quotaOverItsGpus;

export class JobActuators {
  /** The slice whose MPS daemon each slice client was started on, by job id (for terminate_client). */
  private readonly sliceClients = new Map<string, SliceRef>();

  constructor(readonly options: ActuatorOptions) {}

  /** Managed jobs with a gate slot are held through the gate; everything else by signals. */
  gated(record: JobRecord): boolean {
    return record.view.managed && record.slot !== null && this.options.gate !== null;
  }

  /** Hold a job back: pause its gate slot, or stop it (a managed job's whole process group). */
  pause(record: JobRecord): void {
    if (this.gated(record)) return this.options.gate!.setPaused(record.slot!, true);
    const pid = record.view.pid!;
    if (!this.stillItsProcess(record, pid, 'not suspended')) throw gone(record, 'suspend');
    this.options.freezer.suspend(pid, record.view.id, { group: record.view.managed, startTicks: record.startTicks });
  }

  /** Let it run again (undoes pause); a hold whose process is gone is forgotten, never sent to a pid another process took. */
  unpause(record: JobRecord): void {
    if (this.gated(record)) return this.options.gate!.setPaused(record.slot!, false);
    const pid = record.view.pid!;
    if (!this.options.freezer.isSuspended(pid)) return;
    if (this.stillItsProcess(record, pid, 'not resumed')) this.options.freezer.resume(pid);
    else this.options.freezer.forget(pid);
  }

  /**
   * False, with a line in the log, when the job's pid now names a process other than the one the job had
   * (its start time differs: it exited and the kernel gave the pid to another); such a process is never acted on.
   * True when it is the same, gone (the signal finds nobody), or its start time was never known.
   */
  private stillItsProcess(record: JobRecord, pid: number, notDone: string): boolean {
    const startTicks = record.startTicks;
    if (startTicks === null) return true;
    const now = this.options.control.status(pid);
    if (now === null || now.startTicks === startTicks) return true;
    this.log(`pid ${pid} (${record.view.id}) exited and the pid now names another process (started at tick ${now.startTicks}, not ${startTicks}): ${notDone}`);
    return false;
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else process.stderr.write(`gpushare: ${line}\n`);
  }

  /** A job that is stopped or checkpointed must not count in its gate domain: it could stall higher jobs mid-launch. */
  setGateMember(record: JobRecord, member: boolean): void {
    if (this.gated(record)) this.options.gate!.setMember(record.slot!, member);
  }

  /**
   * Its priority reaches the gate and the CPU: best-effort gets the lowest CPU priority, undone when it goes back up.
   * Not its MPS client priority (CUDA_MPS_CLIENT_PRIORITY, set at launch by mpsClientPlan): MPS reads it when the client
   * connects, so a running MPS client keeps the priority it started with until it is started again.
   */
  applyPriority(record: JobRecord): void {
    if (this.gated(record)) this.options.gate!.setPriority(record.slot!, record.view.priority);
    const pid = record.view.pid;
    if (pid === null || !this.stillItsProcess(record, pid, 'not reniced')) return;
    if (record.view.priority === 'best-effort') {
      if (record.originalNice === null) record.originalNice = currentNice(pid);
      this.options.control.renice(pid, BEST_EFFORT_NICE);
    } else if (record.originalNice !== null) {
      this.options.control.renice(pid, record.originalNice); // raising priority may need root: best effort
      record.originalNice = null;
    }
  }

  applyQuota(record: JobRecord): void {
    if (this.gated(record)) this.options.gate!.setQuota(record.slot!, slotQuota(record.view));
  }

  /** Why an MPS job cannot start on this GPU now (another user's MPS, or its daemon still stopping), or null. */
  mpsBlocked(gpu: GpuView, job: JobRecord['view']): string | null {
    const mps = this.options.mps;
    if (!mps) return 'MPS is not available in this engine';
    try {
      const [status] = mps.control.status([{ index: gpu.index, uuid: gpu.uuid }]);
      if (status.state === 'held') return status.message.replace(/\.$/, '');
      const daemon = mpsDaemonOn(job.mode, gpu.index, gpu, mpsSliceOf(job, gpu));
      return daemon ? mps.stoppingBlock(daemon) : null;
    } catch (error) {
      return `MPS status unknown: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /**
   * Start a queued job on `gpu`: a gate slot, its environment, the launcher. Throws when it
   * cannot start; the slot is given back then. The child is unref'd: the engine never waits for a job.
   */
  launch(record: JobRecord, gpus: ReadonlyArray<{ index: number; view: GpuView | undefined }>): ChildProcess {
    const job = record.view;
    const [{ index: gpu, view: gpuView }, ...also] = gpus;
    let slotEnv: Record<string, string> = {};
    const gate = this.options.gate;
    const mpsClient = this.mpsClientPlan(record, gpu, gpuView);
    if (gate) {
      const owner = record.runAs ? { uid: record.runAs.uid, gid: record.runAs.gid } : null; // the job writes only its own activity file
      // an MPS client too: its client priority alone did not protect a high client on an H200 (bench/device/README.md)
      const alsoOn = also.map((g) => g.index);
      const slot = gate.allocateSlot({ jobId: job.id, gpu, ...(alsoOn.length ? { alsoOn } : {}), migSlice: job.mode === 'mig' ? job.migSlice : null, priority: job.priority, quotaBytes: slotQuota(job), owner });
      record.slot = slot.slot;
      record.gateWaitNs = 0; // a fresh slot's counters start at nothing
      slotEnv = slot.env;
    }
    try {
      const base = record.launchEnv;
      const extra = this.options.jobEnv ?? {};
      const env: Record<string, string> = {
        ...base,
        ...extra,
        ...slotEnv,
        ...(mpsClient ? this.joinMps(record, mpsClient) : {}),
        CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
        // a MIG job sees only its slice
        CUDA_VISIBLE_DEVICES: job.mode === 'mig' && job.migSlice ? job.migSlice : gpus.map((g) => g.view?.uuid || String(g.index)).join(','),
        GPUSHARE_JOB_ID: job.id,
        // its quota is per GPU: each process is told one GPU's share (the gate holds them together to all of them)
        ...(gpus.length > 1 ? { GPUSHARE_JOB_GPUS: String(gpus.length) } : {}),
      };
      if (extra.LD_LIBRARY_PATH && base.LD_LIBRARY_PATH) env.LD_LIBRARY_PATH = `${extra.LD_LIBRARY_PATH.split(':')[0]}:${base.LD_LIBRARY_PATH}`;
      if (slotEnv.LD_PRELOAD && base.LD_PRELOAD) env.LD_PRELOAD = `${slotEnv.LD_PRELOAD}:${base.LD_PRELOAD}`;
      if (gate === null && job.memoryQuotaBytes !== null) env.GPUSHARE_MEM_QUOTA = String(slotQuota(job));
      if (gate && this.options.parkRequests) env.GPUSHARE_PARK_FILE = this.options.parkRequests.create(job.id, record.runAs ? { uid: record.runAs.uid, gid: record.runAs.gid } : null);
      const child = launch({ executable: record.executable!, argv: record.launchArgv ?? job.argv, cwd: job.cwd!, env, logPath: job.logPath!, runAs: record.runAs });
      child.unref(); // a stopping engine leaves its jobs running
      if (mpsClient) job.mpsClientPriority = mpsClientPriorityOf(job.priority); // what its env said: MPS keeps it for the client's life
      return child;
    } catch (error) {
      this.releaseSlot(record);
      throw error;
    }
  }

  /**
   * MPS mode: our daemon for the GPU, the SM share and the quota as the pinned memory limit; a MIG job with an MPS share:
   * the same with its slice's own daemon. Null: no MPS client. Starts nothing (joinMps does), so a refused gate slot leaves no daemon behind.
   */
  private mpsClientPlan(record: JobRecord, gpu: number, gpuView: GpuView | undefined): MpsClientPlan | null {
    const job = record.view;
    const slice = mpsSliceOf(job, gpuView);
    if (job.mode === 'mig' && job.mpsSharePercent !== null && !slice) throw new Error(`MIG slice ${job.migSlice} is not on GPU ${gpu} any more, so its MPS daemon cannot serve ${job.id}`);
    const daemon = mpsDaemonOn(job.mode, gpu, gpuView, slice);
    if (!daemon) return null;
    const mps = this.options.mps;
    if (!mps) throw new Error('MPS is not available in this engine');
    const env = daemon.slice
      ? mpsSliceJobEnv(mps.control, daemon.slice, job.mpsSharePercent!, job.memoryQuotaBytes, job.priority)
      : mpsJobEnv(mps.control, gpu, job.mpsSharePercent ?? 100, job.memoryQuotaBytes, job.priority);
    return { daemon, env };
  }

  /** The client's daemon runs (started on demand); returns the client's environment. */
  private joinMps(record: JobRecord, client: MpsClientPlan): Record<string, string> {
    this.options.mps!.startForJob(client.daemon);
    if (client.daemon.slice) this.sliceClients.set(record.view.id, client.daemon.slice);
    return client.env;
  }

  /**
   * A client ended: its daemon (its GPU's or its slice's) is stopped when no other job still uses it (`others`:
   * live jobs on that daemon, counted by mpsDaemonKey) and it was started for jobs. Returns why a stop failed, or null.
   */
  leaveMps(record: JobRecord, others: number): string | null {
    const daemon = this.daemonOf(record);
    this.sliceClients.delete(record.view.id);
    if (!daemon || !this.options.mps) return null;
    try {
      this.options.mps.leave(daemon, others);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * The snapshot's processes that are our own daemons' MPS servers (no job, never held): asked of MPS only when a
   * process of that name is listed. Anything else so named is a process like any other, its owner's.
   */
  ownMpsServers(snapshot: Snapshot | null): ReadonlySet<number> {
    if (!snapshot?.processes.some((p) => p.command === MPS_SERVER_COMMAND)) return NO_PIDS;
    const own = this.ownMpsServerPids();
    return new Set(snapshot.processes.filter((p) => own.has(p.pid)).map((p) => p.pid));
  }

  /** Every MPS server our own control daemons started, from /proc now (mps-control.ts says how it is told). */
  ownMpsServerPids(): ReadonlySet<number> {
    return this.options.mps?.control.ownServerPids() ?? NO_PIDS;
  }

  /** Whether a daemon was started for jobs (by this engine or an earlier one): only then is there anything to release. */
  mpsStartedForJobs(): boolean {
    return this.options.mps?.anyStartedForJobs() ?? false;
  }

  /** After a restart: stop a daemon started for jobs that nothing uses (`clients`); what failed, or null. */
  releaseUnusedMps(daemon: MpsDaemonRef, clients: number): string | null {
    try {
      this.options.mps?.releaseIfUnused(daemon, clients);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** The daemon a job is a client of (see mpsDaemonKey), as MPS control needs it. */
  private daemonOf(record: JobRecord): MpsDaemonRef | null {
    const { gpu, mode } = record.view;
    if (mpsDaemonKey(record.view) === null || gpu === null) return null;
    return mpsDaemonOn(mode, gpu, this.options.gpuView?.(gpu), mode === 'mps' ? null : this.sliceOf(record));
  }

  /** The slice daemon this job is a client of: where this engine started it, else (an earlier engine's job) from the snapshot. */
  private sliceOf(record: JobRecord): SliceRef | null {
    const { gpu } = record.view;
    return this.sliceClients.get(record.view.id) ?? mpsSliceOf(record.view, gpu === null ? undefined : this.options.gpuView?.(gpu));
  }

  /** The job's process is known: the gate learns its pid, its priority reaches the CPU. */
  attach(record: JobRecord): void {
    const pid = record.view.pid;
    if (pid === null) return;
    record.startTicks ??= readProcStatus(pid)?.startTicks ?? null;
    if (record.slot !== null) this.options.gate?.setPid?.(record.slot, pid);
    this.applyPriority(record);
  }

  /** What the job's processes published in its gate slot now (null: no slot to read, or it cannot be read: it says nothing new). */
  readGate(record: JobRecord): GateSlotUsage | null {
    if (!this.gated(record) || !this.options.gate!.readSlot) return null;
    try {
      return this.options.gate!.readSlot(record.slot!);
    } catch {
      return null;
    }
  }

  /** What the job claims on the gate now: mid-launch threads, its latest launch (null: no slot to read). `slot`: a reading taken this step. */
  gateClaim(record: JobRecord, slot = this.readGate(record)): GateClaim | null {
    return slot ? { inLaunch: slot.inLaunch ?? 0, lastLaunchNs: slot.lastLaunchNs ?? 0n, idleSinceNs: slot.idleSinceNs ?? 0n } : null;
  }

  /** Its gate claims hold others back (false) or not (true: the driver has not confirmed them). */
  setGateUnconfirmed(record: JobRecord, unconfirmed: boolean): void {
    if (this.gated(record)) this.options.gate!.setUnconfirmed?.(record.slot!, unconfirmed);
  }

  /** Allocations the job's quota refused so far, as its processes published them (null: no slot to read). `slot`: a reading taken this step. */
  refusedAllocations(record: JobRecord, slot = this.readGate(record)): number | null {
    return slot ? slot.oomCount : null;
  }

  /**
   * What its processes publish about their CUDA calls (null: no slot to read): threads inside a call
   * now (launches through the gate; synchronisations, allocations and frees through the park file),
   * and when one last returned (ms since the epoch; null: none yet).
   */
  cudaCalls(record: JobRecord): { inCall: number; lastCallAt: number | null } | null {
    if (!this.gated(record) || !this.options.gate!.readSlot) return null;
    try {
      const slot = this.options.gate!.readSlot(record.slot!);
      if (slot.inLaunch === undefined) return null;
      const other = record.view.managed ? this.options.parkRequests?.read(record.view.id) : null;
      const lastNs = [slot.lastLaunchNs ?? 0n, other?.lastCallNs ?? 0n].reduce((a, b) => (a > b ? a : b));
      const lastCallAt = lastNs === 0n ? null : Date.now() - Number(process.hrtime.bigint() - lastNs) / 1e6;
      return { inCall: slot.inLaunch + (other?.inCall ?? 0), lastCallAt };
    } catch {
      return null;
    }
  }

  /**
   * A gate slot (and park file, with auto-park) for a process that enrolled (enrol/enrolment.ts): the files it
   * is handed as descriptors. Throws when no slot is free; nothing is left behind then.
   */
  enrolSlot(record: JobRecord, gpu: number): { dir: string; control: string; activity: string; park: string | null } {
    const gate = this.options.gate;
    if (!gate?.slotFiles) throw new Error('this engine has no launch gate');
    const job = record.view;
    const engineUid = process.geteuid?.() ?? -1;
    const owner = record.runAs && record.runAs.uid !== engineUid ? { uid: record.runAs.uid, gid: record.runAs.gid } : null;
    const slot = gate.allocateSlot({ jobId: job.id, gpu, migSlice: job.migSlice, priority: job.priority, quotaBytes: job.memoryQuotaBytes, owner });
    record.slot = slot.slot;
    try {
      const park = this.options.parkRequests ? this.options.parkRequests.create(job.id, owner) : null;
      const files = gate.slotFiles(slot.slot);
      return { dir: files.dir, control: files.control, activity: files.activity, park };
    } catch (error) {
      this.releaseSlot(record);
      throw error;
    }
  }

  /** An enrolled job the driver lists elsewhere than its slot said: its slot follows it (the library reads its domain at every launch). */
  moveSlot(record: JobRecord): void {
    if (record.slot !== null && record.view.gpu !== null) this.options.gate?.moveSlot?.(record.slot, record.view.gpu, record.view.migSlice, record.view.gpus.slice(1));
  }

  /** The job's park file, where auto-park made one (null: none). */
  parkFileOf(record: JobRecord): string | null {
    if (!this.options.parkRequests || !record.view.managed) return null;
    try {
      const path = this.options.parkRequests.pathOf(record.view.id);
      return this.options.parkRequests.read(record.view.id) ? path : null;
    } catch {
      return null;
    }
  }

  releaseSlot(record: JobRecord): void {
    if (record.view.managed) this.options.parkRequests?.remove(record.view.id);
    if (record.slot !== null) this.options.gate?.releaseSlot(record.slot);
    record.slot = null;
  }

  /** Its process is gone: never signal its pid again. */
  forgetProcess(record: JobRecord): void {
    if (record.view.pid !== null) {
      this.options.freezer.forget(record.view.pid);
      this.options.freezer.forgetParked(record.view.pid);
    }
  }

  /**
   * End a job's process: an MPS client first gets `terminate_client` from its server (killing a client
   * mid-work can hang the server and every other client), then SIGTERM → SIGKILL; a held job is let go so it can exit.
   */
  terminate(record: JobRecord): void {
    const { pid, gpu, mode, migSlice, mpsSharePercent } = record.view;
    if (pid === null) return;
    if (!this.stillItsProcess(record, pid, 'not terminated')) throw gone(record, 'terminate');
    const sliceClient = mode === 'mig' && mpsSharePercent !== null && migSlice !== null;
    if ((mode === 'mps' || sliceClient) && gpu !== null && this.options.mps) {
      try {
        const slice = sliceClient ? this.sliceOf(record) : null;
        if (slice) this.options.mps.control.terminateSliceClient(slice, pid);
        else if (!sliceClient) this.options.mps.control.terminateClient(gpu, pid);
      } catch {
        // no server answers: nothing of it can hang any more
      }
    }
    if (record.view.enrolled) {
      // an enrolled job's process group may be its user's shell's: each of its processes the slot lists, and its first
      let refusal: unknown = null;
      let sent = 0;
      const targets = new Map<number, number | null>([[pid, record.startTicks], ...this.enrolledProcesses(record).map((p): [number, number] => [p.pid, p.startTicks])]);
      for (const [p, startTicks] of targets) {
        try {
          this.options.control.terminate(p, { graceMs: this.options.terminateGraceMs, startTicks }); // the process the owner check saw, not one that took its pid since
          sent++;
        } catch (error) {
          refusal = error; // gone already: the others still end
        }
      }
      if (sent === 0 && refusal) throw refusal;
    } else this.options.control.terminate(pid, { group: record.view.managed, graceMs: this.options.terminateGraceMs, startTicks: record.startTicks });
    if (this.gated(record)) this.options.gate!.setPaused(record.slot!, false); // let it reach its exit
    if (!record.view.managed) this.options.freezer.forget(pid); // terminate sent SIGCONT
  }

  /** The live processes an enrolled job's slot lists that the kernel says are its user's (the job writes that list itself); none without a slot to read. */
  private enrolledProcesses(record: JobRecord): ProcessRef[] {
    if (!this.gated(record) || !this.options.gate!.readSlot) return [];
    try {
      const refs: ProcessRef[] = [];
      for (const p of this.options.gate!.readSlot(record.slot!).processes) {
        const status = p.alive && p.pid !== record.view.pid ? this.options.control.status(p.pid) : null;
        if (status?.uid === record.view.uid) refs.push({ pid: p.pid, startTicks: status.startTicks });
      }
      return refs;
    } catch {
      return [];
    }
  }

  /**
   * Park every process of the job that holds GPU memory (`pids`): all locked, then all checkpointed, so none runs
   * while another is off the GPU; the guardian knows each before its first driver call. A failure part-way undoes
   * the rest (what moved comes back, what was locked is unlocked): the job is as it was, never half-parked.
   */
  async park(record: JobRecord, pids: readonly number[]): Promise<ProcessRef[]> {
    const checkpointer = this.options.checkpointer;
    const parked: ProcessRef[] = [];
    const locked: number[] = [];
    const moved: number[] = [];
    const fail = async (step: 'lock' | 'checkpoint', pid: number, error: unknown): Promise<never> => {
      const failures: string[] = [];
      for (const p of moved) await checkpointer.restore(p).catch((e: unknown) => failures.push(`restoring pid ${p}: ${message(e)}`));
      for (const p of locked) {
        await checkpointer.unlock(p).then(
          () => this.options.freezer.forgetParked(p),
          (e: unknown) => failures.push(`unlocking pid ${p}: ${message(e)}`),
        );
      }
      if (!locked.includes(pid)) this.options.freezer.forgetParked(pid);
      throw new ParkStepError(step, pids.length > 1 ? new Error(`pid ${pid}: ${message(error)}`) : error, failures.length > 0 ? failures.join('; ') : null);
    };
    for (const pid of pids) {
      try {
        // the start time read here, once, names the process for the unpark (the main one's is the job's own)
        parked.push(this.options.freezer.noteParked(pid, record.view.id, pid === record.view.pid ? record.startTicks : null));
        await checkpointer.lock(pid);
      } catch (error) {
        return fail('lock', pid, error);
      }
      locked.push(pid);
    }
    for (const pid of pids) {
      try {
        await checkpointer.checkpoint(pid);
      } catch (error) {
        return fail('checkpoint', pid, error);
      }
      moved.push(pid);
    }
    return parked;
  }

  /**
   * Unpark: restore every parked process, then unlock them all. A restore refused part-way (no room) checkpoints
   * again those already back (still locked): the job stays parked as a whole. The guardian keeps them on record until they run.
   */
  async unpark(record: JobRecord): Promise<void> {
    const pids: number[] = [];
    for (const p of this.parkedProcesses(record)) {
      const status = this.options.control.status(p.pid);
      if (status !== null && status.startTicks !== p.startTicks) {
        this.log(`pid ${p.pid} of ${record.view.id} exited while parked and the pid now names another process (started at tick ${status.startTicks}, not ${p.startTicks}): it is not restored`);
      }
      if (status !== null && status.startTicks === p.startTicks && status.state !== 'Z' && status.state !== 'X') pids.push(p.pid);
      else this.options.freezer.forgetParked(p.pid); // exited meanwhile: nothing of it to restore
    }
    const checkpointer = this.options.checkpointer;
    const back: number[] = [];
    for (const pid of pids) {
      try {
        await checkpointer.restore(pid);
      } catch (error) {
        const failures: string[] = [];
        for (const p of back) await checkpointer.checkpoint(p).catch((e: unknown) => failures.push(`checkpointing pid ${p} again: ${message(e)}`));
        throw new ParkStepError('restore', error, failures.length > 0 ? failures.join('; ') : null);
      }
      back.push(pid);
    }
    for (const pid of pids) {
      try {
        await checkpointer.unlock(pid);
      } catch (error) {
        throw new ParkStepError('unlock', pids.length > 1 ? new Error(`pid ${pid}: ${message(error)}`) : error, null);
      }
      this.options.freezer.forgetParked(pid);
    }
  }

  /** The processes a park moved; an earlier engine's bare pids count only where the job's own start time names its main process. */
  private parkedProcesses(record: JobRecord): ProcessRef[] {
    const { parked, view } = record;
    if (parked?.processes) return parked.processes;
    const refs: ProcessRef[] = [];
    for (const pid of parked?.pids ?? (view.pid === null ? [] : [view.pid])) {
      if (pid === view.pid && record.startTicks !== null) refs.push({ pid, startTicks: record.startTicks });
      else this.log(`${view.id}'s park record names pid ${pid} without its start time (an earlier engine wrote it): another process may have that pid now, so it is not restored`);
    }
    return refs;
  }

  /** A job of an earlier engine gets its gate slot back (the same slot, still its pid's); false: it runs ungated. */
  adoptSlot(record: JobRecord, slot: number | null): boolean {
    const gate = this.options.gate;
    const { pid, gpu, mode, migSlice, priority } = record.view;
    if (slot === null || pid === null || gpu === null || !gate?.adoptSlot?.(slot, { pid, gpu, alsoOn: record.view.gpus.slice(1), migSlice: mode === 'mig' ? migSlice : null, priority })) return false;
    record.slot = slot;
    record.gateWaitNs = null; // what it waited under the earlier engine is no wait now
    return true;
  }

  /** After the earlier engine's jobs are back: its slots nobody took are freed. */
  releaseLeftoverSlots(): void {
    this.options.gate?.releaseLeftovers?.();
  }

  /** Engine shutdown: every pause undone, the gate closed (jobs fail open, and keep its file for the next engine); jobs keep running. */
  release(records: readonly JobRecord[]): void {
    this.options.freezer.stop();
    for (const r of records) {
      if (this.gated(r) && r.holds.size > 0) this.options.gate!.setPaused(r.slot!, false);
    }
    this.options.gate?.close({ keepFile: records.some((r) => r.slot !== null) });
    this.options.control.dispose();
  }
}

/** A failed park or unpark step: which driver call, why, and (checkpoint) whether undoing the lock failed too. */
export class ParkStepError extends Error {
  override name = 'ParkStepError';
  constructor(
    readonly step: 'lock' | 'checkpoint' | 'restore' | 'unlock',
    readonly cause: unknown,
    readonly undoFailure: string | null,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** The refusal when a job's process is gone (or its pid is another's now): nothing was sent. */
const gone = (record: JobRecord, what: string): ApiError => new ApiError('not-found', `Cannot ${what} ${record.view.id}: its process (pid ${record.view.pid}) has exited.`);
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function currentNice(pid: number): number | null {
  try {
    return getPriority(pid);
  } catch {
    return null;
  }
}
