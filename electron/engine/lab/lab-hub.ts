// The hub: one link per box of the lab list, each kept up on its own (reconnecting with backoff),
// merged into one LabSnapshot. Boxes never wait for each other: a slow, stopped or unreachable box
// is only that box's state ("down since …, the last error in words"), never a delay for the rest.
import type { ApiEvents } from '../../../shared/api.js';
import type { JobView } from '../../../shared/jobs.js';
import type { BoxCaller, BoxConnection, LabBox, LabBoxSpec, LabSnapshot } from '../../../shared/lab.js';
import type { LabPolicyStatus } from '../../../shared/lab-policy.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { BoxClient } from './box-client.js';
import { LinkError, openBoxLink, type BoxLink, type LinkOptions } from './box-link.js';

export interface LabHubOptions extends Omit<LinkOptions, 'relayOnly'> {
  /** The first wait after a failure, doubled each time up to maxRetryMs (defaults 1 s and 30 s). */
  firstRetryMs?: number;
  maxRetryMs?: number;
  /** A connected box that sends no snapshot this long is taken as down (default 15 s). */
  silentMs?: number;
  /** The person's standing under each box's lab policy is read again after a change of jobs there, at most this often (default 2 s), and at least every 30 s. */
  policyEveryMs?: number;
}

type Listener = (lab: LabSnapshot) => void;

/** The lab as one object: start() it, read snapshot() or listen with onUpdate(), act on a box through client(name). */
export class LabHub {
  private readonly boxes: BoxSession[];
  private readonly listeners = new Set<Listener>();

  constructor(specs: readonly LabBoxSpec[], options: LabHubOptions) {
    this.boxes = specs.map((spec) => new BoxSession(spec, options, () => this.changed()));
  }

  start(): void {
    for (const box of this.boxes) box.start();
  }

  snapshot(): LabSnapshot {
    return { takenAt: Date.now(), boxes: this.boxes.map((b) => b.view()) };
  }

  /** Called on every change of any box (a snapshot, jobs, its state); returns the unsubscribe. */
  onUpdate(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The connected box's API (every action goes to that box's daemon), or null while it is not connected. */
  client(name: string): BoxClient | null {
    return this.boxes.find((b) => b.spec.name === name)?.client() ?? null;
  }

  /** Resolves once every box has been tried: connected with a snapshot, or failed once (at most `ms`). */
  settled(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): boolean => this.boxes.every((b) => b.settled());
      if (done()) return resolve();
      const timer = setTimeout(finish, ms);
      const off = this.onUpdate(() => done() && finish());
      function finish(): void {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  }

  close(): void {
    for (const box of this.boxes) box.close();
    this.listeners.clear();
  }

  private changed(): void {
    if (this.listeners.size === 0) return;
    const lab = this.snapshot();
    for (const listener of this.listeners) listener(lab);
  }
}

const sleep = (ms: number, timers: Set<NodeJS.Timeout>): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });

/** One box: its link, kept up by its own loop, and the latest of what it sent. */
class BoxSession {
  private connection: BoxConnection = { state: 'connecting', since: Date.now() };
  private link: BoxLink | null = null;
  private snapshot: Snapshot | null = null;
  private jobs: JobView[] = [];
  private policy: LabPolicyStatus | null = null;
  private caller: BoxCaller | null = null;
  private updatedAt: number | null = null;
  private closed = false;
  private triedOnce = false;
  /** The link's first asks (who you are, the jobs, the latest snapshot) came back: before, a one-shot view would show a box without them. */
  private firstRead = false;
  /** The box's sshd refused to forward sockets: use the relay from then on. */
  private relayOnly = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly spec: LabBoxSpec,
    private readonly options: LabHubOptions,
    private readonly changed: () => void,
  ) {}

  start(): void {
    void this.loop();
  }

  view(): LabBox {
    const route = this.spec.route;
    return {
      name: this.spec.name,
      reach: route.kind === 'ssh' ? `ssh ${route.destination}` : `socket ${route.path}`,
      connection: this.connection,
      snapshot: this.snapshot,
      jobs: this.jobs,
      policy: this.policy,
      caller: this.caller,
      updatedAt: this.updatedAt,
    };
  }

  client(): BoxClient | null {
    return this.connection.state === 'connected' ? (this.link?.client ?? null) : null;
  }

  settled(): boolean {
    return this.connection.state === 'connected' ? this.snapshot !== null && this.firstRead : this.triedOnce;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.link?.close();
  }

  private set(connection: BoxConnection): void {
    this.connection = connection;
    this.changed();
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    let downSince: number | null = null;
    let lastError = '';
    while (!this.closed) {
      attempt++;
      if (downSince !== null) this.set({ state: 'reconnecting', since: downSince, lastError, attempt });
      let link: BoxLink;
      try {
        link = await openBoxLink(this.spec, { ...this.options, relayOnly: this.relayOnly });
      } catch (error) {
        if (this.closed) return;
        lastError = `${this.spec.name}: ${error instanceof LinkError ? error.message : String(error)}`;
        downSince ??= Date.now();
        this.triedOnce = true;
        const wait = Math.min(this.options.maxRetryMs ?? 30_000, (this.options.firstRetryMs ?? 1000) * 2 ** Math.min(attempt - 1, 16));
        this.set({ state: 'down', since: downSince, lastError, attempt, nextTryAt: Date.now() + wait });
        await sleep(wait, this.timers);
        continue;
      }
      if (this.closed) return link.close();
      if (link.forwardingRefused) this.relayOnly = true;
      this.link = link;
      attempt = 0;
      downSince = null;
      const why = await this.serve(link);
      this.link = null;
      if (this.closed) return;
      lastError = `${this.spec.name}: ${why}`;
      downSince = Date.now();
      this.triedOnce = true;
      const wait = this.options.firstRetryMs ?? 1000;
      this.set({ state: 'down', since: downSince, lastError, attempt: 0, nextTryAt: Date.now() + wait });
      await sleep(wait, this.timers);
    }
  }

  /** Follow a connected box until its link ends; returns why it ended. */
  private async serve(link: BoxLink): Promise<string> {
    const client = link.client;
    const silentMs = this.options.silentMs ?? 15_000;
    let silence: NodeJS.Timeout | undefined;
    let silent: string | null = null;
    const watch = (): void => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        silent = `sent nothing for ${silentMs / 1000} s (is its daemon stopped?)`;
        link.close();
      }, silentMs);
    };
    const onSnapshot = (snapshot: ApiEvents['snapshot']): void => {
      this.snapshot = snapshot;
      this.updatedAt = Date.now();
      watch();
      this.changed();
    };
    const onJobs = (jobs: ApiEvents['jobs']): void => {
      this.jobs = jobs;
      this.updatedAt = Date.now();
      this.changed();
      policySoon(); // what the person's jobs hold there may have changed
    };
    this.firstRead = false;
    client.on('snapshot', onSnapshot);
    client.on('jobs', onJobs);
    client.subscribe(['snapshot', 'jobs']);
    watch();
    this.set({ state: 'connected', since: Date.now(), via: link.via });
    let policyRead = 0;
    let policyPending: NodeJS.Timeout | undefined;
    const readPolicy = async (): Promise<void> => {
      policyRead = Date.now();
      try {
        this.policy = await client.call('policy.get', {});
        this.changed();
      } catch {
        // the link's end says why; an old standing is better than none meanwhile
      }
    };
    const policyEveryMs = this.options.policyEveryMs ?? 2000;
    // policy.get reads usage from the box's store: asked after changes, never more than once per policyEveryMs
    function policySoon(): void {
      if (policyPending) return;
      policyPending = setTimeout(() => {
        policyPending = undefined;
        void readPolicy();
      }, Math.max(0, policyRead + policyEveryMs - Date.now()));
    }
    const policyTimer = setInterval(() => void readPolicy(), 30_000);
    try {
      const [who, snapshot, jobs] = await Promise.all([client.call('session.whoami', {}), client.call('snapshot.latest', {}), client.call('jobs.list', {}), readPolicy()]);
      this.caller = { user: who.user, uid: who.uid, admin: who.admin };
      if (snapshot && (this.snapshot === null || snapshot.takenAt >= (this.snapshot.takenAt ?? 0))) this.snapshot = snapshot;
      this.jobs = jobs;
      this.updatedAt = Date.now();
      this.firstRead = true;
      this.changed();
    } catch {
      // the link ended while asking (its end says why), or the box refused one: what came is what there is
      this.firstRead = true;
      this.changed();
    }
    const why = await link.ended;
    link.close(); // its ssh too, which outlives a daemon that went away
    clearTimeout(silence);
    clearTimeout(policyPending);
    clearInterval(policyTimer);
    return silent ?? why;
  }
}
