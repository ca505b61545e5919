// The job commands of the engine's API. Each checks the job, the caller's right to it
// and the request against the GPUs before changing anything: a refused command changes
// nothing (the dispatcher has validated the shape and writes the audit entry).
import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import type { ApiParams } from '../../../shared/api.js';
import { FINAL_STATES, PRIORITY_RANK, formatByteSize, gpusText, type EngineKind, type JobState, type JobView, type Priority, type SharingMode } from '../../../shared/jobs.js';
import { ApiError } from '../api/api-error.js';
import type { Caller, Dispatcher } from '../api/dispatcher.js';
import { commandLines, jobsSeenBy } from '../api/need-to-know.js';
import type { BoxRights } from '../api/rights.js';
import { shownArgv, submittedBytes, SUBMITTED_BYTES_MAX } from './argv-bounds.js';
import { PARK_STATES } from './job-state.js';
import { newJobView, type JobRecord } from './job-table.js';
import { jobEnvironment, userRuntimeDir } from './job-env.js';
import { checkDirectory, resolveCommand } from './launcher.js';
import { spawnHelperProblem } from './spawn-as-user.js';
import { lookupAccount, type Account } from '../accounts.js';
import type { Scheduler } from './scheduler.js';

interface SpatialRequest {
  mode: SharingMode;
  mpsSharePercent?: number;
  migSlice?: string;
}

export interface JobCommandOptions {
  /** Where a job logs: in its owner's own folder when given (the daemon, or a job for another user). */
  logPath: (jobId: string, owner: Account | null) => string;
  ready: Promise<void>;
  rights: BoxRights;
  /** A personal engine's environment is its user's; the daemon's is nobody's to hand on. */
  engineKind: EngineKind;
  /** Where users' runtime directories are, for a login-like environment's XDG_RUNTIME_DIR (default /run/user). */
  userRuntimeRoot?: string;
}

export function registerJobCommands(dispatcher: Dispatcher, scheduler: Scheduler, options: JobCommandOptions): void {
  const table = scheduler.table;
  const view = (r: JobRecord): JobView => structuredClone(r.view);
  const after = (r: JobRecord): JobView => {
    scheduler.requestEvaluation(); // shared with the other commands of the next moments: never a pass over the queue per command
    scheduler.changed();
    return view(r);
  };

  // only a job's owner or an administrator acts on it: the dispatcher checks, as the API registry says
  dispatcher.useJobOwners((id) => {
    const record = table.get(id);
    return record ? { user: record.view.owner, uid: record.view.uid } : null;
  });
  /** The job (the dispatcher has checked the caller's right to it). */
  const find = (id: string): JobRecord => {
    const record = table.get(id);
    if (!record) {
      const hint = id.startsWith('p') ? ' Only processes on a GPU are jobs; see `gpushare jobs`.' : ' See `gpushare jobs --all`.';
      throw new ApiError('not-found', `No job ${id}.${hint}`);
    }
    return record;
  };
  const live = (record: JobRecord, action: string): void => {
    if (FINAL_STATES.has(record.view.state)) throw new ApiError('conflict', `Cannot ${action} ${record.view.id}: it has ${record.view.state === 'finished' ? 'finished' : 'failed'}.`);
  };
  const running = (record: JobRecord, action: string): void => {
    live(record, action);
    if (record.view.state === 'queued') throw new ApiError('conflict', `Cannot ${action} ${record.view.id}: it is still queued (terminate it to cancel).`);
    if (record.view.pid === null) throw new ApiError('conflict', `Cannot ${action} ${record.view.id}: it has no process.`);
  };
  const gpus = () => scheduler.snapshot().gpus;
  const checkGpu = (gpu: number): void => {
    const all = gpus();
    if (!all.some((g) => g.index === gpu)) throw new ApiError('invalid-request', `GPU ${gpu} does not exist: this box has GPU${all.length === 1 ? ' 0' : `s 0-${all.length - 1}`}.`);
  };
  /** A quota or request must fit the GPU it is for (any GPU, for "auto"). */
  const checkFits = (bytes: number | null | undefined, gpu: number | 'auto' | null, what: string): void => {
    if (bytes === null || bytes === undefined) return;
    if (bytes === 0) throw new ApiError('invalid-request', `${what} must be more than 0 bytes (use none to remove a quota).`);
    const candidates = gpus().filter((g) => gpu === 'auto' || gpu === null || g.index === gpu);
    const largest = Math.max(0, ...candidates.map((g) => g.memoryTotal));
    if (bytes > largest) {
      const where = gpu === 'auto' || gpu === null ? 'the largest GPU' : `GPU ${gpu}`;
      throw new ApiError('invalid-request', `${what} ${formatByteSize(bytes)} is more than ${where} has (${formatByteSize(largest)}).`);
    }
  };

  /** An MPS share, checked: a whole percentage of the GPU's (mode mps) or the slice's (mode mig) SMs. */
  const mpsShare = (share: number, of: string, id: string): number => {
    if (!Number.isInteger(share) || share < 1 || share > 100) throw new ApiError('invalid-request', `The MPS share must be a whole percentage from 1 to 100 (of ${of}'s SMs), got ${share}.`);
    if (!scheduler.options.mps) throw new ApiError('unsupported', `MPS is not available in this engine, so ${id} cannot share ${of} through MPS.`);
    return share;
  };

  /** The mode's own settings, checked: an MPS share for 'mps', an existing slice (and so its GPU) for 'mig', optionally shared through MPS. */
  const spatial = (request: SpatialRequest, gpu: number | 'auto', id: string) => {
    const { mode, mpsSharePercent, migSlice } = request;
    if (mode !== 'mps' && mode !== 'mig' && mpsSharePercent !== undefined) throw new ApiError('invalid-request', `An MPS share applies to mode mps (a GPU) or mig (a slice shared through MPS) only; ${id} would run in mode ${mode}.`);
    if (mode !== 'mig' && migSlice !== undefined) throw new ApiError('invalid-request', `A MIG slice applies to mode mig only; ${id} would run in mode ${mode}.`);
    if (mode === 'mps') {
      if (mpsSharePercent === undefined) throw new ApiError('invalid-request', `Mode mps needs an MPS share: the percentage of the GPU's SMs (1-100) ${id} may use, e.g. --mps-share 50.`);
      return { gpu, mpsSharePercent: mpsShare(mpsSharePercent, 'the GPU', id), migSlice: null };
    }
    if (mode === 'mig') {
      if (migSlice === undefined) throw new ApiError('invalid-request', `Mode mig needs a MIG slice UUID ("MIG-…"; see \`gpushare mig layout\`) for ${id} to run in.`);
      const owner = gpus().find((g) => g.migSlices.some((s) => s.uuid === migSlice));
      if (!owner) throw new ApiError('not-found', `No MIG slice ${migSlice} on this box; \`gpushare mig layout --gpu N\` lists the slices.`);
      if (gpu !== 'auto' && gpu !== owner.index) throw new ApiError('invalid-request', `MIG slice ${migSlice} is on GPU ${owner.index}, not GPU ${gpu}.`);
      // with a share, the job is a client of the slice's own MPS daemon (shares add up within the slice)
      const share = mpsSharePercent === undefined ? null : mpsShare(mpsSharePercent, `slice ${migSlice}`, id);
      return { gpu: owner.index as number | 'auto', mpsSharePercent: share, migSlice };
    }
    return { gpu, mpsSharePercent: null, migSlice: null };
  };

  /**
   * A job on several GPUs, checked: distinct GPUs of this box (all of them at most), whole GPUs (MPS and MIG
   * are for one). Null: a job on one GPU.
   */
  const severalGpus = (gpu: number | 'auto' | number[], count: number | undefined, mode: SharingMode): { count: number; named: number[] | null } | null => {
    if (Array.isArray(gpu) && count !== undefined) throw new ApiError('invalid-request', `Give the job's GPUs either by index (${gpu.join(',')}) or by count (${count}), not both. Nothing was started.`);
    const named = Array.isArray(gpu) ? gpu : null;
    const wanted = named?.length ?? count ?? 1;
    if (named && new Set(named).size !== named.length) throw new ApiError('invalid-request', `GPU ${named.find((g, i) => named.indexOf(g) !== i)} is named twice in ${named.join(',')}: a job runs once on each of its GPUs. Nothing was started.`);
    if (count !== undefined && gpu !== 'auto') throw new ApiError('invalid-request', `A GPU count (${count}) goes with gpu "auto": the scheduler picks that many. To name them, give their indexes instead. Nothing was started.`);
    if (wanted <= 1) return null;
    const all = gpus();
    if (wanted > all.length) throw new ApiError('invalid-request', `The job asks for ${wanted} GPUs, and there ${all.length === 1 ? 'is only 1 GPU' : `are only ${all.length} GPUs`} on this box. Nothing was started.`);
    if (mode === 'mps' || mode === 'mig') throw new ApiError('invalid-request', `A job on ${wanted} GPUs runs on whole GPUs: mode ${mode} (${mode === 'mps' ? 'an MPS share' : 'a MIG slice'}) is for a job on one GPU. Nothing was started.`);
    return { count: wanted, named };
  };

  dispatcher.register('jobs.list', ({ includeFinished }, caller) => {
    const viewer = { uid: caller.uid, everyone: caller.admin || caller.uid === options.rights.engineUid };
    return jobsSeenBy(table.list(includeFinished ?? false), viewer, commandLines(scheduler.options.engine.sampler.latest));
  });

  dispatcher.register('jobs.submit', async (params: ApiParams<'jobs.submit'>, caller) => {
    await options.ready; // ids continue after an earlier engine's
    if ([...params.argv, ...(params.env ?? []), params.cwd ?? ''].some((text) => text.includes('\0'))) {
      throw new ApiError('invalid-request', 'An argument, an environment entry or the working directory contains a NUL byte, which no program can be given. Nothing was started.');
    }
    const engineUid = process.getuid?.() ?? 0;
    const account = lookupAccount(caller.uid);
    // as root the engine starts every job as its submitter, with the gid they submitted with (sg, newgrp)
    const runAs: Account | null = engineUid === 0 ? { ...account, gid: caller.gid } : null;
    const asUser = runAs && runAs.uid !== engineUid ? { identity: { uid: caller.uid, gid: caller.gid, groups: caller.groups }, user: caller.user } : undefined;
    const helperProblem = asUser ? spawnHelperProblem(caller.user) : null;
    if (helperProblem) throw new ApiError('unsupported', helperProblem);
    const cwd = params.cwd ?? account.home ?? (runAs ? null : homedir());
    if (cwd === null) throw new ApiError('invalid-request', `No working directory was given, and ${caller.user} has no home directory on this box to start in: give one. Nothing was started.`);
    const mode = params.mode ?? 'shared';
    const several = severalGpus(params.gpu, params.gpuCount, mode);
    const firstGpu = Array.isArray(params.gpu) ? params.gpu[0] : params.gpu;
    const placed = spatial({ mode, mpsSharePercent: params.mpsSharePercent, migSlice: params.migSlice }, firstGpu, 'the job');
    if (!isAbsolute(cwd)) throw new ApiError('invalid-request', `The working directory must be an absolute path, got "${cwd}".`);
    checkDirectory(cwd, asUser);
    for (const gpu of several?.named ?? (firstGpu === 'auto' ? [] : [firstGpu])) checkGpu(gpu);
    for (const gpu of several?.named ?? [firstGpu]) {
      checkFits(params.memoryQuotaBytes, gpu, 'The memory quota');
      checkFits(params.memoryRequestBytes, gpu, 'The memory request');
    }
    const quota = params.memoryQuotaBytes ?? null;
    const request = params.memoryRequestBytes ?? null;
    if (quota !== null && request !== null && request > quota) {
      throw new ApiError('invalid-request', `The memory request ${formatByteSize(request)} is more than the job's quota ${formatByteSize(quota)}.`);
    }
    const size = submittedBytes(params.argv, params.env);
    if (size > SUBMITTED_BYTES_MAX) {
      throw new ApiError('invalid-request', `The job was not submitted: its arguments and environment come to ${size.toLocaleString('en-US')} bytes, and a job may have at most ${SUBMITTED_BYTES_MAX.toLocaleString('en-US')} (${SUBMITTED_BYTES_MAX / 1024} KiB). Put long inputs in a file and pass its path. Nothing was started.`);
    }
    scheduler.checkSubmission({ owner: caller.user, uid: caller.uid, priority: params.priority ?? 'normal', memoryQuotaBytes: quota, memoryRequestBytes: request, gpuCount: several?.count ?? 1 }); // the lab policy's limits
    const engineIsTheUsers = options.engineKind !== 'daemon' && !asUser;
    const runsAs = runAs ?? account;
    const loginLike = params.loginEnv === true || (params.env === undefined && !engineIsTheUsers);
    const runtimeDir = loginLike ? userRuntimeDir(runsAs.uid, options.userRuntimeRoot) : null; // the kernel's uid it runs as, never a name sent
    const submitted = jobEnvironment({ sent: params.env, loginEnv: params.loginEnv, account: runsAs, engineEnv: process.env, engineIsTheUsers, runtimeDir });
    const executable = resolveCommand(params.argv[0], { path: submitted.PATH, cwd, as: asUser });

    const id = table.nextManagedId();
    const shown = shownArgv(params.argv);
    const job = newJobView(
      {
        id,
        managed: true,
        owner: caller.user,
        uid: caller.uid,
        ...shown, // the whole argv is the launch's (launchArgv), not every view's
        cwd,
        requestedGpu: placed.gpu,
        gpus: several?.named ?? (placed.gpu === 'auto' ? [] : [placed.gpu]),
        ...(several ? { gpuCount: several.count, ...(several.named ? { requestedGpus: several.named } : {}) } : {}),
        priority: params.priority ?? 'normal',
        memoryQuotaBytes: quota,
        memoryRequestBytes: request,
        mode,
        mpsSharePercent: placed.mpsSharePercent,
        migSlice: placed.migSlice,
        ...(params.keepResident ? { keepResident: true } : {}),
        logPath: options.logPath(id, engineIsTheUsers ? null : runAs),
      },
      'queued',
      `submitted by ${caller.user}`,
    );
    const record = await scheduler.submit(job, { executable, launchEnv: submitted, launchArgv: shown.argvCut ? [...params.argv] : null, runAs }).catch((error: unknown) => {
      throw new ApiError('unsupported', `${id} was not submitted: it could not be kept on disk (${error instanceof Error ? error.message : String(error)}). Nothing was started.`);
    });
    return after(record);
  });

  /**
   * Each change a person asks of a job, checked: null when it would change nothing, else what applies it.
   * Checking changes nothing, so a move checks all its changes before it applies any.
   */
  type Change = (() => void) | null;
  /** `state`: the state the job will be in when it applies (a move that unparks it: running). */
  const priorityChange = (r: JobRecord, priority: Priority, caller: Caller, state?: JobState): Change => {
    live(r, 'change the priority of');
    if (r.view.priority === priority) return null;
    const cap = caller.admin ? null : scheduler.laneCap?.(r); // a Slurm job's QOS or partition may cap its owner's drags
    if (cap && PRIORITY_RANK[priority] < PRIORITY_RANK[cap.lane])
      throw new ApiError('forbidden', `Cannot move ${r.view.id} to ${priority}: ${cap.why} caps it at ${cap.lane}. Only an administrator may move it higher; nothing was changed.`);
    scheduler.checkPriority(r, priority, state); // the lab policy's limits
    return () => scheduler.setPriority(r, priority);
  };
  /** `gpu`: the GPU the same move places it on. */
  const quotaChange = (r: JobRecord, bytes: number | null, state?: JobState, gpu?: number): Change => {
    live(r, 'change the memory quota of');
    for (const on of gpu !== undefined ? [gpu] : r.view.gpus.length ? r.view.gpus : (r.view.requestedGpus ?? [r.view.requestedGpu])) checkFits(bytes, on, 'The memory quota'); // per GPU: each of its GPUs
    if (r.view.memoryRequestBytes !== null && bytes !== null && r.view.state === 'queued' && r.view.memoryRequestBytes > bytes) {
      throw new ApiError('invalid-request', `The memory quota ${formatByteSize(bytes)} is less than ${r.view.id}'s request ${formatByteSize(r.view.memoryRequestBytes)}.`);
    }
    scheduler.checkQuota(r, bytes, state);
    return () => scheduler.setQuota(r, bytes);
  };
  const suspendChange = (r: JobRecord, by: string): Change => {
    const job = r.view.id;
    running(r, 'suspend');
    if (PARK_STATES.has(r.view.state)) throw new ApiError('conflict', `${job} is ${r.view.state === 'parked' ? 'parked' : `being ${r.view.state === 'parking' ? 'parked' : 'unparked'}`}; unpark it first.`);
    if (r.view.state === 'starting') throw new ApiError('conflict', `Cannot suspend ${job}: it is starting; try again in a moment.`);
    return () => scheduler.suspend(r, by);
  };
  /** `reprioritised`: the same move changes its priority, which decides a priority hold anew. */
  const resumeChange = (r: JobRecord, by: string, reprioritised: boolean): Change => {
    const job = r.view.id;
    running(r, 'resume');
    if (PARK_STATES.has(r.view.state)) throw new ApiError('conflict', `${job} is ${r.view.state}, not suspended; unpark it to bring it back on GPU ${r.view.gpu}.`);
    if (r.holds.size === 0) return null;
    if (!r.holds.has('user') && !r.holds.has('quota')) {
      if (reprioritised) return null;
      throw new ApiError('conflict', `${job} stays suspended while a higher-priority job is active on GPU ${r.view.gpu}; raise its priority to run it now.`);
    }
    return () => scheduler.resume(r, by);
  };
  /**
   * A move, checked here (a refusal, or nothing to change, needs no step), then asked of the loop: the step
   * it starts checks it again and applies it whole, and the answer, sent after that step, shows the new state.
   */
  const moved = async (r: JobRecord, changes: () => Change[]): Promise<JobView> => {
    if (changes().every((change) => change === null)) return view(r);
    await scheduler.requestMove(changes);
    return view(r);
  };

  dispatcher.register('jobs.setPriority', ({ job, priority }, caller) => {
    const r = find(job);
    return moved(r, () => [priorityChange(r, priority, caller)]);
  });

  dispatcher.register('jobs.setQuota', ({ job, bytes }) => {
    const r = find(job);
    return moved(r, () => [quotaChange(r, bytes)]);
  });

  /** `gpu`: the GPU the same move places it on (a queued job), else where it is asked to run. */
  const modeChange = (r: JobRecord, request: SpatialRequest, gpu?: number): Change => {
    const { mode, mpsSharePercent, migSlice } = request;
    const job = r.view.id;
    live(r, 'change the sharing mode of');
    const was = r.view;
    if (was.state !== 'queued' && (mode === 'mps' || was.mode === 'mps')) {
      if (mode === 'mps' && was.mode === 'mps' && (mpsSharePercent === undefined || mpsSharePercent === was.mpsSharePercent)) return null;
      throw new ApiError('conflict', `Cannot change ${job} ${mode === 'mps' && was.mode === 'mps' ? 'to another MPS share' : mode === 'mps' ? 'to MPS' : 'out of MPS'} while it runs: the MPS share is fixed when a client starts: terminate and resubmit it.`);
    }
    if (was.state !== 'queued' && (mode === 'mig' || was.mode === 'mig')) {
      const sameShare = mpsSharePercent === undefined || mpsSharePercent === was.mpsSharePercent;
      if (mode === 'mig' && was.mode === 'mig' && (migSlice === undefined || migSlice === was.migSlice) && !sameShare) {
        throw new ApiError('conflict', `Cannot change ${job}'s MPS share of its slice while it runs: the MPS share is fixed when a client starts: terminate and resubmit it.`);
      }
      if (mode === 'mig' && was.mode === 'mig' && (migSlice === undefined || migSlice === was.migSlice)) return null;
      throw new ApiError('conflict', `Cannot move ${job} ${mode === 'mig' ? 'into a MIG slice' : 'out of its MIG slice'} while it runs: a process keeps the GPU or slice it started on; terminate and resubmit it.`);
    }
    if (!r.view.managed && (mode === 'mps' || mode === 'mig')) throw new ApiError('conflict', `${job} is a process gpushare did not start: only managed jobs can be given a mode.`);
    const placed = spatial({ mode, mpsSharePercent, migSlice }, gpu ?? r.view.requestedGpu, job);
    if (mode === 'exclusive' && r.view.state !== 'queued') {
      const others = table.placed().filter((o) => o !== r && o.view.gpus.some((g) => r.view.gpus.includes(g)));
      if (others.length > 0) throw new ApiError('conflict', `Cannot make ${job} exclusive: GPU ${gpusText(r.view)} also runs ${others.map((o) => o.view.id).join(', ')}.`);
    }
    if (r.view.gpuCount && (mode === 'mps' || mode === 'mig')) throw new ApiError('conflict', `Cannot give ${job} mode ${mode}: it runs on ${r.view.gpuCount} whole GPUs, and ${mode === 'mps' ? 'an MPS share' : 'a MIG slice'} is for a job on one GPU.`);
    const moveToSlice = mode === 'mig' && r.view.state === 'queued' ? { requestedGpu: placed.gpu, gpus: placed.gpu === 'auto' ? [] : [placed.gpu] } : {};
    return () => scheduler.configure(r, { ...moveToSlice, mode, mpsSharePercent: placed.mpsSharePercent, migSlice: placed.migSlice });
  };
  /** `quota`: the memory quota it will have (a move may change it too). */
  const placeChange = (r: JobRecord, gpu: number, quota: number | null): Change => {
    live(r, 'place');
    checkGpu(gpu);
    if (r.view.state !== 'queued') throw new ApiError('conflict', `Cannot move ${r.view.id}: it already runs on GPU ${r.view.gpu} (a parked job comes back on the GPU it left).`);
    checkFits(quota, gpu, 'Its memory quota');
    checkFits(r.view.memoryRequestBytes, gpu, 'Its memory request');
    if (r.view.gpuCount) throw new ApiError('conflict', `Cannot move ${r.view.id} to GPU ${gpu}: it asked for ${r.view.gpuCount} GPUs (${r.view.requestedGpus?.join(',') ?? 'any'}); terminate and resubmit it to change them.`);
    return () => scheduler.configure(r, { requestedGpu: gpu, gpus: [gpu] });
  };

  dispatcher.register('jobs.setMode', ({ job, mode, mpsSharePercent, migSlice }) => {
    const r = find(job);
    return moved(r, () => [modeChange(r, { mode, mpsSharePercent, migSlice })]);
  });

  dispatcher.register('jobs.place', ({ job, gpu }) => {
    const r = find(job);
    return moved(r, () => [placeChange(r, gpu, r.view.memoryQuotaBytes)]);
  });

  dispatcher.register('jobs.suspend', ({ job }, caller) => {
    const r = find(job);
    return moved(r, () => [suspendChange(r, caller.user)]);
  });

  dispatcher.register('jobs.resume', ({ job }, caller) => {
    const r = find(job);
    return moved(r, () => [resumeChange(r, caller.user, false)]);
  });

  const park = async (params: { job: string }, caller: Caller, action: 'park' | 'unpark'): Promise<JobView> => {
    const r = find(params.job);
    running(r, action);
    await scheduler.requestPark(r, action, caller.user); // the loop's next step carries it out
    return after(r);
  };
  dispatcher.register('jobs.park', (params, caller) => park(params, caller, 'park'));
  dispatcher.register('jobs.unpark', (params, caller) => park(params, caller, 'unpark'));

  // A lane move: every change is checked before any is applied, so a refusal leaves the job as it was.
  dispatcher.register('jobs.move', async ({ job, priority, memoryQuotaBytes, action, gpu, mode, mpsSharePercent, migSlice }, caller) => {
    const r = find(job);
    if (mode === undefined && (mpsSharePercent !== undefined || migSlice !== undefined)) throw new ApiError('invalid-request', `An MPS share or a MIG slice comes with a mode (mps or mig) for ${job}.`);
    // the suspend or resume applies first: a signal is the one change the actuators may still refuse, and then nothing else is applied
    const changes = (state?: JobState): Change[] => [
      action === 'suspend' ? suspendChange(r, caller.user) : action === 'resume' ? resumeChange(r, caller.user, priority !== undefined && priority !== r.view.priority) : null,
      gpu === undefined ? null : placeChange(r, gpu, memoryQuotaBytes === undefined ? r.view.memoryQuotaBytes : memoryQuotaBytes),
      mode === undefined ? null : modeChange(r, { mode, mpsSharePercent, migSlice }, gpu),
      priority === undefined ? null : priorityChange(r, priority, caller, state),
      memoryQuotaBytes === undefined ? null : quotaChange(r, memoryQuotaBytes, state, gpu),
    ];
    if (action === 'park' || action === 'unpark') {
      changes(action === 'park' ? 'parked' : 'running'); // checked as the job will be once its memory has moved
      running(r, action);
      // a park or unpark that is refused or fails leaves the job as it was, and nothing else is applied yet
      await scheduler.requestPark(r, action, caller.user); // the loop's next step carries it out
      try {
        await scheduler.requestMove(() => changes()); // checked again: the box may have changed while the memory moved
      } catch (error) {
        if (error instanceof ApiError) throw new ApiError(error.code, `${job} is ${action}ed, but the rest of the move was refused meanwhile: ${error.message}`);
        throw error;
      }
      return view(r);
    }
    return moved(r, () => changes());
  });

  dispatcher.register('jobs.terminate', ({ job }, caller) => {
    const r = find(job);
    live(r, 'terminate');
    if (r.view.state === 'queued') {
      scheduler.cancel(r, caller.user);
      return after(r);
    }
    if (r.view.pid === null) throw new ApiError('conflict', `Cannot terminate ${job}: it has no process.`);
    scheduler.terminate(r, caller.user);
    return after(r);
  });
}
