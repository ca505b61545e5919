// The engine's unix socket: newline-delimited JSON for the CLI and second windows.
// A personal engine's lives in a 0700 directory of its user, so only that user can connect;
// the box daemon's is open to every local user. Either way each connection's caller is the kernel's word.
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ensurePrivateDir, runtimeDir } from '../paths.js';
import type { Engine } from '../engine.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../../../shared/lab-policy.js';
import { lookupAccount } from '../accounts.js';
import { ClientLedger, type ConnectionUse, type LedgerClient } from './client-ledger.js';
import { callerOfPeer } from './peer-caller.js';
import { peerIdentity, type PeerIdentity } from './peer-credentials.js';
import { answerEnrolment } from './enrol-answer.js';
import { boundedOutbox, SLOW_CLIENT_BYTES, type Line, type Outbox, type OutboxStats } from './outbox.js';
import { readLines } from './read-lines.js';
import { MAX_REQUEST_BYTES, openSession, parseMessage, wireLine } from './session.js';

export const defaultSocketPath = (): string => process.env.GPUSHARE_SOCKET ?? join(runtimeDir(), 'engine.sock');

const refusal = (message: string, code = 'invalid-request'): string => JSON.stringify({ kind: 'response', id: -1, ok: false, error: { code, message } }) + '\n';

/** Refused connections kept open at most this long, and this many at once, so that their clients read why. */
const REFUSAL_GRACE_MS = 2000;
const MAX_LINGERING = 64;
/** Requests of one connection being answered at once; the next wait, unparsed, and the socket is not read meanwhile. */
const MAX_IN_FLIGHT = 32;
/** A connection's next request waits while it leaves more than this unread: its answer would only add to what it does not read. */
const TAKE_UNREAD_BYTES = 1024 * 1024;

export interface SocketOptions {
  /** Every local user may connect (the box daemon); default: only the engine's user. */
  shared?: boolean;
  /** What each user's clients may hold (connections, unread bytes), and all together; default DEFAULT_CONNECTION_LIMITS. */
  limits?: ConnectionLimits;
  /** Where the limits are set, for the messages that name their keys (the daemon's config file). */
  limitsFrom?: string;
}

/**
 * Refuse to start where an engine already answers on `path` (its suspended pids are not ours to resume).
 * Hosts ask first and listen last, once every command is registered: a socket that answers serves.
 */
export async function refuseBesideRunningEngine(path = defaultSocketPath(), hint: string | null = null): Promise<void> {
  if (existsSync(path) && (await socketAnswers(path))) throw new Error(`Another gpushare engine is already running on ${path}${hint ? ` (${hint})` : ''}.`);
}

export interface SocketServer {
  path: string;
  /** Each connected client's outbox: how far behind it is, what it was spared. */
  clients(): OutboxStats[];
  /** What one user's connections hold now, against the bounds. */
  connectionsOf(uid: number): ConnectionUse;
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
  let lingering = 0; // refused connections given a moment to read why
  const ledger = new ClientLedger(options.limits ?? DEFAULT_CONNECTION_LIMITS, options.limitsFrom ?? null);
  engine.setHost({ connections: (uid) => ledger.use(uid) });
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined); // a client that vanished mid-write, even one refused below
    const refuse = (code: string, message: string): void => {
      if (lingering >= MAX_LINGERING) return void socket.end(refusal(message, code), () => socket.destroy());
      // the client's first request may still be on its way: read and drop it, so its write does not fail before it reads why
      lingering++;
      const gone = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS);
      socket.once('close', () => {
        lingering--;
        clearTimeout(gone);
      });
      socket.end(refusal(message, code));
      socket.resume();
    };
    let caller;
    let identity: PeerIdentity;
    try {
      identity = peerIdentity(socket);
      // before anything else is spent on it: the uid alone says whether it is over its bound
      const over = ledger.refusal(identity.uid, () => lookupAccount(identity.uid).name);
      if (over) return refuse('conflict', over);
      caller = callerOfPeer(socket, engine.rights, identity);
    } catch (error) {
      return refuse('forbidden', `gpushare could not tell who connected (${error instanceof Error ? error.message : String(error)}), so it answers nothing.`);
    }
    const client: LedgerClient = {
      uid: caller.uid,
      user: caller.user,
      unread: () => socket.writableLength,
      evict: (reason) => outbox.disconnect(reason),
    };
    const outbox = boundedOutbox(`the socket client ${caller.user} (uid ${caller.uid}, pid ${caller.pid ?? 'unknown'})`, {
      buffered: () => socket.writableLength,
      write: (line) => socket.write(line),
      disconnect: () => {
        ledger.remove(client);
        socket.destroy();
      },
      makeRoom: (bytes) => ledger.makeRoom(client, bytes),
    });
    ledger.add(client);
    sockets.set(socket, outbox);
    // Flow control: a client's requests are taken a few at a time, and none while it leaves more than TAKE_UNREAD_BYTES
    // unread (the rest of what was read waits as text); its socket is not read while any wait or while it leaves more
    // than SLOW_CLIENT_BYTES unread: the rest waits in the kernel.
    let refused = false;
    let inFlight = 0;
    let queued: string[] = [];
    let next = 0;
    const flow = (): void => {
      const hold = refused || next < queued.length || socket.writableLength > SLOW_CLIENT_BYTES;
      if (hold && !socket.isPaused()) socket.pause();
      else if (!hold && socket.isPaused()) socket.resume();
    };
    const mayTake = (): boolean => !refused && inFlight < MAX_IN_FLIGHT && socket.writableLength <= TAKE_UNREAD_BYTES;
    const pump = (): void => {
      while (next < queued.length && mayTake()) take(queued[next++]);
      if (next === queued.length && next > 0) [queued, next] = [[], 0];
      flow();
    };
    socket.on('drain', () => {
      ledger.drained(client);
      outbox.drained();
      pump();
    });
    const reply = (line: Line): void => {
      if (socket.destroyed || socket.writableEnded) return;
      outbox.send(line);
      flow();
    };
    let taken = 0;
    const take = (line: string): void => {
      const parsed = parseMessage(line, 'line');
      if (!parsed.ok) return reply(JSON.stringify(parsed.refusal) + '\n');
      const m = parsed.message as { kind?: unknown; events?: unknown } | null;
      if (m?.kind === 'enrol' && taken++ === 0) {
        // the preload library asks for its job (enrol-answer.ts): answered with descriptors, then the connection ends
        refused = true;
        answerEnrolment(socket, identity, engine.enroller);
        return;
      }
      taken++;
      if (!(m?.kind === 'subscribe' && Array.isArray(m.events))) inFlight++; // answered once, now or later
      session.receive(parsed.message);
    };
    const session = openSession(engine, caller, (message) => {
      if (message.kind === 'response') inFlight--;
      if (socket.destroyed || socket.writableEnded) return; // disconnected: its answers are not even written out
      reply(wireLine(message));
      if (message.kind === 'response') pump(); // one answered: the next request may be taken (an event only adds unread bytes)
    });
    const lines = readLines(socket, (text) => {
      const line = text.trim();
      if (refused || !line) return;
      if (next === queued.length && mayTake()) return take(line);
      queued.push(line);
      flow();
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
      ledger.remove(client);
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
    connectionsOf: (uid) => ledger.use(uid),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets.keys()) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Does an engine accept connections on `path` now? */
export function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
