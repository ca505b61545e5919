// The renderer's only door to the main process: two narrow functions on window.gpushare.
// Sandboxed preloads cannot import our modules, so the channel names are repeated here
// (they are IPC_REQUEST_CHANNEL and IPC_MESSAGE_CHANNEL of shared/bridge.ts), and the API's
// events and the Lab view's too; preload.test.ts runs this file and holds them to shared/.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { ApiEvent, ApiMethod, EventMessage, ResponseMessage } from '../../shared/api.js' with { 'resolution-mode': 'import' };
import type { BridgeEvent, BridgeResult, ConnectionMessage, GpushareBridge, LabBridgeEvent, LabBridgeMethod } from '../../shared/bridge.js' with { 'resolution-mode': 'import' };

const REQUEST_CHANNEL = 'gpushare:request';
const MESSAGE_CHANNEL = 'gpushare:message';
const ENGINE_EVENTS = ['snapshot', 'snapshot.delta', 'jobs', 'alert', 'conditions', 'store'] as const satisfies readonly ApiEvent[];
// repeated here (no imports in a sandboxed preload), so the compiler holds it to shared/api.ts: an event left out fails the build
const everyEngineEventListed: [Exclude<ApiEvent, (typeof ENGINE_EVENTS)[number]>] extends [never] ? true : false = true;
void everyEngineEventListed;
// the Lab view's event (the app's lab hub sends it), held to shared/bridge.ts the same way
const LAB_EVENTS = ['lab'] as const satisfies readonly LabBridgeEvent[];
const everyLabEventListed: [Exclude<LabBridgeEvent, (typeof LAB_EVENTS)[number]>] extends [never] ? true : false = true;
void everyLabEventListed;

let nextId = 1;
const pending = new Map<number, (result: BridgeResult) => void>();
const listeners = new Map<BridgeEvent, Set<(data: unknown) => void>>();
/** The last word from the main process on this window's connection (replayed to a late listener). */
let connection: Omit<ConnectionMessage, 'kind'> | null = null;

ipcRenderer.on(MESSAGE_CHANNEL, (_event: IpcRendererEvent, sent: ResponseMessage | EventMessage | ConnectionMessage | string) => {
  // the lab hub's lines come as the JSON text its process wrote: parsed here, not on the main process's thread
  let message: ResponseMessage | EventMessage | ConnectionMessage;
  try {
    message = typeof sent === 'string' ? JSON.parse(sent) : sent;
  } catch {
    return;
  }
  if (message?.kind === 'connection') {
    connection = { state: message.state, detail: message.detail }; // requests still waiting are answered by the main process
    for (const listener of listeners.get('connection') ?? []) listener(connection);
    return;
  }
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
  call(method: ApiMethod | LabBridgeMethod, params: unknown): Promise<BridgeResult> {
    if (typeof method !== 'string') return Promise.resolve({ ok: false, error: { code: 'invalid-request', message: 'The method must be a name.' } });
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      ipcRenderer.send(REQUEST_CHANNEL, { kind: 'request', id, method, params });
    });
  },
  on(event: BridgeEvent, listener: (data: unknown) => void): () => void {
    const known = event === 'connection' || (ENGINE_EVENTS as readonly string[]).includes(event) || (LAB_EVENTS as readonly string[]).includes(event);
    if (!known || typeof listener !== 'function') return () => undefined;
    let set = listeners.get(event);
    if (!set) {
      listeners.set(event, (set = new Set()));
      // the window's connection carries only the events it listens to
      // deltas are the snapshot event sent as what changed (shared/api.ts SubscribeMessage)
      if (event === 'snapshot.delta') ipcRenderer.send(REQUEST_CHANNEL, { kind: 'subscribe', events: ['snapshot'], snapshotDeltas: true });
      else if (event !== 'connection') ipcRenderer.send(REQUEST_CHANNEL, { kind: 'subscribe', events: [event] });
    }
    set.add(listener);
    if (event === 'connection' && connection) listener(connection);
    return () => set.delete(listener);
  },
};

contextBridge.exposeInMainWorld('gpushare', bridge);
