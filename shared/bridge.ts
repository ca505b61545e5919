// What the Electron preload script exposes to the renderer as `window.gpushare`:
// two narrow functions, nothing else. Results come back as values because errors
// lose their fields when they cross the context bridge.
import { API_EVENTS, type ApiErrorBody, type ApiEvent, type ApiMethod } from './api.js';
import { LAB_EVENT, LAB_WHERE } from './lab-console.js';

export type BridgeResult = { ok: true; result: unknown } | { ok: false; error: ApiErrorBody };

/** The window's connection to the engine, which runs in its own process: the main process says when it opens or ends, and why. */
export interface ConnectionMessage {
  kind: 'connection';
  state: 'open' | 'closed';
  detail: string | null;
}

/**
 * The desktop app's Lab view: its hub runs in a process of its own, whose sessions the main process relays
 * to a Lab window (`?lab`): the Lab view's event and request, as `gpushare start --lab` serves them over its WebSocket.
 */
export const LAB_BRIDGE_EVENTS = [LAB_EVENT] as const;
export type LabBridgeEvent = (typeof LAB_BRIDGE_EVENTS)[number];

/** Answered by the desktop's main process itself, for any window: is there a lab list (the Lab tab), or why not. */
export const DESKTOP_LAB_STATUS = 'desktop.lab';
export interface DesktopLabStatus {
  /** The lab list's box names, in order; empty: no Lab tab. */
  boxes: string[];
  /** The lab list could not be read: the sentence naming the file and the mistake (the Lab view shows it). */
  problem: string | null;
}

/** The Lab tab's rule, and the tray's Lab item's: a lab list, or one with a mistake (whose Lab view then names it). */
export const showsLab = (lab: DesktopLabStatus): boolean => lab.boxes.length > 0 || lab.problem !== null;

/** The requests a window may make beside the API's: the Lab view's one, and the Lab tab's. */
export const LAB_BRIDGE_METHODS = [LAB_WHERE, DESKTOP_LAB_STATUS] as const;
export type LabBridgeMethod = (typeof LAB_BRIDGE_METHODS)[number];

/** Every event a window may listen to besides 'connection': the engine's, then the Lab view's. */
export const BRIDGE_EVENTS = [...API_EVENTS, ...LAB_BRIDGE_EVENTS] as const;

/** What a window may listen to: the engine's events, the Lab view's, and ('connection') its own connection's ConnectionMessage. */
export type BridgeEvent = ApiEvent | LabBridgeEvent | 'connection';

export interface GpushareBridge {
  call(method: ApiMethod | LabBridgeMethod, params: unknown): Promise<BridgeResult>;
  /** An engine event's first listener subscribes the window to it; 'connection' hears the current state at once. */
  on(event: BridgeEvent, listener: (data: unknown) => void): () => void;
}

/**
 * IPC channel names; electron/preload repeats them because a sandboxed preload cannot import. On the message
 * channel a window hears a message, or its JSON text (the lab hub's lines, passed on by the main process unread).
 */
export const IPC_REQUEST_CHANNEL = 'gpushare:request';
export const IPC_MESSAGE_CHANNEL = 'gpushare:message';
