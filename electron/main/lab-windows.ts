// The desktop app's Lab view. The hub runs in a process of its own (electron/engine/lab/hub-process.ts,
// started with the first Lab window and kept until the app quits), as the person (one link per box of the
// lab list); a window showing the Lab view (`?lab`) or one box's console (`?box=NAME`) gets the very session
// `gpushare start --lab` gives a WebSocket, carried over IPC and relayed here as bytes (lab-hub-child.ts),
// so every action in a box's console goes to that box's daemon as the person. Any other window is this
// box's console (window-relay.ts, to the engine). The page's own URL decides.
import { DESKTOP_LAB_STATUS, type DesktopLabStatus } from '../../shared/bridge.js';
import type { LabBoxSpec } from '../../shared/lab.js';
import { BOX_PARAM, LAB_PARAM } from '../../shared/lab-console.js';
import { isRequest, relayable } from '../../shared/window-message.js';
import type { ForkHub } from '../engine/lab/hub-process-protocol.js';
import type { LabHubOptions } from '../engine/lab/lab-hub.js';
import { noLabBoxes, type LabList } from '../engine/lab/lab-list.js';
import { startHubProcess, type HubProcess } from './lab-hub-child.js';
import type { ToWindow, ToWindowOrText, WindowRelay } from './window-relay.js';

export interface DesktopLabOptions {
  /** The lab list as its files say now (lab-list.ts loadLabList); throws a LabListError naming the file and the mistake. */
  readList(): LabList;
  /** Starts a hub process (the app's: Electron's utilityProcess.fork of hub-process-entry.js; tests: Node's child_process.fork). */
  forkHub: ForkHub;
  /** The hub's options (the app's: { socketDir: labSocketDir() }). */
  hubOptions: LabHubOptions;
}

export interface DesktopLab {
  /** For the Lab tab: the lab list's boxes (none: no tab), or why it cannot be read. */
  status(): DesktopLabStatus;
  /** The relay of a window showing the Lab view or a box's console; the hub starts with the first. */
  openRelay(query: URLSearchParams, toWindow: (message: ToWindowOrText) => void): WindowRelay;
  /** The hub's process ended, with every link to the boxes (the app quits). */
  close(): void;
}

/** What of a page's URL decides who serves it: the Lab view, one box of the lab (the hub's process), or this box's engine. */
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

/** Does this page show the Lab view or a box of the lab (served by the hub's process), not this box's console? */
export const isLabPage = (pageUrl: string): boolean => servedBy(pageUrl) !== 'engine';

/**
 * A window's relay, chosen by its page: the hub's session for the Lab view or a box, else this box's
 * engine (`engineRelay`). The Lab tab's question (DESKTOP_LAB_STATUS) is answered here for any page.
 */
export function openConsoleRelay(pageUrl: string, lab: DesktopLab, engineRelay: () => WindowRelay, toWindow: (message: ToWindowOrText) => void): WindowRelay {
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
  let running: { hub: HubProcess; listed: string } | null = null;
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
    running?.hub.close();
    running = null;
  };
  /**
   * The hub over the list as it is now. While a window uses it, it stays as it is; with none (the app's
   * window loading the Lab view: its last page's relay is gone), a list that changed starts it anew; one
   * that stopped (it crashed, or was killed) is started anew by the next Lab window.
   */
  const hubOrProblem = (): HubProcess | string => {
    const alive = running !== null && running.hub.stopped() === null;
    if (alive && relays.size > 0) return running!.hub;
    const { boxes, problem, looked } = read();
    const listed = JSON.stringify(boxes);
    if (alive && running!.listed === listed) return running!.hub;
    stopHub();
    if (problem !== null) return problem;
    if (boxes.length === 0) return noLabBoxes(looked!);
    try {
      running = { hub: startHubProcess(options.forkHub, boxes, options.hubOptions), listed };
    } catch (error) {
      return `The lab hub could not be started: ${error instanceof Error ? error.message : String(error)}`;
    }
    return running.hub;
  };

  return {
    status() {
      // a missing list is no lab: no tab; a list with a mistake shows the tab, whose view says the mistake
      const { boxes, problem } = read();
      return { boxes: boxes.map((b) => b.name), problem };
    },
    openRelay(query, toWindow) {
      const lab = hubOrProblem();
      const relay = typeof lab === 'string' ? refusingRelay(lab, toWindow) : lab.openRelay(query, toWindow);
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
