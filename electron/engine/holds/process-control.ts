// Signals and niceness for processes gpushare did not start (and the fallback for
// managed jobs without a launch gate). Ownership is checked from /proc first, so an
// EPERM is reported as a sentence that names the owner, and nothing is sent. Every signal
// goes to the process the check read (pid and start time), through a pidfd (process-signal.ts).
import { setPriority as osSetPriority } from 'node:os';
import { ApiError } from '../api/api-error.js';
import { groupMembers, processGroupOf, readProcStatus, threadIds, type ProcessRef, type ProcStatus } from '../proc/proc-status.js';
import { continueLeaderlessGroup, signallerFor, type ProcessSignaller } from '../proc/process-signal.js';

export const TERMINATE_GRACE_MS = 5000;

export interface ProcessControlOptions {
  /** Names for uids in messages. */
  userName?: (uid: number) => string;
  procRoot?: string;
  /** How a signal reaches one process; default the kernel's pidfds (a fake procRoot: check it, then kill). */
  signaller?: ProcessSignaller;
}

export class ProcessControl {
  private readonly engineUid = process.getuid?.() ?? 0;
  private readonly killTimers = new Set<NodeJS.Timeout>();
  private readonly userName: (uid: number) => string;
  readonly procRoot: string;
  /** Every signal this sends goes through it; the Freezer lets go of holds with it too. */
  readonly signaller: ProcessSignaller;

  constructor(options: ProcessControlOptions = {}) {
    this.userName = options.userName ?? ((uid) => `uid ${uid}`);
    this.procRoot = options.procRoot ?? '/proc';
    this.signaller = options.signaller ?? signallerFor(this.procRoot);
  }

  status(pid: number): ProcStatus | null {
    return readProcStatus(pid, this.procRoot);
  }

  /**
   * The process, if the OS lets this engine signal it; else a clear ApiError. `startTicks`: the process meant,
   * where known; another process that has its pid now (a different start time) is refused as the exited one.
   */
  checkSignallable(pid: number, what: string, startTicks: number | null = null): ProcStatus {
    const status = this.status(pid);
    if (!status) throw new ApiError('not-found', `Cannot ${what} pid ${pid}: no such process (it has exited).`);
    if (startTicks !== null && status.startTicks !== startTicks) throw new ApiError('not-found', `Cannot ${what} pid ${pid}: the process has exited (another process has its pid now).`);
    if (this.engineUid !== 0 && status.uid !== this.engineUid) {
      throw new ApiError(
        'forbidden',
        `Cannot ${what} pid ${pid}: it belongs to ${this.userName(status.uid)} and the system does not allow gpushare, running as ${this.userName(this.engineUid)}, to signal it (EPERM). Ask its owner or an administrator.`,
      );
    }
    return status;
  }

  /** SIGSTOP. Returns the process's start time for the suspend record. */
  suspend(pid: number, startTicks: number | null = null): ProcStatus {
    const status = this.checkSignallable(pid, 'suspend', startTicks);
    this.send(status, 'SIGSTOP', 'suspend');
    return status;
  }

  resume(pid: number, startTicks: number | null = null): void {
    this.send(this.checkSignallable(pid, 'resume', startTicks), 'SIGCONT', 'resume');
  }

  /** A group hold needs the pid to lead its own process group (a managed job's session does). */
  checkGroupLeader(pid: number, what: string): void {
    const pgid = processGroupOf(pid, this.procRoot);
    if (pgid === null) throw new ApiError('not-found', `Cannot ${what} pid ${pid}: no such process (it has exited).`);
    if (pgid !== pid) {
      throw new ApiError('conflict', `Cannot ${what} the process group of pid ${pid}: it does not lead one (it belongs to group ${pgid}), so its group holds other processes than the job's.`);
    }
  }

  /** SIGSTOP the process group that pid leads: the job's process and everything it started. */
  suspendGroup(pid: number, startTicks: number | null = null): ProcStatus {
    const status = this.checkSignallable(pid, 'suspend', startTicks);
    this.checkGroupLeader(pid, 'suspend');
    this.send(status, 'SIGSTOP', 'suspend', { group: true });
    return status;
  }

  /** SIGCONT the process group; also once its leader has exited, while members remain (the group id stays theirs). */
  resumeGroup(pid: number, startTicks: number | null = null): void {
    if (this.status(pid) && this.signal(this.checkSignallable(pid, 'resume', startTicks), 'SIGCONT', 'resume', { group: true }) === 'sent') return;
    // its leader has been reaped: its members, if any are left
    if (groupMembers(pid, this.procRoot).length === 0 || !continueLeaderlessGroup(pid)) throw new ApiError('not-found', `Cannot resume process group ${pid}: every process in it has exited.`);
  }

  /**
   * SIGTERM (and SIGCONT, so a stopped process can act on it), then SIGKILL after the
   * grace period if the same process is still there. `group` signals its process group.
   */
  terminate(pid: number, options: { group?: boolean; graceMs?: number; startTicks?: number | null } = {}): void {
    const status = this.checkSignallable(pid, 'terminate', options.startTicks ?? null);
    const group = options.group === true;
    this.send(status, 'SIGTERM', 'terminate', { group });
    this.send(status, 'SIGCONT', 'terminate', { group, quiet: true });
    const timer = setTimeout(() => {
      this.killTimers.delete(timer);
      this.send(status, 'SIGKILL', 'terminate', { group, quiet: true }); // the pidfd reaches only the process terminated, if it is still there
    }, options.graceMs ?? TERMINATE_GRACE_MS);
    timer.unref();
    this.killTimers.add(timer);
  }

  /**
   * CPU niceness alongside GPU priority, for every thread (Linux keeps a nice value per thread,
   * so the pid alone is one thread). False if any thread refused (raising priority needs root): not an error.
   */
  renice(pid: number, nice: number): boolean {
    // setpriority has no pidfd form: the caller compares the start time just before (actuators.ts), a window only pidfds could close
    const threads = threadIds(pid, this.procRoot);
    let all = true;
    for (const tid of threads.length > 0 ? threads : [pid]) {
      try {
        osSetPriority(tid, nice);
      } catch {
        all = false; // that thread exited meanwhile, or the system refused
      }
    }
    return all;
  }

  dispose(): void {
    for (const timer of this.killTimers) clearTimeout(timer);
    this.killTimers.clear();
  }

  /** `signal` to the process checked (its pid and start time), never to another that took the pid since; `quiet`: failures too. */
  private send(target: ProcessRef, signal: NodeJS.Signals, what: string, options: { group?: boolean; quiet?: boolean } = {}): void {
    try {
      if (this.signal(target, signal, what, options) === 'gone') throw new ApiError('not-found', `Cannot ${what} pid ${target.pid}: no such process (it has exited).`);
    } catch (error) {
      if (!options.quiet) throw error;
    }
  }

  /** Sent, or gone (it exited: nothing was sent); another process on its pid, or the system's refusal, is an ApiError. */
  private signal(target: ProcessRef, signal: NodeJS.Signals, what: string, options: { group?: boolean }): 'sent' | 'gone' {
    let outcome;
    try {
      outcome = this.signaller({ pid: target.pid, startTicks: target.startTicks }, signal, { group: options.group });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPERM') throw new ApiError('forbidden', `Cannot ${what} pid ${target.pid}: the system does not allow it (EPERM).`);
      throw error;
    }
    if (outcome === 'other') throw new ApiError('not-found', `Cannot ${what} pid ${target.pid}: the process has exited (another process has its pid now).`);
    return outcome;
  }
}
