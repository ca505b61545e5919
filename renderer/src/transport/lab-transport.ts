// The Lab view's door to the console host running the hub: the WebSocket at /api?lab, with the
// page's token. One event comes (the lab as the view shows it) and one request goes (lab.where).
// Reconnects with backoff, as the box console's transport does.
import { ApiCallError } from '../../../shared/api-client.js';
import { LAB_EVENT, LAB_PARAM, LAB_WHERE, type LabConsoleUpdate, type LabWhereParams, type LabWhereResult } from '../../../shared/lab-console.js';
import type { ConnectionState } from './transport.js';
import { TOKEN_MISSING } from './websocket-transport.js';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;

export interface LabTransport {
  where(params: LabWhereParams): Promise<LabWhereResult>;
  onUpdate(listener: (update: LabConsoleUpdate) => void): () => void;
  /** Called at once with the current state, then on every change. */
  onConnection(listener: (state: ConnectionState, detail: string | null) => void): () => void;
}

export function labTransport(location: Location): LabTransport {
  const token = new URLSearchParams(location.search).get('token');
  const updates = new Set<(update: LabConsoleUpdate) => void>();
  const connections = new Set<(state: ConnectionState, detail: string | null) => void>();
  const pending = new Map<number, { resolve: (value: LabWhereResult) => void; reject: (error: Error) => void }>();
  let state: ConnectionState = 'connecting';
  let detail: string | null = null;
  let socket: WebSocket | null = null;
  let retryMs = RETRY_MIN_MS;
  let nextId = 1;

  const setState = (next: ConnectionState, why: string | null): void => {
    state = next;
    detail = why;
    for (const listener of connections) listener(state, detail);
  };
  const failPending = (why: string): void => {
    for (const waiter of pending.values()) waiter.reject(new ApiCallError('unavailable', why));
    pending.clear();
  };
  const receive = (message: { kind?: string; event?: string; data?: unknown; id?: number; ok?: boolean; result?: unknown; error?: { code: string; message: string } }): void => {
    if (message.kind === 'event' && message.event === LAB_EVENT) {
      for (const listener of updates) listener(message.data as LabConsoleUpdate);
    } else if (message.kind === 'response' && typeof message.id === 'number') {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiter?.resolve(message.result as LabWhereResult);
      else waiter?.reject(new ApiCallError(message.error?.code ?? 'internal', message.error?.message ?? 'The lab console refused the request.'));
    }
  };
  const connect = (): void => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api?token=${encodeURIComponent(token ?? '')}&${LAB_PARAM}=1`);
    socket = ws;
    ws.onopen = () => {
      retryMs = RETRY_MIN_MS;
      setState('open', null);
    };
    ws.onmessage = (event) => {
      try {
        receive(JSON.parse(String(event.data)));
      } catch {
        // a message we cannot parse is dropped; the next update follows
      }
    };
    ws.onclose = () => {
      failPending('The connection to the lab console was lost.');
      if (socket !== ws) return;
      setState('closed', `The lab console does not answer; retrying in ${Math.round(retryMs / 100) / 10} s.`);
      setTimeout(connect, retryMs);
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    };
  };
  if (token) connect();
  else setState('closed', TOKEN_MISSING);

  return {
    where(params) {
      return new Promise((resolve, reject) => {
        if (!socket || socket.readyState !== WebSocket.OPEN) return reject(new ApiCallError('unavailable', 'The lab console is not connected.'));
        const id = nextId++;
        pending.set(id, { resolve, reject });
        socket.send(JSON.stringify({ kind: 'request', id, method: LAB_WHERE, params }));
      });
    },
    onUpdate(listener) {
      updates.add(listener);
      return () => updates.delete(listener);
    },
    onConnection(listener) {
      connections.add(listener);
      listener(state, detail);
      return () => connections.delete(listener);
    },
  };
}
