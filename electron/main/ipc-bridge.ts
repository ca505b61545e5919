// IPC from the console windows: each window's messages go to its relay (console-relays.ts: to the
// engine, which runs in its own process, or for the Lab view and a box of the lab to the hub's process),
// and the relay's answers and events come back to it. Every message's sender is checked first (trust.ts).
import { ipcMain, type IpcMainEvent, type WebContents } from 'electron';
import { IPC_MESSAGE_CHANNEL, IPC_REQUEST_CHANNEL } from '../../shared/bridge.js';
import { consoleRelays, type EngineSide } from './console-relays.js';
import type { DesktopLab } from './lab-windows.js';
import { isTrustedSender } from './trust.js';
import type { RelayOptions, ToWindowOrText } from './window-relay.js';

export type { EngineSide };

export interface IpcBridge {
  /** Tell every window on the engine its connection has ended, and why (the engine this app started has stopped). */
  engineLost(why: string): void;
  close(): void;
}

export function bridgeIpcToEngine(engine: EngineSide, lab: DesktopLab, isConsole: (contents: WebContents) => boolean, relayOptions: RelayOptions = {}): IpcBridge {
  const relays = consoleRelays<number>(engine, lab, relayOptions);
  const toWindow = (contents: WebContents) => (message: ToWindowOrText) => void (!contents.isDestroyed() && contents.send(IPC_MESSAGE_CHANNEL, message));
  const watched = new Set<number>();
  const watch = (contents: WebContents): void => {
    const id = contents.id;
    if (watched.has(id)) return;
    watched.add(id);
    contents.once('destroyed', () => {
      watched.delete(id);
      relays.drop(id);
    });
    // a reload or a new page starts over with its own connection (its request ids start again at 1)
    contents.on('did-start-navigation', (details) => {
      if (details.isMainFrame && !details.isSameDocument) relays.drop(id);
    });
  };
  const onRequest = (event: IpcMainEvent, message: unknown): void => {
    if (!isTrustedSender(event.senderFrame, isConsole(event.sender))) return;
    watch(event.sender);
    relays.receive(event.sender.id, event.senderFrame!.url, message, toWindow(event.sender));
  };
  ipcMain.on(IPC_REQUEST_CHANNEL, onRequest);
  return {
    engineLost: (why) => relays.engineLost(why),
    close() {
      ipcMain.off(IPC_REQUEST_CHANNEL, onRequest);
      relays.close();
    },
  };
}
