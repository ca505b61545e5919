// Signalling one process as the kernel names it (pid and start time). The addon opens a pidfd, reads the
// start time after it is open and signals through the pidfd (native/nvml/src/signal.cc): a pid that another
// process took since the engine looked never gets the root daemon's signal. Without pidfds (Linux < 5.3, an
// addon built before them) the start time is checked and then kill() sent, with a short window; the log says so once.
import { constants } from 'node:os';
import { requireNativeAddon } from '../gpu/nvml-addon.js';
import { readProcStatus, type ProcessRef } from './proc-status.js';

/** sent: the process meant got it; gone: it has exited (nothing was sent); other: another process has its pid now (nothing was sent). */
export type SignalOutcome = 'sent' | 'gone' | 'other';

export interface SignalOptions {
  /** Signal the process group the process leads (a managed job's session), not the process alone. */
  group?: boolean;
}

/** Sends `signal` to `target` only; throws an Error with `code` (EPERM, …) when the system refuses. */
export type ProcessSignaller = (target: ProcessRef, signal: NodeJS.Signals, options?: SignalOptions) => SignalOutcome;

/** What the .node exports for this (native/nvml/src/signal.cc). */
export interface SignalNative {
  signalIfSame(pid: number, startTicks: number, signal: number, group: boolean): SignalOutcome;
}

/** The fallback, and the only way to signal what a fake /proc (a test's) describes: compare the start time there, then kill(). */
export function checkThenKill(procRoot = '/proc'): ProcessSignaller {
  return (target, signal, options = {}) => {
    const status = readProcStatus(target.pid, procRoot);
    if (status === null) return 'gone';
    if (status.startTicks !== target.startTicks) return 'other';
    try {
      process.kill(options.group ? -target.pid : target.pid, signal);
      return 'sent';
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return 'gone';
      throw error;
    }
  };
}

const errnoCode = (error: unknown): string | undefined => (error as { code?: unknown }).code as string | undefined;

/** pidfd_open needs no permission: EPERM from it is a seccomp filter's answer for a call it does not know (older container runtimes). */
function pidfdsMissing(error: unknown): string | null {
  if (errnoCode(error) === 'ENOSYS') return 'this kernel has no pidfds (Linux < 5.3)';
  if (errnoCode(error) === 'EPERM' && (error as { call?: unknown }).call === 'pidfd_open') return 'pidfd_open is refused here (EPERM: a seccomp filter, as older container runtimes set)';
  return null;
}

/**
 * Signals through `native`'s pidfds; where the kernel (or the addon) has none, through checkThenKill, said once
 * in `log`. Group signals need Linux 6.9 (PIDFD_SIGNAL_PROCESS_GROUP); before it, the leader is checked through
 * its pidfd and then the group gets kill(), also said once.
 */
export function pidfdSignaller(native: SignalNative | null, log: (line: string) => void): ProcessSignaller {
  const fallback = checkThenKill();
  let pidfds = native !== null;
  let groupPidfds = pidfds;
  if (!pidfds) log('the native addon has no pidfd signals (build it: npm run build:native): signals are sent by pid after a start-time check, so a pid reused in between could get one');
  return (target, signal, options = {}) => {
    const group = options.group === true;
    if (!pidfds || (group && !groupPidfds)) return fallback(target, signal, options);
    try {
      return native!.signalIfSame(target.pid, target.startTicks, constants.signals[signal], group);
    } catch (error) {
      const missing = pidfdsMissing(error);
      if (missing) {
        pidfds = false;
        log(`${missing}: signals are sent by pid after a start-time check, so a pid reused in between could get one`);
        return fallback(target, signal, options);
      }
      // only pidfd_send_signal's EINVAL says the flag is unknown (pidfd_open's: the pid is a thread's, not a process's)
      if (group && errnoCode(error) === 'EINVAL' && (error as { call?: unknown }).call === 'pidfd_send_signal') {
        groupPidfds = false;
        log('this kernel cannot signal a process group through a pidfd (Linux < 6.9): a group is signalled by its id after its leader\'s start-time check');
        return fallback(target, signal, options);
      }
      throw error;
    }
  };
}

function loadSignalNative(log: (line: string) => void): SignalNative | null {
  try {
    const loaded = requireNativeAddon() as Partial<SignalNative>;
    return typeof loaded.signalIfSame === 'function' ? (loaded as SignalNative) : null;
  } catch (error) {
    log(`the native addon did not load (${error instanceof Error ? error.message : String(error)})`);
    return null;
  }
}

let kernel: ProcessSignaller | null = null;

/** The engine's signaller: pidfds from the addon, loaded on first use, falling back as pidfdSignaller says. */
export const kernelSignaller: ProcessSignaller = (target, signal, options) => {
  if (!kernel) {
    const log = (line: string): void => void process.stderr.write(`gpushare: ${line}\n`);
    kernel = pidfdSignaller(loadSignalNative(log), log);
  }
  return kernel(target, signal, options);
};

/** The kernel's pidfds check the real /proc; a test's fake one can only be checked then killed. */
export const signallerFor = (procRoot: string): ProcessSignaller => (procRoot === '/proc' ? kernelSignaller : checkThenKill(procRoot));

/**
 * SIGCONT a process group whose leader has been reaped while members live: no pidfd can name a reaped
 * process, and the kernel gives no new process a pid that is still a live group's id. False when none is left.
 */
export function continueLeaderlessGroup(pgid: number): boolean {
  try {
    process.kill(-pgid, 'SIGCONT');
    return true;
  } catch {
    return false;
  }
}
