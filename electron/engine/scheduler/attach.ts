// Wiring: one call gives an engine its scheduler — the job commands, the policies on
// every snapshot, the crash guardian — and stop() undoes it (everything resumed).
import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { LabPolicy } from '../../../shared/lab-policy.js';
import type { Engine } from '../engine.js';
import { privateRuntimeDir } from '../paths.js';
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import { Freezer } from '../holds/freezer.js';
import { LaunchGate, preloadLibraryPath } from '../gate/launch-gate.js';
import { ProcessControl } from '../holds/process-control.js';
import type { MigExecutor } from '../mig/executor.js';
import { registerMigCommands } from '../mig/mig-commands.js';
import type { MpsControl } from '../mps/mps-control.js';
import { registerMpsCommands } from '../mps/mps-commands.js';
import { MpsDaemons } from '../mps/mps-daemons.js';
import { ProcTable } from '../proc/proc-table.js';
import type { JobGate } from './job-gate.js';
import { highestLoggedJobNumber, jobLogPath } from './job-log.js';
import { lookupAccount } from '../accounts.js';
import type { JobRecord } from './job-table.js';
import { LabPolicyEnforcer } from './lab/lab-policy-enforcer.js';
import { registerPolicyCommands } from './lab/policy-commands.js';
import type { UsageSource } from './lab/recent-usage.js';
import { registerJobCommands } from './scheduler-commands.js';
import type { JobStore, KeptJob } from '../store/job-store.js';
import { Scheduler, type UnmanagedQuotaPolicy } from './scheduler.js';
import type { AutoParkPolicy } from './auto-park.js';
import { ParkRequests } from './park-requests.js';
import { Enrolment } from '../enrol/enrolment.js';
import { registerSlurmCommands } from '../slurm/slurm-commands.js';
import { SlurmJobs, type PidInfo, type SlurmUsageSink } from '../slurm/slurm-jobs.js';
import { DEFAULT_SLURM_CONFIG, type SlurmConfig } from '../../../shared/slurm.js';

export interface AttachSchedulerOptions {
  /** Slurm jobs' lanes by QOS and partition (the daemon's config). */
  slurm?: SlurmConfig;
  /** Where the Slurm epilog's usage rows go (the usage store); absent: nowhere but the epilog's answer. */
  slurmUsage?: SlurmUsageSink;
  /** Which Slurm job a pid is in where no Slurm cgroup says (default `scontrol pidinfo`); a test's own. */
  slurmPidInfo?: PidInfo;
  /** Logs and other per-user state; default $XDG_STATE_HOME/gpushare. */
  stateDir?: string;
  /** The suspend record lives here; default the engine's runtime dir. */
  runtimeDir?: string;
  /**
   * The launch gate. Absent: a LaunchGate in the runtime dir when the preload library is
   * built. null: managed jobs run without the preload library (pause by signals, reactive quota).
   */
  gate?: JobGate | null;
  /** Parking. Absent: the backend's (its driver's cuCheckpointProcess* calls). */
  checkpointer?: ProcessCheckpointer;
  /** MPS daemons. Absent: the backend's. */
  mps?: MpsControl;
  /** MIG changes. Absent: the backend's (on real GPUs nvidia-smi as the engine's user: root needed). */
  migExecutor?: MigExecutor;
  unmanagedQuota?: UnmanagedQuotaPolicy;
  activeHoldMs?: number;
  terminateGraceMs?: number;
  /** The crash guardian (default on). */
  guardian?: boolean;
  /** Where managed jobs are kept across engines; absent: they live in this engine only. */
  jobStore?: JobStore;
  /** The box daemon's lab policy (limits, fair share, idle holders); absent (a personal engine): none applies. */
  labPolicy?: LabPolicy;
  /** Keeps a policy set through `policy.set` (the daemon's config file) before it applies. */
  persistPolicy?: (policy: LabPolicy) => unknown;
  /** The usage store the lab policy reads recent usage from (fair share, high-priority GPU-hours). */
  usage?: UsageSource;
  /** Idle managed jobs give their memory to queued jobs and take it back on their next launch; absent: off. */
  autoPark?: AutoParkPolicy | null;
  /** Jobs one user may have queued at once (the daemon's maxQueuedJobsPerUser); absent or null: no cap. */
  maxQueuedPerUser?: number | null;
  /** The lab policy's clock (tests). */
  labClock?: () => number;
  /** Where users' runtime directories are (default /run/user; a test's own). */
  userRuntimeRoot?: string;
}

export interface AttachedScheduler {
  readonly scheduler: Scheduler;
  /** Pids a previous engine had left suspended and this start resumed. */
  readonly recovered: number[];
  /** Why managed jobs run without the launch gate, or null when they have it. */
  readonly gateMissing: string | null;
  /** Resolves once the jobs of an earlier engine are back (queued, re-adopted or marked lost). */
  readonly ready: Promise<void>;
  /**
   * Stop following snapshots; managed jobs keep running. Everything suspended is resumed, the gate
   * released, parked jobs restored where they fit (awaited, bounded). Resolves to the jobs left parked.
   */
  stop(): Promise<string[]>;
}

export function defaultStateDir(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'gpushare');
}

export function attachScheduler(engine: Engine, options: AttachSchedulerOptions): AttachedScheduler {
  const stateDir = options.stateDir ?? defaultStateDir();
  const logDir = join(stateDir, 'logs');
  const runDir = options.runtimeDir ?? privateRuntimeDir(); // the suspend record and the gate: never in a dir someone else made
  const recordPath = join(runDir, 'suspended.json');
  let gate = options.gate;
  let gateMissing: string | null = null;
  if (gate === undefined) {
    gate = existsSync(preloadLibraryPath()) ? LaunchGate.create({ dir: runDir, heartbeatIntervalMs: 500, resume: true }) : null; // resume: an earlier engine's jobs still map its file
    if (!gate) gateMissing = `the preload library is not built (${preloadLibraryPath()}); managed jobs get no hard quota and are paused by signals`;
  } else if (gate === null) {
    gateMissing = 'no launch gate was given';
  }
  const backend = engine.backend; // its driver's own MPS, MIG and checkpoints
  const recovered = Freezer.recoverLeftovers(recordPath, { cudaLibraryPath: backend.cudaLibraryPath });
  const control = new ProcessControl({ userName: (uid) => lookupAccount(uid).name });
  const freezer = new Freezer({
    recordPath,
    control,
    guardian: options.guardian,
    cudaLibraryPath: backend.cudaLibraryPath,
    onGuardianReleased: (entries) => scheduler.guardianReleased(entries),
  });
  const me = userInfo();
  const mps = options.mps ?? backend.mpsControl({ runtimeDir: runDir, identity: { uid: me.uid, user: me.username } });
  const mpsDaemons = new MpsDaemons({ control: mps, runtimeDir: runDir }); // one owner of each daemon's life: jobs and requests alike
  const migExecutor = options.migExecutor ?? backend.migExecutor();
  const jobStore = options.jobStore;
  let keepFailed = false;
  const keep = (record: JobRecord): Promise<void> => {
    const saved = jobStore!.save(keptJob(record));
    saved.then(
      () => (keepFailed = false),
      (error: unknown) => {
        if (keepFailed) return;
        keepFailed = true; // one alert per onset
        const message = `Job changes are not being written to disk (kept in memory and retried until they are; a restart before that would bring jobs back as they were last written): ${error instanceof Error ? error.message : String(error)}`;
        engine.raiseAlert({ kind: 'failed', severity: 'error', gpu: null, jobId: record.view.id, message });
      },
    );
    return saved;
  };
  const scheduler = new Scheduler({
    engine,
    control,
    freezer,
    gate,
    checkpointer: options.checkpointer ?? backend.checkpointer(),
    mps: mpsDaemons,
    logDir,
    jobEnv: backend.jobEnv,
    unmanagedQuota: options.unmanagedQuota,
    activeHoldMs: options.activeHoldMs,
    terminateGraceMs: options.terminateGraceMs,
    persist: jobStore ? (record) => keep(record) : undefined,
    lab: options.labPolicy ? new LabPolicyEnforcer({ policy: options.labPolicy, persist: options.persistPolicy, usage: options.usage, now: options.labClock }) : null,
    autoPark: options.autoPark,
    maxQueuedPerUser: options.maxQueuedPerUser,
    parkRequests: options.autoPark && gate ? new ParkRequests(join(runDir, 'park')) : null,
  });
  skipUsedJobIds(scheduler, logDir);
  const ready = scheduler.takeBack(jobStore ? earlierJobs(scheduler, jobStore) : null); // MPS daemons' clients known first
  registerJobCommands(engine.dispatcher, scheduler, { logPath: (id, owner) => jobLogPath(logDir, id, owner), ready, rights: engine.rights, engineKind: engine.kind, userRuntimeRoot: options.userRuntimeRoot });
  registerPolicyCommands(engine.dispatcher, scheduler, engine.rights);
  const gpuRefs = () => scheduler.snapshot().gpus.map((g) => ({ index: g.index, uuid: g.uuid }));
  const sliceRefs = () => scheduler.snapshot().gpus.flatMap((g) => g.migSlices.map((s) => ({ gpu: g.index, gpuInstanceId: s.gpuInstanceId, uuid: s.uuid })));
  registerMpsCommands(engine.dispatcher, { mps: mpsDaemons, gpus: gpuRefs, slices: sliceRefs });
  registerMigCommands(engine.dispatcher, {
    nvml: engine.backend.nvml,
    identify: (pid) => new ProcTable().lookup(pid),
    sliceDaemons: (slices) => mps.sliceStatus(slices),
    executor: migExecutor,
    gpuCount: () => engine.backend.nvml.deviceCount(),
    changed: (gpu) => {
      engine.sampler.invalidateDescription(gpu);
      engine.sampler.sampleNow(); // the next command already sees the new slices (a job for one, say), not the next tick
    },
  });
  let slurmJobs: SlurmJobs | null = null;
  if (gate) {
    let enrolment: Enrolment | null = null;
    slurmJobs = new SlurmJobs(scheduler, { config: () => options.slurm ?? DEFAULT_SLURM_CONFIG, membersOf: (id) => enrolment?.membersOf(id) ?? [], ...(options.slurmPidInfo ? { pidInfo: options.slurmPidInfo } : {}), usage: options.slurmUsage ?? null });
    enrolment = new Enrolment(scheduler, { slurm: slurmJobs, registrationsDir: runDir }); // registrations outlive an engine restart there
    engine.enroller = enrolment;
    engine.dispatcher.register('enrol.register', (params, caller) => enrolment!.register(caller, params));
    registerSlurmCommands(engine.dispatcher, slurmJobs);
  }
  const offScheduler = engine.sampler.onSnapshot(() => scheduler.requestEvaluation('now')); // a step on every published snapshot
  const offSlurm = slurmJobs ? engine.sampler.onSnapshot((snapshot) => slurmJobs!.sample(snapshot)) : () => undefined;
  const off = (): void => {
    offScheduler();
    offSlurm();
  };
  if (recovered.length > 0) {
    engine.raiseAlert({
      kind: 'resumed',
      severity: 'warning',
      gpu: null,
      jobId: null,
      message: `Resumed ${recovered.length} process${recovered.length === 1 ? '' : 'es'} (pid ${recovered.join(', ')}) that a previous gpushare engine had left suspended.`,
    });
  }
  return {
    scheduler,
    recovered,
    gateMissing,
    ready,
    async stop() {
      off();
      engine.enroller = null; // nobody enrols into a scheduler that stopped
      await ready.catch(() => undefined);
      return scheduler.stop();
    },
  };
}

/** The jobs an earlier engine kept, for the scheduler to take back: ids continue after them. */
async function earlierJobs(scheduler: Scheduler, jobStore: JobStore): Promise<Array<{ view: JobRecord['view']; kept: Partial<JobRecord> }>> {
  scheduler.table.skipManagedIds(await jobStore.highestJobNumber());
  return (await jobStore.loadLive()).map((kept) => ({ view: kept.view, kept: restoredRecord(kept) }));
}

function keptJob(record: JobRecord): KeptJob {
  const { view, executable, launchEnv, launchArgv, runAs, startTicks, slot, parked, originalNice } = record;
  return { view, executable, launchEnv, launchArgv, runAs, startTicks, slot, parked, originalNice };
}

function restoredRecord(kept: KeptJob): Partial<JobRecord> {
  const { executable, launchEnv, launchArgv, runAs, startTicks, slot, parked, originalNice } = kept;
  return { executable, launchEnv, launchArgv: launchArgv ?? null, runAs, startTicks, slot, parked, originalNice }; // an earlier engine's record may have none
}

/** Job ids continue after the logs already there (each user's folder too), so a restarted engine never reuses j12.log. */
function skipUsedJobIds(scheduler: Scheduler, logDir: string): void {
  scheduler.table.skipManagedIds(highestLoggedJobNumber(logDir));
}
