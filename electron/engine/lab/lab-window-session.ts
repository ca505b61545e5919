// One desktop window's session of the hub, in the hub's process (hub-process.ts): a window showing the Lab
// view (`?lab`) or one box's console (`?box=NAME`) gets the very session `gpushare start --lab` gives a
// WebSocket (lab-console-sessions.ts); its lines go back to the window as they are (JSON text), an answer
// saying which request it answers (so the app can answer what waits should this process end).
import { BOX_PARAM } from '../../../shared/lab-console.js';
import { isRequest, QUEUE_LIMIT, relayable } from '../../../shared/window-message.js';
import type { Line } from '../server/outbox.js';
import type { Session } from '../server/session.js';
import type { LabConsoleSessions } from './lab-console-sessions.js';
import type { LabHub } from './lab-hub.js';

export interface WindowSession {
  /** A message from the window (its relay in the app checked it already; checked again here). */
  receive(message: unknown): void;
  close(): void;
}

const lineText = (line: Line): string => (typeof line === 'string' ? line : line.toString('utf8')).trimEnd();
// wireLine and the lab event write kind first: an event's line goes on unparsed, a response is read for its id
const EVENT_HEAD = '{"kind":"event"';

/**
 * A window's messages go into its session as they are, the session's lines go back. A request still waiting
 * when the session ends (its box went down) is answered with why, so the window never waits on a box that is
 * gone; once the box is connected again, a new session opens (the browser's console reconnects the same way).
 */
export function windowSession(hub: LabHub, sessions: LabConsoleSessions, query: URLSearchParams, toWindow: (line: string, answers?: number) => void): WindowSession {
  const box = query.get(BOX_PARAM);
  let session: Session | null = null;
  let queue: object[] = [];
  /** The window's subscriptions (each once), given again to a session opened after its box came back. */
  const subscriptions = new Map<string, object>();
  const inFlight = new Set<number>();
  /** Why the window has no session now (its box is down); null while one is open or opening. */
  let ended: string | null = null;
  let closedByUs = false;
  let stopWaiting: (() => void) | null = null;

  const send = (message: object): void => toWindow(JSON.stringify(message));
  const refuse = (id: number, why: string): void => toWindow(JSON.stringify({ kind: 'response', id, ok: false, error: { code: 'unavailable', message: why } }), id);
  const end = (why: string): void => {
    if (ended !== null) return;
    ended = why;
    session = null;
    for (const id of inFlight) refuse(id, why);
    inFlight.clear();
    queue = [];
    if (closedByUs) return;
    send({ kind: 'connection', state: 'closed', detail: box === null ? why : `${why.replace(/\.$/, '')}; this console reconnects when ${box} is back.` });
    if (box !== null && stateOf(box) !== undefined) openWhen(connected); // a box no longer listed has nothing to wait for
  };
  const fromSession = (line: Line): void => {
    if (ended !== null || closedByUs) return;
    const text = lineText(line);
    if (text.startsWith(EVENT_HEAD)) return toWindow(text);
    const message = JSON.parse(text) as { kind?: unknown; id?: unknown };
    if (message.kind !== 'response') return toWindow(text);
    if (!inFlight.delete(message.id as number)) return; // an answer to no request of this window's
    toWindow(text, message.id as number);
  };
  const open = (): void => {
    ended = null;
    send({ kind: 'connection', state: 'open', detail: null });
    const opened = sessions.open(fromSession, end, query);
    session = opened;
    for (const message of [...subscriptions.values(), ...queue]) opened.receive(message);
    queue = [];
  };
  /** Open a session once `ready` says so (checked on every change of the hub), unless the window closes first. */
  const openWhen = (ready: () => boolean): void => {
    const off = hub.onUpdate(() => {
      if (!ready()) return;
      off();
      stopWaiting = null;
      open();
    });
    stopWaiting = off;
  };
  const stateOf = (name: string) => hub.snapshot().boxes.find((b) => b.name === name)?.connection.state;
  const connected = (): boolean => box !== null && hub.client(box) !== null;

  // a box still on its first try (the hub has just started: its console reloaded, or opened first) is
  // waited for, not refused; if that try fails, the session says how the box stands
  if (box !== null && !connected() && stateOf(box) === 'connecting') openWhen(() => connected() || stateOf(box) !== 'connecting');
  else open();

  return {
    receive(message) {
      // the Lab view's subscription is not relayable (its session sends the lab from the start)
      const checked = relayable(message);
      if (!checked) return;
      if (!isRequest(checked)) subscriptions.set(JSON.stringify(checked), checked);
      if (ended !== null) return isRequest(checked) ? refuse(checked.id, ended) : undefined;
      if (session === null && queue.length >= QUEUE_LIMIT) return isRequest(checked) ? refuse(checked.id, `${box ?? 'The lab'} has not answered yet; try again in a moment.`) : undefined;
      if (isRequest(checked)) inFlight.add(checked.id);
      if (session) session.receive(checked);
      else queue.push(checked);
    },
    close() {
      closedByUs = true;
      stopWaiting?.();
      session?.close();
      end('This window closed its connection.');
    },
  };
}
