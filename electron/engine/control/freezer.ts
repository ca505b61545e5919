// Every SIGSTOP the engine sends goes through here: recorded on disk before it is
// sent, so a clean stop, a crash (via the guardian) or the next start resumes it.
import { spawnGuardian, type GuardianHandle } from './guardian.js';
import type { ProcessControl } from './process-control.js';
import { readSuspendRecord, resumeRecorded, writeSuspendRecord, type SuspendedEntry } from './suspend-record.js';

export interface FreezerOptions {
  recordPath: string;
  control: ProcessControl;
  /** Start the crash guardian (off in unit tests that never suspend a real process). */
  guardian?: boolean;
}

export class Freezer {
  private readonly suspended = new Map<number, SuspendedEntry>();
  private guardian: GuardianHandle | null = null;
  readonly recordPath: string;
  private readonly control: ProcessControl;

  constructor(options: FreezerOptions) {
    this.recordPath = options.recordPath;
    this.control = options.control;
    if (options.guardian ?? true) this.guardian = spawnGuardian(this.recordPath);
  }

  /** Resume what a previous engine left suspended (it was killed and its guardian too). */
  static recoverLeftovers(recordPath: string): number[] {
    const leftovers = readSuspendRecord(recordPath);
    if (leftovers.length === 0) return [];
    const resumed = resumeRecorded(leftovers);
    writeSuspendRecord(recordPath, []);
    return resumed;
  }

  isSuspended(pid: number): boolean {
    return this.suspended.has(pid);
  }

  get pids(): number[] {
    return [...this.suspended.keys()];
  }

  suspend(pid: number, jobId: string): void {
    const status = this.control.checkSignallable(pid, 'suspend');
    this.suspended.set(pid, { pid, startTicks: status.startTicks, jobId });
    this.save(); // on disk before the signal: a crash in between leaves only a harmless SIGCONT
    try {
      this.control.suspend(pid);
    } catch (error) {
      this.suspended.delete(pid);
      this.save();
      throw error;
    }
  }

  resume(pid: number): void {
    if (this.suspended.has(pid)) {
      try {
        this.control.resume(pid);
      } finally {
        this.suspended.delete(pid);
        this.save();
      }
    } else {
      this.control.resume(pid);
    }
  }

  /** The process left: forget it without signalling (its pid may be reused). */
  forget(pid: number): void {
    if (this.suspended.delete(pid)) this.save();
  }

  resumeAll(): number[] {
    const resumed = resumeRecorded([...this.suspended.values()]);
    this.suspended.clear();
    this.save();
    return resumed;
  }

  /** Clean stop: resume everything, then let the guardian go. */
  stop(): number[] {
    const resumed = this.resumeAll();
    this.guardian?.stop();
    this.guardian = null;
    return resumed;
  }

  private save(): void {
    writeSuspendRecord(this.recordPath, [...this.suspended.values()]);
  }
}
