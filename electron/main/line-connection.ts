// One connection to an engine's unix socket, message by message (newline-delimited JSON, the
// socket's wire format), for the main process to relay without knowing the API.
import { connect, type Socket } from 'node:net';
import { readLines } from '../engine/server/read-lines.js';

/** Longer than any line the engine sends (a snapshot of 8 GPUs × 64 processes is ~100 KB). */
const MAX_LINE = 16 * 1024 * 1024;

export interface LineConnection {
  send(message: object): void;
  onMessage(listener: (message: unknown) => void): () => void;
  /** Called once when the connection ends, from either side. */
  onClose(listener: () => void): () => void;
  readonly closed: boolean;
  close(): void;
}

/** Connect to `path`; rejects with the socket's own error (ENOENT, ECONNREFUSED, EACCES). */
export function openLineConnection(path: string): Promise<LineConnection> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(path);
    const fail = (error: Error): void => reject(error);
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.off('error', fail);
      resolve(wrap(socket));
    });
  });
}

function wrap(socket: Socket): LineConnection {
  const messageListeners = new Set<(message: unknown) => void>();
  const closeListeners = new Set<() => void>();
  let closed = false;
  const lines = readLines(socket, (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not one of the engine's lines: nothing a window could use
    }
    for (const listener of messageListeners) listener(message);
  });
  socket.on('data', () => lines.pending() > MAX_LINE && socket.destroy()); // a peer that never ends its line
  socket.on('error', () => undefined); // 'close' follows and says it
  socket.on('close', () => {
    closed = true;
    for (const listener of [...closeListeners]) listener();
    closeListeners.clear();
    messageListeners.clear();
  });
  return {
    send(message) {
      if (!closed) socket.write(JSON.stringify(message) + '\n');
    },
    onMessage(listener) {
      messageListeners.add(listener);
      return () => messageListeners.delete(listener);
    },
    onClose(listener) {
      if (closed) listener();
      else closeListeners.add(listener);
      return () => closeListeners.delete(listener);
    },
    get closed() {
      return closed;
    },
    close() {
      socket.destroy(); // 'close' follows: the listeners hear it as from the other side
    },
  };
}
