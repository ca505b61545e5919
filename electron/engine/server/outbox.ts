// What the engine has written to one client and the client has not read yet, bounded.
/** Unread bytes past which a client no longer gets every state event: it gets the latest once it catches up. */
export const SLOW_CLIENT_BYTES = 8 * 1024 * 1024;
/** Unread bytes past which a client is disconnected: responses and alerts are never dropped, so they cannot wait for ever. */
export const STUCK_CLIENT_BYTES = 64 * 1024 * 1024;

/** A line for a client: text, or its UTF-8 bytes when the same line goes to many (wireLine). */
export type Line = string | Buffer;

/** How a transport writes to one client and tells how much of it is still unread. */
export interface ClientLine {
  /** Bytes written and not yet taken by the client (socket.writableLength, ws.bufferedAmount). */
  buffered(): number;
  write(line: Line): void;
  disconnect(): void;
  /** Before a line is written: room made for it among the other clients (false: this one is disconnected instead). */
  makeRoom?(bytes: number): boolean;
}

/** What one client's outbox has been through: how far behind it fell, what it was spared. */
export interface OutboxStats {
  who: string;
  /** Most bytes it ever left unread in the engine, measured after each write. */
  peakUnread: number;
  /** State events replaced by a later one before it caught up. */
  dropped: number;
  disconnected: boolean;
}

export interface Outbox {
  /** One line for the client: a state event waits as the latest of its kind while the client is slow. */
  send(line: Line): void;
  /** The transport wrote out what it held: send the latest state events held back. */
  drained(): void;
  /** Disconnect the client now, with the reason logged; nothing more is sent. */
  disconnect(reason: string): void;
  stats(): OutboxStats;
}

// Events whose latest one says everything (the whole snapshot, job list, condition list); alerts are each news.
// A snapshot delta stands in the snapshot's place: one held back breaks its client's chain, which then asks for
// snapshot.latest (api-client.ts). wireLine writes kind, then event, first.
const STATE_EVENT = /^\{"kind":"event","event":"(snapshot|jobs|conditions)(?:\.delta)?"/;
/** The start of a line, long enough for STATE_EVENT, without decoding the rest. */
const head = (line: Line): string => (typeof line === 'string' ? line : line.toString('latin1', 0, 48));
// one event's line goes to every client as the same Buffer (wireLine): read its head once, not once per client
const stateOfLine = new WeakMap<Buffer, string | null>();

/** The state event a line carries ("snapshot", "jobs", "conditions"), or null for responses and alerts. */
function stateEventOf(line: Line): string | null {
  if (typeof line === 'string') return STATE_EVENT.exec(line)?.[1] ?? null;
  let state = stateOfLine.get(line);
  if (state === undefined) stateOfLine.set(line, (state = STATE_EVENT.exec(head(line))?.[1] ?? null));
  return state;
}

/** Lines to one client (`who`, for the log) through client, its unread bytes bounded. */
export function boundedOutbox(who: string, client: ClientLine): Outbox {
  const held = new Map<string, Line>();
  let disconnected = false;
  let peakUnread = 0;
  let dropped = 0;
  const disconnect = (reason: string): void => {
    if (disconnected) return;
    disconnected = true;
    held.clear();
    console.error(`gpushare: ${who} was disconnected: ${reason}.`);
    client.disconnect();
  };
  const write = (line: Line): void => {
    const unread = client.buffered();
    if (unread > 0 && unread + line.length > STUCK_CLIENT_BYTES) return disconnect(`it left ${unread} bytes unread (the bound is ${STUCK_CLIENT_BYTES})`);
    if (client.makeRoom && !client.makeRoom(line.length)) return; // disconnected by the ledger, which said why
    client.write(line);
    peakUnread = Math.max(peakUnread, client.buffered());
  };
  const flushHeld = (): void => {
    if (held.size === 0 || client.buffered() > SLOW_CLIENT_BYTES) return;
    const lines = [...held.values()];
    held.clear();
    for (const line of lines) if (!disconnected) write(line);
  };
  return {
    send(line) {
      if (disconnected) return;
      flushHeld();
      const state = stateEventOf(line);
      if (state !== null && client.buffered() > SLOW_CLIENT_BYTES) {
        if (held.has(state)) dropped++; // the one it replaces is older: never sent
        held.set(state, line);
        return;
      }
      if (state !== null && held.delete(state)) dropped++;
      write(line);
    },
    drained() {
      if (!disconnected) flushHeld();
    },
    disconnect,
    stats: () => ({ who, peakUnread, dropped, disconnected }),
  };
}
