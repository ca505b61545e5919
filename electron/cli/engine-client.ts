// The CLI's connection to a running engine over its unix socket.
import { connect, type Socket } from 'node:net';
import type { ApiEvent, ApiEvents, ApiMethod, ApiParams, ApiResults, GpushareApi, ResponseMessage } from '../../shared/api.js';
import { defaultSocketPath } from '../engine/server/socket-server.js';

export class EngineUnavailableError extends Error {}

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

export function connectToEngine(path = defaultSocketPath()): Promise<EngineClient> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(path);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new EngineUnavailableError(
          `No gpushare engine is running (${error.code === 'ENOENT' || error.code === 'ECONNREFUSED' ? `nothing listens on ${path}` : error.message}). ` +
            'Start one with `gpushare serve` (add --simulate on a machine without NVIDIA GPUs) or open the desktop app.',
        ),
      );
    });
    socket.once('connect', () => resolve(client(socket)));
  });
}

function client(socket: Socket): EngineClient {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<ApiEvent, Set<(data: unknown) => void>>();
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, newline)) as ResponseMessage | { kind: 'event'; event: ApiEvent; data: unknown };
      buffer = buffer.slice(newline + 1);
      if (message.kind === 'event') {
        for (const l of listeners.get(message.event) ?? []) l(message.data);
        continue;
      }
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (!waiter) continue;
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(new EngineRequestError(message.error.code, message.error.message));
    }
  });
  socket.on('close', () => {
    for (const w of pending.values()) w.reject(new EngineUnavailableError('The gpushare engine closed the connection.'));
    pending.clear();
  });
  return {
    call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResults[M]> {
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
        socket.write(JSON.stringify({ kind: 'subscribe', events: [event] }) + '\n');
      }
      set.add(listener as (data: unknown) => void);
      return () => set.delete(listener as (data: unknown) => void);
    },
    close: () => socket.end(),
  };
}
