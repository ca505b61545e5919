// The desktop app's side of the engine, which always runs in its own process: use the engine that
// answers (the box daemon, or this user's engine already running), else start a personal engine as a
// child, wait (bounded) until its socket answers, watch it, and on quit ask it to stop and await that.
import { spawn, type ChildProcess } from 'node:child_process';
import { socketAnswers } from '../cli/engine-client.js';
import { readLines } from '../engine/server/read-lines.js';
import { openLineConnection, type LineConnection } from './line-connection.js';

/** How to start a personal engine: in Electron, its own binary as Node (ELECTRON_RUN_AS_NODE=1) running `gpushare engine`. */
export interface EngineCommand {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
}

export interface EngineLinkOptions {
  /** Sockets to try first, in order (the CLI's engineSockets(): $GPUSHARE_SOCKET, else the box daemon, then this user's engine). */
  sockets: readonly string[];
  /** Where the personal engine this link starts will listen. */
  personalSocket: string;
  start: EngineCommand;
  /** How long a started engine may take to answer (default 30 s: a real driver and the store open first). */
  readyTimeoutMs?: number;
  /** How long a clean stop may take before the engine is killed (default 20 s: parked jobs are restored first). */
  stopTimeoutMs?: number;
  /** Each line the started engine writes to stderr. */
  say?: (line: string) => void;
}

export interface EngineExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** It stopped by itself with status 0 when asked (false: it failed, or it had to be killed). */
  clean: boolean;
}

export interface EngineLink {
  readonly socketPath: string;
  /** This link started the engine (and stops it on quit); false: it was already there. */
  readonly started: boolean;
  /** The started engine's pid; null for one found running. */
  readonly pid: number | null;
  /** A new connection (one per window, one for the tray). */
  connect(): Promise<LineConnection>;
  /** Called once if the engine this link started ends without being asked, with a sentence saying so. */
  onLost(listener: (why: string) => void): () => void;
  /** That sentence, once it is lost; null while it runs. */
  lostReason(): string | null;
  /** Ask a started engine to stop and await its exit (nothing to do for one found running). */
  stop(): Promise<EngineExit | null>;
}

const STDERR_LINES_KEPT = 6;
const POLL_MS = 100;

export async function openEngineLink(options: EngineLinkOptions): Promise<EngineLink> {
  for (const path of options.sockets) {
    if (await socketAnswers(path)) return foundLink(path);
  }
  return startPersonalEngine(options);
}

function foundLink(socketPath: string): EngineLink {
  return {
    socketPath,
    started: false,
    pid: null,
    connect: () => openLineConnection(socketPath),
    onLost: () => () => undefined, // not ours to watch: each connection hears its own end
    lostReason: () => null,
    stop: async () => null,
  };
}

async function startPersonalEngine(options: EngineLinkOptions): Promise<EngineLink> {
  const { personalSocket: socketPath, start } = options;
  const say = options.say ?? (() => undefined);
  // its own session: a Ctrl-C in the app's terminal reaches the app, which then stops the engine in order
  const child: ChildProcess = spawn(start.command, [...start.args], { env: start.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const stderrTail: string[] = [];
  let exit: EngineExit | null = null;
  let stopRequested = false;
  let lost: string | null = null;
  const lostListeners = new Set<(why: string) => void>();
  const exited = new Promise<EngineExit>((resolve) => {
    child.once('error', (error) => {
      stderrTail.push(error.message);
      exit ??= { code: null, signal: null, clean: false };
      resolve(exit);
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal, clean: stopRequested && code === 0 };
      resolve(exit);
    });
  });
  childLines(child.stderr!, (line) => {
    stderrTail.push(line);
    if (stderrTail.length > STDERR_LINES_KEPT) stderrTail.shift();
    say(line);
  });
  child.stdout!.resume(); // "engine socket: …": readiness is the socket answering, not a line
  child.stdin!.on('error', () => undefined); // it may be gone before we close our end

  const ready = await waitUntilAnswering(socketPath, exited, options.readyTimeoutMs ?? 30_000);
  if (ready !== 'answers') {
    if (ready === 'timeout') await stopChild(child, exited, 5000);
    // another engine of this user may have taken the socket first: then that one is the engine
    if (await socketAnswers(socketPath)) return foundLink(socketPath);
    const why = ready === 'timeout' ? `did not answer on ${socketPath} within ${Math.round((options.readyTimeoutMs ?? 30_000) / 1000)} s` : `stopped before it answered (${exitText(exit)})`;
    throw new Error(`The personal engine ${why}${tailText(stderrTail)}`);
  }

  void exited.then((how) => {
    if (stopRequested) return;
    lost = `The personal engine stopped (${exitText(how)})${tailText(stderrTail)} Quit and reopen gpushare to start it again.`;
    for (const listener of lostListeners) listener(lost);
  });
  return {
    socketPath,
    started: true,
    pid: child.pid ?? null,
    connect: () => openLineConnection(socketPath),
    onLost(listener) {
      if (lost) listener(lost);
      else lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    lostReason: () => lost,
    async stop() {
      if (exit) return exit;
      stopRequested = true;
      return stopChild(child, exited, options.stopTimeoutMs ?? 20_000);
    },
  };
}

/** Poll the socket until it answers, the child exits, or time runs out. */
async function waitUntilAnswering(path: string, exited: Promise<EngineExit>, timeoutMs: number): Promise<'answers' | 'exited' | 'timeout'> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await socketAnswers(path)) return 'answers';
    if (gone) return 'exited';
    if (Date.now() >= deadline) return 'timeout';
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, POLL_MS))]);
  }
}

/** SIGTERM (the engine's clean stop: resume what it suspended, restore what it parked), then SIGKILL past the timeout. */
async function stopChild(child: ChildProcess, exited: Promise<EngineExit>, timeoutMs: number): Promise<EngineExit> {
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const first = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (first !== 'late') return first;
  child.kill('SIGKILL');
  return { ...(await exited), clean: false };
}

/** A child's output, line by line (trimmed, blank lines skipped), the last line even without its newline. */
function childLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  const reader = readLines(stream, (line) => line.trimEnd() && onLine(line.trimEnd()));
  stream.on('end', () => reader.rest().trim() && onLine(reader.rest().trim()));
}

const exitText = (exit: EngineExit | null): string =>
  !exit ? 'it could not be started' : exit.signal ? `killed by ${exit.signal}` : exit.code === null ? 'it could not be started' : `exit code ${exit.code}`;

const tailText = (lines: readonly string[]): string => (lines.length > 0 ? `: ${lines.join(' ')}.` : '.');
