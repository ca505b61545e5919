// Job logs. A personal engine keeps its user's in <stateDir>/logs/; the daemon (or a root engine
// running another user's job) keeps each user's in <stateDir>/logs/<user>/ (root's, 0711: only the
// engine writes there) under a root-owned 0755 logs/. Each log is created new and given to its user
// (0600), so users follow their own logs and cannot read each other's, nor plant one.
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

/** Flags for a log the daemon creates: a new file or nothing (never one already there, never through a symlink, never waiting on a FIFO). */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A user's log folder as a root engine keeps it: root's, 0711, so only the engine writes there and the user opens their own logs by name. */
export const USER_LOG_DIR_MODE = 0o711;

/**
 * Open a job's log (the fd becomes its stdout and stderr). With an owner, the engine is root: the log is a file
 * it creates new, in that user's folder under logs/, which only the engine may write (an older engine gave users
 * their folder: it is taken back, through its fd, so a swapped-in symlink is not followed). The file is then theirs, 0600.
 */
export function openJobLog(logPath: string, owner: LogOwner | null): number {
  if (!owner) {
    mkdirSync(dirname(logPath), { recursive: true, mode: 0o700 });
    return openSync(logPath, 'a', 0o600); // a personal engine's own logs, in its own state folder
  }
  const own = basename(dirname(logPath)) === userLogDirName(owner) ? owner : null; // a log kept from before per-user folders stays where it was
  if (own) {
    prepareSharedLogDir(dirname(dirname(logPath)));
    takeUserLogDir(dirname(logPath));
  } else {
    mkdirSync(dirname(logPath), { recursive: true, mode: 0o700 });
  }
  let fd: number;
  try {
    fd = openSync(logPath, CREATE_NEW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP') throw new Error(`${logPath} already exists; the engine writes a job's log only to a file it creates new. An administrator can remove it (the folder is the engine's).`);
    throw error;
  }
  try {
    fchownSync(fd, owner.uid, owner.gid);
    fchmodSync(fd, 0o600);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Make a user's log folder the engine's alone (root, 0711), creating it or taking it back from its user. */
function takeUserLogDir(userDir: string): void {
  try {
    mkdirSync(userDir, { mode: USER_LOG_DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  let fd: number;
  try {
    fd = openSync(userDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'ELOOP') throw new Error(`${userDir} is not a directory; remove it so job logs can go there.`);
    throw error;
  }
  try {
    const dir = fstatSync(fd);
    if (dir.uid !== 0 || dir.gid !== 0) fchownSync(fd, 0, 0);
    if ((dir.mode & 0o7777) !== USER_LOG_DIR_MODE) fchmodSync(fd, USER_LOG_DIR_MODE);
  } finally {
    closeSync(fd);
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
