// bench/daemon: the box daemon's CPU per tick with 0, 1, 10 and 50 subscribed clients on its unix socket (8 simulated
// GPUs × 64 processes, 1 Hz), and what of it the clients cost: each row minus the 0-client rows on either side of it. Rounds
// alternate the rows so that a loaded machine's noise falls on all of them alike. The clients run in another process,
// so the CPU measured is the engine's alone. Prints figures; never fails on time.
// Budget (DESIGN.md §7): < 5 ms CPU per tick for 50 clients (their cost, the 0-client row taken away).
import { spawn, type ChildProcess } from 'node:child_process';
import { fillBusyBox, GPUS, PROCESSES_PER_GPU } from './busy-box.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../electron/engine/engine.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { listenOnSocket } from '../electron/engine/server/socket-server.js';
import { benchQueuedJobs, queueRowText } from './queued-jobs.js';
import { labBoxSnapshot } from './lab-boxes.js';
import { noGpus } from '../electron/engine/store/testing/synthetic.js';
import { realBackend, simulatedBackend } from '../electron/engine/gpu/gpu-backend.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
/** BENCH_ROUNDS=3: each row measured this many times, the rows alternating; the medians are printed after. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** BENCH_CLIENTS=0,50: only those rows. */
const CLIENT_COUNTS = (process.env.BENCH_CLIENTS ?? '0,1,10,50').split(',').map(Number);
/** BENCH_ROWS=queue: only the queue rows; =fanout: only the fan-out rows; =clients: only the client rows. */
const ROWS = process.env.BENCH_ROWS ?? 'all';
/** BENCH_DELTAS=whole,deltas: how the clients take snapshots (whole, or as deltas after the first: snapshotDeltas). */
const DELTA_MODES = (process.env.BENCH_DELTAS ?? 'whole,deltas').split(',');
const QUEUE_LENGTHS = (process.env.BENCH_QUEUED ?? '100,10000').split(',').map(Number);

// N connections, each subscribed to snapshots (whole, or as deltas after the first: mode "deltas"); one line per snapshot received: "<ms late>"
// (from the sampler's timestamp to the whole line's arrival) and "<bytes>". Each reads every line whole but parses only its head.
// The lines are printed as they come until SIGUSR1, then held and printed at SIGTERM: the engine's process reading them
// while it is measured would count its own bookkeeping, 50 lines a tick, as the clients' cost.
const CLIENTS = `
const net = require('node:net');
const [path, count, mode] = process.argv.slice(1);
let hold = false; let held = '';
process.on('SIGUSR1', () => { hold = true; });
process.on('SIGTERM', () => { process.stdout.write(held); process.exit(0); });
for (let i = 0; i < Number(count); i++) {
  const s = net.connect(path); let buffer = '';
  s.on('connect', () => s.write(JSON.stringify({ kind: 'subscribe', events: ['snapshot'], snapshotDeltas: mode === 'deltas' }) + '\\n'));
  s.setEncoding('utf8');
  s.on('data', (d) => {
    buffer += d; let k;
    while ((k = buffer.indexOf('\\n')) >= 0) {
      const line = buffer.slice(0, k); buffer = buffer.slice(k + 1);
      // its head is enough: clients parsing 50 snapshots a second would take this 2-core box's other core from the engine
      const taken = /^\\{"kind":"event","event":"snapshot(?:\\.delta)?","data":\\{(?:"baseSeq":\\d+,)?"seq":\\d+,"takenAt":(\\d+)/.exec(line.slice(0, 140));
      if (!taken) continue;
      const report = (Date.now() - Number(taken[1])) + ' ' + Buffer.byteLength(line) + '\\n';
      if (hold) held += report; else process.stdout.write(report);
    }
  });
}`;

/** Tell the clients to hold their lines from now (nothing for this process to read while it is measured). */
async function holdReports(clients: ChildProcess): Promise<void> {
  clients.kill('SIGUSR1');
  await sleep(200);
}

/** The clients print what they held and exit; waits for it (5 s at most). */
async function endClients(clients: ChildProcess): Promise<void> {
  const ended = new Promise<void>((resolve) => clients.stdout!.once('end', () => resolve()));
  clients.kill('SIGTERM');
  await Promise.race([ended, sleep(5000)]);
  clients.kill('SIGKILL');
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const load = (): string => `load ${loadavg()[0].toFixed(1)}`;

/** CPU in ms per tick (or per emit), user and system apart. */
interface Cpu {
  user: number;
  system: number;
}
const total = (c: Cpu): number => c.user + c.system;
const cpuText = (c: Cpu): string => `${total(c).toFixed(2).padStart(6)} ms (user ${c.user.toFixed(2)}, system ${c.system.toFixed(2)})`;
const minus = (a: Cpu, b: Cpu): Cpu => ({ user: a.user - b.user, system: a.system - b.system });
const mean = (a: Cpu, b: Cpu): Cpu => ({ user: (a.user + b.user) / 2, system: (a.system + b.system) / 2 });
const medianCpu = (list: Cpu[]): Cpu => ({ user: median(list.map((c) => c.user)), system: median(list.map((c) => c.system)) });

/** One row measured: the whole process's CPU, and the CPU spent inside the snapshot event (sessions, deltas, encoding, socket writes). */
interface RowCpu {
  process: Cpu;
  inEvent: Cpu;
}

/**
 * The CPU spent while the bus emits `snapshot`, from the first listener to the last: every session's share of a tick
 * (its delta, its line, its socket write: a unix socket takes a line at once), without the sampler or the rest of the loop.
 */
function countSnapshotEvents(bus: { emit(event: 'snapshot', data: never): void }): { take(): { cpu: Cpu; events: number } } {
  const emit = bus.emit.bind(bus) as (event: string, data: unknown) => void;
  let user = 0;
  let system = 0;
  let events = 0;
  (bus as { emit: (event: string, data: unknown) => void }).emit = (event, data) => {
    if (event !== 'snapshot') return emit(event, data);
    const cpu0 = process.cpuUsage();
    emit(event, data);
    const cpu = process.cpuUsage(cpu0);
    user += cpu.user;
    system += cpu.system;
    events++;
  };
  return {
    take() {
      const taken = { cpu: { user: user / 1000, system: system / 1000 }, events };
      user = system = events = 0;
      return taken;
    },
  };
}

/** The rows with clients, each count in each mode; every round starts with a 0-client row, and one more ends the last. */
const CLIENT_ROWS: Array<{ count: number; mode: string }> = CLIENT_COUNTS.filter((c) => c > 0).flatMap((count) => DELTA_MODES.map((mode) => ({ count, mode })));
const ZERO = { count: 0, mode: '' };
const rowName = (r: { count: number; mode: string }): string => `${String(r.count).padStart(3)} clients ${r.mode.padEnd(6)}`;

/**
 * Each row measured ROUNDS times, the rows alternating, each round's clients' cost taken against the mean of the
 * 0-client rows on either side of it (the machine's load drifts); then the medians.
 */
async function measureRounds(unit: string, measure: (row: { count: number; mode: string }, round: number) => Promise<RowCpu>): Promise<void> {
  const zeros: RowCpu[] = [];
  const rows = new Map<string, RowCpu[]>();
  await measure(ZERO, -1); // not counted: the first row after start-up reads high (12-18 ms against 9-10 later)
  for (let round = 0; round < ROUNDS; round++) {
    zeros.push(await measure(ZERO, round));
    for (const row of CLIENT_ROWS) {
      const list = rows.get(rowName(row)) ?? [];
      rows.set(rowName(row), list);
      list.push(await measure(row, round));
    }
  }
  zeros.push(await measure(ZERO, ROUNDS));
  console.log(`medians of ${ROUNDS} round(s), ${unit}; the clients' cost is a row minus the mean of the 0-client rows before and after it:`);
  console.log(`  ${rowName(ZERO)}  process ${cpuText(medianCpu(zeros.map((z) => z.process)))}   in the snapshot event ${cpuText(medianCpu(zeros.map((z) => z.inEvent)))}   (${zeros.length} rows: ${zeros.map((z) => total(z.process).toFixed(1)).join(' ')})`);
  for (const [name, list] of rows) {
    const cost = list.map((r, round) => minus(r.process, mean(zeros[round].process, zeros[round + 1].process)));
    const inEvent = list.map((r, round) => minus(r.inEvent, mean(zeros[round].inEvent, zeros[round + 1].inEvent)));
    console.log(`  ${name}  clients' cost: process ${cpuText(medianCpu(cost))} (rounds ${cost.map((c) => total(c).toFixed(1)).join(' ')})   in the snapshot event ${cpuText(medianCpu(inEvent))} (rounds ${inEvent.map((c) => total(c).toFixed(2)).join(' ')})`);
  }
}

if (ROWS === 'all' || ROWS === 'queue') {
  console.log(`bench/daemon queue: one simulated A100, one running job, N queued jobs waiting for its memory (root's, past the per-user cap), job commands through the dispatcher one at a time (setPriority, cancel, submit), Node ${process.version}`);
  for (const queued of QUEUE_LENGTHS) console.log(queueRowText(await benchQueuedJobs(queued)));
}
if (ROWS === 'queue') process.exit(0);

if (ROWS === 'all' || ROWS === 'fanout') {
  // the fan-out alone: an engine with no GPUs (no sampler work) emits a snapshot of the same shape and size, every
  // process's memory and SM changing each time (a busier tick than the daemon rows' box), and the CPU of this process
  // per emit is what writing it to N socket clients costs, whoever else loads the box; building the snapshots is the 0-client row
  const fanDir = mkdtempSync(join(tmpdir(), 'gpushare-bench-fanout-'));
  const fanEngine = new Engine(realBackend(noGpus, () => undefined), { kind: 'daemon' });
  const fanSocket = await listenOnSocket(fanEngine, join(fanDir, 'engine.sock'), { shared: true });
  const EMITS = 20;
  const WARM_UP_EMITS = 40;
  console.log(`bench/daemon fan-out: one ${(Buffer.byteLength(JSON.stringify(labBoxSnapshot(0, 0, Date.now()))) / 1024).toFixed(0)} KiB snapshot (8 GPUs × 64 processes, all changing) emitted ${EMITS} times, 2 a second, to N subscribed socket clients in another process; this process's CPU per emit, and the part of it inside the snapshot event`);
  const events = countSnapshotEvents(fanEngine.events);
  let second = 0;
  try {
    await measureRounds('ms CPU per emit', async (row, round) => {
      const { count, mode } = row;
      const clients = spawn(process.execPath, ['-e', CLIENTS, fanSocket.path, String(count), mode || 'whole'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let received = 0;
      let bytes = 0;
      clients.stdout!.setEncoding('utf8').on('data', (d: string) => {
        for (const l of d.split('\n').filter(Boolean)) {
          received++;
          bytes += Number(l.split(' ')[1]);
        }
      });
      for (let i = 0; i < 50 && fanSocket.clients().length < count; i++) await sleep(100);
      await sleep(500);
      // warm-up, not measured: a daemon emits for hours, so its code (the delta's too) is the JIT's optimized one;
      // each emit waits (1 s at most) for every client to have read the one before, so none is cut off for falling behind
      for (let i = 0; i < WARM_UP_EMITS; i++) {
        fanEngine.events.emit('snapshot', labBoxSnapshot(0, second++, Date.now()));
        for (let w = 0; w < 20 && received < count * (i + 1); w++) await sleep(50);
      }
      await holdReports(clients);
      received = 0;
      bytes = 0;
      events.take();
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < EMITS; i++) {
        fanEngine.events.emit('snapshot', labBoxSnapshot(0, second++, Date.now()));
        await sleep(500); // every client reads it all before the next: nobody falls behind
      }
      await sleep(500);
      const cpu = process.cpuUsage(cpu0);
      const inEvent = events.take();
      await endClients(clients);
      const measured = {
        process: { user: cpu.user / 1000 / EMITS, system: cpu.system / 1000 / EMITS },
        inEvent: { user: inEvent.cpu.user / EMITS, system: inEvent.cpu.system / EMITS },
      };
      console.log(`  ${round < 0 ? 'warm-up' : `round ${round + 1}`} ${rowName(row)} process ${cpuText(measured.process)}   in the snapshot event ${cpuText(measured.inEvent)}   ${received} of ${count * EMITS} delivered, ${received ? (bytes / received / 1024).toFixed(1) : '—'} KiB each   ${load()}`);
      return measured;
    });
  } finally {
    await fanSocket.close();
    rmSync(fanDir, { recursive: true, force: true });
  }
}
if (ROWS === 'fanout') process.exit(0);

const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-daemon-'));
const driver = await SimulatedDriver.create({ scenario: 'h100x8' });
const sleepers: ChildProcess[] = [];
try {
  sleepers.push(...(await fillBusyBox(driver)));
  const nvml = openNvml(driver.nvmlLibraryPath);
  const engine = new Engine(simulatedBackend(driver, nvml), { rateHz: 1, kind: 'daemon' });
  const socket = await listenOnSocket(engine, join(dir, 'engine.sock'), { shared: true });
  engine.start();
  await sleep(3000); // past the first ticks and the JIT's warm-up
  const snapshotBytes = Buffer.byteLength(JSON.stringify(engine.sampler.latest));
  console.log(`bench/daemon: ${GPUS} simulated GPUs × ${PROCESSES_PER_GPU} processes (a snapshot is ${(snapshotBytes / 1024).toFixed(0)} KiB of JSON), 1 Hz, ${SECONDS} s per row, clients in another process, Node ${process.version}`);
  console.log('each row: the engine process\'s CPU per tick (CPU per second at 1 Hz), the part of it inside the snapshot event, snapshot delivery median / p99 / max');
  const events = countSnapshotEvents(engine.events);
  await measureRounds('ms CPU per tick', async (row, round) => {
    const { count, mode } = row;
    const clients = spawn(process.execPath, ['-e', CLIENTS, socket.path, String(count), mode || 'whole'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const delays: number[] = [];
    let partial = '';
    clients.stdout!.setEncoding('utf8');
    clients.stdout!.on('data', (d: string) => {
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const l of lines) delays.push(Number(l.split(' ')[0]));
    });
    await sleep(2500); // connected, subscribed, past the first ticks
    await holdReports(clients);
    delays.length = 0;
    events.take();
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await sleep(SECONDS * 1000);
    const cpu = process.cpuUsage(cpu0);
    const inEvent = events.take();
    const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
    await endClients(clients);
    delays.sort((a, b) => a - b);
    const measured = {
      process: { user: cpu.user / 1000 / wallS, system: cpu.system / 1000 / wallS }, // 1 Hz: a tick a second
      inEvent: { user: inEvent.cpu.user / Math.max(1, inEvent.events), system: inEvent.cpu.system / Math.max(1, inEvent.events) },
    };
    const delivery = count === 0 ? '—' : `${percentile(delays, 50)} / ${percentile(delays, 99)} / ${delays.at(-1)} ms (${delays.length} deliveries)`;
    console.log(`  ${round < 0 ? 'warm-up' : `round ${round + 1}`} ${rowName(row)} process ${cpuText(measured.process)}   in the snapshot event ${cpuText(measured.inEvent)}   delivery ${delivery}   ${load()}`);
    return measured;
  });
  engine.stop();
  await socket.close();
  nvml.close();
} finally {
  for (const s of sleepers) s.kill('SIGKILL');
  await driver.dispose();
  rmSync(dir, { recursive: true, force: true });
}
