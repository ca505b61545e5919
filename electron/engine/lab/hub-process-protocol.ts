// The desktop app runs its lab hub in a process of its own (hub-process.ts), so Electron's main thread only
// relays bytes between the windows and the hub. This is what crosses between the two: the messages, their
// bounds, and each end's interface. Each end has one adapter per kind of child: Electron's utilityProcess
// (the app: electron/main/index.ts, hub-process-entry.ts) and Node's child_process.fork (tests, bench).
import type { LabBoxSpec } from '../../../shared/lab.js';
import type { LabHubOptions } from './lab-hub.js';

/** A window's message, as JSON text, is at most this long (the API's schemas bound a request far below it). */
export const WINDOW_MESSAGE_LIMIT = 1024 * 1024;
/** A line for a window is at most this long (a box's snapshot of 8 GPUs × 64 processes is ~100 KB). */
export const HUB_LINE_LIMIT = 16 * 1024 * 1024;
/** Messages for a hub that has not said it is ready yet (it is starting); past this a window's are refused. */
export const STARTING_QUEUE_LIMIT = 1000;
/** The hub's one line on stderr before it ends of an error it did not expect: the app shows it with the exit. */
export const FATAL_PREFIX = 'gpushare lab hub: ';

/** From the app to the hub: its boxes (once), then each window's relay opening, its messages, its end. */
export type ToHub =
  | { kind: 'start'; boxes: LabBoxSpec[]; options: LabHubOptions }
  | { kind: 'open'; relay: number; query: string }
  | { kind: 'window'; relay: number; text: string }
  | { kind: 'close'; relay: number };

/** From the hub to the app: it listens now; a line (JSON text of a ToWindow message) for one relay's window, and which request it answers. */
export type FromHub = { kind: 'ready' } | { kind: 'window'; relay: number; line: string; answers?: number };

/** The hub's end: the app's messages in, its own out (process.parentPort in Electron, the IPC channel in Node). */
export interface HubPort {
  post(message: FromHub): void;
  onMessage(listener: (message: unknown) => void): void;
}

/** The app's end of one hub process. */
export interface HubChild {
  /** The hub's pid once it runs (undefined before and after). */
  readonly pid: number | undefined;
  post(message: ToHub): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once when the process has ended, with why in words ("killed by SIGKILL", "exit code 1: …"). */
  onExit(listener: (why: string) => void): void;
  kill(): void;
}

/** Starts a hub process (the app: utilityProcess.fork; tests: child_process.fork). */
export type ForkHub = () => HubChild;

const isRelayId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** The app's message, checked (null: not one of ours). */
export function toHubMessage(message: unknown): ToHub | null {
  const m = message as { kind?: unknown; relay?: unknown; query?: unknown; text?: unknown; boxes?: unknown; options?: unknown } | null;
  if (m?.kind === 'start' && Array.isArray(m.boxes) && typeof m.options === 'object' && m.options !== null) return m as ToHub;
  if (m?.kind === 'open' && isRelayId(m.relay) && typeof m.query === 'string' && m.query.length <= WINDOW_MESSAGE_LIMIT) return m as ToHub;
  if (m?.kind === 'window' && isRelayId(m.relay) && typeof m.text === 'string' && m.text.length <= WINDOW_MESSAGE_LIMIT) return m as ToHub;
  if (m?.kind === 'close' && isRelayId(m.relay)) return m as ToHub;
  return null;
}

/** The hub's message, checked (null: not one of ours, or a line past HUB_LINE_LIMIT). */
export function fromHubMessage(message: unknown): FromHub | null {
  const m = message as { kind?: unknown; relay?: unknown; line?: unknown; answers?: unknown } | null;
  if (m?.kind === 'ready') return { kind: 'ready' };
  if (m?.kind !== 'window' || !isRelayId(m.relay) || typeof m.line !== 'string' || m.line.length > HUB_LINE_LIMIT) return null;
  if (m.answers === undefined) return { kind: 'window', relay: m.relay, line: m.line };
  return typeof m.answers === 'number' && Number.isSafeInteger(m.answers) && m.answers >= 0 ? { kind: 'window', relay: m.relay, line: m.line, answers: m.answers } : null;
}

/** Keeps the last FATAL_PREFIX line a hub wrote on stderr (the rest goes on to the app's stderr). */
export function watchHubStderr(stderr: NodeJS.ReadableStream | null, echo: (text: string) => void = (text) => process.stderr.write(text)): () => string | null {
  let fatal: string | null = null;
  let partial = '';
  stderr?.setEncoding('utf8');
  stderr?.on('data', (chunk: string) => {
    echo(chunk);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!.slice(-4096);
    for (const line of lines) if (line.startsWith(FATAL_PREFIX)) fatal = line.slice(FATAL_PREFIX.length, FATAL_PREFIX.length + 500);
  });
  return () => fatal;
}

/** What a HubChild is made of, from a process started by either kind of fork. */
export interface HubProcessParts {
  pid(): number | undefined;
  post(message: ToHub): void;
  onMessage(listener: (message: unknown) => void): void;
  kill(): void;
  /** Its stderr, piped to us (null: not piped). */
  stderr: NodeJS.ReadableStream | null;
  /** Its end: exit code, or the signal that ended it. */
  onEnd(listener: (code: number | null, signal: string | null) => void): void;
}

/** A HubChild over a started process: its end heard once, with its last word on stderr. */
export function hubChildOver(parts: HubProcessParts, echo?: (text: string) => void): HubChild {
  const fatal = watchHubStderr(parts.stderr, echo);
  let exited: string | null = null;
  const exitListeners: Array<(why: string) => void> = [];
  parts.onEnd((code, signal) => {
    const done = (): void => {
      if (exited !== null) return;
      exited = hubExitWhy(code, signal, fatal());
      for (const listener of exitListeners.splice(0)) listener(exited);
    };
    // its stderr may still hold its last line; an ssh it started may hold the pipe open, so not for long
    if (!parts.stderr || (parts.stderr as { readableEnded?: boolean }).readableEnded) return done();
    parts.stderr.once('end', done);
    setTimeout(done, 200).unref();
  });
  return {
    get pid() {
      return exited === null ? parts.pid() : undefined;
    },
    post: (message) => void (exited === null && parts.post(message)),
    onMessage: parts.onMessage,
    onExit: (listener) => void (exited !== null ? listener(exited) : exitListeners.push(listener)),
    kill: parts.kill,
  };
}

/** Why a hub process ended, in words: its exit code or signal, and its own last word. */
export function hubExitWhy(code: number | null, signal: string | null, fatal: string | null): string {
  const how = signal ? `killed by ${signal}` : `exit code ${code ?? '?'}`;
  return fatal ? `${how}: ${fatal}` : how;
}
