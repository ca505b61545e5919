// The browser console: the WebSocket at /api, authenticated by the token in the page URL.
// Reconnects with backoff; requests made while disconnected fail with a readable reason.
import { API_EVENTS } from '../../../shared/api.js';
import { createMessageClient } from '../../../shared/api-client.js';
import { BOX_PARAM } from '../../../shared/lab-console.js';
import type { ConnectionState, ConsoleTransport } from './transport.js';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;
const GET_THE_URL = 'Open the URL that `gpushare start` (or `gpushare console` on a lab box) printed; `gpushare status` shows it again.';
export const TOKEN_MISSING = `This page has no access token. ${GET_THE_URL}`;
export const TOKEN_WRONG = `The engine refused this page's access token: it is wrong, or from an engine that has restarted since. ${GET_THE_URL}`;

/** Why a WebSocket that never opened was refused: the web server says whether the token is its own (the browser hides the 403). */
async function tokenRefused(location: Location, token: string): Promise<boolean> {
  try {
    const answer = await fetch(`${location.protocol}//${location.host}/api?token=${encodeURIComponent(token)}`, { cache: 'no-store' });
    return answer.status === 401;
  } catch {
    return false; // nothing answers: the engine is away, not the token wrong
  }
}

export function websocketTransport(location: Location): ConsoleTransport {
  const token = new URLSearchParams(location.search).get('token');
  // a box of the lab (gpushare start --lab): the host passes this console's session to that box's daemon
  const box = new URLSearchParams(location.search).get(BOX_PARAM);
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

  // snapshots come as deltas after the first whole one (the client rebuilds each whole for its listeners)
  const client = createMessageClient(
    (message) => {
      if (!socket || socket.readyState !== WebSocket.OPEN) throw new Error('not connected');
      socket.send(JSON.stringify(message));
    },
    { snapshotDeltas: true },
  );

  const connect = (): void => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api?token=${encodeURIComponent(token ?? '')}${box === null ? '' : `&${BOX_PARAM}=${encodeURIComponent(box)}`}`);
    socket = ws;
    ws.onopen = () => {
      retryMs = RETRY_MIN_MS;
      ws.send(JSON.stringify({ kind: 'subscribe', events: API_EVENTS, snapshotDeltas: true }));
      setState('open', null);
    };
    ws.onmessage = (event) => {
      try {
        client.receive(JSON.parse(String(event.data)));
      } catch {
        // a message we cannot parse is dropped; the next snapshot follows in a second
      }
    };
    let opened = false;
    ws.addEventListener('open', () => (opened = true));
    ws.onclose = async (event) => {
      client.failPending('The connection to the gpushare engine was lost.');
      if (socket !== ws) return;
      // a wrong token stays wrong: say so once instead of retrying for ever
      if (!opened && (await tokenRefused(location, token ?? ''))) return setState('closed', TOKEN_WRONG);
      // a lab box's console: the host says why (the box is down since …, its last error)
      const why = box !== null && event.reason ? `${event.reason}` : 'The engine does not answer';
      setState('closed', `${why.replace(/\.$/, '')}; retrying in ${Math.round(retryMs / 100) / 10} s.`);
      setTimeout(connect, retryMs);
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    };
  };

  if (token) connect();
  else setState('closed', TOKEN_MISSING);

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
