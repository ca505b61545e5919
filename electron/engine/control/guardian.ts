// The guardian: a tiny detached process that outlives a crashed engine just long
// enough to resume (SIGCONT) every process the engine had suspended.
//   node guardian.js <enginePid> <engineStartTicks> <recordFile>
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readProcStatus, sameProcessAlive } from './proc-status.js';
import { readSuspendRecord, resumeRecorded, writeSuspendRecord } from './suspend-record.js';

export const GUARDIAN_POLL_MS = 200;

export interface GuardianHandle {
  readonly pid: number;
  /** The engine is stopping cleanly (and has resumed everything itself). */
  stop(): void;
}

/** Start the guardian for this process; it exits by itself once this process is gone. */
export function spawnGuardian(recordPath: string): GuardianHandle {
  const me = readProcStatus(process.pid);
  if (!me) throw new Error('Cannot read /proc for the engine itself; the suspend guardian needs /proc.');
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [script, String(process.pid), String(me.startTicks), recordPath], {
    detached: true, // its own session: a Ctrl-C or a killed process group does not take it along
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ELECTRON_RUN_AS_NODE: '1' },
  });
  child.unref();
  return {
    pid: child.pid ?? -1,
    stop: () => {
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}

function runGuardian(args: string[]): void {
  const [enginePid, engineStartTicks, recordPath] = [Number(args[0]), Number(args[1]), args[2]];
  if (!Number.isInteger(enginePid) || !Number.isFinite(engineStartTicks) || !recordPath) {
    process.stderr.write('usage: guardian.js <enginePid> <engineStartTicks> <recordFile>\n');
    process.exit(2);
  }
  process.on('SIGTERM', () => process.exit(0)); // a clean engine stop
  process.on('SIGINT', () => undefined);
  process.on('SIGHUP', () => undefined);
  const timer = setInterval(() => {
    if (sameProcessAlive(enginePid, engineStartTicks)) return;
    clearInterval(timer);
    resumeRecorded(readSuspendRecord(recordPath));
    try {
      writeSuspendRecord(recordPath, []); // done: the next start must not resume them again
    } catch {
      // a read-only or vanished directory: the start times still protect reused pids
    }
    process.exit(0);
  }, GUARDIAN_POLL_MS);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) runGuardian(process.argv.slice(2));
