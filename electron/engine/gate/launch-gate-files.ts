// The launch gate's directory and files on disk (layout: gate_abi.h): the
// engine's control file, and one activity file per slot that belongs to the
// job's user. Who may write what is decided here, by owners and modes.
import { closeSync, existsSync, fchmodSync, fchownSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeSync, constants } from 'node:fs';
import { dirname, join } from 'node:path';
import * as L from './launch-gate-layout.js';

export class LaunchGateError extends Error {
  override name = 'LaunchGateError';
}

/** The user a slot's activity file belongs to (the job runs as this user). */
export interface SlotOwner {
  uid: number;
  gid: number;
}

/** An activity file the engine made (or found) for a slot: open read-only to the engine, with its inode. */
export interface ActivityFile {
  fd: number;
  ino: bigint;
}

const engineUid = (): number => process.geteuid?.() ?? -1;
const engineGid = (): number => process.getegid?.() ?? -1;

/** Where the header's windows go (active, outstanding, best-effort sync, engine gone). */
export const HEADER_WINDOWS = [L.HEADER.activeWindowNs, L.HEADER.outstandingMaxNs, L.HEADER.beSyncWindowNs, L.HEADER.engineGoneNs];

/** A fresh control file: this engine's header, no slot in use. */
export function controlImage(enginePid: number, windows: bigint[]): Buffer {
  const image = Buffer.alloc(L.GATE_CONTROL_SIZE);
  image.writeBigUInt64LE(L.GATE_MAGIC, L.HEADER.magic);
  image.writeUInt32LE(L.GATE_VERSION, L.HEADER.version);
  image.writeUInt32LE(L.GATE_MAX_SLOTS, L.HEADER.maxSlots);
  image.writeUInt32LE(L.GATE_MAX_DOMAINS, L.HEADER.maxDomains);
  image.writeInt32LE(enginePid, L.HEADER.enginePid);
  image.writeBigUInt64LE(process.hrtime.bigint(), L.HEADER.heartbeatNs);
  HEADER_WINDOWS.forEach((at, i) => image.writeBigUInt64LE(windows[i], at));
  image.writeUInt32LE(L.GATE_ENGINE_RUNNING, L.HEADER.state);
  image.writeUInt32LE(L.GATE_CONTROL_SIZE, L.HEADER.fileSize);
  return image;
}

export const controlPath = (dir: string): string => join(dir, L.GATE_CONTROL_FILE);
export const activityPath = (dir: string, slot: number): string => join(dir, `${L.GATE_ACTIVITY_PREFIX}${slot}`);

/**
 * Makes the gate directory afresh with `control` in it, swapped in whole: jobs of an earlier
 * engine keep the files they map (they fail open once its heartbeat stops). Returns the control fd.
 */
export function createGateDir(dir: string, shared: boolean, control: Buffer): number {
  const mode = shared ? 0o755 : 0o700;
  mkdirSync(dirname(dir), { recursive: true, mode });
  const tmp = `${dir}.${process.pid}.tmp`;
  const old = `${dir}.${process.pid}.old`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { mode });
  let fd: number | null = null;
  try {
    fd = createFile(join(tmp, L.GATE_CONTROL_FILE), control);
    if (existsSync(dir)) renameSync(dir, old); // a directory of an earlier engine, or a version-2 gate file
    renameSync(tmp, dir);
    chmodDir(dir, mode);
  } catch (error) {
    if (fd !== null) closeSync(fd);
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  rmSync(old, { recursive: true, force: true });
  return fd;
}

/** The control file an earlier engine left in `dir`, if it is one of this layout: its fd and image; else null. */
export function openGateDir(dir: string, shared: boolean): { fd: number; image: Buffer } | null {
  let fd: number;
  try {
    fd = openSync(controlPath(dir), constants.O_RDWR | constants.O_NOFOLLOW);
  } catch {
    return null; // none left (or a version-2 file where the directory goes): a fresh directory
  }
  const image = Buffer.alloc(L.GATE_CONTROL_SIZE);
  const valid =
    readSync(fd, image, 0, image.length, 0) === image.length &&
    image.readBigUInt64LE(L.HEADER.magic) === L.GATE_MAGIC &&
    image.readUInt32LE(L.HEADER.version) === L.GATE_VERSION &&
    image.readUInt32LE(L.HEADER.fileSize) === L.GATE_CONTROL_SIZE &&
    fstatSync(fd).uid === engineUid();
  if (!valid) {
    closeSync(fd);
    return null;
  }
  chmodDir(dir, shared ? 0o755 : 0o700);
  return { fd, image };
}

/**
 * A fresh activity file for `slot` (a new inode, so a process of the slot's last job that still maps
 * the old one writes only there), owned by `owner` (the engine's user when null), mode 0644: the job
 * writes it, everyone else reads it.
 */
export function createActivity(dir: string, slot: number, generation: number, owner: SlotOwner | null): ActivityFile {
  const header = Buffer.alloc(L.GATE_ACTIVITY_SIZE);
  header.writeBigUInt64LE(L.GATE_ACTIVITY_MAGIC, L.ACTIVITY.magic);
  header.writeUInt32LE(slot, L.ACTIVITY.slot);
  header.writeUInt32LE(generation, L.ACTIVITY.generation);
  const path = activityPath(dir, slot);
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const fd = createFile(tmp, header);
  try {
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    renameSync(tmp, path);
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  return { fd, ino: fstatSync(fd, { bigint: true }).ino };
}

/** The activity file a job of an earlier engine still uses, if it is the one the control file names. */
export function openActivity(dir: string, slot: number, ino: bigint): ActivityFile | null {
  let fd: number;
  try {
    fd = openSync(activityPath(dir, slot), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  const st = fstatSync(fd, { bigint: true });
  if (st.ino !== ino || !st.isFile()) {
    closeSync(fd);
    return null;
  }
  return { fd, ino };
}

/** Reads `into.length` bytes of an activity at `offset`; what its owner truncated away reads as zeros. */
export function readActivity(fd: number | null, into: Buffer, offset: number): Buffer {
  into.fill(0);
  if (fd !== null) readSync(fd, into, 0, into.length, offset);
  return into;
}

/**
 * Checks that a job of `owner` can reach the gate: the engine must be root to give it a file of its
 * own, the directory shared, and every directory above it searchable by that user.
 */
export function checkOwnerCanReach(dir: string, shared: boolean, owner: SlotOwner): void {
  const me = engineUid();
  if (me !== 0) {
    throw new LaunchGateError(`This engine runs as uid ${me}: it cannot give a launch-gate slot to uid ${owner.uid} (only the box daemon, running as root, runs other users' jobs).`);
  }
  if (!shared) {
    throw new LaunchGateError(`The launch gate ${dir} is private to this engine's user (mode 0700): a job of uid ${owner.uid} could not open it. Create it with jobsOfOtherUsers.`);
  }
  for (let d = dirname(dir); ; d = dirname(d)) {
    const st = statSync(d);
    const searchable = st.uid === owner.uid ? st.mode & 0o100 : st.gid === owner.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!searchable) {
      throw new LaunchGateError(`A job of uid ${owner.uid} cannot reach the launch gate ${dir}: ${d} is not searchable by that user (mode ${(st.mode & 0o777).toString(8)}). Put the gate under a directory every user can traverse.`);
    }
    if (d === dirname(d)) return;
  }
}

/** The owner to give a slot's file: null when it is the engine's own user (nothing to change). */
export function slotOwner(owner: SlotOwner | null | undefined): SlotOwner | null {
  if (owner === null || owner === undefined) return null;
  const id = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0 && (v as number) < 0xffff_ffff;
  if (typeof owner !== 'object' || !id(owner.uid) || !id(owner.gid)) {
    throw new LaunchGateError(`A slot's owner must be { uid, gid } with whole numbers ≥ 0 (got ${JSON.stringify(owner)}).`);
  }
  return owner.uid === engineUid() && owner.gid === engineGid() ? null : { uid: owner.uid, gid: owner.gid };
}

export function removeGateDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A new file with `content`, mode 0644 whatever the umask; returns its fd (read-write). */
function createFile(path: string, content: Buffer): number {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    fchmodSync(fd, 0o644);
    writeSync(fd, content, 0, content.length, 0);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

function chmodDir(dir: string, mode: number): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}
