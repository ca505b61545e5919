// What the engine's socket clients hold of it, per user (uid) and all together: connections open, and
// lines written to them that they have not read. One user's clients cannot take the descriptors others
// need, nor grow the engine's memory by never reading: past a bound, the client holding the most
// unread is disconnected (it is the one not reading), and a connection past its user's count is refused.
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '../../../shared/lab-policy.js';

/** One connection as the ledger counts it. */
export interface LedgerClient {
  uid: number;
  /** The account's name, for messages. */
  user: string;
  /** Bytes written to it and not yet taken by the client (socket.writableLength). */
  unread(): number;
  /** Disconnect it now, saying why (the log, and the client where it can still be told). */
  evict(reason: string): void;
}

/** What one user's connections hold, against the bounds (what `session.whoami` tells them). */
export interface ConnectionUse {
  open: number;
  /** Null for root, who is never refused a connection (an administrator can always get in). */
  maxOpen: number | null;
  unreadBytes: number;
  maxUnreadBytes: number;
}

const MiB = 1024 * 1024;
const size = (bytes: number): string => (bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MiB` : `${bytes} bytes`);

export class ClientLedger {
  private readonly clients = new Set<LedgerClient>();
  private readonly byUid = new Map<number, Set<LedgerClient>>();
  /** Unread bytes as last seen or written, an upper bound: a client's unread only shrinks between writes. */
  private readonly recorded = new Map<LedgerClient, number>();
  private recordedTotal = 0;
  private readonly recordedByUid = new Map<number, number>();
  /** Users refused a connection since they were last under their bound: logged once per episode, not once per attempt. */
  private readonly refusedUids = new Set<number>();

  constructor(
    readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    /** Where the bounds are set, for the messages ("the daemon's config"), or null. */
    private readonly configured: string | null = null,
    private readonly log: (line: string) => void = (line) => console.error(line),
  ) {}

  /** Why `uid` may not open one more connection now, or null; root is always let in. */
  refusal(uid: number, nameOf: () => string): string | null {
    if (uid === 0) return null;
    const open = this.byUid.get(uid)?.size ?? 0;
    if (open < this.limits.perUser && this.clients.size < this.limits.total) return null;
    const user = nameOf();
    const key = (name: string): string => (this.configured ? ` (connections.${name} in ${this.configured})` : '');
    let why: string | null = null;
    if (open >= this.limits.perUser)
      why = `${user} (uid ${uid}) already has ${open} connections open to gpushare, the most one user may have${key('perUser')}: close some (other windows, scripts holding connections) and try again.`;
    else if (this.clients.size >= this.limits.total)
      why = `gpushare already has ${this.clients.size} connections open, the most it serves at once${key('total')}: try again shortly, or ask an administrator (the daemon's log says who holds them).`;
    if (why && !this.refusedUids.has(uid)) {
      this.refusedUids.add(uid);
      this.log(`gpushare: a connection from ${user} (uid ${uid}) was refused, and later ones are until it is under its bound: ${why}${this.clients.size >= this.limits.total ? ` Open now: ${this.holders()}.` : ''}`);
    }
    return why;
  }

  add(client: LedgerClient): void {
    this.clients.add(client);
    let mine = this.byUid.get(client.uid);
    if (!mine) this.byUid.set(client.uid, (mine = new Set()));
    mine.add(client);
    this.record(client, 0);
  }

  remove(client: LedgerClient): void {
    if (!this.clients.delete(client)) return;
    const mine = this.byUid.get(client.uid)!;
    mine.delete(client);
    this.record(client, 0);
    this.recorded.delete(client);
    if (mine.size === 0) {
      this.byUid.delete(client.uid);
      this.recordedByUid.delete(client.uid);
    }
    if (mine.size < this.limits.perUser && this.clients.size < this.limits.total) this.refusedUids.delete(client.uid);
  }

  /** The client read what it was sent (its transport drained). */
  drained(client: LedgerClient): void {
    if (this.clients.has(client)) this.record(client, client.unread());
  }

  /**
   * Before `bytes` more are written to `client`: while its user's unread, or everyone's, would pass its
   * bound, disconnect whichever connection holds the most unread. False when that is `client` itself
   * (the line is not written). A client that has read everything still gets a line larger than the bound.
   */
  makeRoom(client: LedgerClient, bytes: number): boolean {
    if (!this.clients.has(client)) return false;
    const fitsUser = (): boolean => (this.recordedByUid.get(client.uid) ?? 0) + bytes <= this.limits.unreadBytesPerUser;
    const fitsAll = (): boolean => this.recordedTotal + bytes <= this.limits.unreadBytesTotal;
    if (!fitsUser()) {
      this.refresh(this.byUid.get(client.uid)!);
      if (!this.evictUntil(this.byUid.get(client.uid)!, fitsUser, client, `${client.user} (uid ${client.uid})'s connections together would leave more than ${size(this.limits.unreadBytesPerUser)} unread, the most one user's may${this.configured ? ` (connections.unreadBytesPerUser in ${this.configured})` : ''}`)) return false;
    }
    if (!fitsAll()) {
      this.refresh(this.clients);
      if (!this.evictUntil(this.clients, fitsAll, client, `all clients together would leave more than ${size(this.limits.unreadBytesTotal)} unread${this.configured ? ` (connections.unreadBytesTotal in ${this.configured})` : ''}`)) return false;
    }
    this.record(client, (this.recorded.get(client) ?? 0) + bytes);
    return true;
  }

  /** What `uid`'s connections hold now. */
  use(uid: number): ConnectionUse {
    const mine = this.byUid.get(uid) ?? new Set<LedgerClient>();
    let unreadBytes = 0;
    for (const c of mine) unreadBytes += c.unread();
    return { open: mine.size, maxOpen: uid === 0 ? null : this.limits.perUser, unreadBytes, maxUnreadBytes: this.limits.unreadBytesPerUser };
  }

  /** Every connection, for tests and the log: how many, and how much unread, per uid. */
  usage(): Map<number, { open: number; unreadBytes: number }> {
    return new Map([...this.byUid.keys()].map((uid) => [uid, this.use(uid)]));
  }

  private holders(): string {
    return [...this.byUid.entries()]
      .sort((a, b) => b[1].size - a[1].size)
      .slice(0, 5)
      .map(([uid, set]) => `uid ${uid}: ${set.size}`)
      .join(', ');
  }

  private evictUntil(group: Set<LedgerClient>, fits: () => boolean, client: LedgerClient, why: string): boolean {
    while (!fits()) {
      let victim: LedgerClient | null = null;
      for (const c of group) if ((this.recorded.get(c) ?? 0) > (victim ? this.recorded.get(victim)! : 0)) victim = c;
      if (!victim) return true; // nothing unread anywhere: the line goes whole to a client that reads
      const held = this.recorded.get(victim)!;
      this.remove(victim);
      victim.evict(`${why}, and it held the most (${size(held)}) unread`);
      if (victim === client) return false;
    }
    return true;
  }

  private refresh(group: Iterable<LedgerClient>): void {
    for (const c of [...group]) this.record(c, c.unread());
  }

  private record(client: LedgerClient, unread: number): void {
    const delta = unread - (this.recorded.get(client) ?? 0);
    this.recorded.set(client, unread);
    this.recordedTotal += delta;
    this.recordedByUid.set(client.uid, (this.recordedByUid.get(client.uid) ?? 0) + delta);
  }
}
