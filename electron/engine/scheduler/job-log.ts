// Job logs. A personal engine keeps its user's in <stateDir>/logs/; the daemon (or a root engine
// running another user's job) keeps each user's in <stateDir>/logs/<user>/ (theirs, 0700) under a
// root-owned 0755 logs/, so users follow their own logs and cannot read each other's.
import { closeSync, constants, chmodSync, chownSync, fchmodSync, fchownSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Whose log it is. */
export interface LogOwner {
  uid: number;
  gid: number;
  name: string;
}

/** The folder under logs/ for a user: their name where it is a plain one, else their uid. */
export function userLogDirName(owner: Pick<LogOwner, 'uid' | 'name'>): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*\$?$/.test(owner.name) ? owner.name : `uid-${owner.uid}`;
}

/** Where job `id` logs: in its owner's folder when one is given. */
export function jobLogPath(logDir: string, id: string, owner: Pick<LogOwner, 'uid' | 'name'> | null): string {
  return owner ? join(logDir, userLogDirName(owner), `${id}.log`) : join(logDir, `${id}.log`);
}

/** logs/ of an engine that runs as root: root's, 0755, so each user reaches their own folder in it. */
export function prepareSharedLogDir(logDir: string): void {
  mkdirSync(logDir, { recursive: true, mode: 0o755 });
  const stats = lstatSync(logDir);
  if (!stats.isDirectory()) throw new Error(`The log directory ${logDir} is not a directory.`);
  if (stats.uid !== 0) chownSync(logDir, 0, 0);
  if ((stats.mode & 0o7777) !== 0o755) chmodSync(logDir, 0o755); // an earlier personal engine made it 0700
}

/**
 * Open a job's log for appending (the fd becomes its stdout and stderr). With an owner, in their own
 * folder, which they may have filled with anything: no symlink is followed, no FIFO waited on, and only
 * a plain file of theirs (or the new one) is used; it is theirs, 0600, chowned through the fd.
 */
export function openJobLog(logPath: string, owner: LogOwner | null): number {
  const own = owner && basename(dirname(logPath)) === userLogDirName(owner) ? owner : null; // a log kept from before per-user folders stays where it was
  if (!own) {
    mkdirSync(dirname(logPath), { recursive: true, mode: 0o700 });
    const fd = openSync(logPath, 'a', 0o600);
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    return fd;
  }
  const userDir = dirname(logPath);
  prepareSharedLogDir(dirname(userDir));
  try {
    mkdirSync(userDir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const dir = lstatSync(userDir);
  if (!dir.isDirectory()) throw new Error(`${userDir} is not a directory; remove it so ${own.name}'s job logs can go there.`);
  if (dir.uid !== own.uid || dir.gid !== own.gid) chownSync(userDir, own.uid, own.gid);
  if ((dir.mode & 0o7777) !== 0o700) chmodSync(userDir, 0o700);
  const fd = openSync(logPath, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  try {
    const file = fstatSync(fd);
    if (!file.isFile() || file.nlink !== 1 || (file.uid !== own.uid && file.uid !== process.getuid?.())) {
      throw new Error(`${logPath} is not a plain file of ${own.name}'s; remove it so the job can log there.`);
    }
    fchownSync(fd, own.uid, own.gid);
    fchmodSync(fd, 0o600);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The highest job number among the logs in logDir and its users' folders (0 when none); a name past 9 digits is nobody's job. */
export function highestLoggedJobNumber(logDir: string): number {
  const numbers = (dir: string): number[] => {
    try {
      return readdirSync(dir).flatMap((name) => {
        const match = /^j(\d{1,9})\.log$/.exec(name);
        return match ? [Number(match[1])] : [];
      });
    } catch {
      return []; // no logs yet
    }
  };
  const userDirs = (() => {
    try {
      return readdirSync(logDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(logDir, e.name));
    } catch {
      return [];
    }
  })();
  return Math.max(0, ...numbers(logDir), ...userDirs.flatMap(numbers));
}
