// The box daemon's socket under one hostile user (issue 24, findings 5 and 11): a root daemon on the
// simulated GPUs (LabBox) and floods run by a user the bench creates, through raw connections:
//   unread: 60 connections each ask twice for a large answer (jobs.list with 8 finished jobs of
//           ~900 KB argv each, submitted by that user) and never read;
//   idle:   20,000 idle connections (two client processes of 10,000);
//   drip:   the daemon's line reader given a 32, 64 and 128 KB line one byte per read, its CPU (in
//           this process: over a socket the reads coalesce unless the client paces its bytes).
// After the first two: the daemon's RSS and open descriptors (flood still there, then a few seconds
// after it ended), whether another user is served during it, and what the flood's clients were told.
// The floods need root; the drip does not. Prints figures; never fails on time.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { LabBox, type LabUser } from '../electron/engine/daemon/testing/lab-box.js';
import { readLines } from '../electron/engine/server/read-lines.js';

const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Runs as the flooding user. argv: mode path count. Prints one JSON line of what it saw when
// its flood is in place ("ready"), and keeps its connections until its stdin closes.
const FLOOD = `
const net = require('node:net');
const [mode, path, count] = process.argv.slice(1);
const seen = { connected: 0, closedByDaemon: 0, refusals: {}, errors: {} };
let ready = false; let pending = Number(count);
const report = () => { if (!ready) { ready = true; process.stdout.write(JSON.stringify(seen) + '\\n'); } };
const sockets = [];
process.stdin.on('end', () => { for (const s of sockets) s.destroy(); process.exit(0); });
process.stdin.resume();
const done = () => { if (--pending === 0) setTimeout(report, 3000); };
// at most 100 connects in flight (a full listen backlog answers EAGAIN: tried again shortly)
let next = 0; let inFlight = 0;
const openMore = () => { while (inFlight < 100 && next < (mode === 'submit' ? 1 : Number(count))) { next++; inFlight++; open(0); } };
const open = (tries) => {
  const s = net.connect(path);
  let text = ''; let connected = false;
  s.on('error', (e) => {
    if (!connected && e.code === 'EAGAIN' && tries < 500) return setTimeout(() => open(tries + 1), 10);
    seen.errors[e.code] = (seen.errors[e.code] || 0) + 1;
    if (!connected) { inFlight--; done(); openMore(); }
  });
  s.on('close', () => { if (!connected) return; seen.closedByDaemon++; const m = /"message":"([^"]{0,160})/.exec(text); if (m) seen.refusals[m[1]] = (seen.refusals[m[1]] || 0) + 1; });
  s.on('connect', () => {
    connected = true; sockets.push(s); seen.connected++; inFlight--; openMore();
    if (mode === 'unread') {
      const ask = JSON.stringify({ kind: 'request', id: 1, method: 'jobs.list', params: { includeFinished: true } }) + '\\n';
      s.write(ask + ask.replace('"id":1', '"id":2'));
      s.pause();
      done();
    } else if (mode === 'idle') {
      s.setEncoding('utf8'); s.on('data', (d) => { if (text.length < 4096) text += d; });
      done();
    } else if (mode === 'submit') {
      // count jobs.submit of a job that fails at once, each with ~900 KB of arguments (too long for a command line here)
      const argv = ['/bin/false', ...Array.from({ length: 7 }, () => 'x'.repeat(120000))];
      for (let id = 1; id <= Number(count); id++) s.write(JSON.stringify({ kind: 'request', id, method: 'jobs.submit', params: { argv, cwd: '/', gpu: 0 } }) + '\\n');
      s.setEncoding('utf8'); let answers = 0;
      s.on('data', (d) => { text += d; let k; while ((k = text.indexOf('\\n')) >= 0) { const m = JSON.parse(text.slice(0, k)); text = text.slice(k + 1); seen[m.ok ? 'ok' : m.error.message] = (seen[m.ok ? 'ok' : m.error.message] || 0) + 1; if (++answers === Number(count)) { ready = true; process.stdout.write(JSON.stringify(seen) + '\\n'); } } });
    }
  });
};
openMore();`;

interface FloodClient {
  child: ChildProcess;
  seen: Promise<Record<string, unknown>>;
  end(): Promise<void>;
}

function flood(box: LabBox, user: LabUser, mode: string, count: number): FloodClient {
  const child = spawn('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', process.execPath, '-e', FLOOD, mode, box.socketPath, String(count)], { cwd: '/', stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const seen = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as Record<string, unknown>);
    });
    child.once('exit', (code) => reject(new Error(`flood client exited (${code}) before it was ready`)));
  });
  return {
    child,
    seen,
    end: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}

const daemonPid = (box: LabBox): number => box.daemon!.pid!;
const rss = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const fds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
const state = (pid: number): string => `RSS ${(rss(pid) / MiB).toFixed(0)} MiB, ${fds(pid)} descriptors`;

async function served(box: LabBox, user: LabUser): Promise<string> {
  try {
    const outcome = await box.call(user, 'session.whoami', {});
    return outcome.ok ? 'served' : `refused: ${outcome.error.message}`;
  } catch (error) {
    return `not served: ${(error as Error).message.trim().slice(0, 160)}`;
  }
}

/** BENCH_FLOODS=unread,idle,drip (default: all) runs only those. */
const FLOODS = new Set((process.env.BENCH_FLOODS ?? 'unread,idle,drip').split(','));

export async function socketFloods(): Promise<void> {
  if (FLOODS.has('drip')) drip();
  if (process.getuid?.() !== 0) {
    console.log('socket floods: skipped (needs root: a root daemon and users the bench creates)');
    return;
  }
  const box = new LabBox(`b${process.pid % 10000}`);
  try {
    const mallory = box.user('mallory');
    const alice = box.user('alice');
    await box.start({ rateHz: 1 }, 'a100-40gb');
    const pid = daemonPid(box);
    await sleep(2000);
    console.log(`daemon idle: ${state(pid)}`);

    if (FLOODS.has('unread')) await unreadFlood(box, mallory, alice, pid);
    if (FLOODS.has('idle')) await idleFlood(box, mallory, alice, pid);
  } finally {
    await box.dispose();
  }
}

async function unreadFlood(box: LabBox, mallory: LabUser, alice: LabUser, pid: number): Promise<void> {
  // a large answer mallory may ask for: her own finished jobs, each with ~900 KB of arguments
  const submit = flood(box, mallory, 'submit', 8);
  const submitted = await submit.seen;
  await submit.end();
  await sleep(2000);
  const answer = JSON.stringify(await box.ok(mallory, 'jobs.list', { includeFinished: true })).length;
  const unread = flood(box, mallory, 'unread', 60);
  const unreadSeen = await unread.seen;
  await sleep(3000);
  console.log(`8 submits of ~900 KB: ${JSON.stringify(submitted)}`);
  console.log(`unread flood (60 connections × 2 jobs.list of ${(answer / MiB).toFixed(1)} MiB, never read): during: ${state(pid)}; alice ${await served(box, alice)}; clients saw ${JSON.stringify(unreadSeen)}`);
  await unread.end();
  await sleep(5000);
  console.log(`unread flood ended 5 s ago: ${state(pid)}`);
}

async function idleFlood(box: LabBox, mallory: LabUser, alice: LabUser, pid: number): Promise<void> {
  const idle = [flood(box, mallory, 'idle', 10_000), flood(box, mallory, 'idle', 10_000)];
  const idleSeen = await Promise.all(idle.map((f) => f.seen.catch((error: Error) => ({ failed: error.message }))));
  console.log(`idle flood (2 × 10,000 connections): during: ${state(pid)}; alice ${await served(box, alice)}; clients saw ${JSON.stringify(idleSeen)}`);
  await Promise.all(idle.map((f) => f.end()));
  await sleep(5000);
  console.log(`idle flood ended 5 s ago: ${state(pid)}; alice ${await served(box, alice)}`);
}

/** The daemon's line reader fed a line one byte per read (as a client sending a byte at a time can make it): its CPU. */
function drip(): void {
  for (const kb of [32, 64, 128]) {
    const stream = new PassThrough();
    let lines = 0;
    readLines(stream, () => lines++);
    const start = process.cpuUsage();
    for (let i = 0; i < kb * 1024; i++) stream.emit('data', 'x');
    stream.emit('data', '\n');
    const used = process.cpuUsage(start);
    console.log(`line reader, a ${kb} KB line one byte per read: ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ${lines} line`);
  }
}
