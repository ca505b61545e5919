// Who a GPU process is, from /proc: owner, command line and start time.
// Read once per pid and kept while the pid stays on a GPU, so a steady tick costs no file reads.
// Each is bounded: a command line of megabytes is read through a small buffer and shown as its first 4 KB.
import { readFileSync, statSync } from 'node:fs';
import { readHead, readSmallText } from './bounded-read.js';
import { ARGV_MAX_JSON_BYTES, cutArgv, cutText } from './text-bounds.js';

export interface ProcessIdentity {
  pid: number;
  uid: number | null;
  user: string | null;
  /** argv[0]'s base name, or the kernel's comm for processes without a command line. */
  command: string | null;
  /** The command line's first 4 KB of JSON. */
  argv: string[];
  /** Set when argv is not the whole command line: the whole one's bytes and arguments. */
  argvCut: { bytes: number; args: number } | null;
  /** Milliseconds since the epoch. */
  startedAt: number | null;
  /** False when /proc has no such pid: it exited, or lives in another pid namespace. */
  visible: boolean;
}

/** USER_HZ: the unit of /proc/PID/stat's start time; 100 on every Linux ABI Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
/** /proc/PID/stat is a line of numbers and a 16-byte comm. */
const STAT_MAX_BYTES = 4096;

export class ProcTable {
  private readonly known = new Map<number, ProcessIdentity>();
  private readonly users: UserNames;
  private readonly bootTimeMs: number;

  constructor(private readonly procRoot = '/proc', passwdPath = '/etc/passwd') {
    this.users = new UserNames(passwdPath);
    this.bootTimeMs = readBootTime(procRoot);
  }

  /** Identity of a pid; reads /proc only the first time the pid is seen. Never throws. */
  lookup(pid: number): ProcessIdentity {
    let identity = this.known.get(pid);
    if (!identity) {
      identity = this.read(pid);
      this.known.set(pid, identity);
    }
    return identity;
  }

  /** Forget pids that are no longer on any GPU, so a reused pid is read afresh. */
  retainOnly(pids: ReadonlySet<number>): void {
    for (const pid of this.known.keys()) if (!pids.has(pid)) this.known.delete(pid);
  }

  get size(): number {
    return this.known.size;
  }

  private read(pid: number): ProcessIdentity {
    const dir = `${this.procRoot}/${pid}`;
    try {
      const stat = readSmallText(`${dir}/stat`, STAT_MAX_BYTES, 'latin1');
      if (stat === null) throw new Error('no stat');
      const uid = statSync(dir).uid;
      // comm may hold spaces and parentheses: the fields after it start past the last ')'
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const startTicks = Number(fields[19]); // field 22 of stat; fields[0] is field 3
      const { argv, argvCut } = readArgv(dir);
      return {
        pid,
        uid,
        user: cutText(this.users.name(uid)),
        command: cutText(argv.length > 0 ? baseName(argv[0]) : comm),
        argv,
        argvCut,
        startedAt: Number.isFinite(startTicks) ? Math.round(this.bootTimeMs + (startTicks * 1000) / CLOCK_TICKS_PER_SECOND) : null,
        visible: true,
      };
    } catch {
      return { pid, uid: null, user: null, command: null, argv: [], argvCut: null, startedAt: null, visible: false };
    }
  }
}

/** The command line's start, and its whole size where that start is not all of it; nothing where it cannot be read. */
function readArgv(dir: string): Pick<ProcessIdentity, 'argv' | 'argvCut'> {
  const line = readHead(`${dir}/cmdline`, ARGV_MAX_JSON_BYTES);
  if (line === null || line.bytes === 0) return { argv: [], argvCut: null };
  const whole = line.head.length === line.bytes;
  // a cut read may end inside a character: the decoder keeps those bytes back instead of showing U+FFFD
  const text = new TextDecoder('utf-8').decode(line.head, { stream: !whole });
  const parts = text.split('\0');
  if (parts[parts.length - 1] === '') parts.pop(); // the NUL after the last argument (or a cut just after one)
  const { argv, cut } = cutArgv(parts);
  const args = line.nuls + (line.endsWithNul ? 0 : 1);
  return { argv, argvCut: whole && !cut ? null : { bytes: line.bytes, args } };
}

const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1) || path;

function readBootTime(procRoot: string): number {
  try {
    const match = /^btime (\d+)$/m.exec(readFileSync(`${procRoot}/stat`, 'latin1'));
    if (match) return Number(match[1]) * 1000;
  } catch {
    // fall through: uptime-based estimate below
  }
  return Date.now() - Number(readFileSync(`${procRoot}/uptime`, 'latin1').split(' ')[0]) * 1000;
}

/** uid → user name from /etc/passwd, re-read when an unknown uid shows up (at most every 10 s). */
class UserNames {
  private names = new Map<number, string>();
  private loadedAt = 0;

  constructor(private readonly passwdPath: string) {}

  name(uid: number): string {
    if (!this.names.has(uid) && Date.now() - this.loadedAt > 10_000) this.load();
    return this.names.get(uid) ?? String(uid);
  }

  private load(): void {
    this.loadedAt = Date.now();
    try {
      const names = new Map<number, string>();
      for (const line of readFileSync(this.passwdPath, 'utf8').split('\n')) {
        const [name, , uid] = line.split(':');
        if (name && uid !== undefined && /^\d+$/.test(uid)) names.set(Number(uid), name);
      }
      this.names = names;
    } catch {
      // no passwd (a minimal container): numeric uids are shown instead
    }
  }
}
