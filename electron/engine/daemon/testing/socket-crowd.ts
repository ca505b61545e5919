// Many raw connections to a LabBox daemon from one user (a process of theirs, made with setpriv): each
// sends a request, then either reads its answers or never does. What the daemon did with each connection
// (served, refused with why, disconnected) comes back once every one is settled; they stay open until end().
import { spawn, type ChildProcess } from 'node:child_process';
import type { LabBox, LabUser } from './lab-box.js';

export interface CrowdOptions {
  count: number;
  /** The request line each connection sends (default session.whoami); sent `repeat` times. */
  request?: { method: string; params: unknown };
  repeat?: number;
  /** Events each connection subscribes to first (none by default). */
  subscribe?: string[];
  /** Read the answers (a well-behaved client) or never read anything (paused from the start). */
  read: boolean;
}

export interface CrowdReport {
  /** Connections the daemon answered (reading clients), or that connected and sent (non-reading ones). */
  served: number;
  /** Refusals the daemon sent before closing a connection (id -1), by message, with how many. */
  refused: Record<string, number>;
  /** Reading connections closed without a refusal. */
  closed: number;
  /** Errors by code (EAGAIN past every retry, ECONNRESET…). */
  errors: Record<string, number>;
  /** The last answer a served reading connection got. */
  last: unknown;
}

export interface Crowd {
  report: Promise<CrowdReport>;
  /** Close every connection and end the process. */
  end(): Promise<void>;
}

// argv: path options-json. At most 50 connects in flight; a full listen backlog (EAGAIN) is tried again.
const CROWD = `
const net = require('node:net');
const [path, raw] = process.argv.slice(1);
const o = JSON.parse(raw);
const report = { served: 0, refused: {}, closed: 0, errors: {}, last: null };
const sockets = [];
let settled = 0; let next = 0; let inFlight = 0;
const settle = () => { if (++settled === o.count) process.stdout.write(JSON.stringify(report) + '\\n'); };
process.stdin.on('end', () => { for (const s of sockets) s.destroy(); process.exit(0); });
process.stdin.resume();
const line = (id) => JSON.stringify({ kind: 'request', id, method: o.request.method, params: o.request.params }) + '\\n';
const more = () => { while (inFlight < 50 && next < o.count) { next++; inFlight++; open(0); } };
const open = (tries) => {
  const s = net.connect(path);
  let connected = false; let done = false; let text = '';
  const finish = () => { if (!done) { done = true; settle(); } };
  s.on('error', (e) => {
    if (!connected && e.code === 'EAGAIN' && tries < 1000) return setTimeout(() => open(tries + 1), 5);
    if (!connected) { inFlight--; more(); }
    if (done) return; // one outcome a connection: a refused one's later EPIPE is not a second
    report.errors[e.code] = (report.errors[e.code] || 0) + 1;
    finish();
  });
  s.on('connect', () => {
    connected = true; inFlight--; sockets.push(s); more();
    let batch = o.subscribe ? JSON.stringify({ kind: 'subscribe', events: o.subscribe }) + '\\n' : '';
    for (let i = 1; i <= o.repeat; i++) batch += line(i);
    s.write(batch);
    if (!o.read) { s.pause(); report.served++; return finish(); }
    s.setEncoding('utf8');
    s.on('data', (d) => {
      text += d; let k;
      while ((k = text.indexOf('\\n')) >= 0) {
        const m = JSON.parse(text.slice(0, k)); text = text.slice(k + 1);
        if (m.kind !== 'response') continue;
        if (m.id === -1 && !done) { report.refused[m.error.message] = (report.refused[m.error.message] || 0) + 1; finish(); }
        else if (!done) { report.served++; report.last = m.ok ? m.result : m.error; finish(); }
      }
    });
    s.on('close', () => { if (!done) { report.closed++; finish(); } });
  });
};
more();`;

/** `options.count` connections to box's daemon as `user`. */
export function crowd(box: LabBox, user: LabUser, options: CrowdOptions): Crowd {
  const settings = { request: { method: 'session.whoami', params: {} }, repeat: 1, ...options };
  const child: ChildProcess = spawn('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', process.execPath, '-e', CROWD, box.socketPath, JSON.stringify(settings)], {
    cwd: '/',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const report = new Promise<CrowdReport>((resolve, reject) => {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as CrowdReport);
    });
    child.once('exit', (code, signal) => reject(new Error(`the crowd of ${user.name} ended (${code ?? signal}) before it settled: ${err}`)));
  });
  report.catch(() => undefined); // whoever awaits it sees the rejection; end() alone must not leave it unhandled
  return {
    report,
    end: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}
