// Every console window's relay, one per window (ipc-bridge.ts gives each its Electron hooks): opened by
// the page's first message and chosen by that page (lab-windows.ts: the Lab view or a box of the lab
// go to the hub's process, any other page to this box's engine), dropped when the window loads another page.
import { openConsoleRelay, servedBy, type DesktopLab } from './lab-windows.js';
import type { LineConnection } from './line-connection.js';
import { openWindowRelay, type RelayOptions, type ToWindowOrText, type WindowRelay } from './window-relay.js';

export interface EngineSide {
  /** A new connection to the engine (waits while the engine is still starting). */
  connect(): Promise<LineConnection>;
  /** Why the windows lost the engine, in a sentence. */
  whyClosed(): string;
}

export interface ConsoleRelays<W> {
  /** A message from window `id` (already checked to come from our console), showing `pageUrl`; `toWindow` reaches that window. */
  receive(id: W, pageUrl: string, message: unknown, toWindow: (message: ToWindowOrText) => void): void;
  /** The window loads another page or is gone: its relay ends (the next page's first message opens its own). */
  drop(id: W): void;
  /** Tell every window on this box's engine that its connection has ended, and why. */
  engineLost(why: string): void;
  close(): void;
}

export function consoleRelays<W>(engine: EngineSide, lab: DesktopLab, relayOptions: RelayOptions = {}): ConsoleRelays<W> {
  const relays = new Map<W, { relay: WindowRelay; servedBy: ReturnType<typeof servedBy>; toWindow: (message: ToWindowOrText) => void }>();
  const drop = (id: W): void => {
    relays.get(id)?.relay.close();
    relays.delete(id);
  };
  return {
    receive(id, pageUrl, message, toWindow) {
      const page = servedBy(pageUrl);
      let known = relays.get(id);
      // a message of the page before, sent while the next one loads, must not choose the next one's relay
      if (known && known.servedBy !== page) drop(id);
      known = relays.get(id);
      if (!known) {
        const engineRelay = (): WindowRelay => openWindowRelay(() => engine.connect(), toWindow, () => engine.whyClosed(), relayOptions);
        known = { relay: openConsoleRelay(pageUrl, lab, engineRelay, toWindow), servedBy: page, toWindow };
        relays.set(id, known);
      }
      known.relay.receive(message);
    },
    drop,
    engineLost(why) {
      // a Lab window's boxes are reached by the hub's process, not through this box's engine
      for (const { servedBy, toWindow } of relays.values()) if (servedBy === 'engine') toWindow({ kind: 'connection', state: 'closed', detail: why });
    },
    close() {
      for (const id of [...relays.keys()]) drop(id);
    },
  };
}
