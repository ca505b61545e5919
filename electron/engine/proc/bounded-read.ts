// Reads of files that a process or its user controls, each with a bound on what is kept and on what is read at all:
// /proc/PID/cmdline and environ hold megabytes when their process wants, and a container runtime's state may lie in a
// user's home, where a FIFO never ends a read and /dev/zero never ends a file.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** One read's worth: what a scan holds at a time, whatever the file's length. */
const CHUNK_BYTES = 64 * 1024;
/**
 * A scan stops counting here. The kernel gives a program at most 6 MB of arguments and environment together (3/4 of
 * the 8 MB stack limit), so only a process that rewrote its own memory shows more.
 */
export const SCAN_LIMIT_BYTES = 8 * 1024 * 1024;

const scratch = Buffer.allocUnsafe(CHUNK_BYTES);

/** Open for reading without waiting (a FIFO) and without following a last-component symlink; null where it cannot be. */
function openQuietly(path: string): number | null {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW); // libuv adds O_CLOEXEC
  } catch {
    return null;
  }
}

/** Each chunk of the file in turn (the buffer is reused: copy what you keep) until `chunk` returns false, EOF, or `limit` bytes. */
function scan(fd: number, limit: number, chunk: (bytes: Buffer) => boolean): void {
  for (let read = 0; read < limit; ) {
    const n = readSync(fd, scratch, 0, Math.min(CHUNK_BYTES, limit - read), null);
    if (n <= 0) return;
    read += n;
    if (!chunk(scratch.subarray(0, n))) return;
  }
}

export interface FileHead {
  /** The first `keep` bytes (all of them when the file is shorter). */
  head: Buffer;
  /** The whole file's length, counted up to SCAN_LIMIT_BYTES. */
  bytes: number;
  /** NUL bytes in the whole file (the arguments of a command line, the entries of an environment). */
  nuls: number;
  /** Whether its last byte is a NUL (a command line's usually is; one a process rewrote may not be). */
  endsWithNul: boolean;
}

/** The start of a /proc file and its whole length, read through one small buffer: never more than `keep` bytes held. Null when unreadable. */
export function readHead(path: string, keep: number): FileHead | null {
  const fd = openQuietly(path);
  if (fd === null) return null;
  try {
    const head = Buffer.allocUnsafe(keep);
    let kept = 0;
    let bytes = 0;
    let nuls = 0;
    let endsWithNul = false;
    scan(fd, SCAN_LIMIT_BYTES, (chunk) => {
      if (kept < keep) kept += chunk.copy(head, kept, 0, Math.min(chunk.length, keep - kept));
      bytes += chunk.length;
      for (let i = chunk.indexOf(0); i >= 0; i = chunk.indexOf(0, i + 1)) nuls++;
      endsWithNul = chunk[chunk.length - 1] === 0;
      return true;
    });
    return { head: head.subarray(0, kept), bytes, nuls, endsWithNul };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** At most the first `maxBytes` of a file, never reading further: null where it cannot be read. */
export function readStart(path: string, maxBytes: number, encoding: BufferEncoding = 'utf8'): string | null {
  const fd = openQuietly(path);
  if (fd === null) return null;
  try {
    const parts: Buffer[] = [];
    let total = 0;
    scan(fd, maxBytes, (chunk) => {
      parts.push(Buffer.from(chunk));
      total += chunk.length;
      return true;
    });
    return Buffer.concat(parts, total).toString(encoding);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A small text file: at most `maxBytes`, else null (as for one that is unreadable). Stops there whatever the file is. */
export function readSmallText(path: string, maxBytes: number, encoding: BufferEncoding = 'utf8'): string | null {
  const fd = openQuietly(path);
  if (fd === null) return null;
  try {
    return readUpTo(fd, maxBytes, encoding);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * A state file another program keeps (a container runtime's JSON): read only when it is a regular file of at most
 * `maxBytes`. Null otherwise: a FIFO, a device or a symlink a user planted in its place is never read.
 */
export function readStateFile(path: string, maxBytes: number): string | null {
  const fd = openQuietly(path);
  if (fd === null) return null;
  try {
    const stat = fstatSync(fd);
    return stat.isFile() && stat.size <= maxBytes ? readUpTo(fd, maxBytes) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function readUpTo(fd: number, maxBytes: number, encoding: BufferEncoding = 'utf8'): string | null {
  const parts: Buffer[] = [];
  let total = 0;
  scan(fd, maxBytes + 1, (chunk) => {
    parts.push(Buffer.from(chunk));
    total += chunk.length;
    return true;
  });
  return total > maxBytes ? null : Buffer.concat(parts, total).toString(encoding);
}

/**
 * The named variables of /proc/PID/environ, each value cut to `valueBytes`, read through one small buffer: a
 * variable after megabytes of others is still found, and nothing else of the environment is held.
 */
export function readEnvironVariables(path: string, names: ReadonlySet<string>, valueBytes: number): Map<string, string> | null {
  const fd = openQuietly(path);
  if (fd === null) return null;
  let longestName = 0;
  for (const name of names) longestName = Math.max(longestName, Buffer.byteLength(name));
  const entry = Buffer.allocUnsafe(longestName + 1 + valueBytes); // NAME=value, as much of it as is kept
  let length = 0;
  const found = new Map<string, string>();
  const finish = (): void => {
    const eq = entry.indexOf(0x3d); // '='
    if (eq > 0 && eq < length) {
      const name = entry.toString('utf8', 0, eq);
      if (names.has(name)) found.set(name, entry.toString('utf8', eq + 1, length));
    }
    length = 0;
  };
  try {
    scan(fd, SCAN_LIMIT_BYTES, (chunk) => {
      let start = 0;
      for (let nul = chunk.indexOf(0); start < chunk.length; nul = chunk.indexOf(0, start)) {
        const end = nul < 0 ? chunk.length : nul;
        if (length < entry.length) length += chunk.copy(entry, length, start, Math.min(end, start + entry.length - length));
        if (nul < 0) break;
        finish();
        start = nul + 1;
      }
      return true;
    });
    if (length > 0) finish();
    return found;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
