// The scheduler, a control loop: keeps the job table in step with every published snapshot,
// starts queued jobs, enforces priorities and quotas, parks and unparks, and raises one alert
// per contention onset. A step reads the latest published snapshot; policies (policies.ts,
// auto-park.ts, the lab policy) decide from it; state changes go through the state machine
// (job-state.ts); the actuators (actuators.ts) act. A step starts only through
// requestEvaluation() and never inside another. Commands ask through the methods under
// "requests": a park or unpark is a wish the next step carries out (parking.ts); a move (priority,
// quota, holds a person asks for) is a wish the step it starts applies (change-wishes.ts);
// only termination and a queued job's cancel act from those methods at once.
// The jobs of an earlier engine are taken back by steps (take-back.ts; adoption.ts decides);
// an enrolled job's end is a wish for the next step; only an enrolment's start acts at once
// (enrolled-jobs.ts).
import { FINAL_STATES, formatByteSize, gpusPhrase, placeOnGpus, quotaOverItsGpus, type Alert, type EnrolledPlace, type JobState, type Priority } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { Engine } from '../engine.js';
import { UnavailableCheckpointer, type ProcessCheckpointer } from '../holds/checkpointer.js';
import type { Freezer } from '../holds/freezer.js';
import { readProcStatus } from '../proc/proc-status.js';
import type { ProcessControl } from '../holds/process-control.js';
import type { MpsDaemons } from '../mps/mps-daemons.js';
import { JobActuators, mpsDaemonKey } from './actuators.js';
import { AutoPark, type AutoParkPolicy, type ParkAction } from './auto-park.js';
import type { ParkRequests } from './park-requests.js';
import { sliceActivity, sliceKey } from './mig-activity.js';
import { JobOwnership } from './ownership.js';
import { SchedulerCounters } from './scheduler-counters.js';
import type { GateSlotUsage, JobGate } from './job-gate.js';
import { addHistory, JobStateMachine, PARK_STATES, type JobEvent } from './job-state.js';
import { addPlace, applyPlacement, decidePlacement, placeOfProcess } from './enrolled-placement.js';
import { JobTable, newJobView, noteSuspension, type HoldReason, type JobRecord } from './job-table.js';
import type { LabPolicyEnforcer, Submission } from './lab/lab-policy-enforcer.js';
import { lookupAccount } from '../accounts.js';
import { ApiError } from '../api/api-error.js';
import { ParkWishes } from './park-wishes.js';
import { jobGpuPids } from './parking.js';
import { ChangeWishes, type CheckedMove } from './change-wishes.js';
import { TakeBack, type KeptJobs } from './take-back.js';
import { EnrolledJobs, type EnrolledFiles } from './enrolled-jobs.js';
import { ActivityClaims, driverBlind, driverEvidence, unconfirmedCondition, type DriverSight } from './activity-claims.js';
import { ACTIVE_HOLD_MS, ConditionTracker, decideGating, decidePriority, detectContention, outOfMemoryCondition, planAdmission, type Condition, type GateSight } from './policies.js';

export interface UnmanagedQuotaPolicy {
  /** How long a process may stay over its quota after the alert. */
  graceMs: number;
  action: 'suspend' | 'terminate';
}

export interface SchedulerOptions {
  engine: Pick<Engine, 'sampler' | 'events' | 'raiseAlert' | 'setConditions'>;
  control: ProcessControl;
  freezer: Freezer;
  gate: JobGate | null;
  checkpointer?: ProcessCheckpointer;
  /** MPS daemons for jobs in mode 'mps' (and MIG jobs with a share); absent: such jobs cannot start. */
  mps?: MpsDaemons | null;
  /** Per-job log files go here. */
  logDir: string;
  /** Extra environment for every job (the simulated driver's). */
  jobEnv?: Record<string, string>;
  unmanagedQuota?: UnmanagedQuotaPolicy;
  activeHoldMs?: number;
  terminateGraceMs?: number;
  /** Every change of a managed job is handed here to be kept (the job store); absent: jobs live in memory only. */
  persist?: (record: JobRecord) => Promise<void>;
  /** The box daemon's lab policy (limits, fair share, idle holders); absent in a personal engine. */
  lab?: LabPolicyEnforcer | null;
  /** Jobs one user may have queued at once (the daemon's maxQueuedJobsPerUser); absent or null: no cap (a personal engine). */
  maxQueuedPerUser?: number | null;
  /** Park idle managed jobs for queued jobs that need their memory, unpark on their next launch (auto-park.ts); absent: off. */
  autoPark?: AutoParkPolicy | null;
  /** The jobs' park files, through which a parked job asks for its memory back (needed by autoPark). */
  parkRequests?: ParkRequests | null;
  /** Where a line for the daemon's log goes (a process not acted on, and why); default stderr. */
  log?: (line: string) => void;
}

export type { EnrolledFiles } from './enrolled-jobs.js'; // enrolment's files, as the scheduler hands them

export const DEFAULT_UNMANAGED_QUOTA: UnmanagedQuotaPolicy = { graceMs: 30_000, action: 'suspend' };
const JOBS_EVENT_INTERVAL_MS = 100;
/** Commands share evaluations: at most one for them every this many ms (ticks evaluate as they come). */
export const COMMAND_EVALUATION_MS = 100;

export class Scheduler {
  readonly table = new JobTable();
  readonly machine = new JobStateMachine();
  readonly act: JobActuators;
  readonly quotaPolicy: UnmanagedQuotaPolicy;
  private readonly tracker = new ConditionTracker();
  /** Which managed job a GPU process belongs to (its main process or a descendant): one answer for scheduler and store. */
  readonly ownership = new JobOwnership();
  /** Gate waits, suspensions, parks and quota refusals since the engine started (the metrics endpoint reads them). */
  readonly counters = new SchedulerCounters();
  private readonly policyErrors = new Map<string, Condition>();
  /** Gated jobs' claims on the gate against what the driver shows. */
  private readonly claims = new ActivityClaims();
  /** What the gate showed of each job under it at the latest snapshot, by job id. */
  private readonly gateSights = new Map<string, GateSight>();
  /** Jobs whose missing start time the log has named already (processAlive). */
  private readonly unknownStartLogged = new WeakSet<JobRecord>();
  private readonly autoPark: AutoPark | null;
  private lastSeq = -1;
  private jobsTimer: NodeJS.Timeout | null = null;
  private lastJobsEmit = 0;
  private evaluationTimer: NodeJS.Timeout | null = null;
  private lastEvaluationAt = 0;
  private stopped = false;
  private evaluating = false;
  private evaluateAgain = false;
  /** Parks and unparks asked for and not begun: this loop's steps begin them. */
  private readonly parkWishes: ParkWishes;
  /** Moves people asked for (priority, quota, suspend, resume, placement): the step each starts applies it. */
  private readonly changeWishes: ChangeWishes;
  /** What the guardian let go of while this engine was stopped or hung, for the next step to take in. */
  private guardianReleases: Array<{ jobId: string; hold?: string }> = [];
  /** Enrolled jobs' starts and ends (enrolled-jobs.ts): an end waits for the next step. */
  private readonly enrolledJobs: EnrolledJobs;
  /** Whether an enrolled job still has a live process (enrol/enrolment.ts sets it); its last one gone, the job ends. */
  enrolledAlive: ((record: JobRecord) => boolean) | null = null;
  /** The highest lane a job's owner may drag it to, and why (a Slurm job's QOS: slurm/slurm-jobs.ts sets it); null: the lab policy alone. */
  laneCap: ((record: JobRecord) => { lane: Priority; why: string } | null) | null = null;
  /** Holders of an MPS daemon (by mpsDaemonKey) that are no job here: a live Slurm job with gres/mps keeps its GPU's daemon between its tasks (slurm/slurm-jobs.ts sets it). */
  mpsHolders: ((daemon: string) => number) | null = null;
  /** Set while steps are paused (pauseEvaluation): a request meanwhile runs one step after. */
  private holdEvaluation = false;
  /** The jobs of an earlier engine while they are taken back (takeBack): until all are known, a step decides nothing else. */
  private takingBack: TakeBack | null = null;

  constructor(readonly options: SchedulerOptions) {
    this.quotaPolicy = options.unmanagedQuota ?? DEFAULT_UNMANAGED_QUOTA;
    this.act = new JobActuators({
      control: options.control,
      freezer: options.freezer,
      gate: options.gate,
      checkpointer: options.checkpointer ?? new UnavailableCheckpointer(),
      mps: options.mps ?? null,
      jobEnv: options.jobEnv,
      terminateGraceMs: options.terminateGraceMs,
      parkRequests: options.parkRequests,
      gpuView: (gpu) => this.snapshot().gpus.find((g) => g.index === gpu),
      log: options.log,
    });
    this.autoPark = options.autoPark
      ? new AutoPark({ table: this.table, cudaCalls: (r) => this.act.cudaCalls(r), wake: () => this.requestEvaluation('now') }, options.autoPark)
      : null;
    this.parkWishes = new ParkWishes({
      act: this.act,
      checkpointer: this.checkpointer,
      fire: (record, event, reason) => this.fire(record, event, reason),
      settle: (record, why) => this.settle(record, why),
      raiseAlert: (alert) => this.options.engine.raiseAlert(alert),
      memoryFree: (gpu) => this.snapshot().gpus.find((g) => g.index === gpu)?.memoryFree,
      gpuPids: (record) => {
        const snapshot = this.options.engine.sampler.latest;
        return jobGpuPids(snapshot, record, (pid) => this.ownership.jobOf(pid)?.jobId, this.act.ownMpsServers(snapshot));
      },
      stepping: () => this.evaluating,
      step: () => this.requestEvaluation('now'),
      freshSample: () => this.options.engine.sampler.sampleNow(), // published: its step follows, and the usage store sees it
      stopped: () => this.stopped,
    });
    this.enrolledJobs = new EnrolledJobs({
      table: this.table,
      act: this.act,
      ownership: this.ownership,
      fire: (record, event, reason) => this.fire(record, event, reason),
      ended: (record, event, reason) => this.ended(record, event, reason),
      requestEvaluation: (when) => this.requestEvaluation(when),
    });
    this.changeWishes = new ChangeWishes({ step: () => this.requestEvaluation('apply'), stopped: () => this.stopped });
  }

  get checkpointer(): ProcessCheckpointer {
    return this.act.options.checkpointer;
  }

  get holdMs(): number {
    return this.options.activeHoldMs ?? ACTIVE_HOLD_MS;
  }

  get lab(): LabPolicyEnforcer | null {
    return this.options.lab ?? null;
  }

  /** The latest snapshot (taken now when the sampler has none yet). */
  snapshot(): Snapshot {
    return this.options.engine.sampler.latest ?? this.options.engine.sampler.sampleNow();
  }

  /** Move a job by an event of the state machine; every state change in the engine comes through here. */
  fire(record: JobRecord, event: JobEvent, reason: string, at = Date.now()): boolean {
    const from = record.view.state;
    const moved = this.machine.fire(record.view, event, reason, at);
    if (moved) {
      this.table.moved(record, from);
      if (FINAL_STATES.has(record.view.state)) {
        record.launchEnv = {}; // it will never start again: its environment and whole argv need not be held (nor kept on disk)
        record.launchArgv = null;
      }
      noteSuspension(record);
      this.counters.noteTransition(event, record.view.suspendedBy);
      void this.kept(record);
    }
    return moved;
  }

  /** The job changed: keep it (store) and tell clients. Resolves once it is kept. */
  kept(record: JobRecord): Promise<void> {
    this.table.touch(record);
    this.changed();
    if (!record.view.managed || !this.options.persist) return Promise.resolve();
    const saved = this.options.persist(record);
    saved.catch(() => undefined); // the host reports a failed write; only a submission waits for it
    return saved;
  }

  /**
   * Ask for a step of the loop: the one way a step starts. 'now' (a published snapshot, a job's end, a
   * park done): at once. 'soon' (commands): shared, at most one every COMMAND_EVALUATION_MS, so a burst
   * of commands costs one pass over the queue, not one each. 'apply' (a person's move): a step at once
   * that only applies the moves asked for, so the command answers with the new state, and a shared one
   * 'soon' in which the policies decide: a move costs no pass over the queue either. Never re-entrant: a
   * request during a step (or while the jobs of an earlier engine are restored) runs one more step after it.
   */
  requestEvaluation(when: 'now' | 'soon' | 'apply' = 'soon'): void {
    if (this.stopped) return;
    if (this.evaluating || this.holdEvaluation) {
      this.evaluateAgain = true;
      return;
    }
    if (when === 'now') return this.step(true);
    if (when === 'apply') {
      this.step(false);
      return this.requestEvaluation('soon');
    }
    if (this.evaluationTimer) return;
    const wait = Math.max(0, this.lastEvaluationAt + COMMAND_EVALUATION_MS - Date.now());
    this.evaluationTimer = setTimeout(() => {
      this.evaluationTimer = null;
      this.requestEvaluation('now');
    }, wait);
    this.evaluationTimer.unref?.();
  }

  /** While true, steps wait; a request meanwhile runs one after. */
  pauseEvaluation(paused: boolean): void {
    this.holdEvaluation = paused;
    if (!paused && this.evaluateAgain) this.stepAgainSoon();
  }

  /**
   * One step of the loop: the jobs of an earlier engine taken back, then people's moves applied, then
   * (`decide`) the policies' decisions on the latest published snapshot.
   */
  private step(decide: boolean): void {
    const snapshot = this.options.engine.sampler.latest;
    if (!decide && this.takingBack) return; // moves wait: the step that takes the last job back applies them
    if (!snapshot && !this.takingBack && !this.changeWishes.pending) return; // taking jobs back and applying moves need no published snapshot: the engine's start waits for it
    this.evaluating = true;
    if (decide) {
      this.evaluateAgain = false; // a step asked for during an apply-only one still decides after it
      this.lastEvaluationAt = Date.now();
    }
    try {
      if (this.takingBack?.step()) this.takingBack = null;
      if (!this.takingBack) this.changeWishes.carryOut(); // before the policies decide: they see the moved jobs
      if (decide && !this.takingBack && snapshot) {
        this.counters.evaluations++;
        this.evaluateOnce(snapshot);
      }
    } finally {
      this.evaluating = false;
    }
    if (this.evaluateAgain) this.stepAgainSoon();
  }

  /** A request came during a step: one more, after what runs now. */
  private stepAgainSoon(): void {
    setImmediate(() => {
      if (!this.evaluateAgain) return;
      this.evaluateAgain = false;
      this.requestEvaluation('now');
    });
  }

  private evaluateOnce(snapshot: Snapshot): void {
    this.takeInGuardianReleases();
    this.enrolledJobs.takeInEnds();
    if (snapshot.seq !== this.lastSeq) {
      this.lastSeq = snapshot.seq;
      this.ingest(snapshot);
    }
    const now = Date.now();
    const inPolicy = this.inPolicy();
    const lab = this.lab;
    const plan = planAdmission(snapshot.gpus, [...inPolicy, ...this.table.queued()], {
      blocked: (job, gpu) => (job.mode === 'mps' || (job.mode === 'mig' && job.mpsSharePercent !== null) ? this.act.mpsBlocked(gpu, job) : null) ?? this.autoPark?.admissionBlock(gpu.index) ?? null,
      limits: lab?.admission(this.table.placed().map((r) => r.view)), // starting and mid-park jobs hold their GPUs too (queued ones count for no limit)
      queueOrder: lab?.queueOrder(),
    });
    for (const { jobId, gpus, quotaBytes } of plan.start) this.start(this.table.get(jobId)!, gpus, snapshot, quotaBytes);
    for (const action of this.autoPark?.step(snapshot, new Set(plan.waiting.keys()), now) ?? []) this.autoParkWants(action);
    this.enforcePriority(now);
    this.enforceUnmanagedQuotas(now);
    const idle = lab?.idleHolders(this.inPolicy());
    for (const r of idle?.park ?? []) this.parkIdle(r);
    this.parkWishes.carryOut();
    const conditions = [...detectContention(snapshot.gpus, this.inPolicy(), plan.waiting, now, this.holdMs, (id) => this.table.get(id)?.view), ...(idle?.conditions ?? []), ...this.policyErrors.values(), ...this.unconfirmedClaims()];
    for (const c of this.tracker.update(conditions)) {
      this.options.engine.raiseAlert(asAlert(c));
    }
    try {
      this.options.engine.setConditions(conditions.map(asAlert));
    } catch (error) {
      process.stderr.write(`gpushare: the scheduler's conditions were not published: ${error instanceof Error ? error.message : String(error)}\n`); // a bad list changes nothing
    }
    this.changed();
  }

  // ---- jobs of an earlier engine (take-back.ts) ------------------------------------------

  /**
   * The jobs an earlier engine kept (`load`: from the job store; null: no store, none) are taken back by
   * steps, one after another (take-back.ts), before they decide anything else. Resolves once all are back,
   * the earlier engine's leftover gate slots (with a store) and unused MPS daemons released.
   */
  takeBack(load: Promise<KeptJobs> | null): Promise<void> {
    const taking = new TakeBack(
      {
        table: this.table,
        act: this.act,
        ownership: this.ownership,
        fire: (record, event, reason) => this.fire(record, event, reason),
        processAlive: (record) => this.processAlive(record),
        snapshot: () => this.snapshot(),
        raiseAlert: (alert) => this.options.engine.raiseAlert(alert),
        step: () => this.requestEvaluation('now'),
      },
      load,
    );
    this.takingBack = taking;
    return taking.done;
  }

  /** The guardian let these go while this engine was stopped or hung (continued, or restored and unlocked): the next step takes it in. */
  guardianReleased(entries: ReadonlyArray<{ jobId: string; hold?: string }>): void {
    this.guardianReleases.push(...entries);
    this.requestEvaluation('now');
  }

  /** What the guardian let go of is observed state: the jobs say so, and the policies decide again in this step. */
  private takeInGuardianReleases(): void {
    const entries = this.guardianReleases;
    this.guardianReleases = [];
    for (const { jobId, hold } of entries) {
      const record = this.table.get(jobId);
      if (!record) continue;
      if (hold === 'park' && record.view.state === 'parked') {
        this.fire(record, 'unpark', 'the guardian restored it while the engine was stopped');
        record.parked = null;
        this.act.setGateMember(record, true);
        this.fire(record, 'unparked', `back on GPU ${record.view.gpu}`);
        continue;
      }
      if (record.holds.size === 0) continue;
      record.holds.clear();
      this.settle(record, 'resumed by the guardian while the engine was stopped');
    }
  }

  /** Placed jobs the policies may act on: parked and mid-park jobs are outside every policy (queued ones wait for admission). */
  private inPolicy(): JobRecord[] {
    return this.table.placed().filter((r) => !PARK_STATES.has(r.view.state) && r.view.state !== 'starting');
  }

  // ---- holds ------------------------------------------------------------------------

  /** Hold a job back for a reason; the first reason pauses it (gate pause, or SIGSTOP of its process group). */
  hold(record: JobRecord, reason: HoldReason, why: string): void {
    if (record.holds.has(reason)) return;
    if (record.holds.size === 0) this.act.pause(record);
    record.holds.add(reason);
    this.settle(record, why);
  }

  /** Drop a reason; when none is left the job runs again. */
  release(record: JobRecord, reason: HoldReason, why: string): void {
    if (!record.holds.delete(reason)) return;
    if (record.holds.size === 0) this.act.unpause(record);
    this.settle(record, why);
  }

  /** Its state from its holds: a gate pause for priority alone is gating, any other hold a suspension. */
  settle(record: JobRecord, why: string): void {
    const { state } = record.view;
    if (state !== 'running' && state !== 'gated' && state !== 'suspended') return;
    const gatedOnly = this.act.gated(record) && record.holds.size === 1 && record.holds.has('priority');
    const want = record.holds.size === 0 ? (state === 'gated' ? 'gated' : 'running') : gatedOnly ? 'gated' : 'suspended';
    if (want === state) return noteSuspension(record); // a second reason may come first now
    const event: JobEvent = want === 'suspended' ? 'suspend' : want === 'gated' ? 'gate' : state === 'gated' ? 'ungate' : 'resume';
    this.fire(record, event, why);
  }

  // ---- requests (commands ask; the scheduler acts) -------------------------------------

  /** A new managed job, queued; resolves once it is kept (a job is accepted only when it survives a restart). */
  async submit(view: JobRecord['view'], launchSpec: Pick<JobRecord, 'executable' | 'launchEnv' | 'runAs'> & Partial<Pick<JobRecord, 'launchArgv'>>): Promise<JobRecord> {
    const record = this.table.add(view, launchSpec);
    try {
      await this.kept(record);
    } catch (error) {
      this.table.remove(view.id);
      throw error;
    }
    return record;
  }

  /** A new job its owner's lab limits would never let start, or past their queued-job cap, is refused (throws an ApiError). */
  checkSubmission(job: Submission): void {
    const cap = this.options.maxQueuedPerUser ?? null;
    const queued = this.table.queuedOf(job.uid);
    if (cap !== null && queued >= cap) {
      const jobs = (n: number): string => `${n} job${n === 1 ? '' : 's'}`;
      throw new ApiError('forbidden', `The job was not submitted: ${job.owner} has ${jobs(queued)} queued, and this box allows ${jobs(cap)} queued per user (maxQueuedJobsPerUser in the daemon's config). Cancel one (gpushare jobs, then gpushare kill) or wait for one to start. Nothing was started.`);
    }
    this.lab?.checkSubmission(job);
  }

  /** Throws an ApiError where the lab policy refuses this priority (for the job in `state`, default its own); changes nothing. */
  checkPriority(record: JobRecord, priority: Priority, state?: JobState): void {
    if (record.view.priority !== priority) this.lab?.checkPriority(record, priority, this.table.placed().map((r) => r.view), state); // queued jobs count for no limit
  }

  /**
   * Ask for a move (`check`: the command's check of it, whose appliers call the methods below): the step
   * this starts checks it again and applies it whole. Resolves once applied, rejects with its refusal.
   */
  requestMove(check: CheckedMove): Promise<void> {
    return this.changeWishes.request(check);
  }

  /** A person's change is applied only by a step (requestMove): never one inside a command, interleaved with the loop. */
  private inStep(what: string, record: JobRecord): void {
    if (!this.evaluating) throw new Error(`${what} ${record.view.id} outside a step of the control loop: ask through requestMove`);
  }

  setPriority(record: JobRecord, priority: Priority): void {
    this.inStep('Cannot set the priority of', record);
    if (record.view.priority === priority) return;
    this.checkPriority(record, priority);
    record.view.priority = priority;
    if (!PARK_STATES.has(record.view.state) && record.view.pid !== null) this.act.applyPriority(record);
    void this.kept(record);
  }

  /** Throws an ApiError where the lab policy refuses this quota (for the job in `state`, default its own); changes nothing. */
  checkQuota(record: JobRecord, bytes: number | null, state?: JobState): void {
    this.lab?.checkQuota(record, bytes, this.table.placed().map((r) => r.view), state); // queued jobs hold no memory
  }

  setQuota(record: JobRecord, bytes: number | null): void {
    this.inStep('Cannot set the memory quota of', record);
    this.checkQuota(record, bytes);
    record.view.memoryQuotaBytes = bytes;
    delete record.view.memoryQuotaFromPolicy; // its own now
    this.act.applyQuota(record);
    record.overQuotaSince = null; // a new limit gets a fresh grace period
    void this.kept(record);
  }

  /** Settings of a job that has not started (placement, mode): no actuator is involved. */
  configure(record: JobRecord, change: Partial<Pick<JobRecord['view'], 'requestedGpu' | 'gpus' | 'mode' | 'mpsSharePercent' | 'migSlice'>>): void {
    this.inStep('Cannot place or configure', record);
    const { gpus, ...rest } = change;
    Object.assign(record.view, rest);
    if (gpus) placeOnGpus(record.view, gpus);
    void this.kept(record);
  }

  suspend(record: JobRecord, by: string): void {
    this.inStep('Cannot suspend', record);
    this.hold(record, 'user', `suspended by ${by}`);
  }

  /** Drops the holds a person may drop (theirs and the quota's); a priority hold stays. */
  resume(record: JobRecord, by: string): void {
    this.inStep('Cannot resume', record);
    if (record.holds.has('quota')) record.overQuotaSince = Date.now(); // a fresh grace period
    for (const reason of ['quota', 'user'] as const) this.release(record, reason, `resumed by ${by}`);
  }

  /**
   * Ask for a park or unpark: refused at once (ApiError) when it cannot be done now; else the next step
   * begins it, and the promise settles when it is done (rejected with the reason when it failed).
   */
  requestPark(record: JobRecord, want: 'park' | 'unpark', by: string, automatic = false): Promise<void> {
    return this.parkWishes.request(record, want, by, automatic);
  }

  cancel(record: JobRecord, by: string): void {
    this.fire(record, 'cancel', `cancelled by ${by} before it started`);
  }

  terminate(record: JobRecord, by: string): void {
    record.terminatedBy = by;
    this.act.terminate(record); // an MPS client gets terminate_client first
    void this.kept(record);
  }

  // ---- snapshot → table ----------------------------------------------------------

  private ingest(snapshot: Snapshot): void {
    const readings = new Map<JobRecord, { mem: number; sm: number | null }>();
    const mpsServersBusy = new Set<number>(); // GPUs whose MPS server the driver shows computing (it may be credited with its clients' work)
    const ownMpsServers = this.act.ownMpsServers(snapshot);
    const unsplit = new Map<string, Set<JobRecord>>(); // MIG slices whose SM % the sampler could not split
    const seen = new Set<number>();
    const enrolledPlaces = new Map<JobRecord, EnrolledPlace[]>(); // where the driver lists each enrolled job's processes
    this.ownership.retainOnly(new Set(snapshot.processes.map((p) => p.pid)));
    this.gateSights.clear();

    for (const p of snapshot.processes) {
      if (ownMpsServers.has(p.pid)) {
        if ((p.smPercent ?? 0) > 0) mpsServersBusy.add(p.gpuIndex);
        continue; // our daemon's MPS server holds its clients' context: never a job to hold or kill
      }
      const owner = this.ownership.jobOf(p.pid, snapshot.takenAt, p.startedAt);
      let record = owner ? this.table.get(owner.jobId) : undefined;
      if (!record) {
        record = this.unmanaged(p.pid, p, snapshot);
        if (!record) continue;
        seen.add(p.pid);
      }
      if (record.view.enrolled) addPlace(enrolledPlaces.get(record) ?? enrolledPlaces.set(record, []).get(record)!, placeOfProcess(snapshot, p));
      const reading = readings.get(record) ?? { mem: 0, sm: null };
      reading.mem += p.usedMemory ?? 0;
      if (p.smPercent !== null) reading.sm = Math.min(100, (reading.sm ?? 0) + p.smPercent);
      else if (p.gpuInstanceId !== null) {
        const slice = sliceKey(p.gpuIndex, p.gpuInstanceId);
        unsplit.set(slice, (unsplit.get(slice) ?? new Set()).add(record));
      }
      readings.set(record, reading);
    }
    const inSlices = sliceActivity(snapshot, unsplit);
    for (const r of this.table.placed()) {
      if (!r.view.managed && !seen.has(r.view.pid!)) {
        if (PARK_STATES.has(r.view.state) && this.processAlive(r)) continue; // checkpointed: off the GPU's list, still ours
        this.act.forgetProcess(r); // left the GPU (exited): never signal its pid again
        this.table.remove(r.view.id);
        this.leaveMps(r); // an MPS client gpushare did not start may have been its daemon's last
        continue;
      }
      if (r.view.state === 'queued' || r.view.state === 'starting') continue;
      if (r.view.enrolled) {
        if (!(this.enrolledAlive?.(r) ?? this.processAlive(r))) {
          this.ended(r, 'exit', 'its last process exited (enrolled: the exit status is its own)');
          continue;
        }
      } else if (r.adopted && !this.processAlive(r)) {
        const asked = r.terminatedBy ? `, after ${r.terminatedBy} asked to terminate it` : '';
        this.ended(r, 'lose', `its process ended${asked} (exit status unknown: an earlier engine started it)`);
        continue;
      }
      if (PARK_STATES.has(r.view.state)) {
        r.view.usedMemory = 0; // its memory is in host memory (or on its way); a reading is from before the park
        r.view.smPercent = 0;
        continue;
      }
      if (r.view.enrolled) this.placeEnrolled(r, enrolledPlaces.get(r) ?? [], snapshot.takenAt);
      this.followOutsideStops(r);
      const gate = this.act.readGate(r); // read once a snapshot: refusals, waits and claims all come from it
      this.noteRefusedAllocations(r, snapshot.takenAt, gate);
      this.noteGateWaits(r, snapshot.takenAt, gate);
      const reading = readings.get(r);
      r.view.usedMemory = reading ? reading.mem : r.view.managed ? 0 : null;
      r.view.smPercent = reading ? reading.sm : r.view.managed ? 0 : null;
      const slice = r.view.smPercent === null ? inSlices.get(r) : undefined;
      if (typeof slice === 'number') r.view.smPercent = slice;
      if ((r.view.smPercent ?? 0) > 0 || slice === 'possibly') r.lastActiveAt = snapshot.takenAt;
      this.judgeClaims(r, snapshot, () => ({ sliceBusy: slice === 'possibly', mpsServerBusy: mpsDaemonKey(r.view) !== null && mpsServersBusy.has(r.view.gpu!), blind: driverBlind(snapshot, r.view.gpu) }), gate);
    }
  }

  /** An enrolled job is where the driver lists its processes (enrolled-placement.ts decides); its gate slot follows it. */
  private placeEnrolled(record: JobRecord, places: EnrolledPlace[], at: number): void {
    if (mpsDaemonKey(record.view) !== null) return; // an MPS client's GPU is its daemon's, fixed when it joined
    const decided = decidePlacement(places, record.view);
    if (!decided) return; // not listed (yet): its hint, or where the driver last listed it, stands
    const { changed, moved } = applyPlacement(record.view, decided);
    if (moved) {
      this.act.moveSlot(record);
      addHistory(record.view, { state: record.view.state, at, reason: moved });
    }
    if (changed) void this.kept(record);
  }

  /** Jobs whose claims on the gate the driver does not confirm: said, so that an administrator sees who games the gate. */
  private unconfirmedClaims(): Condition[] {
    return this.inPolicy().flatMap((r) => (this.claims.unconfirmed(r.view.id) ? [unconfirmedCondition(r.view)] : []));
  }

  /** A gated job's claims on the gate hold others back only while the driver confirms them (activity-claims.ts). */
  private judgeClaims(record: JobRecord, snapshot: Snapshot, seen: () => DriverSight, gate: GateSlotUsage | null): void {
    const claim = this.act.gateClaim(record, gate);
    if (!claim) return;
    const judged = this.claims.observe(record.view.id, claim, driverEvidence(record.view, seen()), snapshot.takenAt);
    if (judged.changed) this.act.setGateUnconfirmed(record, judged.unconfirmed);
  }

  /** The preload library refused allocations over the job's quota since the last look: an out-of-memory onset. */
  private noteRefusedAllocations(record: JobRecord, at: number, gate = this.act.readGate(record)): boolean {
    const count = this.act.refusedAllocations(record, gate);
    if (count === null || count <= record.oomCount) return false;
    this.counters.noteQuotaRefusals(count - record.oomCount);
    record.oomCount = count;
    record.oomAt = at;
    return true;
  }

  /** The gate made its launches wait for a higher job since the last look (its gatedNs grew): what decideGating reads. */
  private noteGateWaits(record: JobRecord, at: number, gate: GateSlotUsage | null): void {
    if (!gate) return;
    const waited = gate.gatedNs ?? 0;
    if (record.gateWaitNs !== null && waited > record.gateWaitNs) record.gateWaitedAt = at;
    record.gateWaitNs = waited;
    this.gateSights.set(record.view.id, { waitedAt: record.gateWaitedAt, inLaunch: gate.inLaunch ?? 0, lastLaunchNs: gate.lastLaunchNs ?? 0n });
  }

  /** A gated job stopped from outside (SIGSTOP, a debugger) may be stopped inside a launch: it must not hold higher jobs back. */
  private followOutsideStops(record: JobRecord): void {
    if (!this.act.gated(record) || record.view.pid === null) return;
    const state = readProcStatus(record.view.pid)?.state;
    const stopped = state === 'T' || state === 't';
    if (stopped === record.stoppedOutside) return;
    record.stoppedOutside = stopped;
    this.act.setGateMember(record, !stopped);
  }

  /** Its process still runs (same pid, same start time). Without a start time its pid may name another process: not alive, said once. */
  processAlive(record: JobRecord): boolean {
    const { pid, id } = record.view;
    if (pid === null) return false;
    if (record.startTicks === null) {
      if (!this.unknownStartLogged.has(record)) {
        this.unknownStartLogged.add(record);
        this.log(`pid ${pid} (${id}) has no known start time, so it cannot be told from a process that took the pid since: treated as not running`);
      }
      return false;
    }
    return readProcStatus(pid)?.startTicks === record.startTicks;
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else process.stderr.write(`gpushare: ${line}\n`);
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
      this.act.forgetProcess(existing);
      this.table.remove(id);
    }
    if (!status) return undefined; // exited between the driver's list and /proc
    const uid = p.uid ?? status.uid;
    const owner = p.user ?? lookupAccount(uid).name;
    const priority = this.lab?.defaultPriority(owner, uid) ?? 'normal';
    const view = newJobView(
      { id, managed: false, owner, uid, priority, argv: p.argv.length ? p.argv : [p.command ?? '?'], ...(p.argvCut ? { argvCut: p.argvCut } : {}), gpu: p.gpuIndex, requestedGpu: p.gpuIndex, pid, mode: p.kind === 'mps' ? 'mps' : 'shared', migSlice: migSliceOf(snapshot, p) },
      'running',
      'seen on GPU ' + p.gpuIndex + (priority === 'normal' ? '' : ` (${priority}: the lab policy's default for ${owner})`),
      at,
    );
    const record = this.table.add(view, { startTicks: status.startTicks });
    if (priority === 'best-effort') {
      try {
        this.act.applyPriority(record); // reniced like any best-effort process
      } catch {
        // not ours to renice: the priority still decides who is held back
      }
    }
    return record;
  }

  // ---- starting and ending -------------------------------------------------------------

  // ---- enrolled processes (enrol/enrolment.ts asks) ------------------------------------

  /** The launch gate enrolled processes map their job's slot from; null: none (nobody enrols). */
  get gate(): JobGate | null {
    return this.act.options.gate;
  }

  /**
   * A process enrolled into a new job (its record already in the table): given a gate slot, attached and started now.
   * Not a wish for the next step: the library waits at most 50 ms for the files this returns. Throws (the record
   * removed) when no slot is left.
   */
  startEnrolled(record: JobRecord, gpu: number): EnrolledFiles {
    return this.enrolledJobs.start(record, gpu);
  }

  /** The files a process joining the enrolled job maps: its slot's, and its park file while it has one. */
  enrolledFiles(record: JobRecord): EnrolledFiles {
    return this.enrolledJobs.files(record);
  }

  /** An enrolled job none of whose processes is a member any more (enrol/enrolment.ts, the Slurm epilog): the next step ends it. */
  endEnrolled(record: JobRecord, reason: string): void {
    this.enrolledJobs.end(record, reason);
  }

  /** `limitQuota`: the hard quota (per GPU) the lab policy's memory limit gives it (absent: its own). On several GPUs: all at once. */
  private start(record: JobRecord, gpus: number[], snapshot: Snapshot, limitQuota?: number): void {
    const job = record.view;
    const where = gpus.length === 1 ? `GPU ${gpus[0]}` : `GPUs ${gpus.join(',')}`;
    const demoted = this.lab?.demotion(job) ?? null; // past the day's high-priority GPU-hours
    const quota = limitQuota !== undefined && limitQuota !== job.memoryQuotaBytes ? ` with a hard memory quota of ${formatByteSize(limitQuota)}${gpus.length > 1 ? ' per GPU' : ''} (the lab policy's memory limit)` : '';
    if (!this.fire(record, 'start', `starting on ${where}${quota}${demoted ? ` at normal priority: ${demoted}` : ''}`)) return;
    if (demoted) job.priority = 'normal';
    if (quota) Object.assign(job, { memoryQuotaBytes: limitQuota!, memoryQuotaFromPolicy: true }); // before the launch: the gate slot, MPS and the environment take it from here
    placeOnGpus(job, gpus);
    let child;
    try {
      child = this.act.launch(record, gpus.map((gpu) => ({ index: gpu, view: snapshot.gpus.find((g) => g.index === gpu) })));
    } catch (error) {
      this.ended(record, 'fail', `could not start: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    record.child = child;
    job.pid = child.pid ?? null;
    child.once('error', (error) => this.ended(record, 'fail', `could not start: ${error.message}`));
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => this.exited(record, code, signal)); // after a failed start's 'error' (launcher)
    if (job.pid === null) return; // spawn failed: its 'error' event follows
    this.act.attach(record);
    this.ownership.claim(job.id, job.owner, job.pid, record.startTicks);
    this.fire(record, 'started', `started on ${where} as pid ${job.pid}`);
  }

  private exited(record: JobRecord, code: number | null, signal: NodeJS.Signals | null): void {
    const by = record.terminatedBy ? ` (terminated by ${record.terminatedBy})` : '';
    const reason = signal ? `killed by ${signal}${by}` : `exit code ${code}${by}`;
    record.view.exitCode = code;
    record.view.signal = signal;
    this.table.touch(record);
    this.ended(record, code === 0 && !signal ? 'exit' : 'fail', reason);
  }

  /** The job's process ended (or never started): it gives back its slot and holds, and its GPU may admit the next job. */
  private ended(record: JobRecord, event: 'exit' | 'fail' | 'lose', reason: string): void {
    if (FINAL_STATES.has(record.view.state)) return;
    const job = record.view;
    const refusedAtEnd = this.noteRefusedAllocations(record, Date.now()); // its last refusals, before the slot is gone
    if (refusedAtEnd && !this.tracker.active(`oom:${job.id}`)) this.options.engine.raiseAlert(asAlert(outOfMemoryCondition(record)));
    this.act.releaseSlot(record);
    this.claims.forget(job.id);
    this.parkWishes.drop(record, `${job.id} ended before its ${record.parkWish?.want} began: ${reason}`);
    this.act.forgetProcess(record);
    this.leaveMps(record);
    record.holds.clear();
    record.parked = null;
    job.usedMemory = null;
    job.smPercent = null;
    if (!this.fire(record, event, reason)) return;
    if (job.managed) this.ownership.release(job.id, Date.now());
    const ok = event === 'exit';
    const verb = ok ? 'finished' : event === 'lose' ? 'was lost' : 'failed';
    this.options.engine.raiseAlert({
      kind: ok ? 'finished' : 'failed',
      severity: ok ? 'info' : 'warning',
      gpu: job.gpu,
      jobId: job.id,
      message: `${job.id} (${job.argv[0].split('/').pop()}) ${verb}: ${reason}.${job.logPath ? ` Log: ${job.logPath}` : ''}`,
      uid: job.uid, // its log, and why it could not start, are its owner's to read
      publicMessage: `${job.id} (${job.argv[0].split('/').pop()}) ${verb}: ${reason.startsWith('could not start') ? 'could not start' : reason}.`,
    });
    this.requestEvaluation('now'); // its GPU may admit a queued job now (after this step, when it ended inside one)
  }

  /** An MPS daemon (a GPU's or a slice's) lives while a job uses it: the last one to end may stop it (mps-daemons.ts decides). */
  private leaveMps(record: JobRecord): void {
    const daemon = mpsDaemonKey(record.view);
    if (daemon === null) return;
    const others = this.table.placed().filter((r) => r !== record && mpsDaemonKey(r.view) === daemon);
    const failure = this.act.leaveMps(record, others.length + (this.mpsHolders?.(daemon) ?? 0));
    if (failure) this.options.engine.raiseAlert({ kind: 'failed', severity: 'warning', gpu: record.view.gpu, jobId: record.view.id, message: `${record.view.id} was the last client of its MPS daemon, which could not be stopped: ${failure}` });
  }

  // ---- policies → actions ---------------------------------------------------------------

  private enforcePriority(now: number): void {
    const live = this.inPolicy();
    const decision = decidePriority(live, now, { gateFor: (r) => this.act.gated(r), holdMs: this.holdMs });
    const gating = decideGating(live, now, { sightOf: (r) => (this.act.gated(r) ? (this.gateSights.get(r.view.id) ?? null) : null), holdMs: this.holdMs });
    for (const r of live) {
      const key = `hold-failed:${r.view.id}`;
      const higher = decision.hold.get(r.view.id);
      try {
        if (higher && !r.holds.has('priority')) this.hold(r, 'priority', `${higher} (higher priority) is active on ${gpusPhrase(r.view)}`);
        else if (!higher && r.holds.has('priority')) this.release(r, 'priority', `no higher-priority job is active on ${gpusPhrase(r.view)}`);
        this.policyErrors.delete(key);
      } catch (error) {
        const message = `Could not hold ${r.view.id} back for ${higher}: ${error instanceof Error ? error.message : String(error)}`;
        this.policyErrors.set(key, { key, kind: 'contention', severity: 'warning', gpu: r.view.gpu, jobId: r.view.id, message });
      }
      const gatedBy = gating.get(r.view.id);
      if (r.holds.size === 0 && gatedBy && r.view.state === 'running') this.fire(r, 'gate', `${gatedBy} (higher priority) is active on ${gpusPhrase(r.view)}`);
      else if (r.holds.size === 0 && !gatedBy && r.view.state === 'gated') this.fire(r, 'ungate', `no higher-priority job is active on ${gpusPhrase(r.view)}`);
    }
  }

  /** An idle memory holder past its grace period (lab policy): parked like a person's park, or left with its notice. */
  private parkIdle(record: JobRecord): void {
    const minutes = this.lab!.policy.idleHolders;
    const refused = (error: unknown): void => {
      const why = error instanceof Error ? error.message : String(error);
      this.options.engine.raiseAlert({ kind: 'idle', severity: 'warning', gpu: record.view.gpu, jobId: record.view.id, message: `${record.view.id} was not parked for holding idle GPU memory: ${why}` });
    };
    try {
      this.requestPark(record, 'park', `the lab policy (no GPU activity for ${minutes.notifyAfterMinutes + minutes.graceMinutes} min)`).catch(refused);
    } catch (error) {
      refused(error);
    }
  }

  /** A park or unpark auto-park wants: asked for as anyone's, and auto-park hears how it ended. */
  private autoParkWants(action: ParkAction): void {
    const told = (ok: boolean) => () => this.autoPark?.settled(action, ok);
    try {
      this.requestPark(action.record, action.want, action.by, true).then(told(true), told(false)); // a refusal is in the job's history
    } catch {
      told(false)();
    }
  }

  /** Unmanaged processes (and managed jobs without a gate) only get a reactive quota. */
  private enforceUnmanagedQuotas(now: number): void {
    for (const r of this.inPolicy()) {
      const job = r.view;
      if (this.act.gated(r) || job.pid === null || job.state === 'queued') continue;
      const quota = quotaOverItsGpus(job);
      const over = quota !== null && (job.usedMemory ?? 0) > quota;
      if (!over) {
        r.overQuotaSince = null;
        if (r.holds.has('quota')) this.release(r, 'quota', 'back within its memory quota');
        continue;
      }
      r.overQuotaSince ??= now;
      if (now - r.overQuotaSince < this.quotaPolicy.graceMs || r.holds.has('quota')) continue;
      try {
        if (this.quotaPolicy.action === 'terminate') {
          if (r.terminatedBy === null) this.terminate(r, 'the memory quota');
        } else {
          this.hold(r, 'quota', `over its memory quota for ${Math.round(this.quotaPolicy.graceMs / 1000)} s`);
        }
      } catch {
        // not ours to signal: the quota alert already says it is over
      }
    }
  }

  // ---- clients and shutdown ---------------------------------------------------------------

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

  /**
   * Engine shutdown: managed jobs keep running (the next engine adopts them); everything suspended is
   * resumed, gated jobs unpaused, the gate closed, and parked jobs restored where they fit — awaited,
   * at most `limitMs`. Returns the jobs that could not be restored in time (they stay parked).
   */
  async stop(limitMs = 4000): Promise<string[]> {
    if (this.stopped) return [];
    this.stopped = true;
    if (this.jobsTimer) clearTimeout(this.jobsTimer);
    if (this.evaluationTimer) clearTimeout(this.evaluationTimer);
    this.autoPark?.stop();
    this.options.parkRequests?.close();
    this.parkWishes.dropAll();
    this.changeWishes.dropAll();
    this.takingBack?.abandon(new Error('the engine stopped before the jobs of an earlier engine were all taken back'));
    this.takingBack = null;
    const parked = this.table.live().filter((r) => r.view.state === 'parked' && r.view.pid !== null);
    const restores = parked.map(async (r) => {
      this.fire(r, 'unpark', 'the engine is stopping: its memory goes back to the GPU');
      try {
        await this.act.unpark(r);
        this.fire(r, 'unparked', `unparked on GPU ${r.view.gpu} as the engine stopped`);
        return null;
      } catch (error) {
        // no room on its GPU: it stays parked; the guardian record keeps it, the next engine shows it
        this.fire(r, 'unpark-failed', `could not be unparked as the engine stopped: ${error instanceof Error ? error.message : String(error)}`);
        return r.view.id;
      }
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve(parked.map((r) => r.view.id)), limitMs);
    });
    const left = await Promise.race([Promise.all(restores).then((ids) => ids.filter((id): id is string => id !== null)), timeout]);
    clearTimeout(timer);
    this.act.release(this.table.live());
    for (const r of this.table.live()) r.child?.removeAllListeners(); // a job's exit after this is the next engine's to see
    return left;
  }
}

/** What clients see of a condition: the alert it raises, or the active condition it is (its key stays ours). */
function asAlert({ kind, severity, gpu, jobId, message }: Condition): Omit<Alert, 'id' | 'at'> {
  return { kind, severity, gpu, jobId, message };
}

/** The MIG slice a process runs in, by its GPU instance and compute instance. */
function migSliceOf(snapshot: Snapshot, p: Snapshot['processes'][number]): string | null {
  if (p.gpuInstanceId === null) return null;
  const gpu = snapshot.gpus.find((g) => g.index === p.gpuIndex);
  return gpu?.migSlices.find((s) => s.gpuInstanceId === p.gpuInstanceId && s.computeInstanceId === p.computeInstanceId)?.uuid ?? null;
}
