// The browser console: the WebSocket at /api, authenticated by the token in the page URL.
// Reconnects with backoff; requests made while disconnected fail with a readable reason.
import { API_EVENTS } from '../../../shared/api.js';
import { createMessageClient } from '../../../shared/api-client.js';
import type { ConnectionState, ConsoleTransport } from './transport.js';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;

export function websocketTransport(location: Location): ConsoleTransport {
  const token = new URLSearchParams(location.search).get('token');
  const listeners = new Set<(state: ConnectionState, detail: string | null) => void>();
  let state: ConnectionState = 'connecting';
  let detail: string | null = null;
  let socket: WebSocket | null = null;
  let retryMs = RETRY_MIN_MS;

  const setState = (next: ConnectionState, why: string | null): void => {
    state = next;
    detail = why;
    for (const listener of listeners) listener(state, detail);
  };

  const client = createMessageClient((message) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) throw new Error('not connected');
    socket.send(JSON.stringify(message));
  });

  const connect = (): void => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api?token=${encodeURIComponent(token ?? '')}`);
    socket = ws;
    ws.onopen = () => {
      retryMs = RETRY_MIN_MS;
      ws.send(JSON.stringify({ kind: 'subscribe', events: API_EVENTS }));
      setState('open', null);
    };
    ws.onmessage = (event) => {
      try {
        client.receive(JSON.parse(String(event.data)));
      } catch {
        // a message we cannot parse is dropped; the next snapshot follows in a second
      }
    };
    ws.onclose = () => {
      client.failPending('The connection to the gpushare engine was lost.');
      if (socket !== ws) return;
      setState('closed', `The engine does not answer; retrying in ${Math.round(retryMs / 100) / 10} s.`);
      setTimeout(connect, retryMs);
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    };
  };

  if (token) connect();
  else setState('closed', 'Open the console with the URL that `gpushare serve` printed: it carries the access token.');

  return {
    kind: 'browser',
    api: client.api,
    onConnection(listener) {
      listeners.add(listener);
      listener(state, detail);
      return () => listeners.delete(listener);
    },
  };
}
