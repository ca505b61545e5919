// Enrolment: a process gpushare did not start, with the preload library loaded, asks at its first CUDA
// call to join a job (native/preload/src/enrol.c). The engine knows it by the socket's kernel credentials,
// decides its job from /proc (grouping.ts), and answers with that job's gate files, which the socket server
// hands over as descriptors (server/enrol-answer.ts). From then on it is a member of the job exactly as a
// process of a `gpushare run` job is. This module owns the enrolled jobs' members and `gpushare enrol`'s
// registrations; the scheduler owns the jobs, and starts, joins and ends them when asked (startEnrolled,
// enrolledFiles, endEnrolled): nothing here fires a job's events or reaches its actuators.
import { formatByteSize, FINAL_STATES, type Priority } from '../../../shared/jobs.js';
import { lookupAccount } from '../accounts.js';
import { ApiError } from '../api/api-error.js';
import type { Caller } from '../api/dispatcher.js';
import { readProcStatus, sameProcessAlive } from '../proc/proc-status.js';
import { readHead } from '../proc/bounded-read.js';
import { cutArgv } from '../proc/text-bounds.js';
import { placeName } from '../scheduler/enrolled-placement.js';
import type { JobRecord } from '../scheduler/job-table.js';
import { newJobView } from '../scheduler/job-table.js';
import type { EnrolledFiles, Scheduler } from '../scheduler/scheduler.js';
import type { SlurmJobs } from '../slurm/slurm-jobs.js';
import type { SlurmJobView } from '../../../shared/slurm.js';
import { MAX_REGISTRATIONS_PER_USER, Registrations, type EnrolOptions, type Registration } from './registrations.js';
import { kernelGroup, readEnrolling, requestedDevice, type EnrolGroupKind, type EnrollingProcess } from './grouping.js';

/** Live enrolled jobs one user may have: each holds a gate slot, of which the box has 64. */
export const MAX_ENROLLED_JOBS_PER_USER = 16;
/** Live enrolled jobs of all users together: the rest of the 64 gate slots stay for `gpushare run` jobs. */
export const MAX_ENROLLED_JOBS_TOTAL = 48;
/** Enrolled processes remembered per job (forks that never exec are the job's without asking). */
export const MAX_MEMBERS_PER_JOB = 256;

/** What the asking process gets: its job and the files to hand it as descriptors. */
export interface EnrolGrant {
  ok: true;
  jobId: string;
  slot: number;
  generation: number;
  files: { dir: string; control: string; activity: string; park: string | null };
}
export interface EnrolRefusal {
  ok: false;
  /** 'gone', 'engine', 'managed', 'limit', 'full', 'no-gate' */
  code: string;
  message: string;
}
export type EnrolAnswer = EnrolGrant | EnrolRefusal;

/** The kernel's word on who asks (SO_PEERCRED). */
export interface EnrolPeer {
  pid: number;
  uid: number;
  gid: number;
}

export { MAX_REGISTRATIONS_PER_USER, type EnrolOptions } from './registrations.js';

const refuse = (code: string, message: string): EnrolRefusal => ({ ok: false, code, message });

export class Enrolment {
  /** jobId → enrolled pid → its start time. */
  private readonly members = new Map<string, Map<number, number>>();
  /** `gpushare enrol` registrations, kept across engine restarts. */
  private readonly registrations: Registrations;
  /** Users told (by an alert) that they are over a bound, until they are under it again. */
  private readonly alerted = new Set<string>();
  /** Answers given, by outcome (tests and the bench read them). */
  readonly counts = { granted: 0, joined: 0, refused: 0 };

  constructor(
    private readonly scheduler: Scheduler,
    private readonly options: { enginePid?: number; procRoot?: string; slurm?: SlurmJobs; registrationsDir?: string | null } = {},
  ) {
    scheduler.enrolledAlive = (record) => this.alive(record);
    this.registrations = new Registrations({ dir: options.registrationsDir ?? null, procRoot: options.procRoot });
  }

  /** `gpushare enrol` registers its own process (the kernel's pid) before it starts the command. */
  register(caller: Caller, options: EnrolOptions): { pid: number } {
    const pid = caller.pid;
    const status = pid === undefined || pid === null ? null : readProcStatus(pid, this.options.procRoot);
    if (!status || status.uid !== caller.uid) throw new ApiError('invalid-request', 'enrol.register needs a connection whose process the engine can see (the unix socket); nothing was registered.');
    const mine = this.registrations.liveCountOf(caller.uid);
    if (mine >= MAX_REGISTRATIONS_PER_USER) throw new ApiError('conflict', `${caller.user} already has ${mine} commands waiting to enrol (gpushare enrol), the most one user may: let some end first. Nothing was registered.`);
    if (options.priority && options.priority !== 'normal') this.checkPriority(caller.uid, options.priority);
    this.registrations.add({ ...options, uid: caller.uid, pid: pid!, startTicks: status.startTicks });
    return { pid: pid! };
  }

  /** The asking process's job, made or joined; a refusal says why (the library runs on unmanaged). */
  join(peer: EnrolPeer): EnrolAnswer {
    const answer = this.decide(peer);
    if (!answer.ok) this.counts.refused++;
    return answer;
  }

  private decide(peer: EnrolPeer): EnrolAnswer {
    if (!this.scheduler.gate?.slotFiles) return refuse('no-gate', 'this engine has no launch gate (the preload library is not built, or the gate is off)');
    const proc = readEnrolling(peer.pid, this.options.procRoot);
    if (!proc) return refuse('gone', `process ${peer.pid} is gone`);
    if (proc.uid !== peer.uid) return refuse('gone', `process ${peer.pid} now runs as uid ${proc.uid}, not uid ${peer.uid} who asked`);
    const enginePid = this.options.enginePid ?? process.pid;
    const managed = this.scheduler.ownership.jobOf(peer.pid);
    const managedRecord = managed ? this.scheduler.table.get(managed.jobId) : undefined;
    if (managedRecord && !managedRecord.view.enrolled) return refuse('managed', `process ${peer.pid} belongs to ${managed!.jobId}, which gpushare started: it is managed already`);
    // the engine itself, its helpers (the guardian, gpushare-spawn: its own children) and its MPS daemons and their servers
    if (peer.pid === enginePid || proc.ppid === enginePid || this.engineMps(peer.pid, proc))
      return refuse('engine', `process ${peer.pid} (${proc.comm}) is one of the engine's own`);
    const existing = this.findJob(proc, managedRecord);
    if (existing) return this.admit(existing, proc, 'joined');
    return this.create(proc);
  }

  /**
   * An MPS process of the engine's: a control daemon of the engine's own uid (no user makes one), or a server one of our
   * daemons started. The name alone (anyone's prctl or symlink) is no proof: a user's process so named enrols as theirs.
   */
  private engineMps(pid: number, proc: EnrollingProcess): boolean {
    if (!proc.comm.startsWith('nvidia-cuda-mps')) return false;
    return proc.uid === process.getuid?.() || this.scheduler.act.ownMpsServerPids().has(pid);
  }

  /** An enrolled job the process belongs to already, or null. */
  private findJob(proc: EnrollingProcess, byLineage: JobRecord | undefined): JobRecord | null {
    const live = this.scheduler.table.placed().filter((r) => r.view.enrolled && r.view.uid === proc.uid && r.slot !== null && !FINAL_STATES.has(r.view.state));
    const group = this.groupOf(proc);
    const byGroup = live.find((r) => r.view.enrolled!.group === group.key);
    if (byGroup) return byGroup;
    if (group.kind !== 'tree') return null; // a kernel, a command, a unit: its own job, wherever its parents are
    if (byLineage && byLineage.view.uid === proc.uid && live.includes(byLineage)) return byLineage; // under an enrolled root
    for (const ancestor of proc.ancestors) {
      if (ancestor.uid !== proc.uid) break;
      const job = live.find((r) => this.members.get(r.view.id)?.get(ancestor.pid) === ancestor.startTicks);
      if (job) return job;
    }
    // its process group: a script's loop of forks, a launcher's workers
    return live.find((r) => r.view.enrolled!.pgid === proc.pgid && r.view.enrolled!.sid === proc.sid) ?? null;
  }

  /** A Slurm job, else a registration of `gpushare enrol` above it (a notebook kernel keeps its notebook's name), else the group the kernel gives it, else a tree of its own. */
  private groupOf(proc: EnrollingProcess): { key: string; kind: EnrolGroupKind; name: string | null; registration: Registration | null; slurm?: SlurmJobView } {
    const slurm = this.options.slurm?.jobOf(proc); // a Slurm job the prolog registered: its quota and lane, whatever runs inside it
    if (slurm) return { key: `slurm:${proc.uid}:${slurm.jobId}`, kind: 'slurm', name: `slurm job ${slurm.jobId}`, registration: null, slurm };
    for (const p of [{ pid: proc.pid, startTicks: proc.startTicks, uid: proc.uid }, ...proc.ancestors]) {
      const r = this.registrations.get(p.pid, p.startTicks);
      if (!r || r.uid !== proc.uid) continue;
      const kernel = kernelGroup(proc, this.options.procRoot);
      if (kernel?.kind === 'notebook') return { ...kernel, registration: r }; // a kernel from gpushare's kernelspec: its notebook, with its options
      return { key: `command:${proc.uid}:${p.pid}:${p.startTicks}`, kind: 'command', name: null, registration: r };
    }
    const kernel = kernelGroup(proc, this.options.procRoot);
    if (kernel) return { ...kernel, registration: null };
    return { key: `tree:${proc.uid}:${proc.pid}:${proc.startTicks}`, kind: 'tree', name: null, registration: null };
  }

  private create(proc: EnrollingProcess): EnrolAnswer {
    const s = this.scheduler;
    const account = lookupAccount(proc.uid);
    const mine = s.table.placed().filter((r) => r.view.enrolled && r.view.uid === proc.uid).length;
    if (proc.uid !== 0 && mine >= MAX_ENROLLED_JOBS_PER_USER)
      return this.overBound(`limit:${proc.uid}`, refuse('limit', `${account.name} already has ${mine} enrolled jobs, the most one user may (each holds one of the box's 64 gate slots): process ${proc.pid} runs unmanaged`));
    this.alerted.delete(`limit:${proc.uid}`);
    const all = s.table.placed().filter((r) => r.view.enrolled).length;
    if (all >= MAX_ENROLLED_JOBS_TOTAL)
      return this.overBound('total', refuse('full', `process ${proc.pid} (${account.name}, ${proc.comm}) could not enrol and runs unmanaged: ${all} enrolled jobs run, the most this box takes (the other gate slots stay for gpushare run jobs)`));
    this.alerted.delete('total');
    this.registrations.prune(); // a new job: registrations of commands that ended go now
    const group = this.groupOf(proc);
    const reg = group.registration;
    const slurm = group.slurm ?? null;
    // a hint until the driver lists one of its processes (scheduler/enrolled-placement.ts): it has no context yet
    const hint = slurm && slurm.gpus.length > 0 ? { gpu: slurm.gpus[0], migSlice: null, from: 'slurm' as const } : { ...this.hintFor(proc.pid), from: 'environment' as const };
    const gpu = hint.gpu;
    const argv = readArgv(proc.pid, this.options.procRoot) ?? [proc.comm];
    const { argv: shown, cut } = cutArgv(argv);
    const lab = s.lab;
    let priority: Priority = slurm ? slurm.lane : (lab?.defaultPriority(account.name, proc.uid) ?? 'normal');
    const asked = slurm ? slurm.memoryQuotaBytes : (reg?.memoryQuotaBytes ?? null);
    const limited = lab?.quotaForEnrolled(account.name, proc.uid, asked, s.table.placed().map((r) => r.view)) ?? { bytes: asked, fromPolicy: false };
    const quota = limited.bytes;
    const how = group.kind === 'command' ? 'by gpushare enrol' : group.kind === 'notebook' ? `as notebook kernel${group.name ? ` ${group.name}` : ''}` : group.kind === 'tree' ? `from pid ${proc.pid}` : `as ${group.name}`;
    const view = newJobView(
      {
        id: s.table.nextManagedId(),
        managed: true,
        owner: account.name,
        uid: proc.uid,
        argv: shown,
        ...(cut ? { argvCut: { bytes: argv.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0), args: argv.length } } : {}),
        gpu,
        requestedGpu: gpu,
        migSlice: hint.migSlice,
        ...(hint.migSlice ? { mode: 'mig' as const } : {}),
        pid: proc.pid,
        priority,
        memoryQuotaBytes: quota,
        ...(slurm ? (this.options.slurm?.sharingOf(slurm.jobId) ?? {}) : {}), // gres/mps: an MPS client (its task prolog exported the daemon's variables)
        ...(reg?.keepResident ? { keepResident: true } : {}),
        ...(limited.fromPolicy ? { memoryQuotaFromPolicy: true } : {}),
        enrolled: { by: group.kind, group: group.key, name: group.name, pgid: proc.pgid, sid: proc.sid, gpuFrom: hint.from, ...(slurm ? { slurm: { jobId: slurm.jobId, partition: slurm.partition, qos: slurm.qos } } : {}) },
      },
      'starting',
      `enrolled ${how} at its first CUDA call, on ${placeName(gpu, hint.migSlice)} as its ${hint.from === 'slurm' ? 'Slurm allocation' : 'CUDA_VISIBLE_DEVICES'} says until the driver lists it${quota !== null ? ` with a hard memory quota of ${formatByteSize(quota)}${limited.fromPolicy ? ` (the lab policy's memory limit: what ${account.name} has left)` : ''}` : ''}`,
    );
    const record = s.table.add(view, { startTicks: proc.startTicks, runAs: account });
    if (reg?.priority && reg.priority !== priority) {
      try {
        lab?.checkPriority(record, reg.priority, s.table.placed().map((r) => r.view));
        priority = view.priority = reg.priority;
      } catch {
        // the lab policy's limits: it keeps its default priority (the history says which)
      }
    }
    let files: EnrolledFiles;
    try {
      files = s.startEnrolled(record, gpu);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return this.overBound('full', refuse('full', `process ${proc.pid} (${account.name}, ${proc.comm}) could not enrol and runs unmanaged: ${why}`));
    }
    this.alerted.delete('full');
    this.members.set(view.id, new Map([[proc.pid, proc.startTicks]]));
    if (slurm) this.options.slurm?.adopted(slurm.jobId, view.id);
    this.counts.granted++;
    return grant(record, files);
  }

  /** The grant never reached `pid` (it stopped waiting): it is no member; a job with no other member ends now. */
  undo(jobId: string, pid: number): void {
    const members = this.members.get(jobId);
    members?.delete(pid);
    const record = this.scheduler.table.get(jobId);
    if (!record || FINAL_STATES.has(record.view.state) || (members && members.size > 0)) return;
    this.members.delete(jobId);
    this.scheduler.endEnrolled(record, `pid ${pid} stopped waiting for its enrolment (it runs unmanaged)`);
  }

  /** A process joins an enrolled job: it maps the job's slot as every other member does. */
  private admit(record: JobRecord, proc: EnrollingProcess, how: 'joined'): EnrolAnswer {
    const members = this.members.get(record.view.id) ?? new Map<number, number>();
    this.members.set(record.view.id, members);
    for (const [pid, ticks] of members) if (!sameProcessAlive(pid, ticks, this.options.procRoot)) members.delete(pid);
    if (members.size < MAX_MEMBERS_PER_JOB) {
      members.set(proc.pid, proc.startTicks);
      this.scheduler.ownership.member(record.view.id, proc.pid, proc.startTicks); // its usage is the job's, its tree too
    }
    this.counts[how]++;
    return grant(record, this.scheduler.enrolledFiles(record));
  }

  /** A refusal for a bound; the first of its onset is an alert naming the process and why. */
  private overBound(key: string, refusal: EnrolRefusal): EnrolRefusal {
    if (!this.alerted.has(key)) {
      this.alerted.add(key);
      this.scheduler.options.engine.raiseAlert({ kind: 'failed', severity: 'warning', gpu: null, jobId: null, message: `Enrolment refused: ${refusal.message}.` });
    }
    return refusal;
  }

  private checkPriority(uid: number, priority: Priority): void {
    const lab = this.scheduler.lab;
    if (!lab) return;
    const probe = newJobView({ id: 'j0', managed: true, owner: lookupAccount(uid).name, uid, argv: ['enrol'] }, 'queued', 'registered');
    lab.checkPriority({ view: probe } as JobRecord, priority, this.scheduler.table.placed().map((r) => r.view));
  }

  /**
   * Where the process's CUDA_VISIBLE_DEVICES at exec points (an index, a GPU UUID or its prefix, a MIG UUID; unset: the
   * first device, as the driver enumerates them): only a hint, its owner's to set, until the driver lists it.
   */
  private hintFor(pid: number): { gpu: number; migSlice: string | null } {
    const asked = requestedDevice(pid, this.options.procRoot);
    const gpus = this.scheduler.snapshot().gpus;
    const byIndex = asked !== null && /^\d+$/.test(asked) ? gpus.find((g) => g.index === Number(asked)) : undefined;
    const bySlice = asked?.startsWith('MIG-') ? gpus.find((g) => g.migSlices.some((s) => s.uuid === asked)) : undefined;
    if (bySlice) return { gpu: bySlice.index, migSlice: asked };
    const byUuid = asked?.startsWith('GPU-') ? gpus.find((g) => g.uuid.startsWith(asked)) : undefined;
    const gpu = byIndex ?? byUuid ?? gpus[0];
    return { gpu: gpu?.index ?? 0, migSlice: gpu?.migEnabled ? (gpu.migSlices[0]?.uuid ?? null) : null }; // a MIG GPU shows its first slice
  }

  /** The enrolled processes of a job (pids), for its accounting. */
  membersOf(jobId: string): number[] {
    return [...(this.members.get(jobId)?.keys() ?? [])];
  }

  /** Whether any process of the enrolled job lives: an enrolled member, or one the library lists in its slot. */
  alive(record: JobRecord): boolean {
    const members = this.members.get(record.view.id);
    if (members) for (const [pid, ticks] of members) if (sameProcessAlive(pid, ticks, this.options.procRoot)) return true;
    if (!members && record.view.pid !== null && record.startTicks !== null && sameProcessAlive(record.view.pid, record.startTicks, this.options.procRoot)) return true; // adopted after a restart
    const gate = this.scheduler.gate;
    if (record.slot !== null && gate?.readSlot) {
      try {
        let live = 0;
        for (const p of gate.readSlot(record.slot).processes) {
          // after a restart: the members it had. The job writes this list itself: only its user's processes count, known from now by their start time
          const status = p.alive ? readProcStatus(p.pid, this.options.procRoot) : null;
          if (!status || status.uid !== record.view.uid || status.state === 'Z') continue;
          this.scheduler.ownership.member(record.view.id, p.pid, status.startTicks);
          live++;
        }
        if (live > 0) return true;
      } catch {
        // unreadable: its members say
      }
    }
    if (FINAL_STATES.has(record.view.state) || !members) return false;
    this.members.delete(record.view.id);
    return false;
  }
}

function grant(record: JobRecord, { slot, generation, ...files }: EnrolledFiles): EnrolGrant {
  return { ok: true, jobId: record.view.id, slot, generation, files };
}

function readArgv(pid: number, procRoot = '/proc'): string[] | null {
  const head = readHead(`${procRoot}/${pid}/cmdline`, 4096);
  if (!head || head.head.length === 0) return null;
  const text = head.head.toString('utf8').replace(/\0$/, '');
  return text ? text.split('\0') : null;
}
