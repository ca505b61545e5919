// IPC from the console window into the engine, through the same session code as the
// unix socket and the WebSocket. Every message's sender is checked first.
import { ipcMain, type IpcMainEvent, type WebContents } from 'electron';
import { API_EVENTS } from '../../shared/api.js';
import { IPC_MESSAGE_CHANNEL, IPC_REQUEST_CHANNEL } from '../../shared/bridge.js';
import type { Engine } from '../engine/engine.js';
import { openSession, type Session } from '../engine/server/session.js';
import { APP_ORIGIN } from './app-protocol.js';

export function bridgeIpcToEngine(engine: Engine, isConsole: (contents: WebContents) => boolean): () => void {
  const sessions = new Map<number, Session>();
  const sessionFor = (contents: WebContents): Session => {
    let session = sessions.get(contents.id);
    if (!session) {
      const opened = openSession(engine, { ...engine.owner, via: 'ipc' }, (message) => !contents.isDestroyed() && contents.send(IPC_MESSAGE_CHANNEL, message), API_EVENTS);
      sessions.set(contents.id, (session = opened));
      contents.once('destroyed', () => {
        opened.close();
        sessions.delete(contents.id);
      });
    }
    return session;
  };
  const onRequest = (event: IpcMainEvent, message: unknown): void => {
    const frame = event.senderFrame;
    // only our own window's top frame, showing our own pages
    if (!frame || frame.parent !== null || new URL(frame.url).origin !== APP_ORIGIN || !isConsole(event.sender)) return;
    sessionFor(event.sender).receive(message);
  };
  ipcMain.on(IPC_REQUEST_CHANNEL, onRequest);
  return () => {
    ipcMain.off(IPC_REQUEST_CHANNEL, onRequest);
    for (const session of sessions.values()) session.close();
    sessions.clear();
  };
}
