// The park files: one page per managed job (GPUSHARE_PARK_FILE) in which the job's preload library
// counts its threads inside a CUDA call that a park would make wait (synchronisations, allocations,
// frees: native/preload/src/park.c; launches show through the gate's in_launch). The engine makes
// each file, gives it to the job's user, and only reads it: a parked job with a thread in such a
// call wants its memory back.
import { closeSync, fchmodSync, fchownSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync, constants } from 'node:fs';
import { join } from 'node:path';

const MAGIC = 0x31304b5241505347n; // "GSPARK01", as park.h
const FILE_SIZE = 4096;
const IN_CALL_OFFSET = 8;
const CALLS_OFFSET = 16;
const LAST_CALL_OFFSET = 24;

export interface ParkFileOwner {
  uid: number;
  gid: number;
}

export class ParkRequests {
  private readonly fds = new Map<string, number>();

  /** `dir` is made if missing: 0755 when jobs of other users get files in it (the box daemon), else 0700. */
  constructor(readonly dir: string, shared = process.geteuid?.() === 0) {
    mkdirSync(dir, { recursive: true, mode: shared ? 0o755 : 0o700 });
  }

  pathOf(jobId: string): string {
    if (!/^j\d+$/.test(jobId)) throw new Error(`No park file for ${JSON.stringify(jobId)}: only managed jobs (j<number>) have one.`);
    return join(this.dir, jobId);
  }

  /** A fresh file for the job (one it left before is replaced), owned by its user; returns its path for GPUSHARE_PARK_FILE. */
  create(jobId: string, owner: ParkFileOwner | null): string {
    const path = this.pathOf(jobId);
    this.release(jobId);
    const tmp = `${path}.${process.pid}.tmp`;
    rmSync(tmp, { force: true });
    const fd = openSync(tmp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      const page = Buffer.alloc(FILE_SIZE);
      page.writeBigUInt64LE(MAGIC, 0);
      writeSync(fd, page, 0, page.length, 0);
      fchmodSync(fd, 0o600);
      if (owner) fchownSync(fd, owner.uid, owner.gid); // only the job writes it
      renameSync(tmp, path);
    } catch (error) {
      closeSync(fd);
      rmSync(tmp, { force: true });
      throw error;
    }
    this.fds.set(jobId, fd);
    return path;
  }

  /**
   * Threads of the job inside a CUDA call now, such calls so far, and when one last returned
   * (CLOCK_MONOTONIC ns, as process.hrtime; 0n: never); null when it has no file here.
   */
  read(jobId: string): { inCall: number; calls: number; lastCallNs: bigint } | null {
    let fd = this.fds.get(jobId);
    if (fd === undefined) {
      try {
        fd = openSync(this.pathOf(jobId), constants.O_RDONLY | constants.O_NOFOLLOW); // a job of an earlier engine
      } catch {
        return null;
      }
      this.fds.set(jobId, fd);
    }
    const page = Buffer.alloc(32);
    if (readSync(fd, page, 0, page.length, 0) < page.length || page.readBigUInt64LE(0) !== MAGIC) return { inCall: 0, calls: 0, lastCallNs: 0n }; // truncated: says nothing
    return { inCall: page.readUInt32LE(IN_CALL_OFFSET), calls: Number(page.readBigUInt64LE(CALLS_OFFSET)), lastCallNs: page.readBigUInt64LE(LAST_CALL_OFFSET) };
  }

  /** The job ended: its file goes. */
  remove(jobId: string): void {
    this.release(jobId);
    rmSync(this.pathOf(jobId), { force: true });
  }

  /** Engine stop: files stay (running jobs keep them; the next engine reads them). */
  close(): void {
    for (const id of [...this.fds.keys()]) this.release(id);
  }

  private release(jobId: string): void {
    const fd = this.fds.get(jobId);
    if (fd !== undefined) closeSync(fd);
    this.fds.delete(jobId);
  }
}
