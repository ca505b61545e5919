// The engine's unix socket: newline-delimited JSON for the CLI and second windows.
// A personal engine's lives in a 0700 directory of its user, so only that user can connect;
// the box daemon's is open to every local user. Either way each connection's caller is the kernel's word.
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { runtimeDir } from '../paths.js';
import type { Engine } from '../engine.js';
import { callerOfPeer } from './peer-caller.js';
import { openSession, wireLine } from './session.js';

export const defaultSocketPath = (): string => process.env.GPUSHARE_SOCKET ?? join(runtimeDir(), 'engine.sock');

const MAX_LINE = 1024 * 1024;

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

export async function listenOnSocket(engine: Engine, path = defaultSocketPath(), options: SocketOptions = {}): Promise<{ path: string; close(): Promise<void> }> {
  const dir = join(path, '..');
  mkdirSync(dir, { recursive: true, mode: options.shared ? 0o755 : 0o700 });
  await refuseBesideRunningEngine(path);
  if (existsSync(path)) unlinkSync(path); // left behind by an engine that was killed
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    let caller;
    try {
      caller = callerOfPeer(socket, engine.rights);
    } catch (error) {
      socket.end(JSON.stringify({ kind: 'response', id: -1, ok: false, error: { code: 'forbidden', message: `gpushare could not tell who connected (${error instanceof Error ? error.message : String(error)}), so it answers nothing.` } }) + '\n');
      return;
    }
    sockets.add(socket);
    const session = openSession(engine, caller, (message) => {
      if (!socket.destroyed) socket.write(wireLine(message));
    });
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE && !buffer.includes('\n')) {
        socket.destroy(); // a client that never ends its line
        return;
      }
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (!line) continue;
        try {
          session.receive(JSON.parse(line));
        } catch {
          socket.write(JSON.stringify({ kind: 'response', id: -1, ok: false, error: { code: 'invalid-request', message: 'Each line must be one JSON message.' } }) + '\n');
        }
      }
    });
    socket.on('close', () => {
      session.close();
      sockets.delete(socket);
    });
    socket.on('error', () => undefined); // a client that vanished mid-write
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, options.shared ? 0o666 : 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
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
