// The Lab view's door in the desktop app: the preload's two functions, through the main process
// (electron/main/lab-windows.ts) to the app's hub in its own process, which serves this window the same session the browser's
// Lab view gets over its WebSocket: the `lab` event, and the `lab.where` request.
import { ApiCallError } from '../../../shared/api-client.js';
import type { GpushareBridge } from '../../../shared/bridge.js';
import { onBridgeConnection } from './ipc-transport.js';
import { LAB_EVENT, LAB_WHERE, type LabConsoleUpdate, type LabWhereResult } from '../../../shared/lab-console.js';
import type { LabTransport } from './lab-transport.js';
import type { ConnectionState } from './transport.js';

export function ipcLabTransport(bridge: GpushareBridge): LabTransport {
  const updates = new Set<(update: LabConsoleUpdate) => void>();
  // listened to at once: the main process sends the whole lab first, then the rows that changed
  bridge.on(LAB_EVENT, (update) => {
    for (const listener of updates) listener(update as LabConsoleUpdate);
  });
  return {
    async where(params) {
      const answer = await bridge.call(LAB_WHERE, params);
      if (!answer.ok) throw ApiCallError.from(answer.error);
      return answer.result as LabWhereResult;
    },
    onUpdate(listener) {
      updates.add(listener);
      return () => updates.delete(listener);
    },
    onConnection: (listener: (state: ConnectionState, detail: string | null) => void) => onBridgeConnection(bridge, listener),
  };
}
