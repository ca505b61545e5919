// Signals and niceness for processes gpushare did not start (and the fallback for
// managed jobs without a launch gate). Ownership is checked from /proc first, so an
// EPERM is reported as a sentence that names the owner, and nothing is sent.
import { setPriority as osSetPriority } from 'node:os';
import { ApiError } from '../api/api-error.js';
import { groupMembers, processGroupOf, readProcStatus, sameProcessAlive, threadIds, type ProcStatus } from '../proc/proc-status.js';

export const TERMINATE_GRACE_MS = 5000;

export interface ProcessControlOptions {
  /** Names for uids in messages. */
  userName?: (uid: number) => string;
  procRoot?: string;
}

export class ProcessControl {
  private readonly engineUid = process.getuid?.() ?? 0;
  private readonly killTimers = new Set<NodeJS.Timeout>();
  private readonly userName: (uid: number) => string;
  private readonly procRoot: string;

  constructor(options: ProcessControlOptions = {}) {
    this.userName = options.userName ?? ((uid) => `uid ${uid}`);
    this.procRoot = options.procRoot ?? '/proc';
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
  suspend(pid: number): ProcStatus {
    const status = this.checkSignallable(pid, 'suspend');
    this.send(pid, 'SIGSTOP', 'suspend');
    return status;
  }

  resume(pid: number, startTicks: number | null = null): void {
    this.checkSignallable(pid, 'resume', startTicks);
    this.send(pid, 'SIGCONT', 'resume');
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
  suspendGroup(pid: number): ProcStatus {
    const status = this.checkSignallable(pid, 'suspend');
    this.checkGroupLeader(pid, 'suspend');
    this.send(-pid, 'SIGSTOP', 'suspend');
    return status;
  }

  /** SIGCONT the process group; also once its leader has exited, while members remain (the group id stays theirs). */
  resumeGroup(pid: number, startTicks: number | null = null): void {
    if (this.status(pid)) this.checkSignallable(pid, 'resume', startTicks);
    else if (groupMembers(pid, this.procRoot).length === 0) throw new ApiError('not-found', `Cannot resume process group ${pid}: every process in it has exited.`);
    this.send(-pid, 'SIGCONT', 'resume');
  }

  /**
   * SIGTERM (and SIGCONT, so a stopped process can act on it), then SIGKILL after the
   * grace period if the same process is still there. `group` signals its process group.
   */
  terminate(pid: number, options: { group?: boolean; graceMs?: number } = {}): void {
    const status = this.checkSignallable(pid, 'terminate');
    const target = options.group ? -pid : pid;
    this.send(target, 'SIGTERM', 'terminate');
    this.send(target, 'SIGCONT', 'terminate', true);
    const timer = setTimeout(() => {
      this.killTimers.delete(timer);
      if (!sameProcessAlive(pid, status.startTicks, this.procRoot)) return;
      this.send(target, 'SIGKILL', 'terminate', true);
    }, options.graceMs ?? TERMINATE_GRACE_MS);
    timer.unref();
    this.killTimers.add(timer);
  }

  /**
   * CPU niceness alongside GPU priority, for every thread (Linux keeps a nice value per thread,
   * so the pid alone is one thread). False if any thread refused (raising priority needs root): not an error.
   */
  renice(pid: number, nice: number): boolean {
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

  private send(target: number, signal: NodeJS.Signals, what: string, quiet = false): void {
    try {
      process.kill(target, signal);
    } catch (error) {
      if (quiet) return;
      const code = (error as NodeJS.ErrnoException).code;
      const pid = Math.abs(target);
      if (code === 'ESRCH') throw new ApiError('not-found', `Cannot ${what} pid ${pid}: no such process (it has exited).`);
      if (code === 'EPERM') throw new ApiError('forbidden', `Cannot ${what} pid ${pid}: the system does not allow it (EPERM).`);
      throw error;
    }
  }
}
