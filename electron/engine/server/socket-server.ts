// The engine's unix socket: newline-delimited JSON for the CLI and second windows.
// A personal engine's lives in a 0700 directory of its user, so only that user can connect;
// the box daemon's is open to every local user. Either way each connection's caller is the kernel's word.
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ensurePrivateDir, runtimeDir } from '../paths.js';
import type { Engine } from '../engine.js';
import { callerOfPeer } from './peer-caller.js';
import { boundedOutbox, type Outbox, type OutboxStats } from './outbox.js';
import { readLines } from './read-lines.js';
import { MAX_REQUEST_BYTES, openSession, parseMessage, wireLine } from './session.js';

export const defaultSocketPath = (): string => process.env.GPUSHARE_SOCKET ?? join(runtimeDir(), 'engine.sock');

const refusal = (message: string): string => JSON.stringify({ kind: 'response', id: -1, ok: false, error: { code: 'invalid-request', message } }) + '\n';

export interface SocketOptions {
  /** Every local user may connect (the box daemon); default: only the engine's user. */
  shared?: boolean;
}

/**
 * Refuse to start where an engine already answers on `path` (its suspended pids are not ours to resume).
 * Hosts ask first and listen last, once every command is registered: a socket that answers serves.
 */
export async function refuseBesideRunningEngine(path = defaultSocketPath()): Promise<void> {
  if (existsSync(path) && (await answers(path))) throw new Error(`Another gpushare engine is already running on ${path}.`);
}

export interface SocketServer {
  path: string;
  /** Each connected client's outbox: how far behind it is, what it was spared. */
  clients(): OutboxStats[];
  close(): Promise<void>;
}

export async function listenOnSocket(engine: Engine, path = defaultSocketPath(), options: SocketOptions = {}): Promise<SocketServer> {
  const dir = join(path, '..');
  if (options.shared) mkdirSync(dir, { recursive: true, mode: 0o755 });
  else if (dir === runtimeDir()) ensurePrivateDir(dir); // one another user made first would hand them the socket
  else mkdirSync(dir, { recursive: true, mode: 0o700 }); // a place the caller chose
  await refuseBesideRunningEngine(path);
  if (existsSync(path)) unlinkSync(path); // left behind by an engine that was killed
  const sockets = new Map<Socket, Outbox>();
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined); // a client that vanished mid-write, even one refused below
    let caller;
    try {
      caller = callerOfPeer(socket, engine.rights);
    } catch (error) {
      socket.end(JSON.stringify({ kind: 'response', id: -1, ok: false, error: { code: 'forbidden', message: `gpushare could not tell who connected (${error instanceof Error ? error.message : String(error)}), so it answers nothing.` } }) + '\n');
      return;
    }
    const outbox = boundedOutbox(`the socket client ${caller.user} (uid ${caller.uid}, pid ${caller.pid ?? 'unknown'})`, {
      buffered: () => socket.writableLength,
      write: (line) => socket.write(line),
      disconnect: () => socket.destroy(),
    });
    sockets.set(socket, outbox);
    socket.on('drain', () => outbox.drained());
    const reply = (line: string): void => {
      if (!socket.destroyed && !socket.writableEnded) outbox.send(line);
    };
    const session = openSession(engine, caller, (message) => reply(wireLine(message)));
    let refused = false;
    const lines = readLines(socket, (text) => {
      const line = text.trim();
      if (refused || !line) return;
      const parsed = parseMessage(line, 'line');
      if (parsed.ok) session.receive(parsed.message);
      else reply(JSON.stringify(parsed.refusal) + '\n');
    });
    socket.on('data', () => {
      if (refused || lines.pending() <= MAX_REQUEST_BYTES) return;
      refused = true;
      reply(refusal(`A line over ${MAX_REQUEST_BYTES} bytes is not a request: the engine closes this connection.`));
      socket.pause(); // what else it sends is not read
      socket.end(() => socket.destroy());
    });
    socket.on('close', () => {
      session.close();
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, options.shared ? 0o666 : 0o600);
  return {
    path,
    clients: () => [...sockets.values()].map((outbox) => outbox.stats()),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets.keys()) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
