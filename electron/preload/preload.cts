// The renderer's only door to the main process: two narrow functions on window.gpushare.
// Sandboxed preloads cannot import our modules, so the channel names are repeated here
// (they are IPC_REQUEST_CHANNEL and IPC_MESSAGE_CHANNEL of shared/bridge.ts).
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { ApiEvent, ApiMethod, EventMessage, ResponseMessage } from '../../shared/api.js' with { 'resolution-mode': 'import' };
import type { BridgeResult, GpushareBridge } from '../../shared/bridge.js' with { 'resolution-mode': 'import' };

const REQUEST_CHANNEL = 'gpushare:request';
const MESSAGE_CHANNEL = 'gpushare:message';
const EVENTS: readonly ApiEvent[] = ['snapshot', 'jobs', 'alert', 'conditions'];

let nextId = 1;
const pending = new Map<number, (result: BridgeResult) => void>();
const listeners = new Map<ApiEvent, Set<(data: unknown) => void>>();

ipcRenderer.on(MESSAGE_CHANNEL, (_event: IpcRendererEvent, message: ResponseMessage | EventMessage) => {
  if (message?.kind === 'event') {
    for (const listener of listeners.get(message.event) ?? []) listener(message.data);
    return;
  }
  const settle = pending.get(message?.id);
  if (!settle) return;
  pending.delete(message.id);
  settle(message.ok ? { ok: true, result: message.result } : { ok: false, error: message.error });
});

const bridge: GpushareBridge = {
  call(method: ApiMethod, params: unknown): Promise<BridgeResult> {
    if (typeof method !== 'string') return Promise.resolve({ ok: false, error: { code: 'invalid-request', message: 'The method must be a name.' } });
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      ipcRenderer.send(REQUEST_CHANNEL, { kind: 'request', id, method, params });
    });
  },
  on(event: ApiEvent, listener: (data: unknown) => void): () => void {
    if (!EVENTS.includes(event) || typeof listener !== 'function') return () => undefined;
    let set = listeners.get(event);
    if (!set) listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  },
};

contextBridge.exposeInMainWorld('gpushare', bridge);
