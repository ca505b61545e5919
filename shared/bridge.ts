// What the Electron preload script exposes to the renderer as `window.gpushare`:
// two narrow functions, nothing else. Results come back as values because errors
// lose their fields when they cross the context bridge.
import type { ApiErrorBody, ApiEvent, ApiMethod } from './api.js';

export type BridgeResult = { ok: true; result: unknown } | { ok: false; error: ApiErrorBody };

/** The window's connection to the engine, which runs in its own process: the main process says when it opens or ends, and why. */
export interface ConnectionMessage {
  kind: 'connection';
  state: 'open' | 'closed';
  detail: string | null;
}

/** What a window may listen to: the engine's events, and ('connection') its own connection's ConnectionMessage. */
export type BridgeEvent = ApiEvent | 'connection';

export interface GpushareBridge {
  call(method: ApiMethod, params: unknown): Promise<BridgeResult>;
  /** An engine event's first listener subscribes the window to it; 'connection' hears the current state at once. */
  on(event: BridgeEvent, listener: (data: unknown) => void): () => void;
}

/** IPC channel names; electron/preload repeats them because a sandboxed preload cannot import. */
export const IPC_REQUEST_CHANNEL = 'gpushare:request';
export const IPC_MESSAGE_CHANNEL = 'gpushare:message';
