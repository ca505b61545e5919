// bench/enrol: the time from a process's first CUDA call to its enrolment (the preload library's own
// measure, from the start of its request at that first call to the gate attached from the descriptors
// the engine handed back), on a personal engine (`gpushare serve --simulate`) and on the box daemon (as a
// user the bench creates, when run as root). Each run is a new process, so a new job: the engine's whole
// path (SO_PEERCRED, /proc, a gate slot, the descriptors). The library waits 50 ms at most by default;
// here GPUSHARE_ENROL_WAIT_MS=5000 so that slow answers are measured too, and how many passed 50 ms is
// said. Prints figures; never fails on time.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRoot, LabBox, type LabUser } from '../electron/engine/daemon/testing/lab-box.js';
import { preloadLibraryPath } from '../electron/engine/gate/launch-gate.js';
import { preloadProbePath } from '../electron/engine/gate/testing/launch-gate-sim.js';
import { startEngineChild } from '../electron/engine/server/testing/engine-child.js';
import { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 250); // jobs end at the engine's next tick: a user holds 16 at most
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One process's enrolment time (ms, as the library measured it), or null when it did not enrol. */
function once(command: string, args: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'], cwd: '/' });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', () => {
      const m = /enrolled as j\d+ \(slot \d+\) in ([\d.]+) ms/.exec(err);
      resolve(m ? Number(m[1]) : null);
    });
  });
}

async function series(what: string, run: () => Promise<number | null>): Promise<void> {
  const times: number[] = [];
  let missed = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = await run();
    if (t === null) missed++;
    else times.push(t);
    await sleep(PACE_MS);
  }
  times.sort((a, b) => a - b);
  const over = times.filter((t) => t > 50).length;
  if (times.length === 0) return void console.log(`${what.padEnd(16)} no process enrolled (${missed} of ${RUNS})`);
  console.log(`${what.padEnd(16)} median ${pct(times, 50).toFixed(2).padStart(7)} ms   p99 ${pct(times, 99).toFixed(2).padStart(7)} ms   max ${times.at(-1)!.toFixed(2).padStart(7)} ms   over 50 ms: ${over} of ${times.length}${missed ? `   not enrolled: ${missed}` : ''}`);
}

async function personal(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-enrol-'));
  const engine = await startEngineChild(dir, 'a100-40gb');
  try {
    const driver = await SimulatedDriver.shared('a100-40gb', { dir: join(dir, 'gpushare') });
    const env = { PATH: '/usr/bin:/bin', ...driver.env, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: engine.socketPath, GPUSHARE_ENROL_WAIT_MS: '5000', GPUSHARE_PRELOAD_DEBUG: '1' };
    await series('personal engine', () => once(preloadProbePath(), ['alloc:1048576'], env));
  } finally {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function daemon(): Promise<void> {
  if (!isRoot()) return void console.log('box daemon       skipped: needs root (the daemon runs as root; the bench creates a user)');
  const box = new LabBox(`b${process.pid % 10000}`);
  try {
    const user: LabUser = box.user('bench');
    await box.start({ rateHz: 5 }, 'a100-40gb');
    const env = {
      PATH: '/usr/bin:/bin',
      GPUSHARE_FAKEGPU_STATE: join(box.dir, 'run', 'sim-a100-40gb.state'),
      LD_LIBRARY_PATH: join(box.nativeCopy, 'fakegpu', 'build'),
      LD_PRELOAD: join(box.nativeCopy, 'preload', 'build', 'libgpushare-preload.so'),
      GPUSHARE_DAEMON_SOCKET: box.socketPath,
      GPUSHARE_ENROL_WAIT_MS: '5000',
      GPUSHARE_PRELOAD_DEBUG: '1',
    };
    const probe = join(box.nativeCopy, 'preload', 'build', 'preload_probe');
    await series('box daemon', () => once('setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', '--', probe, 'alloc:1048576'], env));
  } finally {
    await box.dispose();
  }
}

console.log(`bench/enrol: first CUDA call to enrolment, ${RUNS} processes each (a new job each), paced ${PACE_MS} ms`);
await personal();
await daemon();
