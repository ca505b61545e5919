// The desktop app's Lab view. The hub runs here, in the main process, as the person (one link per
// box of the lab list, lab-hub.ts); a window showing the Lab view (`?lab`) or one box's console
// (`?box=NAME`) gets the very session `gpushare start --lab` gives a WebSocket (lab-console-sessions.ts),
// carried over IPC, so every action in a box's console goes to that box's daemon as the person. Any
// other window is this box's console (window-relay.ts, to the engine). The page's own URL decides.
import type { EventMessage, ResponseMessage } from '../../shared/api.js';
import { DESKTOP_LAB_STATUS, type DesktopLabStatus } from '../../shared/bridge.js';
import type { LabBoxSpec } from '../../shared/lab.js';
import { BOX_PARAM, LAB_PARAM } from '../../shared/lab-console.js';
import { labConsoleSessions, type LabConsoleSessions } from '../engine/lab/lab-console-sessions.js';
import type { LabHub } from '../engine/lab/lab-hub.js';
import { noLabBoxes, type LabList } from '../engine/lab/lab-list.js';
import type { Session } from '../engine/server/session.js';
import type { Line } from '../engine/server/outbox.js';
import { isRequest, QUEUE_LIMIT, relayable, type ToWindow, type WindowRelay } from './window-relay.js';

export interface DesktopLabOptions {
  /** The lab list as its files say now (lab-list.ts loadLabList); throws a LabListError naming the file and the mistake. */
  readList(): LabList;
  /** The hub over these boxes, not started (the app's: new LabHub(boxes, { socketDir })). */
  openHub(boxes: LabBoxSpec[]): LabHub;
}

export interface DesktopLab {
  /** For the Lab tab: the lab list's boxes (none: no tab), or why it cannot be read. */
  status(): DesktopLabStatus;
  /** The relay of a window showing the Lab view or a box's console; the hub starts with the first. */
  openRelay(query: URLSearchParams, toWindow: (message: ToWindow) => void): WindowRelay;
  /** Every link to the boxes closed (the app quits). */
  close(): void;
}

/** What of a page's URL decides who serves it: the Lab view, one box of the lab (the hub here), or this box's engine. */
export function servedBy(pageUrl: string): 'lab' | `box:${string}` | 'engine' {
  let query: URLSearchParams;
  try {
    query = new URL(pageUrl).searchParams;
  } catch {
    return 'engine';
  }
  const box = query.get(BOX_PARAM);
  return box !== null ? `box:${box}` : query.has(LAB_PARAM) ? 'lab' : 'engine';
}

/** Does this page show the Lab view or a box of the lab (served by the hub here), not this box's console? */
export const isLabPage = (pageUrl: string): boolean => servedBy(pageUrl) !== 'engine';

/**
 * A window's relay, chosen by its page: the hub's session for the Lab view or a box, else this box's
 * engine (`engineRelay`). The Lab tab's question (DESKTOP_LAB_STATUS) is answered here for any page.
 */
export function openConsoleRelay(pageUrl: string, lab: DesktopLab, engineRelay: () => WindowRelay, toWindow: (message: ToWindow) => void): WindowRelay {
  const relay = isLabPage(pageUrl) ? lab.openRelay(new URL(pageUrl).searchParams, toWindow) : engineRelay();
  return {
    receive(message) {
      const m = message as { kind?: unknown; id?: unknown; method?: unknown } | null;
      if (m?.kind === 'request' && m.method === DESKTOP_LAB_STATUS && typeof m.id === 'number' && Number.isSafeInteger(m.id) && m.id >= 0) {
        return toWindow({ kind: 'response', id: m.id, ok: true, result: lab.status() });
      }
      relay.receive(message);
    },
    close: () => relay.close(),
  };
}

export function desktopLab(options: DesktopLabOptions): DesktopLab {
  let running: { hub: LabHub; sessions: LabConsoleSessions; listed: string } | null = null;
  const relays = new Set<WindowRelay>();

  /** The list's boxes, or the mistake that keeps it from being read (a missing list is no boxes, no mistake). */
  const read = (): { boxes: LabBoxSpec[]; problem: string | null; looked: LabList['looked'] | null } => {
    try {
      const list = options.readList();
      return { boxes: list.boxes, problem: null, looked: list.looked };
    } catch (error) {
      return { boxes: [], problem: error instanceof Error ? error.message : String(error), looked: null };
    }
  };
  const stopHub = (): void => {
    running?.sessions.close();
    running?.hub.close();
    running = null;
  };
  /**
   * The hub over the list as it is now. While a window uses it, it stays as it is; with none (the app's
   * window loading the Lab view: its last page's relay is gone), a list that changed starts it anew.
   */
  const hubOrProblem = (): { hub: LabHub; sessions: LabConsoleSessions } | string => {
    if (running && relays.size > 0) return running;
    const { boxes, problem, looked } = read();
    const listed = JSON.stringify(boxes);
    if (running?.listed === listed) return running;
    stopHub();
    if (problem !== null) return problem;
    if (boxes.length === 0) return noLabBoxes(looked!);
    const hub = options.openHub(boxes);
    hub.start();
    running = { hub, sessions: labConsoleSessions(hub), listed };
    return running;
  };

  return {
    status() {
      // a missing list is no lab: no tab; a list with a mistake shows the tab, whose view says the mistake
      const { boxes, problem } = read();
      return { boxes: boxes.map((b) => b.name), problem };
    },
    openRelay(query, toWindow) {
      const lab = hubOrProblem();
      const relay = typeof lab === 'string' ? refusingRelay(lab, toWindow) : sessionRelay(lab.hub, lab.sessions, query, toWindow);
      relays.add(relay);
      return {
        receive: (message) => relay.receive(message),
        close() {
          relays.delete(relay);
          relay.close();
        },
      };
    },
    close() {
      for (const relay of relays) relay.close();
      relays.clear();
      stopHub();
    },
  };
}

/** No lab to show: the window hears why, and every request is answered with it. */
function refusingRelay(why: string, toWindow: (message: ToWindow) => void): WindowRelay {
  setImmediate(() => toWindow({ kind: 'connection', state: 'closed', detail: why }));
  return {
    receive(message) {
      const checked = relayable(message);
      if (checked && isRequest(checked)) toWindow({ kind: 'response', id: checked.id, ok: false, error: { code: 'unavailable', message: why } });
    },
    close: () => undefined,
  };
}

/**
 * One window's session of the hub, as a WebSocket's in the browser: the window's messages go in as
 * they are, the session's lines come back parsed. A request still waiting when the session ends (its
 * box went down) is answered with why, so the window never waits on a box that is gone; once the box
 * is connected again, a new session opens (the browser's console reconnects the same way).
 */
function sessionRelay(hub: LabHub, sessions: LabConsoleSessions, query: URLSearchParams, toWindow: (message: ToWindow) => void): WindowRelay {
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

  const refuse = (id: number, why: string): void => toWindow({ kind: 'response', id, ok: false, error: { code: 'unavailable', message: why } });
  const end = (why: string): void => {
    if (ended !== null) return;
    ended = why;
    session = null;
    for (const id of inFlight) refuse(id, why);
    inFlight.clear();
    queue = [];
    if (closedByUs) return;
    toWindow({ kind: 'connection', state: 'closed', detail: box === null ? why : `${why.replace(/\.$/, '')}; this console reconnects when ${box} is back.` });
    if (box !== null && stateOf(box) !== undefined) openWhen(connected); // a box no longer listed has nothing to wait for
  };
  const fromSession = (line: Line): void => {
    if (ended !== null || closedByUs) return;
    const message = JSON.parse(typeof line === 'string' ? line : line.toString('utf8')) as ResponseMessage | EventMessage;
    if (message.kind === 'response' && !inFlight.delete(message.id)) return; // an answer to no request of this window's
    toWindow(message);
  };
  const open = (): void => {
    ended = null;
    toWindow({ kind: 'connection', state: 'open', detail: null });
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
