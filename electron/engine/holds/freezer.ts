// Every hold the engine puts on a process goes through here — a SIGSTOP of a pid or of a
// job's process group, a park of its GPU memory — recorded on disk before it is made, so
// that a clean stop, a crash or a stopped engine (via the guardian) or the next start lets go of it.
import { rmSync, writeFileSync } from 'node:fs';
import { GUARDIAN_STALE_MS, releaseRecordNow, spawnGuardian, type GuardianHandle } from './guardian.js';
import { readProcStatus, type ProcessRef } from '../proc/proc-status.js';
import type { ProcessControl } from './process-control.js';
import {
  continueHeld,
  heartbeatPath,
  holdOf,
  readReleased,
  readSuspendRecord,
  releasedPath,
  resumeRecorded,
  sameOwner,
  writeSuspendRecord,
  type RecordOwner,
  type SuspendedEntry,
} from './suspend-record.js';

export const HEARTBEAT_INTERVAL_MS = 500;

export interface FreezerOptions {
  recordPath: string;
  control: ProcessControl;
  /** Start the crash guardian (off in unit tests that never suspend a real process). */
  guardian?: boolean;
  /** How often the engine beats, the guardian's sign of a live engine; default 500 ms. */
  heartbeatIntervalMs?: number;
  /** A heartbeat unchanged this long (the engine is stopped or hung) makes the guardian let go of every hold; default 5 s. */
  staleAfterMs?: number;
  /** The libcuda parked processes are restored with: the simulated driver's on simulated GPUs; default the system's. */
  cudaLibraryPath?: string;
  /** The guardian let go of these holds while the engine was stopped or hung; called when the engine notices, the holds already forgotten. */
  onGuardianReleased?: (entries: SuspendedEntry[]) => void;
}

export class Freezer {
  private readonly suspended = new Map<number, SuspendedEntry>();
  private readonly parked = new Map<number, SuspendedEntry>();
  private guardian: GuardianHandle | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private beats = 0;
  private nextSeq = 1;
  private stopping = false;
  private readonly owner: RecordOwner;
  readonly recordPath: string;
  private readonly control: ProcessControl;

  constructor(private readonly options: FreezerOptions) {
    this.recordPath = options.recordPath;
    this.control = options.control;
    this.owner = { engine: process.pid, engineStartTicks: readProcStatus(process.pid)?.startTicks };
    this.adoptUnrestoredParks();
    if (options.guardian ?? true) {
      this.beat();
      this.guardian = this.spawnGuardian();
      this.heartbeat = setInterval(() => this.tick(), options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS);
      this.heartbeat.unref();
    }
    if (this.parked.size > 0) this.save();
  }

  /**
   * Let go of what a previous engine left held (it was killed and its guardian too): SIGCONT what
   * it stopped, restore and unlock what it parked. Returns the pids let go of. A park that cannot be
   * restored (not enough GPU memory) stays in the record: the next Freezer keeps guarding it.
   */
  static recoverLeftovers(recordPath: string, options: { cudaLibraryPath?: string } = {}): number[] {
    const leftovers = readSuspendRecord(recordPath);
    if (leftovers.length === 0) return [];
    if (leftovers.some((e) => holdOf(e) === 'park')) {
      try {
        return releaseRecordNow(recordPath, options.cudaLibraryPath);
      } catch (error) {
        // the restores could not even be tried: resume the stops here, keep the parks on record for the guardian
        process.stderr.write(`gpushare: ${error instanceof Error ? error.message : String(error)}\n`);
        const resumed = resumeRecorded(leftovers);
        writeSuspendRecord(recordPath, leftovers.filter((e) => holdOf(e) === 'park'));
        return resumed;
      }
    }
    const resumed = resumeRecorded(leftovers);
    writeSuspendRecord(recordPath, []);
    return resumed;
  }

  isSuspended(pid: number): boolean {
    return this.suspended.has(pid);
  }

  /** Pids held stopped (each, or its process group). */
  get pids(): number[] {
    return [...this.suspended.keys()];
  }

  /** Parked processes the guardian would restore, including any a previous engine could not. */
  get parkedEntries(): SuspendedEntry[] {
    return [...this.parked.values()];
  }

  /** The running guardian's pid, null when there is none. */
  get guardianPid(): number | null {
    return this.guardian?.alive() ? this.guardian.pid : null;
  }

  /**
   * SIGSTOP the pid, or with `group` its whole process group: a managed job runs in its own
   * session, so its group id is its pid and the group holds every process it started. `startTicks`: the
   * process meant, where known (another process that took its pid is refused).
   */
  suspend(pid: number, jobId: string, options: { group?: boolean; startTicks?: number | null } = {}): void {
    const status = this.control.checkSignallable(pid, 'suspend', options.startTicks);
    if (options.group) this.control.checkGroupLeader(pid, 'suspend');
    const entry: SuspendedEntry = { pid, startTicks: status.startTicks, jobId, hold: options.group ? 'group' : 'stop', seq: this.nextSeq++ };
    this.suspended.set(pid, entry);
    this.save(); // on disk before the signal: a crash in between leaves only a harmless SIGCONT
    try {
      if (options.group) this.control.suspendGroup(pid, entry.startTicks);
      else this.control.suspend(pid, entry.startTicks);
    } catch (error) {
      this.suspended.delete(pid);
      this.save();
      throw error;
    }
  }

  resume(pid: number): void {
    const entry = this.suspended.get(pid);
    if (entry) {
      try {
        if (holdOf(entry) === 'group') this.control.resumeGroup(pid, entry.startTicks);
        else this.control.resume(pid, entry.startTicks);
      } finally {
        this.suspended.delete(pid);
        this.save();
      }
    } else {
      this.control.resume(pid);
    }
  }

  /**
   * The engine stops following the process (it left, or the driver stopped listing it: a lost GPU, an
   * NVML failure). What the engine stopped is continued first if it is still the same process, whatever
   * the driver says; a reused pid is never signalled. A stopped group whose leader left still has its
   * other members continued: the group id cannot be reused while they live.
   */
  forget(pid: number): void {
    const entry = this.suspended.get(pid);
    if (!entry) return;
    continueHeld(entry, this.control.procRoot, this.control.signaller);
    this.suspended.delete(pid);
    this.save();
  }

  /** Before a park starts: if the engine dies from here on, the guardian restores and unlocks it. Returns the process parked. */
  noteParked(pid: number, jobId: string, startTicks: number | null = null): ProcessRef {
    const status = this.control.checkSignallable(pid, 'park', startTicks);
    this.parked.set(pid, { pid, startTicks: status.startTicks, jobId, hold: 'park', seq: this.nextSeq++ });
    this.save();
    return { pid, startTicks: status.startTicks };
  }

  /** After a restore (or a park that failed and was undone), or when the process exits. */
  forgetParked(pid: number): void {
    if (this.parked.delete(pid)) this.save();
    if (this.stopping && this.parked.size === 0) this.letGuardianGo();
  }

  resumeAll(): number[] {
    const resumed = resumeRecorded([...this.suspended.values()], this.control.procRoot, this.control.signaller);
    this.suspended.clear();
    this.save();
    return resumed;
  }

  /**
   * Clean stop: resume everything stopped. While parked processes remain (their restores are
   * the caller's), the heartbeat and the guardian go on: if this process exits first, the guardian
   * restores them; forgetParked of the last one lets the guardian go.
   */
  stop(): number[] {
    const resumed = this.resumeAll();
    this.stopping = true;
    if (this.parked.size === 0) this.letGuardianGo();
    return resumed;
  }

  private letGuardianGo(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.guardian?.stop();
    this.guardian = null;
    for (const path of [heartbeatPath(this.recordPath), releasedPath(this.recordPath)]) rmSync(path, { force: true });
  }

  private spawnGuardian(): GuardianHandle {
    return spawnGuardian({ recordPath: this.recordPath, staleAfterMs: this.options.staleAfterMs ?? GUARDIAN_STALE_MS, cudaLibraryPath: this.options.cudaLibraryPath });
  }

  /** One heartbeat: beat, respawn a guardian that died, and take in what it released while we were stopped. */
  private tick(): void {
    this.beat();
    if (this.guardian && !this.guardian.alive()) this.guardian = this.spawnGuardian();
    this.takeInReleased();
  }

  private beat(): void {
    try {
      writeFileSync(heartbeatPath(this.recordPath), `${process.pid} ${++this.beats}\n`, { mode: 0o600 });
    } catch {
      // the runtime dir vanished: the guardian will treat the engine as stopped and let go, which is safe
    }
  }

  /** Holds the guardian let go of while this engine was stopped or hung: forget them and say so. */
  private takeInReleased(): void {
    const released = readReleased(this.recordPath);
    if (released.entries.length === 0 || !sameOwner(released.owner, this.owner)) return;
    const taken: SuspendedEntry[] = [];
    for (const e of released.entries) {
      for (const held of [this.suspended, this.parked]) {
        const mine = held.get(e.pid);
        if (mine && mine.seq === e.seq && mine.startTicks === e.startTicks) {
          held.delete(e.pid);
          taken.push(mine);
        }
      }
    }
    if (taken.length === 0) return;
    this.save();
    try {
      this.options.onGuardianReleased?.(taken);
    } catch (error) {
      // a timer callback: a throw here would take the engine down, and the holds are already let go
      process.stderr.write(`gpushare: handling the holds the guardian released failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    }
  }

  /** Parks a previous engine could not restore stay guarded by this one. */
  private adoptUnrestoredParks(): void {
    for (const e of readSuspendRecord(this.recordPath)) {
      if (holdOf(e) !== 'park' || this.parked.has(e.pid) || readProcStatus(e.pid)?.startTicks !== e.startTicks) continue;
      this.parked.set(e.pid, { ...e, seq: this.nextSeq++ });
    }
  }

  private save(): void {
    writeSuspendRecord(this.recordPath, [...this.suspended.values(), ...this.parked.values()], this.owner);
  }
}
