// The desktop app's lab hub, in a process of its own (started by electron/main/lab-hub-child.ts), so its
// work (one link per box, merged snapshots, each window's session) never runs on Electron's main thread.
// It runs as the person, with their ssh, keys and agent, from the first Lab window until the app quits.
// It speaks to the app through a HubPort only (hub-process-protocol.ts): no electron here.
import { HUB_LINE_LIMIT, FATAL_PREFIX, toHubMessage, type HubPort } from './hub-process-protocol.js';
import { labConsoleSessions, type LabConsoleSessions } from './lab-console-sessions.js';
import { LabHub } from './lab-hub.js';
import { windowSession, type WindowSession } from './lab-window-session.js';

export function serveHubProcess(port: HubPort): void {
  let running: { hub: LabHub; sessions: LabConsoleSessions } | null = null;
  const windows = new Map<number, WindowSession>();
  const say = (line: string): void => void process.stderr.write(`gpushare lab hub (note): ${line}\n`);

  /** A line for the window of `relay`, bounded: an answer too long is answered with why instead, an event too long is left out. */
  const toWindow = (relay: number) => (line: string, answers?: number): void => {
    if (line.length <= HUB_LINE_LIMIT) return port.post(answers === undefined ? { kind: 'window', relay, line } : { kind: 'window', relay, line, answers });
    say(`a ${answers !== undefined ? 'response' : 'message'} of ${line.length} bytes for a window is past the ${HUB_LINE_LIMIT}-byte bound; ${answers !== undefined ? 'the window hears why' : 'left out'}`);
    if (answers === undefined) return;
    const why = { kind: 'response', id: answers, ok: false, error: { code: 'unavailable', message: `The answer (${line.length} bytes) is too long to pass to the window (at most ${HUB_LINE_LIMIT}).` } };
    port.post({ kind: 'window', relay, line: JSON.stringify(why), answers });
  };

  port.onMessage((raw) => {
    const message = toHubMessage(raw);
    if (message === null) return say('a message from the app that is none of ours was ignored');
    switch (message.kind) {
      case 'start': {
        if (running) return say('asked to start a second time: one hub per process');
        const hub = new LabHub(message.boxes, message.options);
        hub.start();
        running = { hub, sessions: labConsoleSessions(hub) };
        return;
      }
      case 'open': {
        if (!running || windows.has(message.relay)) return say(`relay ${message.relay} ${running ? 'opened twice' : 'opened before the hub started'}`);
        windows.set(message.relay, windowSession(running.hub, running.sessions, new URLSearchParams(message.query), toWindow(message.relay)));
        return;
      }
      case 'window': {
        let parsed: unknown;
        try {
          parsed = JSON.parse(message.text);
        } catch {
          return say(`relay ${message.relay} sent a message that is not JSON`);
        }
        return windows.get(message.relay)?.receive(parsed);
      }
      case 'close':
        windows.get(message.relay)?.close();
        windows.delete(message.relay);
        return;
    }
  });
  port.post({ kind: 'ready' });
}

/** An entry's first step: an error nobody caught ends the hub with one line saying it (the app shows it in its Lab windows). */
export function endOnUncaughtError(): void {
  process.on('uncaughtException', (error) => {
    process.stderr.write(`${FATAL_PREFIX}${(error instanceof Error ? error.message : String(error)).split('\n')[0]}\n${error instanceof Error ? error.stack : ''}\n`, () => process.exit(70));
  });
}
