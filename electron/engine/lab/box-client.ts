// The API spoken over any byte stream to one box's daemon: a unix socket, a socket ssh forwards,
// or ssh's stdin/stdout to `gpushare relay --stdio` there. JSON lines both ways, as on the socket.
import type { Readable, Writable } from 'node:stream';
import { createMessageClient } from '../../../shared/api-client.js';
import type { ApiEvent, GpushareApi } from '../../../shared/api.js';
import { readLines } from '../server/read-lines.js';

/** A line longer than this from a box is not one message: the link is dropped (a snapshot is at most ~1 MB). */
export const MAX_BOX_LINE = 64 * 1024 * 1024;

export interface BoxClient extends GpushareApi {
  /** Ask the box to push these events on this link (on() asks for its own). */
  subscribe(events: readonly ApiEvent[]): void;
  close(): void;
}

/**
 * A client over `input`/`output`. `lost(reason)` is called once when the stream ends or breaks, or the
 * box sends something that is not the protocol; every request still waiting fails with the reason.
 */
export function streamClient(input: Readable, output: Writable, lost: (reason: string) => void, close: () => void): BoxClient {
  let gone = false;
  const end = (reason: string): void => {
    if (gone) return;
    gone = true;
    messages.failPending(reason);
    lost(reason);
  };
  // the box sends snapshots as deltas after the first whole one; listeners hear each whole (a box too old to know sends them whole)
  const messages = createMessageClient(
    (message) => {
      if (gone) throw new Error('the link is closed');
      output.write(JSON.stringify(message) + '\n');
    },
    { snapshotDeltas: true },
  );
  const lines = readLines(input, (line) => {
    if (!line.trim() || gone) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      end(`sent a line that is not JSON (${JSON.stringify(line.slice(0, 80))})`);
      close();
      return;
    }
    messages.receive(message);
  });
  input.on('data', () => {
    if (lines.pending() > MAX_BOX_LINE) {
      end(`sent a line over ${MAX_BOX_LINE} bytes`);
      close();
    }
  });
  input.on('error', (error: NodeJS.ErrnoException) => end(streamProblem(error)));
  output.on('error', (error: NodeJS.ErrnoException) => end(streamProblem(error)));
  input.on('close', () => end('the connection closed'));
  input.on('end', () => end('the connection closed'));
  const subscribed = new Set<ApiEvent>();
  const subscribe = (events: readonly ApiEvent[]): void => {
    const fresh = events.filter((e) => !subscribed.has(e));
    for (const e of fresh) subscribed.add(e);
    if (fresh.length && !gone) output.write(JSON.stringify({ kind: 'subscribe', events: fresh, ...(fresh.includes('snapshot') ? { snapshotDeltas: true } : {}) }) + '\n');
  };
  return {
    call: messages.api.call,
    // a listener asks the box for its event, as the CLI's own engine client does
    on(event, listener) {
      const off = messages.api.on(event, listener);
      subscribe([event]);
      return off;
    },
    subscribe,
    close() {
      end('closed');
      close();
    },
  };
}

function streamProblem(error: NodeJS.ErrnoException): string {
  if (error.code === 'ECONNRESET') return 'the connection was reset';
  if (error.code === 'EPIPE') return 'the connection broke';
  return error.message;
}
