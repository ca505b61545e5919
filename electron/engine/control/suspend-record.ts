// The pids the engine has stopped, on disk, so that nobody is left frozen when the
// engine dies: the guardian and the next start read it and send SIGCONT.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { sameProcessAlive } from './proc-status.js';

export interface SuspendedEntry {
  pid: number;
  /** /proc start time, so a reused pid is never signalled. */
  startTicks: number;
  jobId: string;
}

export function readSuspendRecord(path: string): SuspendedEntry[] {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { suspended?: unknown };
    if (!Array.isArray(parsed.suspended)) return [];
    return parsed.suspended.filter(
      (e): e is SuspendedEntry => typeof e === 'object' && e !== null && Number.isInteger(e.pid) && e.pid > 0 && Number.isFinite(e.startTicks),
    );
  } catch {
    return []; // no record: nothing was suspended
  }
}

/** Replace the record in one step (write a temporary file, rename over): a reader never sees half of it. */
export function writeSuspendRecord(path: string, entries: readonly SuspendedEntry[]): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify({ engine: process.pid, suspended: entries }) + '\n', { mode: 0o600 });
  renameSync(temporary, path);
}

/** SIGCONT every recorded process that is still the same process; returns the pids resumed. */
export function resumeRecorded(entries: readonly SuspendedEntry[], procRoot = '/proc'): number[] {
  const resumed: number[] = [];
  for (const entry of entries) {
    if (!sameProcessAlive(entry.pid, entry.startTicks, procRoot)) continue;
    try {
      process.kill(entry.pid, 'SIGCONT');
      resumed.push(entry.pid);
    } catch {
      // gone or not ours any more: nothing left to resume
    }
  }
  return resumed;
}
