// Other gpushare engines on this box, found in /proc: two engines schedule the same GPUs without
// knowing of each other, so a personal engine says so when another user's already runs.
import { readdirSync } from 'node:fs';
import type { OtherEngine, OtherEngineKind } from '../../shared/api.js';
import { lookupAccount } from './accounts.js';
import { readStart } from './proc/bounded-read.js';

/** A process that runs a gpushare engine, as /proc tells it. */
export interface EngineProcess {
  pid: number;
  ppid: number;
  /** The real uid: whose engine it is. */
  uid: number;
  kind: OtherEngineKind;
}

const ENGINE_COMMANDS: ReadonlySet<string> = new Set(['serve', 'start', 'daemon', 'engine']);
/** Subcommands and flags after an engine command that make the process something that ends at once. */
const NOT_AN_ENGINE: ReadonlySet<string> = new Set(['install', 'help', '--help', '-h']);
/** The interpreters that run the CLI script: node, or Electron's binary run as node (the packaged app is named gpushare). */
const RUNTIMES = /^(node|nodejs|node\d+|electron|gpushare)$/;
/** The CLI script: the checkout's gpushare.js, or the installed bin link named gpushare. */
const SCRIPTS: ReadonlySet<string> = new Set(['gpushare.js', 'gpushare']);

const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
/** An engine's command line (runtime, script, command) is short; any process's may be megabytes: only its start is read. */
const CMDLINE_READ_BYTES = 4096;
/** Uid and PPid are in the first lines of /proc/PID/status. */
const STATUS_READ_BYTES = 4096;

/**
 * Is this process a gpushare engine? From /proc/PID/cmdline (NUL-separated argv) and /proc/PID/status.
 * Engines: node running the gpushare script with serve, start, engine (the desktop app's) or daemon; the packaged app
 * (executable "gpushare", not one of Electron's --type= helpers). Null for anything else.
 */
export function parseEngineProcess(pid: number, cmdline: string, status: string): EngineProcess | null {
  const argv = cmdline.split('\0');
  if (argv[argv.length - 1] === '') argv.pop();
  if (argv.length === 0 || !RUNTIMES.test(baseName(argv[0]))) return null;
  const uid = /^Uid:\s+(\d+)/m.exec(status);
  const ppid = /^PPid:\s+(\d+)/m.exec(status);
  if (!uid || !ppid) return null;
  const found = (kind: OtherEngineKind): EngineProcess => ({ pid, ppid: Number(ppid[1]), uid: Number(uid[1]), kind });

  // the gpushare CLI: its command is the word after the script (node options may come before it)
  const script = argv.findIndex((arg, i) => i > 0 && SCRIPTS.has(baseName(arg)));
  if (script > 0) {
    const command = argv[script + 1];
    if (command === undefined || !ENGINE_COMMANDS.has(command)) return null;
    if (argv.slice(script + 2).some((arg) => NOT_AN_ENGINE.has(arg))) return null;
    return found(command as OtherEngineKind);
  }
  if (baseName(argv[0]) === 'gpushare' && !argv.some((arg) => arg.startsWith('--type='))) return found('app');
  return null;
}

/** Every gpushare engine on the box; a process started by another engine process of the same user (the app's helpers) is not counted again. */
export function findEngineProcesses(procRoot = '/proc'): EngineProcess[] {
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return []; // no /proc: nothing can be said
  }
  const engines: EngineProcess[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readStart(`${procRoot}/${entry}/cmdline`, CMDLINE_READ_BYTES);
      if (!cmdline?.includes('gpushare')) continue; // most processes: no second read
      const status = readStart(`${procRoot}/${entry}/status`, STATUS_READ_BYTES, 'latin1');
      const engine = status === null ? null : parseEngineProcess(Number(entry), cmdline, status);
      if (engine) engines.push(engine);
    } catch {
      // it exited while we looked, or /proc hides it (hidepid)
    }
  }
  const byPid = new Map(engines.map((e) => [e.pid, e]));
  return engines.filter((e) => byPid.get(e.ppid)?.uid !== e.uid).sort((a, b) => a.pid - b.pid);
}

/** Engines of users other than `uid` (the engine asking), with their users' names. */
export function otherUsersEngines(uid: number, procRoot = '/proc', passwdPath = '/etc/passwd'): OtherEngine[] {
  return findEngineProcesses(procRoot)
    .filter((e) => e.uid !== uid)
    .map((e) => ({ user: lookupAccount(e.uid, passwdPath).name, pid: e.pid, kind: e.kind }));
}

/** What to tell the person starting a personal engine beside others ("bob's gpushare engine also schedules this box; …"); null: it is alone. */
export function otherEnginesWarning(others: readonly OtherEngine[]): string | null {
  const sentences: string[] = [];
  const daemons = others.filter((e) => e.kind === 'daemon');
  if (daemons.length > 0) {
    sentences.push(`The box daemon (${daemons.map((e) => `pid ${e.pid}, ${e.user}'s`).join('; ')}) already schedules this box; this personal engine schedules beside it without knowing of it: stop it (gpushare stop) and use the daemon (gpushare console).`);
  }
  const personal = others.filter((e) => e.kind !== 'daemon');
  if (personal.length > 0) {
    const users = [...new Set(personal.map((e) => e.user))];
    const names = users.length === 1 ? `${users[0]}'s` : `${users.slice(0, -1).map((u) => `${u}'s`).join(', ')} and ${users[users.length - 1]}'s`;
    const verb = personal.length === 1 ? 'engine also schedules' : 'engines also schedule';
    const pids = personal.map((e) => `pid ${e.pid}, ${kindText(e.kind)}`).join('; ');
    sentences.push(`${names} gpushare ${verb} this box (${pids}); ask an admin to install the daemon (gpushare daemon install), so one scheduler serves everyone.`);
  }
  return sentences.length > 0 ? sentences.join('\n') : null;
}

export const kindText = (kind: OtherEngineKind): string => (kind === 'app' ? 'the desktop app' : `gpushare ${kind}`);
