// bench/daemon: the box daemon's CPU per second and the snapshot delivery time with 1, 10 and 50
// subscribed clients on its unix socket (8 simulated GPUs × 64 processes, 1 Hz). The clients run
// in another process, so the CPU measured is the engine's alone. Prints figures; never fails on time.
// Budget (DESIGN.md §7): < 5 ms CPU per tick for 50 clients.
import { spawn, type ChildProcess } from 'node:child_process';
import { fillBusyBox, GPUS, PROCESSES_PER_GPU } from './busy-box.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../electron/engine/engine.js';
import { openNvml } from '../electron/engine/gpu/nvml-addon.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';
import { listenOnSocket } from '../electron/engine/server/socket-server.js';
import { benchQueuedJobs, queueRowText } from './queued-jobs.js';
import { simulatedBackend } from '../electron/engine/gpu/gpu-backend.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CLIENT_COUNTS = [0, 1, 10, 50];
/** BENCH_ROWS=queue: only the queue rows; =clients: only the client rows. */
const ROWS = process.env.BENCH_ROWS ?? 'all';
const QUEUE_LENGTHS = (process.env.BENCH_QUEUED ?? '100,10000').split(',').map(Number);

// N connections, each subscribed to snapshots; prints one line per snapshot received: "<ms late>"
// (from the sampler's timestamp to the whole line's arrival).
const CLIENTS = `
const net = require('node:net');
const [path, count] = process.argv.slice(1);
for (let i = 0; i < Number(count); i++) {
  const s = net.connect(path); let buffer = '';
  s.on('connect', () => s.write(JSON.stringify({ kind: 'subscribe', events: ['snapshot'] }) + '\\n'));
  s.setEncoding('utf8');
  s.on('data', (d) => {
    buffer += d; let k;
    while ((k = buffer.indexOf('\\n')) >= 0) {
      const line = buffer.slice(0, k); buffer = buffer.slice(k + 1);
      const m = JSON.parse(line);
      if (m.kind === 'event') process.stdout.write((Date.now() - m.data.takenAt) + '\\n');
    }
  });
}`;

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (ROWS !== 'clients') {
  console.log(`bench/daemon queue: one simulated A100, one running job, N queued jobs waiting for its memory (root's, past the per-user cap), job commands through the dispatcher one at a time (setPriority, cancel, submit), Node ${process.version}`);
  for (const queued of QUEUE_LENGTHS) console.log(queueRowText(await benchQueuedJobs(queued)));
}
if (ROWS === 'queue') process.exit(0);

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
  console.log(`bench/daemon: ${GPUS} simulated GPUs × ${PROCESSES_PER_GPU} processes, 1 Hz, ${SECONDS} s per row, clients in another process, Node ${process.version}`);
  console.log('clients   engine CPU per second   snapshot delivery median / p99 / max');
  for (const count of CLIENT_COUNTS) {
    const clients = spawn(process.execPath, ['-e', CLIENTS, socket.path, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const delays: number[] = [];
    let partial = '';
    clients.stdout!.setEncoding('utf8');
    clients.stdout!.on('data', (d: string) => {
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const l of lines) delays.push(Number(l));
    });
    await sleep(2500); // connected, subscribed, past the first ticks
    delays.length = 0;
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await sleep(SECONDS * 1000);
    const cpu = process.cpuUsage(cpu0);
    const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
    clients.kill('SIGKILL');
    delays.sort((a, b) => a - b);
    const cpuMsPerS = (cpu.user + cpu.system) / 1000 / wallS;
    const delivery = count === 0 ? '—' : `${percentile(delays, 50)} / ${percentile(delays, 99)} / ${delays.at(-1)} ms (${delays.length} deliveries)`;
    console.log(`${String(count).padStart(7)}   ${cpuMsPerS.toFixed(1).padStart(8)} ms CPU/s        ${delivery}`);
  }
  engine.stop();
  await socket.close();
  nvml.close();
} finally {
  for (const s of sleepers) s.kill('SIGKILL');
  await driver.dispose();
  rmSync(dir, { recursive: true, force: true });
}
