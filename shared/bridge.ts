// What the Electron preload script exposes to the renderer as `window.gpushare`:
// two narrow functions, nothing else. Results come back as values because errors
// lose their fields when they cross the context bridge.
import type { ApiErrorBody, ApiEvent, ApiMethod } from './api.js';

export type BridgeResult = { ok: true; result: unknown } | { ok: false; error: ApiErrorBody };

export interface GpushareBridge {
  call(method: ApiMethod, params: unknown): Promise<BridgeResult>;
  on(event: ApiEvent, listener: (data: unknown) => void): () => void;
}

/** IPC channel names; electron/preload repeats them because a sandboxed preload cannot import. */
export const IPC_REQUEST_CHANNEL = 'gpushare:request';
export const IPC_MESSAGE_CHANNEL = 'gpushare:message';
