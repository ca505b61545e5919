// `gpushare enrol` registrations: the options a running `gpushare enrol` asked for its command, by the kernel's
// pid and start time of the registering process. Kept in a file of the engine's runtime directory (the daemon's
// /run/gpushare, root's, beside the suspend record), replaced whole with a rename, so an engine restart keeps
// them; a registration names a live process, so it needs to outlive no reboot. One whose process is gone is dropped.
import { closeSync, fstatSync, fsyncSync, openSync, readSync, renameSync, unlinkSync, writeSync, constants } from 'node:fs';
import { join } from 'node:path';
import { PRIORITIES, type Priority } from '../../../shared/jobs.js';
import { readProcStatus, sameProcessAlive } from '../proc/proc-status.js';

export const REGISTRATIONS_FILE = 'enrol-registrations.json';
/** `gpushare enrol` registrations one user may hold at once (one per running `gpushare enrol`). */
export const MAX_REGISTRATIONS_PER_USER = 32;
/** The file is read this far at most: 32 per user of every user a box has is far below it. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** How `gpushare enrol` asked its command to be enrolled. */
export interface EnrolOptions {
  priority?: Priority;
  memoryQuotaBytes?: number | null;
  keepResident?: boolean;
}
export interface Registration extends EnrolOptions {
  uid: number;
  pid: number;
  startTicks: number;
}

export class Registrations {
  /** `pid:startTicks` → registration. */
  private readonly byKey = new Map<string, Registration>();

  /** `dir`: where the file lives (null: memory only); what it held is read now, the dead dropped. */
  /** `log`: where a line for the engine's log goes (default stderr). */
  constructor(private readonly options: { dir: string | null; procRoot?: string; log?: (line: string) => void }) {
    const kept = this.load();
    for (const r of kept) if (this.live(r) && this.countOf(r.uid) < MAX_REGISTRATIONS_PER_USER) this.byKey.set(key(r.pid, r.startTicks), r);
    if (this.byKey.size !== kept.length) this.save(); // the dead dropped on disk too
  }

  get(pid: number, startTicks: number): Registration | undefined {
    return this.byKey.get(key(pid, startTicks));
  }

  /** The user's live registrations (the dead are dropped first). */
  liveCountOf(uid: number): number {
    this.prune();
    return this.countOf(uid);
  }

  /** Kept (the caller checked the user's bound with liveCountOf); on disk before this returns. */
  add(registration: Registration): void {
    this.byKey.set(key(registration.pid, registration.startTicks), registration);
    this.save();
  }

  /** Drops the registrations whose process is gone. */
  prune(): void {
    let dropped = false;
    for (const [k, r] of this.byKey) {
      if (this.live(r)) continue;
      this.byKey.delete(k);
      dropped = true;
    }
    if (dropped) this.save();
  }

  private countOf(uid: number): number {
    let n = 0;
    for (const r of this.byKey.values()) if (r.uid === uid) n++;
    return n;
  }

  /** The same process (pid and start time), still its user's. */
  private live(r: Registration): boolean {
    return sameProcessAlive(r.pid, r.startTicks, this.options.procRoot) && readProcStatus(r.pid, this.options.procRoot)?.uid === r.uid;
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else process.stderr.write(`gpushare: ${line}\n`);
  }

  private get path(): string | null {
    return this.options.dir === null ? null : join(this.options.dir, REGISTRATIONS_FILE);
  }

  /** What the file holds, each entry checked; a file this engine's user did not write alone is not believed. */
  private load(): Registration[] {
    const path = this.path;
    if (!path) return [];
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return []; // none yet (or not a plain file of ours)
    }
    try {
      const st = fstatSync(fd);
      const me = process.geteuid?.() ?? st.uid;
      if (!st.isFile() || st.uid !== me || (st.mode & 0o022) !== 0 || st.size > MAX_FILE_BYTES) {
        this.log(`${path} is not a file only this engine's user writes (or is too large): its enrol registrations are ignored`);
        return [];
      }
      const buffer = Buffer.alloc(st.size);
      const n = readSync(fd, buffer, 0, buffer.length, 0);
      const parsed = JSON.parse(buffer.subarray(0, n).toString('utf8')) as { registrations?: unknown };
      if (!Array.isArray(parsed.registrations)) return [];
      for (const e of parsed.registrations as Array<Record<string, unknown> | null>) {
        if (count(e?.pid, 1) && e?.startTicks === undefined) this.log(`${path}: pid ${e.pid}'s registration has no start time (an older file), so it cannot be told from a process that took the pid since: dropped`);
      }
      return parsed.registrations.flatMap((e) => checked(e) ?? []);
    } catch {
      return []; // unreadable or half-written by hand: nothing registered (each command runs on as its own job)
    } finally {
      closeSync(fd);
    }
  }

  /** Replaces the file whole (a reader sees the old one or the new one); a failed write keeps them in memory. */
  private save(): void {
    const path = this.path;
    if (!path) return;
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
      try {
        writeSync(fd, JSON.stringify({ registrations: [...this.byKey.values()] }) + '\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, path);
    } catch (error) {
      try {
        unlinkSync(temporary);
      } catch {
        // never made
      }
      this.log(`enrol registrations were not written to ${path} (an engine restart would forget them): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

const key = (pid: number, startTicks: number): string => `${pid}:${startTicks}`;
const count = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/** An entry of the file as a registration, or null where any field is not what register() writes. */
function checked(entry: unknown): Registration | null {
  if (!entry || typeof entry !== 'object') return null;
  const e = entry as Record<string, unknown>;
  if (!count(e.uid, 0) || !count(e.pid, 1) || !count(e.startTicks, 0)) return null;
  if (e.priority !== undefined && !(PRIORITIES as readonly unknown[]).includes(e.priority)) return null;
  if (e.memoryQuotaBytes !== undefined && e.memoryQuotaBytes !== null && !count(e.memoryQuotaBytes, 0)) return null;
  if (e.keepResident !== undefined && typeof e.keepResident !== 'boolean') return null;
  return {
    uid: e.uid,
    pid: e.pid,
    startTicks: e.startTicks,
    ...(e.priority !== undefined ? { priority: e.priority as Priority } : {}),
    ...(e.memoryQuotaBytes !== undefined ? { memoryQuotaBytes: e.memoryQuotaBytes as number | null } : {}),
    ...(e.keepResident !== undefined ? { keepResident: e.keepResident } : {}),
  };
}
