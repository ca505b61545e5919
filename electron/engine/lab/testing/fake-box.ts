// A stand-in box daemon on a unix socket for the hub's tests (no root): it answers what the hub asks
// (whoami, the latest snapshot, jobs, policy), pushes a snapshot to subscribers every tick, and can
// be stopped, frozen (accepts, never answers: a stopped process) or made to send garbage.
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { Snapshot } from '../../../../shared/snapshot.js';
import { readLines } from '../../server/read-lines.js';

export class FakeBox {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  /** Accept connections but answer nothing and send nothing. */
  frozen = false;
  /** Every request's method, in the order they came (a frozen box hears them too). */
  readonly heard: string[] = [];
  /** Send this instead of the next snapshot line. */
  garbage: string | null = null;
  /** Answer these methods only after this many milliseconds (a busy daemon), snapshots ticking meanwhile. */
  delays: Record<string, number> = {};
  /** Refuse these methods with this error, as the daemon's dispatcher would. */
  refusals: Record<string, { code: string; message: string }> = {};

  constructor(
    readonly path: string,
    readonly user = 'alice',
    private readonly tickMs = 50,
  ) {}

  snapshot(): Snapshot {
    return {
      seq: this.seq,
      takenAt: Date.now(),
      intervalMs: this.tickMs,
      nominalIntervalMs: this.tickMs,
      driver: { driverVersion: 'fake', nvmlVersion: 'fake', cudaDriverVersion: null, simulated: true, scenario: 'fake' },
      gpus: [],
      processes: [],
    };
  }

  get latestSeq(): number {
    return this.seq;
  }

  async start(): Promise<void> {
    rmSync(this.path, { force: true });
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      (socket as Socket & { subscribed?: boolean }).subscribed = false;
      readLines(socket, (line) => {
        if (!line.trim()) return;
        const message = JSON.parse(line) as { kind: string; id: number; method: string };
        if (message.kind === 'request') this.heard.push(message.method);
        if (this.frozen) return;
        if (message.kind === 'subscribe') (socket as Socket & { subscribed?: boolean }).subscribed = true;
        if (message.kind !== 'request') return;
        const results: Record<string, unknown> = {
          'session.whoami': { user: this.user, uid: 1000, admin: false, engine: { kind: 'daemon', owner: 'root', pid: 1 }, otherEngines: [], consoleUrl: null },
          'snapshot.latest': this.snapshot(),
          'jobs.list': [],
          'policy.get': null,
        };
        const refused = this.refusals[message.method];
        if (refused) return void socket.write(JSON.stringify({ kind: 'response', id: message.id, ok: false, error: refused }) + '\n');
        const ok = Object.hasOwn(results, message.method);
        const answer = JSON.stringify(ok ? { kind: 'response', id: message.id, ok: true, result: results[message.method] } : { kind: 'response', id: message.id, ok: false, error: { code: 'unsupported', message: message.method } }) + '\n';
        const delay = this.delays[message.method];
        if (delay) setTimeout(() => !socket.destroyed && socket.write(answer), delay);
        else socket.write(answer);
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.path, () => resolve());
    });
    this.timer = setInterval(() => this.tick(), this.tickMs);
  }

  private tick(): void {
    if (this.frozen) return;
    this.seq++;
    for (const socket of this.sockets) {
      if (!(socket as Socket & { subscribed?: boolean }).subscribed) continue;
      if (this.garbage !== null) socket.write(this.garbage + '\n');
      else socket.write(JSON.stringify({ kind: 'event', event: 'snapshot', data: this.snapshot() }) + '\n');
    }
  }

  /** As if the daemon died: its connections and its socket gone. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(this.path, { force: true });
  }
}
