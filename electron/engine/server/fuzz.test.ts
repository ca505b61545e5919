// Fuzz: a real engine (`gpushare serve` on the simulated driver, in a child process so its death is seen) gets
// a few thousand hostile messages on its unix socket, its console's WebSocket and its HTTP server, drawn from a
// fixed seed: mutated params for every API method, mutated envelopes and JSON, invalid UTF-8, oversized messages,
// odd URLs, and each crash issue 16 found. It never dies, refuses each bad request with a well-formed error,
// changes no state for them (its jobs, MPS, lab policy, audited successes), and its memory stays bounded.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
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
const ERROR_CODES = ['invalid-request', 'not-found', 'forbidden', 'conflict', 'unsupported'];
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
  if (c.expect === 'validation' && code !== 'invalid-request') return `${code}, not a validation error: ${message.slice(0, 200)}`;
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
