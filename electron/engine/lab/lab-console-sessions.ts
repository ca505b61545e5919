// The console host's sessions in lab mode (`gpushare start --lab`). A WebSocket naming a box
// (`?box=NAME`) gets that box's console: every request and subscription goes to its daemon over the
// hub's link, as the person (so every right, and what they may see, is that box's). One naming none
// gets the Lab view's: the `lab` event (built once for every such session, at most every
// LAB_UPDATE_MS however many boxes changed) and the `lab.where` request.
import { API_EVENTS, type ApiEvent } from '../../../shared/api.js';
import { describeBoxState } from '../../../shared/lab.js';
import { whereCanIRun } from '../../../shared/lab-where.js';
import { BOX_PARAM, LAB_EVENT, LAB_WHERE, labUpdateOf, labWhereSchema, type LabConsoleRow, type LabConsoleState, type LabConsoleUpdate } from '../../../shared/lab-console.js';
import { toErrorBody } from '../api/api-error.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { Line } from '../server/outbox.js';
import { sharedSnapshotDelta, wireLine, type Outgoing, type Session } from '../server/session.js';
import type { SessionOpener } from '../server/web-server.js';
import { LabConsoleView } from './lab-console-view.js';
import type { LabHub } from './lab-hub.js';

/** The Lab view is sent at most this often: ten boxes changing in one second cost one update each 100 ms, not ten. */
export const LAB_UPDATE_MS = 100;

type Send = (json: string) => void;

export interface LabConsoleSessions extends SessionOpener {
  /** Stop the Lab view's timer (the hub is closed by its owner). */
  close(): void;
}

export function labConsoleSessions(hub: LabHub): LabConsoleSessions {
  const feed = labFeed(hub);
  return {
    open(send, ended, query) {
      const box = query.get(BOX_PARAM);
      return box === null ? labSession(hub, feed, send) : boxSession(hub, box, send, ended);
    },
    close: () => feed.close(),
  };
}

const eventLine = (update: LabConsoleUpdate): string => JSON.stringify({ kind: 'event', event: LAB_EVENT, data: update });

/**
 * The `lab` event, rebuilt after the hub changes (coalesced) and shared by every Lab view open: a Lab
 * view that opens gets the whole lab, then every update the others get (the rows that changed).
 */
function labFeed(hub: LabHub): { listen(send: Send): () => void; close(): void } {
  const listeners = new Set<Send>();
  let state: LabConsoleState | null = null;
  let timer: NodeJS.Timeout | null = null;
  let lastBuilt = 0;
  let offHub: (() => void) | null = null;
  const view = new LabConsoleView();
  const rowsOf = (s: LabConsoleState): Map<string, LabConsoleRow> => new Map(s.view.boxes.map((row) => [row.name, row]));
  /** The lab now; the update line from the state before, for those who had it. */
  const build = (): string | null => {
    const before = state;
    state = view.update(hub.snapshot());
    lastBuilt = Date.now();
    return before === null ? null : eventLine(labUpdateOf(state, rowsOf(before)));
  };
  const publish = (): void => {
    timer = null;
    const line = build();
    for (const send of listeners) send(line ?? eventLine(labUpdateOf(state!, null)));
  };
  const changed = (): void => {
    if (timer) return;
    timer = setTimeout(publish, Math.max(0, lastBuilt + LAB_UPDATE_MS - Date.now()));
  };
  return {
    listen(send) {
      if (listeners.size === 0) offHub = hub.onUpdate(changed); // no Lab view open: nothing is built
      if (timer) clearTimeout(timer);
      if (timer || state === null) publish(); // those open have the lab as it was: they get this change before the newcomer's whole lab
      listeners.add(send);
      send(eventLine(labUpdateOf(state!, null)));
      return () => {
        listeners.delete(send);
        if (listeners.size > 0) return;
        offHub?.();
        offHub = null;
        if (timer) clearTimeout(timer);
        timer = null;
        state = null; // built whole again when a Lab view opens
      };
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = null;
      offHub?.();
      listeners.clear();
    },
  };
}

const response = (id: number, outcome: { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } }): string => JSON.stringify({ kind: 'response', id, ...outcome });

/** A message's request id and method, or the refusal to send back. */
function requestOf(message: unknown): { id: number; method: string; params: unknown } | { refusal: string } {
  const m = message as { kind?: unknown; id?: unknown; method?: unknown; params?: unknown } | null;
  const id = typeof m?.id === 'number' ? m.id : -1;
  if (m?.kind !== 'request' || id < 0) return { refusal: response(id, { ok: false, error: { code: 'invalid-request', message: 'Expected {kind:"request", id, method, params}.' } }) };
  if (typeof m.method !== 'string') return { refusal: response(id, { ok: false, error: { code: 'invalid-request', message: `A request's method must be a string, got ${m.method === null ? 'null' : typeof m.method}.` } }) };
  return { id, method: m.method, params: m.params };
}

function labSession(hub: LabHub, feed: ReturnType<typeof labFeed>, send: Send): Session {
  let closed = false;
  const stop = feed.listen((line) => !closed && send(line));
  return {
    receive(message) {
      if (closed || (message as { kind?: unknown })?.kind === 'subscribe') return; // it has the lab event from the start
      const request = requestOf(message);
      if ('refusal' in request) return send(request.refusal);
      if (request.method !== LAB_WHERE) {
        return send(response(request.id, { ok: false, error: { code: 'unsupported', message: `${request.method} is a box's command: open that box from the Lab view (its console sends it to its daemon).` } }));
      }
      try {
        send(response(request.id, { ok: true, result: whereCanIRun(hub.snapshot(), labWhereSchema.parse(request.params, 'params')) }));
      } catch (error) {
        send(response(request.id, { ok: false, error: toErrorBody(error) }));
      }
    },
    close() {
      closed = true;
      stop();
    },
  };
}

/** One box's console, relayed to its daemon through the hub's link; ends when that link does. */
function boxSession(hub: LabHub, name: string, send: (line: Line) => void, ended: (why: string) => void): Session {
  const client = hub.client(name);
  const known = hub.snapshot().boxes.find((b) => b.name === name);
  if (!client) {
    const why = known ? `${name} is not connected: ${describeBoxState(known, Date.now())}` : `No box is named ${JSON.stringify(name.slice(0, 64))} in the lab list.`;
    setImmediate(() => ended(why));
    return { receive: () => undefined, close: () => undefined };
  }
  let closed = false;
  const offs = new Map<ApiEvent, () => void>();
  const close = (): void => {
    closed = true;
    offHub();
    for (const off of offs.values()) off();
    offs.clear();
  };
  const offHub = hub.onUpdate((lab) => {
    if (closed || hub.client(name) === client) return;
    const box = lab.boxes.find((b) => b.name === name);
    close();
    ended(box ? `${name}: ${describeBoxState(box, Date.now())}` : `${name} left the lab list.`);
  });
  let wantsDeltas = false;
  let lastSnapshot: Snapshot | null = null;
  // as the engine's own sessions do (session.ts): a console that takes deltas gets each snapshot as its delta from the
  // one it was sent before, made once for every console open on this box, since they all hear the box client's objects
  const snapshotMessage = (snapshot: Snapshot): Outgoing => {
    const delta = wantsDeltas && lastSnapshot ? sharedSnapshotDelta(lastSnapshot, snapshot) : null;
    lastSnapshot = snapshot;
    return delta ? { kind: 'event', event: 'snapshot.delta', data: delta } : { kind: 'event', event: 'snapshot', data: snapshot };
  };
  const subscribe = (events: readonly unknown[]): void => {
    for (const event of events) {
      // deltas are a form of the snapshot event (snapshotDeltas), never an event of their own
      if (!API_EVENTS.includes(event as ApiEvent) || event === 'snapshot.delta' || offs.has(event as ApiEvent)) continue;
      const e = event as ApiEvent;
      const message = (data: unknown): Outgoing => (e === 'snapshot' ? snapshotMessage(data as Snapshot) : { kind: 'event', event: e, data });
      // wireLine: one line's bytes for every console on this box, not one JSON text per console
      offs.set(e, client.on(e, (data) => !closed && send(wireLine(message(data)))));
    }
  };
  subscribe(API_EVENTS); // as a web session of the engine itself: every event from the start
  return {
    receive(message) {
      if (closed) return;
      const m = message as { kind?: unknown; events?: unknown; snapshotDeltas?: unknown };
      if (m?.kind === 'subscribe' && Array.isArray(m.events)) {
        if (m.snapshotDeltas === true) wantsDeltas = true;
        return subscribe(m.events);
      }
      const request = requestOf(message);
      if ('refusal' in request) return send(request.refusal);
      // the box's daemon checks the method, its params and the person's rights, as for any client of its socket
      (client.call as (method: string, params: unknown) => Promise<unknown>)(request.method, request.params).then(
        (result) => !closed && send(response(request.id, { ok: true, result: result ?? null })),
        (error: unknown) => !closed && send(response(request.id, { ok: false, error: boxError(error) })),
      );
    },
    close,
  };
}

/** A box's refusal as it said it (its code and sentence); a link that failed meanwhile, as unavailable. */
function boxError(error: unknown): { code: string; message: string } {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && typeof e.message === 'string') return { code: e.code, message: e.message };
  return { code: 'unavailable', message: error instanceof Error ? error.message : String(error) };
}
