// Test clients that send anything at all to an engine (unix socket lines, WebSocket frames) and tell what came back:
// each exchange is the payload then a ping (session.whoami): refusals before dispatch come before the ping's answer,
// and a request with an id is answered by that id, maybe after the ping (dispatch is asynchronous): both are awaited.
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { readLines } from '../read-lines.js';

export interface Reply {
  kind?: unknown;
  id?: unknown;
  ok?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

export interface Exchange {
  /** The responses the payload got (events left out); a line that is not JSON is kept as { kind: 'not-json' }. */
  replies: Reply[];
  /** How the connection ended instead of answering the ping, or null when the ping was answered. */
  closed: { code: number | null; reason: string } | null;
}

export interface WireProbe {
  exchange(payload: string | Buffer): Promise<Exchange>;
  close(): void;
}

const PING_BASE = 2_000_000_000;

/** The id a response to payload will carry when it is a request with one, else null. */
function requestId(payload: string | Buffer): number | null {
  try {
    const message = JSON.parse(payload.toString()) as { kind?: unknown; id?: unknown };
    return message?.kind === 'request' && typeof message.id === 'number' && message.id >= 0 ? message.id : null;
  } catch {
    return null;
  }
}

interface Connection {
  send(payload: string | Buffer): void;
  close(): void;
}

/** Shared by both probes: one connection at a time, opened again after the engine closed the last one. */
function probe(open: (onMessage: (text: string) => void, onClose: (code: number | null, reason: string) => void) => Promise<Connection>): WireProbe {
  let connection: Connection | null = null;
  let pings = 0;
  let waiting: { ping: number; pinged: boolean; id: number | null; replies: Reply[]; resolve: (exchange: Exchange) => void } | null = null;
  const onMessage = (text: string): void => {
    if (!waiting || !text.trim()) return;
    let reply: Reply;
    try {
      reply = JSON.parse(text) as Reply;
    } catch {
      reply = { kind: 'not-json', error: { message: text.slice(0, 200) } };
    }
    if (reply.kind === 'event') return;
    if (reply.kind === 'response' && reply.id === waiting.ping) waiting.pinged = true;
    else {
      waiting.replies.push(reply);
      if (reply.id === waiting.id) waiting.id = null;
    }
    if (waiting.pinged && waiting.id === null) {
      const done = waiting;
      waiting = null;
      done.resolve({ replies: done.replies, closed: null });
    }
  };
  const onClose = (code: number | null, reason: string): void => {
    connection = null;
    const done = waiting;
    waiting = null;
    done?.resolve({ replies: done.replies, closed: { code, reason } });
  };
  return {
    async exchange(payload) {
      connection ??= await open(onMessage, onClose);
      const ping = PING_BASE + pings++;
      const conn = connection;
      return new Promise<Exchange>((resolve) => {
        waiting = { ping, pinged: false, id: requestId(payload), replies: [], resolve };
        conn.send(payload);
        conn.send(JSON.stringify({ kind: 'request', id: ping, method: 'session.whoami', params: {} }));
      });
    },
    close: () => connection?.close(),
  };
}

/** Lines on the engine's unix socket; a payload without its newline gets one. */
export function socketProbe(socketPath: string): WireProbe {
  return probe(
    (onMessage, onClose) =>
      new Promise((resolve, reject) => {
        const socket: Socket = connect(socketPath);
        readLines(socket, onMessage);
        socket.on('error', () => undefined); // the engine closed it mid-write: 'close' says so
        socket.once('close', () => onClose(null, 'the engine closed the socket'));
        socket.once('connect', () =>
          resolve({
            send: (payload) => {
              socket.write(payload);
              const last = typeof payload === 'string' ? payload.at(-1) : String.fromCharCode(payload.at(-1) ?? 0);
              if (last !== '\n') socket.write('\n');
            },
            close: () => socket.destroy(),
          }),
        );
        socket.once('error', reject);
      }),
  );
}

/** Frames on the console's WebSocket, as its own page (Origin); a Buffer goes as a text frame, whatever its bytes. */
export function webSocketProbe(port: number, token: string): WireProbe {
  return probe(
    (onMessage, onClose) =>
      new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api?token=${token}`, { origin: `http://127.0.0.1:${port}` });
        ws.on('message', (data) => onMessage(data.toString()));
        ws.on('error', () => undefined); // the engine closed it mid-write: 'close' says so
        ws.once('close', (code, reason) => onClose(code, reason.toString()));
        ws.once('open', () =>
          resolve({
            send: (payload) => {
              if (ws.readyState === ws.OPEN) ws.send(payload, { binary: false });
            },
            close: () => ws.terminate(),
          }),
        );
        ws.once('unexpected-response', (_req, res) => reject(new Error(`the console refused the WebSocket: HTTP ${res.statusCode}`)));
        ws.once('error', reject);
      }),
  );
}
