// The app's end of the lab hub's process (electron/engine/lab/hub-process.ts): each Lab window's relay
// here only passes bytes, its window's messages (checked and bounded) to the hub and the hub's lines, as
// the text they are, to the window (its preload parses them), so the hub's work never runs on the main thread. A hub that stops (it crashed, or was killed)
// is told to every window on it, with why, and answers every request still waiting; the next Lab window
// starts a new one (lab-windows.ts).
import type { LabBoxSpec } from '../../shared/lab.js';
import { isRequest, relayable } from '../../shared/window-message.js';
import { fromHubMessage, STARTING_QUEUE_LIMIT, WINDOW_MESSAGE_LIMIT, type ForkHub, type ToHub } from '../engine/lab/hub-process-protocol.js';
import type { LabHubOptions } from '../engine/lab/lab-hub.js';
import type { ToWindowOrText, WindowRelay } from './window-relay.js';

export interface HubProcess {
  /** Why the hub's process ended (null while it runs; the app closing it counts). */
  stopped(): string | null;
  /** A window's relay to the hub: the Lab view, or one box's console (`query`: its page's). */
  openRelay(query: URLSearchParams, toWindow: (message: ToWindowOrText) => void): WindowRelay;
  /** End the process (the app quits, or the lab list changed with no window on it). */
  close(): void;
}

interface RelayHere {
  toWindow(message: ToWindowOrText): void;
  /** Its window's requests the hub has not answered yet: answered here if the hub stops. */
  inFlight: Set<number>;
  /** Why the hub stopped under this relay (its requests are refused with it). */
  ended: string | null;
}

export function startHubProcess(forkHub: ForkHub, boxes: LabBoxSpec[], options: LabHubOptions): HubProcess {
  const child = forkHub();
  let ready = false;
  let starting: ToHub[] = [];
  let stopped: string | null = null;
  let closedByUs = false;
  let nextRelay = 1;
  const relays = new Map<number, RelayHere>();

  const post = (message: ToHub): void => {
    if (stopped !== null) return;
    if (ready) child.post(message);
    else starting.push(message);
  };
  child.onMessage((raw) => {
    const message = fromHubMessage(raw);
    if (message === null) return; // past the bound, or none of ours: the hub bounds its own lines, so this is never a window's answer
    if (message.kind === 'ready') {
      ready = true;
      for (const queued of starting) child.post(queued);
      starting = [];
      return;
    }
    const relay = relays.get(message.relay);
    if (!relay || relay.ended !== null) return; // its window has gone
    if (message.answers !== undefined && !relay.inFlight.delete(message.answers)) return; // an answer to no request of this window's
    relay.toWindow(message.line);
  });
  child.onExit((why) => {
    stopped = closedByUs ? 'The app closed the lab hub.' : `The lab hub stopped (${why}).`;
    starting = [];
    if (closedByUs) return;
    const sentence = `${stopped} Reload this window, or open the Lab view again, to start a new one.`;
    for (const relay of relays.values()) {
      relay.ended = sentence;
      for (const id of relay.inFlight) relay.toWindow({ kind: 'response', id, ok: false, error: { code: 'unavailable', message: sentence } });
      relay.inFlight.clear();
      relay.toWindow({ kind: 'connection', state: 'closed', detail: sentence });
    }
  });
  post({ kind: 'start', boxes, options });

  return {
    stopped: () => stopped,
    openRelay(query, toWindow) {
      const id = nextRelay++;
      const relay: RelayHere = { toWindow, inFlight: new Set(), ended: null };
      relays.set(id, relay);
      post({ kind: 'open', relay: id, query: query.toString() });
      const refuse = (requestId: number, why: string): void => toWindow({ kind: 'response', id: requestId, ok: false, error: { code: 'unavailable', message: why } });
      return {
        receive(message) {
          const checked = relayable(message);
          if (!checked) return;
          const request = isRequest(checked) ? checked.id : null;
          if (relay.ended !== null) return request !== null ? refuse(request, relay.ended) : undefined;
          const text = JSON.stringify(checked);
          if (text.length > WINDOW_MESSAGE_LIMIT) {
            return request !== null ? toWindow({ kind: 'response', id: request, ok: false, error: { code: 'invalid-request', message: `The request is ${text.length} bytes long; a window's request may be at most ${WINDOW_MESSAGE_LIMIT}.` } }) : undefined;
          }
          if (!ready && starting.length >= STARTING_QUEUE_LIMIT) return request !== null ? refuse(request, 'The lab hub has not started yet; try again in a moment.') : undefined;
          if (request !== null) relay.inFlight.add(request);
          post({ kind: 'window', relay: id, text });
        },
        close() {
          relay.ended = 'This window closed its connection.';
          relays.delete(id);
          post({ kind: 'close', relay: id });
        },
      };
    },
    close() {
      if (stopped !== null) return;
      closedByUs = true;
      child.kill();
    },
  };
}
