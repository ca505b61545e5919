// What a console window may send, wherever its messages are relayed (electron/main's relays to this box's
// engine, the lab hub's process): a request or a subscription, rebuilt from their fields so nothing else rides along.
import { API_EVENTS, type ApiEvent } from './api.js';

/** Requests a window may make before its connection is open; past this they are refused. */
export const QUEUE_LIMIT = 1000;

export const isRequest = (message: object): message is { kind: 'request'; id: number } => (message as { kind?: unknown }).kind === 'request';

/** The two messages a window may send, rebuilt from their fields so nothing else rides along. */
export function relayable(message: unknown): object | null {
  const m = message as { kind?: unknown; id?: unknown; method?: unknown; params?: unknown; events?: unknown; snapshotDeltas?: unknown } | null;
  if (m?.kind === 'request' && typeof m.id === 'number' && Number.isSafeInteger(m.id) && m.id >= 0 && typeof m.method === 'string') {
    return { kind: 'request', id: m.id, method: m.method, params: m.params };
  }
  if (m?.kind === 'subscribe' && Array.isArray(m.events)) {
    const events = m.events.filter((e): e is ApiEvent => API_EVENTS.includes(e as ApiEvent));
    return events.length > 0 ? { kind: 'subscribe', events, ...(m.snapshotDeltas === true ? { snapshotDeltas: true } : {}) } : null;
  }
  return null;
}
