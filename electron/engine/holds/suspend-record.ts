// The holds the engine has on processes, on disk, so that nobody is left frozen or
// parked when the engine dies: the guardian and the next start read it and let them go.
// Beside it: the engine's heartbeat, and what the guardian released while the engine was stopped.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { groupMembers, readProcStatus } from '../proc/proc-status.js';
import { continueLeaderlessGroup, signallerFor, type ProcessSignaller } from '../proc/process-signal.js';

/** stop: SIGSTOP of the pid; group: SIGSTOP of its process group (pgid = pid); park: its GPU memory checkpointed. */
export type HoldKind = 'stop' | 'group' | 'park';

export interface SuspendedEntry {
  pid: number;
  /** /proc start time, so a reused pid is never signalled. */
  startTicks: number;
  jobId: string;
  /** Absent: stop (records written before holds had kinds). */
  hold?: HoldKind;
  /** Names this one hold, so the guardian can say which it released (a later hold of the same pid is another). */
  seq?: number;
}

/** The engine that wrote a record: the guardian rewrites it only while it is still its engine's. */
export interface RecordOwner {
  engine: number;
  engineStartTicks?: number;
}

export const holdOf = (entry: SuspendedEntry): HoldKind => entry.hold ?? 'stop';

/** The engine's heartbeat: a counter it rewrites every beat; the guardian watches it change. */
export const heartbeatPath = (recordPath: string): string => `${recordPath}.heartbeat`;

/** What the guardian released while the engine was stopped or hung; the engine reads it when it wakes. */
export const releasedPath = (recordPath: string): string => `${recordPath}.released`;

function isEntry(e: unknown): e is SuspendedEntry {
  const x = e as SuspendedEntry;
  return (
    typeof x === 'object' && x !== null && Number.isInteger(x.pid) && x.pid > 0 && Number.isFinite(x.startTicks) &&
    (x.hold === undefined || x.hold === 'stop' || x.hold === 'group' || x.hold === 'park')
  );
}

function readEntriesFile(path: string, key: string): { owner: RecordOwner | null; entries: SuspendedEntry[] } {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const list = parsed[key];
    const owner = Number.isInteger(parsed.engine) ? { engine: parsed.engine as number, engineStartTicks: parsed.engineStartTicks as number | undefined } : null;
    return { owner, entries: Array.isArray(list) ? list.filter(isEntry) : [] };
  } catch {
    return { owner: null, entries: [] }; // no record: nothing is held
  }
}

/** Replace a file in one step (write a temporary file, rename over): a reader never sees half of it. */
function replaceFile(path: string, body: object): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(body) + '\n', { mode: 0o600 });
  renameSync(temporary, path);
}

export function readSuspendRecord(path: string): SuspendedEntry[] {
  return readEntriesFile(path, 'suspended').entries;
}

export function readRecordOwner(path: string): RecordOwner | null {
  return readEntriesFile(path, 'suspended').owner;
}

export function writeSuspendRecord(path: string, entries: readonly SuspendedEntry[], owner: RecordOwner = { engine: process.pid }): void {
  replaceFile(path, { ...owner, suspended: entries });
}

export function readReleased(recordPath: string): { owner: RecordOwner | null; entries: SuspendedEntry[] } {
  return readEntriesFile(releasedPath(recordPath), 'released');
}

export function writeReleased(recordPath: string, owner: RecordOwner, entries: readonly SuspendedEntry[]): void {
  replaceFile(releasedPath(recordPath), { ...owner, released: entries });
}

export const sameOwner = (a: RecordOwner | null, b: RecordOwner): boolean => a !== null && a.engine === b.engine && a.engineStartTicks === b.engineStartTicks;

/**
 * SIGCONT a stopped process, or its whole group, if it is still the process recorded.
 * A group whose leader exited is still continued while members remain: the kernel keeps
 * its id from being reused until the last member is gone.
 */
export function continueHeld(entry: SuspendedEntry, procRoot = '/proc', signaller: ProcessSignaller = signallerFor(procRoot)): boolean {
  const group = holdOf(entry) === 'group';
  let outcome;
  try {
    outcome = signaller(entry, 'SIGCONT', { group });
  } catch {
    return false; // not ours to signal any more: nothing left to resume
  }
  if (outcome === 'sent') return readProcStatus(entry.pid, procRoot)?.state !== 'Z' || group; // a zombie alone was not resumed
  if (outcome === 'other' || !group || groupMembers(entry.pid, procRoot).length === 0) return false;
  return continueLeaderlessGroup(entry.pid);
}

/** SIGCONT every recorded stop (pid or group) that is still the same process; returns the pids resumed. Parks are skipped. */
export function resumeRecorded(entries: readonly SuspendedEntry[], procRoot = '/proc', signaller: ProcessSignaller = signallerFor(procRoot)): number[] {
  return entries.filter((e) => holdOf(e) !== 'park' && continueHeld(e, procRoot, signaller)).map((e) => e.pid);
}
