// The CLI's connection to an engine over its unix socket, and which engine that is:
// $GPUSHARE_SOCKET when set, else the box daemon when it answers, else your personal engine.
import { connect, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults, GpushareApi, ResponseMessage } from '../../shared/api.js';
import type { Snapshot } from '../../shared/snapshot.js';
import type { SnapshotDelta } from '../../shared/snapshot-delta.js';
import { followSnapshots } from '../../shared/snapshot-follower.js';
import { privateDirProblem, runtimeDir } from '../engine/paths.js';
import { daemonSocketPath } from '../engine/daemon/daemon-paths.js';

export class EngineUnavailableError extends Error {
  constructor(
    message: string,
    /** Each place looked at and why no engine answered there ("the box daemon at /run/…: no socket there"). */
    readonly tried: readonly string[] = [],
  ) {
    super(message);
  }
}

/** An API error as the engine reported it. */
export class EngineRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface EngineClient extends GpushareApi {
  close(): void;
}

export { DAEMON_SOCKET, daemonSocketPath } from '../engine/daemon/daemon-paths.js';
/** Where this user's personal engine listens (`gpushare serve`, `start`, the desktop app's engine). */
export const personalSocketPath = (): string => join(runtimeDir(), 'engine.sock');

/** A place an engine may answer, and what it would be. */
export interface EngineSocket {
  path: string;
  /** 'GPUSHARE_SOCKET': the one the environment names; 'daemon': the box daemon's; 'personal': this user's own. */
  source: 'GPUSHARE_SOCKET' | 'daemon' | 'personal';
  /** In words, for messages. */
  label: string;
}

/**
 * Where to look, in order: $GPUSHARE_SOCKET alone when set; else the box daemon, then your personal engine
 * (personalFirst: the other way round, for `gpushare stop`, which stops only a personal engine).
 */
export function engineSockets(env: NodeJS.ProcessEnv = process.env, options: { personalFirst?: boolean } = {}): EngineSocket[] {
  if (env.GPUSHARE_SOCKET) return [{ path: env.GPUSHARE_SOCKET, source: 'GPUSHARE_SOCKET', label: 'the engine $GPUSHARE_SOCKET names' }];
  const daemon: EngineSocket = { path: daemonSocketPath(env), source: 'daemon', label: 'the box daemon' };
  const personal: EngineSocket = { path: personalSocketPath(), source: 'personal', label: 'your personal engine' };
  return options.personalFirst ? [personal, daemon] : [daemon, personal];
}

export interface FoundEngine {
  client: EngineClient;
  socket: EngineSocket;
}

/** Connect to the first engine that answers; none: an EngineUnavailableError that names each place tried and why it failed. */
export async function findEngine(options: { personalFirst?: boolean } = {}): Promise<FoundEngine> {
  const tried: string[] = [];
  for (const socket of engineSockets(process.env, options)) {
    try {
      // a personal engine's socket in a directory someone else controls may be theirs, listening for our secrets
      const untrusted = socket.source === 'personal' ? privateDirProblem(dirname(socket.path)) : null;
      if (untrusted) {
        tried.push(`${socket.label} at ${socket.path}: not trusted (${untrusted})`);
        continue;
      }
      return { client: await connectAt(socket.path), socket };
    } catch (error) {
      tried.push(`${socket.label} at ${socket.path}: ${whyNot(error as NodeJS.ErrnoException)}`);
    }
  }
  const start = process.env.GPUSHARE_SOCKET
    ? 'Start one there, or unset GPUSHARE_SOCKET to use the box daemon or your personal engine.'
    : 'Start one with `gpushare serve` (add --simulate on a machine without NVIDIA GPUs) or open the desktop app; on a lab box, an admin installs the daemon (`gpushare daemon install`).';
  throw new EngineUnavailableError(`No gpushare engine is running (tried ${tried.join('; ')}). ${start}`, tried);
}

/** The engine that answers ($GPUSHARE_SOCKET, else the box daemon, else your personal engine), or at this exact path. */
export async function connectToEngine(path?: string): Promise<EngineClient> {
  if (path === undefined) return (await findEngine()).client;
  try {
    return await connectAt(path);
  } catch (error) {
    throw new EngineUnavailableError(`No gpushare engine answers at ${path}: ${whyNot(error as NodeJS.ErrnoException)}.`);
  }
}

/** A request that must be answered within `ms`: an engine that is stopped (SIGSTOP) still accepts connections but never answers. */
export function callWithin<M extends ApiMethod>(engine: EngineClient, method: M, params: ApiParams<M>, ms = 5000): Promise<ApiResults[M]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new EngineUnavailableError(`The engine accepted the connection but did not answer ${method} within ${ms / 1000} s (is it stopped?).`)), ms);
  });
  return Promise.race([engine.call(method, params), late]).finally(() => clearTimeout(timer));
}

/** Does something accept connections on this unix socket now? */
export function socketAnswers(path: string): Promise<boolean> {
  return connectAt(path).then(
    (client) => {
      client.close();
      return true;
    },
    () => false,
  );
}

function whyNot(error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return 'no socket there';
  if (error.code === 'ECONNREFUSED') return 'nothing listens';
  if (error.code === 'EACCES') return 'permission denied';
  return error.message;
}

function connectAt(path: string): Promise<EngineClient> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(path);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(client(socket));
    });
  });
}

function client(socket: Socket): EngineClient {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<ApiEvent, Set<(data: unknown) => void>>();
  let buffer = '';
  /** Why the engine closed this connection, when it said (an answer to no request: id -1). */
  let refusal: EngineRequestError | null = null;
  socket.setEncoding('utf8');
  socket.on('error', () => undefined); // 'close' follows, and fails what is pending
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, newline)) as ResponseMessage | { kind: 'event'; event: ApiEvent; data: unknown };
      buffer = buffer.slice(newline + 1);
      if (message.kind === 'event') {
        if (message.event === 'snapshot') snapshots.whole(message.data as Snapshot);
        else if (message.event === 'snapshot.delta') snapshots.delta(message.data as SnapshotDelta);
        else emit(message.event, message.data);
        continue;
      }
      if (message.id === -1 && !message.ok) refusal = new EngineRequestError(message.error.code, message.error.message);
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (!waiter) continue;
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(new EngineRequestError(message.error.code, message.error.message));
    }
  });
  socket.on('close', () => {
    for (const w of pending.values()) w.reject(refusal ?? closed());
    pending.clear();
  });
  const closed = (): Error => new EngineUnavailableError('The gpushare engine closed the connection.');
  const emit = (event: ApiEvent, data: unknown): void => {
    for (const l of listeners.get(event) ?? []) l(data);
  };
  // snapshots come as deltas after the first whole one (cheaper for the engine to send each tick); listeners hear each whole
  const snapshots = followSnapshots(
    () => engine.call('snapshot.latest', {}),
    (snapshot) => emit('snapshot', snapshot),
  );
  const engine: EngineClient = {
    call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]> {
      if (socket.destroyed || socket.writableEnded) return Promise.reject(refusal ?? closed());
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        socket.write(JSON.stringify({ kind: 'request', id, method, params }) + '\n');
      });
    },
    on<E extends ApiEvent>(event: E, listener: (data: ApiEvents[E]) => void): () => void {
      let set = listeners.get(event);
      if (!set) {
        listeners.set(event, (set = new Set()));
        socket.write(JSON.stringify({ kind: 'subscribe', events: [event], ...(event === 'snapshot' ? { snapshotDeltas: true } : {}) }) + '\n');
      }
      set.add(listener as (data: unknown) => void);
      return () => set.delete(listener as (data: unknown) => void);
    },
    close: () => socket.end(),
  };
  return engine;
}
