// IPC from the console window to the engine, which runs in its own process: one socket connection
// per window (window-relay.ts) carries its requests and the events it listens to; a window showing
// the Lab view or a box of the lab talks to the hub instead (lab-windows.ts). Every message's
// sender is checked first (trust.ts).
import { ipcMain, type IpcMainEvent, type WebContents } from 'electron';
import { IPC_MESSAGE_CHANNEL, IPC_REQUEST_CHANNEL } from '../../shared/bridge.js';
import { openConsoleRelay, servedBy, type DesktopLab } from './lab-windows.js';
import type { LineConnection } from './line-connection.js';
import { isTrustedSender } from './trust.js';
import { openWindowRelay, type RelayOptions, type ToWindow, type WindowRelay } from './window-relay.js';

export interface EngineSide {
  /** A new connection to the engine (waits while the engine is still starting). */
  connect(): Promise<LineConnection>;
  /** Why the windows lost the engine, in a sentence. */
  whyClosed(): string;
}

export interface IpcBridge {
  /** Tell every window its connection has ended, and why (the engine this app started has stopped). */
  engineLost(why: string): void;
  close(): void;
}

export function bridgeIpcToEngine(engine: EngineSide, lab: DesktopLab, isConsole: (contents: WebContents) => boolean, relayOptions: RelayOptions = {}): IpcBridge {
  const relays = new Map<number, { relay: WindowRelay; contents: WebContents; servedBy: ReturnType<typeof servedBy> }>();
  const toWindow = (contents: WebContents) => (message: ToWindow) => void (!contents.isDestroyed() && contents.send(IPC_MESSAGE_CHANNEL, message));
  const drop = (id: number): void => {
    relays.get(id)?.relay.close();
    relays.delete(id);
  };
  const watched = new Set<number>();
  /** The window's relay, opened by its page's first message: to the hub for the Lab view or a box, else to the engine. */
  const relayFor = (contents: WebContents, pageUrl: string): WindowRelay => {
    const id = contents.id;
    const known = relays.get(id);
    // a message of the page before, sent while the next one loads, must not choose the next one's relay
    if (known?.servedBy === servedBy(pageUrl)) return known.relay;
    if (known) drop(id);
    const relay = openConsoleRelay(pageUrl, lab, () => openWindowRelay(() => engine.connect(), toWindow(contents), () => engine.whyClosed(), relayOptions), toWindow(contents));
    relays.set(id, { relay, contents, servedBy: servedBy(pageUrl) });
    if (!watched.has(id)) {
      watched.add(id);
      contents.once('destroyed', () => {
        watched.delete(id);
        drop(id);
      });
      // a reload or a new page starts over with its own connection (its request ids start again at 1)
      contents.on('did-start-navigation', (details) => {
        if (details.isMainFrame && !details.isSameDocument) drop(id);
      });
    }
    return relay;
  };
  const onRequest = (event: IpcMainEvent, message: unknown): void => {
    if (!isTrustedSender(event.senderFrame, isConsole(event.sender))) return;
    relayFor(event.sender, event.senderFrame!.url).receive(message);
  };
  ipcMain.on(IPC_REQUEST_CHANNEL, onRequest);
  return {
    engineLost(why) {
      // a Lab window's boxes are reached by the hub here, not through this box's engine
      for (const { contents, servedBy } of relays.values()) if (servedBy === 'engine') toWindow(contents)({ kind: 'connection', state: 'closed', detail: why });
    },
    close() {
      ipcMain.off(IPC_REQUEST_CHANNEL, onRequest);
      for (const id of [...relays.keys()]) drop(id);
    },
  };
}
