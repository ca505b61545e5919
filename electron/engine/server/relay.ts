// The per-user console proxy's sessions: each browser client gets its own connection to an
// engine's unix socket, made by this process, so the engine knows the client as this process's
// user (the kernel's word, SO_PEERCRED). One WebSocket text frame is one JSON line, both ways.
import { connect } from 'node:net';
import { API_EVENTS } from '../../../shared/api.js';
import { readLines } from './read-lines.js';
import type { SessionOpener } from './web-server.js';

// A line longer than this from the engine is not one message: the connection is dropped.
const MAX_LINE = 64 * 1024 * 1024;

/** Sessions relayed to the engine listening on socketPath; a connection that fails or drops ends its client. */
export function relayToSocket(socketPath: string): SessionOpener {
  return {
    open(send, ended) {
      const socket = connect(socketPath);
      let closedByClient = false;
      let failure: string | null = null;
      // The engine's own web sessions start subscribed to every event; a relayed one asks the same.
      socket.write(JSON.stringify({ kind: 'subscribe', events: API_EVENTS }) + '\n');
      const lines = readLines(socket, (line) => line.trim() && send(line));
      socket.on('data', () => {
        if (lines.pending() > MAX_LINE) {
          failure = `the engine on ${socketPath} sent a line over ${MAX_LINE} bytes`;
          socket.destroy();
        }
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        failure = `${error.code ?? error.message} on ${socketPath}`;
      });
      socket.on('close', () => {
        if (closedByClient) return;
        ended(failure ? `The gpushare engine went away (${failure}).` : `The gpushare engine on ${socketPath} closed the connection.`);
      });
      return {
        // Re-serialized, so one frame is one line whatever whitespace the client sent.
        receive(message) {
          if (!closedByClient && !socket.destroyed) socket.write(JSON.stringify(message) + '\n');
        },
        close() {
          closedByClient = true;
          socket.destroy();
        },
      };
    },
  };
}
