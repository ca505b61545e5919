// Fuzz: a real engine (`gpushare serve` on the simulated driver, in a child process so its death is seen) gets
// a few thousand hostile messages on its unix socket, its console's WebSocket and its HTTP server, drawn from a
// fixed seed: mutated params for every API method, mutated envelopes and JSON, invalid UTF-8, oversized messages,
// odd URLs, and each crash issue 16 found. It never dies, refuses each bad request with a well-formed error,
// changes no state for them (its jobs, MPS, lab policy, audited successes), and its memory stays bounded.
// Then (root only) the box daemon's socket as a non-admin user the test creates, beside her own idle,
// never-reading and crowding connections: no death, every reply well-formed, and her connections, her
// unread bytes and the daemon's memory within their bounds (counts and bytes, never time).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
import { isRoot, LabBox, type LabUser } from '../daemon/testing/lab-box.js';
import { crowd } from '../daemon/testing/socket-crowd.js';
import { fakegpuBuildDir } from '../paths.js';
import { startEngineChild, type EngineChild } from './testing/engine-child.js';
import { changesState, FUZZ_JOB, httpCases, wireCases, type WireCase } from './testing/fuzz-cases.js';
import { rawHttp } from './testing/raw-http.js';
import { seededRandom } from '../testing/seeded-random.js';
import { socketProbe, webSocketProbe, type Exchange, type Reply } from './testing/wire-probe.js';

const SEED = 0x16f022;
const SOCKET_CASES = 1000;
const WEBSOCKET_CASES = 1000;
const HTTP_CASES = 400;
/** Generous: the 900 KB refusals, the engine's own growth over the run, a heap the GC has not shrunk yet. */
const RSS_GROWTH_BOUND = 200 * 1024 * 1024;
const ERROR_CODES = ['invalid-request', 'not-found', 'forbidden', 'conflict', 'unsupported', 'rate-limited'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why this exchange is wrong for its case, or null. */
function judge(c: WireCase, exchange: Exchange, transport: string): string | null {
  if (exchange.closed) {
    if (c.expect !== 'closes') return `the engine closed the connection (${exchange.closed.code ?? ''} ${exchange.closed.reason})`;
    if (transport === 'WebSocket' && ![1007, 1009].includes(exchange.closed.code ?? 0)) return `closed with ${exchange.closed.code}, not 1007 or 1009`;
    return null;
  }
  const refusing = c.expect === 'refused' || c.expect === 'validation';
  if (refusing && exchange.replies.length === 0) return 'no reply';
  for (const reply of exchange.replies) {
    const wrong = judgeReply(reply, c);
    if (wrong) return wrong;
  }
  return null;
}

function judgeReply(reply: Reply, c: WireCase): string | null {
  if (reply.kind !== 'response') return `a reply that is no response: ${JSON.stringify(reply).slice(0, 200)}`;
  if (typeof reply.id !== 'number') return `a response without an id: ${JSON.stringify(reply).slice(0, 200)}`;
  if (reply.ok === true) return c.expect === 'any' ? null : `accepted: ${JSON.stringify(reply.result).slice(0, 200)}`;
  const code = reply.error?.code;
  const message = reply.error?.message;
  if (reply.ok !== false || typeof code !== 'string' || typeof message !== 'string' || message.length === 0) return `a malformed error: ${JSON.stringify(reply).slice(0, 200)}`;
  if (!ERROR_CODES.includes(code)) return `error ${code}: ${message.slice(0, 200)}`;
  // a caller past the refusal rate is not looked at: refused as a whole, which is as good as a validation error
  if (c.expect === 'validation' && code !== 'invalid-request' && code !== 'rate-limited') return `${code}, not a validation error: ${message.slice(0, 200)}`;
  return null;
}

/** One request on a fresh socket connection; its response. */
async function call(engine: EngineChild, method: string, params: unknown): Promise<Reply> {
  const probe = socketProbe(engine.socketPath);
  const { replies } = await probe.exchange(JSON.stringify({ kind: 'request', id: 1, method, params }));
  probe.close();
  return replies[0] ?? {};
}

/** What a refused request must not change: the jobs as set, MPS, the lab policy, and the successes the audit lists. */
interface EngineState {
  view: { jobs: unknown; mps: unknown; policy: unknown; auditedOk: Array<[number, string]> };
  lastAuditId: number;
}

async function stateOf(engine: EngineChild): Promise<EngineState> {
  const jobs = ((await call(engine, 'jobs.list', { includeFinished: true })).result as Array<Record<string, unknown>>).map((j) =>
    Object.fromEntries(['id', 'state', 'priority', 'memoryQuotaBytes', 'memoryRequestBytes', 'mode', 'gpu', 'requestedGpu', 'mpsSharePercent', 'migSlice', 'argv', 'suspendedBy'].map((k) => [k, j[k]])),
  );
  const audit: Array<{ id: number; what: string; result: string }> = [];
  for (let before: number | undefined, page: typeof audit; (page = ((await call(engine, 'audit.list', { limit: 1000, before })).result ?? []) as typeof audit).length > 0; before = page[page.length - 1].id) audit.push(...page);
  return {
    view: { jobs, mps: (await call(engine, 'mps.status', {})).result, policy: await call(engine, 'policy.get', {}), auditedOk: audit.filter((e) => e.result === 'ok' && changesState(e.what)).map((e): [number, string] => [e.id, e.what]) },
    lastAuditId: audit.reduce((last, e) => Math.max(last, e.id), 0),
  };
}

test('fuzz: a few thousand hostile messages over the unix socket, the WebSocket and HTTP never kill the engine, each is refused well-formed, none changes state, memory stays bounded', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-fuzz-'));
  const engine = await startEngineChild(dir);
  let jobPid: number | null = null;
  t.after(async () => {
    if (!engine.exited()) await call(engine, 'jobs.terminate', { job: FUZZ_JOB }).catch(() => undefined);
    if (jobPid) {
      try {
        process.kill(jobPid, 'SIGKILL');
      } catch {
        // already ended
      }
    }
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // a job the refused requests name: one wrongly accepted would change it
  const fakejob = join(fakegpuBuildDir(), 'fakejob');
  const argv = existsSync(fakejob) ? [fakejob, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '600'] : ['sleep', '600'];
  const submitted = await call(engine, 'jobs.submit', { argv, gpu: 0 });
  assert.equal(submitted.ok, true, JSON.stringify(submitted));
  for (let i = 0; ; i++) {
    const j1 = ((await call(engine, 'jobs.list', {})).result as Array<{ id: string; state: string; pid: number | null }>).find((j) => j.id === FUZZ_JOB);
    if (j1?.state === 'running' && j1.pid) {
      jobPid = j1.pid;
      break;
    }
    if (i === 200) assert.fail(`${FUZZ_JOB} never ran: ${JSON.stringify(j1)}`);
    await sleep(50);
  }

  // clients that never read, all along: their unread events must stay bounded too
  const idleSocket = connect(engine.socketPath);
  idleSocket.on('error', () => undefined);
  idleSocket.write(JSON.stringify({ kind: 'subscribe', events: ['snapshot', 'jobs', 'alert', 'conditions'] }) + '\n');
  idleSocket.pause();
  const idleWeb = new WebSocket(`ws://127.0.0.1:${engine.port}/api?token=${engine.token}`, { origin: `http://127.0.0.1:${engine.port}` });
  idleWeb.on('error', () => undefined);
  await new Promise((resolve) => idleWeb.once('open', resolve));
  idleWeb.pause();
  t.after(() => {
    idleSocket.destroy();
    idleWeb.terminate();
  });

  const before = await stateOf(engine);
  const rssBefore = engine.rss();
  const rnd = seededRandom(SEED);
  // a case that killed the engine resolves at once, instead of waiting for an answer
  const died = engine.whenExited.then((why): Exchange => ({ replies: [], closed: { code: null, reason: why } }));
  const failures: string[] = [];
  let tried = 0;
  let crash: string | null = null;
  const phases: string[] = [];
  let phaseStart = Date.now();

  for (const [transport, probe, cases] of [
    ['unix socket', socketProbe(engine.socketPath), wireCases(rnd, SOCKET_CASES, { tenMegabytes: false })],
    ['WebSocket', webSocketProbe(engine.port, engine.token), wireCases(rnd, WEBSOCKET_CASES, { tenMegabytes: true })],
  ] as const) {
    for (const c of cases) {
      const guard = stuckGuard();
      const exchange = await Promise.race([probe.exchange(c.payload), died, guard.stuck]).catch((error: Error) => error);
      guard.cancel();
      tried++;
      if (exchange instanceof Error) {
        // no connection: the engine is gone (its exit is on its way) or refuses clients
        const gone = stuckGuard();
        crash = await Promise.race([engine.whenExited, gone.stuck.then(() => `it refused a new ${transport} connection after ${c.label}: ${exchange.message}`)]);
        gone.cancel();
        break;
      }
      if (engine.exited()) {
        crash = `${engine.exited()} on ${transport}: ${c.label}`;
        break;
      }
      if (exchange === 'stuck') {
        crash = `it stopped answering (${transport}: ${c.label}: no answer for ${STUCK_MS / 1000} s to the request's id or to the ping after it)`;
        break;
      }
      const wrong = judge(c, exchange, transport);
      if (wrong) failures.push(`${transport}: ${c.label}: ${wrong}`);
    }
    probe.close();
    phases.push(`${transport} ${Date.now() - phaseStart} ms`);
    phaseStart = Date.now();
    if (crash) break;
  }

  let noReply = 0; // connections closed without a status
  if (!crash) {
    for (const c of httpCases(rnd, HTTP_CASES, engine.port, engine.token)) {
      const reply = await rawHttp(engine.port, c.head).catch((error: Error) => error);
      tried++;
      if ((crash = engine.exited())) break;
      if (reply instanceof Error) {
        noReply++;
        failures.push(`HTTP: ${c.label}: ${reply.message}`);
      }      else if (reply.status < 200 || reply.status > 599 || (reply.status === 200 && c.label.startsWith('upgrade'))) failures.push(`HTTP: ${c.label}: status ${reply.status}`);
    }
  }

  phases.push(`HTTP ${Date.now() - phaseStart} ms`);
  const rssAfter = crash ? 0 : engine.rss();
  process.stdout.write(
    `# fuzz (seed ${SEED.toString(16)}): ${tried} cases tried, crashes ${crash ? 1 : 0}${crash ? ` (${crash})` : ''}, ${failures.length} wrong replies, ${noReply} HTTP requests closed without a status\n` +
      `# fuzz: ${phases.join(', ')}; engine RSS before ${(rssBefore / 2 ** 20).toFixed(1)} MB, after ${(rssAfter / 2 ** 20).toFixed(1)} MB\n`,
  );
  for (const failure of failures.slice(0, 30)) process.stdout.write(`# fuzz failure: ${failure}\n`);
  assert.equal(crash, null, `the engine died: ${crash}\n${engine.stderr().slice(-4000)}`);

  const after = await stateOf(engine);
  // audit entries of earlier successes may have aged out behind the refusals; a new success may not appear
  const keptOk = new Set(after.view.auditedOk.map(([id]) => id));
  assert.deepEqual(after.view, { ...before.view, auditedOk: before.view.auditedOk.filter(([id]) => keptOk.has(id)) }, 'no refused request changed state');
  const newSuccesses = after.view.auditedOk.filter(([id]) => id > before.lastAuditId);
  assert.deepEqual(newSuccesses, [], 'no request in the fuzz was accepted as a change');
  assert.deepEqual(failures, [], `${failures.length} replies were wrong`);
  assert.ok(rssAfter - rssBefore < RSS_GROWTH_BOUND, `the engine grew by ${((rssAfter - rssBefore) / 2 ** 20).toFixed(1)} MB`);
});

/** A hang detector, not a latency bound: an engine that answers nothing for this long is stuck (or its loop blocked). */
const STUCK_MS = 30_000;
function stuckGuard(): { stuck: Promise<'stuck'>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), STUCK_MS)));
  return { stuck, cancel: () => clearTimeout(timer) };
}

const DAEMON_CASES = 600;
const DAEMON_LIMITS = { perUser: 16, unreadBytesPerUser: 8 * 1024 * 1024 };
/** One line past a bound: the line that crosses it is written whole to a client that has read everything. */
const LINE_SLACK = 2 * 1024 * 1024;
const SKIP_DAEMON = isRoot() ? false : 'needs root: the box daemon runs as root and the test creates its user (CI runs as root)';

// Runs as the user: a unix socket whose every connection it relays, byte for byte, to the daemon's socket,
// so the test's probe (root) reaches the daemon as that user.
const BRIDGE = `
const net = require('node:net');
const [listenPath, daemonPath] = process.argv.slice(1);
net.createServer((c) => {
  const d = net.connect(daemonPath);
  c.pipe(d); d.pipe(c);
  const end = () => { c.destroy(); d.destroy(); };
  for (const s of [c, d]) { s.on('error', end); s.on('close', end); }
}).listen(listenPath, () => process.stdout.write('ready\\n'));
process.stdin.on('end', () => process.exit(0)); process.stdin.resume();`;

/** A bridge as `user` listening in a folder of theirs; resolves with its path once it listens. */
async function bridgeAs(box: LabBox, user: LabUser): Promise<{ path: string; end(): Promise<void> }> {
  const dir = join(box.dir, 'bridge');
  mkdirSync(dir, { mode: 0o700 });
  chownSync(dir, user.uid, user.gid);
  const path = join(dir, 'relay.sock');
  const child = spawn('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', process.execPath, '-e', BRIDGE, path, box.socketPath], { cwd: '/', stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the bridge as ${user.name} exited (${code})`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    path,
    end: () => {
      child.stdin!.end();
      return exited;
    },
  };
}

test('fuzz on the box daemon as a non-admin user it creates, beside her idle, never-reading and crowding connections: no death, well-formed refusals, and her connections, her unread bytes and the daemon\'s memory within their bounds', { skip: SKIP_DAEMON, timeout: 600_000 }, async (t) => {
  const box = new LabBox(`fz${process.pid % 10000}`);
  const ends: Array<() => unknown> = [];
  t.after(async () => {
    for (const end of ends.reverse()) await end(); // her clients first: a user with processes left is not removed
    await box.dispose();
  });
  const mallory = box.user('mallory');
  await box.start({ rateHz: 2, connections: DAEMON_LIMITS }, 'a100-40gb');
  const pid = box.daemon!.pid!;
  const rss = (): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  // before the fuzz (past its refusals her changes are heard once a second): an answer of ~120 KB she may ask for as often as she likes: her own finished job's arguments
  const bulky = await box.ok(mallory, 'jobs.submit', { argv: ['/bin/false', 'x'.repeat(120_000)], cwd: '/', gpu: 0 });
  for (let i = 0; (await box.ok(mallory, 'jobs.list', { includeFinished: true })).find((j) => j.id === bulky.id)?.state !== 'failed'; i++) {
    if (i === 200) assert.fail(`${bulky.id} never ended`);
    await sleep(100);
  }
  const bridge = await bridgeAs(box, mallory);
  ends.push(() => bridge.end());
  type Use = { open: number; maxOpen: number | null; unreadBytes: number; maxUnreadBytes: number };
  const uses: Use[] = [];
  const sample = async (): Promise<void> => {
    const use = (await box.ok(mallory, 'session.whoami', {})).connections as Use;
    uses.push(use);
  };

  // beside the fuzz, all along: idle connections (half her bound) and one subscribed to everything that never reads
  const idle = crowd(box, mallory, { count: DAEMON_LIMITS.perUser / 2, read: true });
  const deaf = crowd(box, mallory, { count: 1, read: false, subscribe: ['snapshot', 'jobs', 'alert', 'conditions'] });
  ends.push(() => Promise.all([idle.end(), deaf.end()]));
  assert.equal((await idle.report).served, DAEMON_LIMITS.perUser / 2);
  await deaf.report;
  const rssBefore = rss();

  const probe = socketProbe(bridge.path);
  const failures: string[] = [];
  let crash: string | null = null;
  for (const [i, c] of wireCases(seededRandom(SEED + 1), DAEMON_CASES, { tenMegabytes: false }).entries()) {
    const guard = stuckGuard();
    const exchange = await Promise.race([probe.exchange(c.payload), guard.stuck]).catch((error: Error) => error);
    guard.cancel();
    if (box.daemon!.exitCode !== null || box.daemon!.signalCode !== null) crash = `the daemon exited after ${c.label}`;
    else if (exchange === 'stuck') crash = `it stopped answering after ${c.label}`;
    else if (exchange instanceof Error) crash = `no connection after ${c.label}: ${exchange.message}`;
    if (crash) break;
    const wrong = judge(c, exchange as Exchange, 'unix socket');
    if (wrong) failures.push(`${c.label}: ${wrong}`);
    if (i % 100 === 0) await sample();
  }
  probe.close();
  assert.equal(crash, null, `${crash}\n${box.output.slice(-4000)}`);

  // then she crowds: 40 more connections, then 6 that ask 200 times for a large answer and never read
  const more = crowd(box, mallory, { count: 40, read: true });
  const crowded = await more.report;
  uses.push((crowded.last as { connections: Use }).connections); // what her last served one was told: she has no room left to ask
  await more.end();
  const unread = crowd(box, mallory, { count: 6, read: false, repeat: 200, request: { method: 'jobs.list', params: { includeFinished: true } } });
  ends.push(() => unread.end());
  await unread.report;
  for (let i = 0; i < 20; i++) {
    await sample();
    await sleep(250);
  }
  const grown = rss() - rssBefore;
  const peakOpen = Math.max(...uses.map((u) => u.open));
  const peakUnread = Math.max(...uses.map((u) => u.unreadBytes));
  const refusedCount = Object.values(crowded.refused).reduce((a, b) => a + b, 0) + Object.values(crowded.errors).reduce((a, b) => a + b, 0);
  process.stdout.write(
    `# daemon fuzz as ${mallory.name} (seed ${(SEED + 1).toString(16)}): ${DAEMON_CASES} cases, ${failures.length} wrong replies; her crowd of 40: ${crowded.served} served, ${refusedCount} refused; ` +
      `her connections at most ${peakOpen} (bound ${DAEMON_LIMITS.perUser}), unread at most ${(peakUnread / 2 ** 20).toFixed(1)} MiB (bound ${DAEMON_LIMITS.unreadBytesPerUser / 2 ** 20} MiB) over ${uses.length} samples; daemon RSS ${(rssBefore / 2 ** 20).toFixed(0)} -> ${(rss() / 2 ** 20).toFixed(0)} MiB\n`,
  );
  for (const failure of failures.slice(0, 30)) process.stdout.write(`# daemon fuzz failure: ${failure}\n`);
  assert.deepEqual(failures, [], `${failures.length} replies were wrong`);
  assert.ok(uses.every((u) => u.maxOpen === DAEMON_LIMITS.perUser && u.maxUnreadBytes === DAEMON_LIMITS.unreadBytesPerUser), 'whoami names her bounds');
  assert.ok(peakOpen <= DAEMON_LIMITS.perUser, `she held ${peakOpen} connections`);
  assert.ok(crowded.served + DAEMON_LIMITS.perUser / 2 + 1 <= DAEMON_LIMITS.perUser, `her crowd got ${crowded.served} more served beside the ${DAEMON_LIMITS.perUser / 2 + 1} she held`);
  assert.ok(refusedCount > 0, 'the rest of her crowd was refused');
  assert.ok(peakUnread <= DAEMON_LIMITS.unreadBytesPerUser + LINE_SLACK, `her connections held ${peakUnread} bytes unread`);
  assert.ok(grown < RSS_GROWTH_BOUND, `the daemon grew by ${(grown / 2 ** 20).toFixed(1)} MB`);
});
