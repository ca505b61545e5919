// The renderer's one door to the engine. Which transport sits behind it is chosen
// once at start-up; nothing else in the renderer knows or cares.
import type { GpushareApi } from '../../../shared/api.js';
import type { DesktopLabStatus, GpushareBridge } from '../../../shared/bridge.js';
import { ipcTransport } from './ipc-transport.js';
import { websocketTransport } from './websocket-transport.js';

export type ConnectionState = 'connecting' | 'open' | 'closed';

export interface ConsoleTransport {
  readonly kind: 'desktop' | 'browser';
  readonly api: GpushareApi;
  /** Called at once with the current state, then on every change. */
  onConnection(listener: (state: ConnectionState, detail: string | null) => void): () => void;
  /** The desktop app's lab list, for its Lab tab (its main process reads it); absent in a browser. */
  labStatus?(): Promise<DesktopLabStatus | null>;
}

declare global {
  interface Window {
    gpushare?: GpushareBridge;
  }
}

export function pickTransport(): ConsoleTransport {
  return window.gpushare ? ipcTransport(window.gpushare) : websocketTransport(window.location);
}
