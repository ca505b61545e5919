// One client connection, whatever the transport: requests in, responses and events out.
import { API_EVENTS, type ApiEvent, type EventMessage, type ResponseMessage } from '../../../shared/api.js';
import type { Alert, JobView } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import { snapshotDelta, type SnapshotDelta } from '../../../shared/snapshot-delta.js';
import { toErrorBody } from '../api/api-error.js';
import type { Caller } from '../api/dispatcher.js';
import type { Engine } from '../engine.js';

export type Outgoing = ResponseMessage | EventMessage;

/** The longest request a client may send (one line on the socket, one WebSocket message): a job's environment and argv fit. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** Deeper than any request's params: past it, stringify and every recursive walk would overflow the stack. */
export const MAX_REQUEST_DEPTH = 64;

/** A message as the client sent it, or the response refusing it (by its id where it has one). */
export type ParsedMessage = { ok: true; message: unknown } | { ok: false; refusal: ResponseMessage };

/** One message's text (a line, a WebSocket frame), parsed, or refused: not JSON, or nested past MAX_REQUEST_DEPTH. */
export function parseMessage(text: string, what: 'line' | 'message'): ParsedMessage {
  const refuse = (id: number, message: string): ParsedMessage => ({ ok: false, refusal: { kind: 'response', id, ok: false, error: { code: 'invalid-request', message } } });
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return refuse(-1, what === 'line' ? 'Each line must be one JSON message.' : 'Each message must be JSON.');
  }
  if (nestingDepth(text) > MAX_REQUEST_DEPTH) {
    const id = (message as { id?: unknown })?.id;
    return refuse(typeof id === 'number' ? id : -1, `A message nested deeper than ${MAX_REQUEST_DEPTH} levels is not a request.`);
  }
  return { ok: true, message };
}

/** How deep arrays and objects nest in JSON text, counted without recursion. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

const eventLines = new Map<string, WeakMap<object, Buffer>>();

/**
 * One message as a JSON line in UTF-8. An event's bytes are built once however many clients it goes to
 * (a snapshot is large): the same Buffer is written to each, so neither JSON nor UTF-8 is redone per client.
 */
export function wireLine(message: Outgoing): Buffer {
  if (message.kind !== 'event' || typeof message.data !== 'object' || message.data === null) return Buffer.from(JSON.stringify(message) + '\n');
  let lines = eventLines.get(message.event);
  if (!lines) eventLines.set(message.event, (lines = new WeakMap()));
  let line = lines.get(message.data);
  if (line === undefined) lines.set(message.data, (line = Buffer.from(JSON.stringify(message) + '\n')));
  return line;
}

// Every published snapshot's delta from the one before, made once: each delta client was sent that one, so all share
// the object, and wireLine its bytes. A snapshot is the same for every viewer (need-to-know withholds jobs and alerts only).
// The base is held weakly: held strongly, each snapshot would keep every one before it alive.
const deltas = new WeakMap<Snapshot, { base: WeakRef<Snapshot>; delta: SnapshotDelta | null }>();

/** next's delta from base (null: send it whole), shared by every session that sent base. */
export function sharedSnapshotDelta(base: Snapshot, next: Snapshot): SnapshotDelta | null {
  const made = deltas.get(next);
  if (made?.base.deref() === base) return made.delta;
  const delta = snapshotDelta(base, next);
  deltas.set(next, { base: new WeakRef(base), delta });
  return delta;
}

export interface Session {
  /** Handle one parsed message from the client. */
  receive(message: unknown): void;
  close(): void;
}

export function openSession(engine: Engine, caller: Caller, send: (message: Outgoing) => void, initialEvents: readonly ApiEvent[] = []): Session {
  const unsubscribers = new Map<ApiEvent, () => void>();
  let closed = false;
  let wantsDeltas = false;
  let lastSnapshot: Snapshot | null = null;
  // a delta client gets each snapshot as its delta from the one it was sent before; the first, whole
  const snapshotMessage = (snapshot: Snapshot): EventMessage => {
    const delta = wantsDeltas && lastSnapshot ? sharedSnapshotDelta(lastSnapshot, snapshot) : null;
    lastSnapshot = snapshot;
    return delta ? { kind: 'event', event: 'snapshot.delta', data: delta } : { kind: 'event', event: 'snapshot', data: snapshot };
  };
  const subscribe = (events: readonly ApiEvent[]): void => {
    for (const event of events) {
      // deltas are a form of the snapshot event (snapshotDeltas), never an event of their own
      if (!API_EVENTS.includes(event) || event === 'snapshot.delta' || unsubscribers.has(event)) continue;
      if (event === 'snapshot') {
        unsubscribers.set(event, engine.events.on('snapshot', (data) => !closed && send(snapshotMessage(data))));
        continue;
      }
      // another user's jobs and alerts go out as this caller may see them (api/need-to-know.ts)
      const seen = (data: unknown): unknown => (event === 'jobs' ? engine.jobsSeenBy(data as JobView[], caller) : event === 'alert' ? engine.alertSeenBy(data as Alert, caller) : data);
      unsubscribers.set(event, engine.events.on(event, (data) => !closed && send({ kind: 'event', event, data: seen(data) })));
    }
  };
  subscribe(initialEvents);
  return {
    receive(message) {
      if (closed) return;
      const m = message as { kind?: unknown; id?: unknown; method?: unknown; params?: unknown; events?: unknown; snapshotDeltas?: unknown };
      if (m?.kind === 'subscribe' && Array.isArray(m.events)) {
        if (m.snapshotDeltas === true) wantsDeltas = true;
        subscribe(m.events as ApiEvent[]);
        return;
      }
      const id = typeof m?.id === 'number' ? m.id : -1;
      if (m?.kind !== 'request' || id < 0) {
        send({ kind: 'response', id, ok: false, error: { code: 'invalid-request', message: 'Expected {kind:"request", id, method, params}.' } });
        return;
      }
      if (typeof m.method !== 'string') {
        send({ kind: 'response', id, ok: false, error: { code: 'invalid-request', message: `A request's method must be a string, got ${m.method === null ? 'null' : typeof m.method}.` } });
        return;
      }
      engine.dispatcher.dispatch(m.method, m.params, caller).then(
        (result) => !closed && send({ kind: 'response', id, ok: true, result: result ?? null }),
        (error: unknown) => !closed && send({ kind: 'response', id, ok: false, error: toErrorBody(error) }),
      );
    },
    close() {
      closed = true;
      for (const off of unsubscribers.values()) off();
      unsubscribers.clear();
    },
  };
}
