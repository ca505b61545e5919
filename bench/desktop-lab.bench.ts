// bench/desktop-lab: what the desktop app's Lab view costs its main process (electron/main/lab-windows.ts),
// and its hub's process apart (electron/engine/lab/hub-process.ts), over bench/lab's 20 stand-in boxes × 8 GPUs
// × 64 processes at 1 Hz: CPU per second with no window on the hub, with one Lab window, and with one box's
// console (every event of that box relayed whole), each message structured-cloned as Electron's IPC does.
// The app side runs in a process of its own (lab-desktop-hub.js), its hub in a child of that one (Node's
// child_process.fork standing in for Electron's utilityProcess). BENCH_BEFORE=DIR also runs DIR/bench/
// lab-desktop-hub.js, another tree's compiled bench (e.g. main's, whose hub ran in the main process), alternating
// with this tree's in the same conditions. ROUNDS times each, each in a fresh process; the machine's load
// (uptime's 1-minute average) printed with each figure. Prints figures; never fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAB_GPUS, LAB_PROCESSES_PER_GPU } from './lab-boxes.js';

const BOXES = Number(process.env.BENCH_BOXES ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BEFORE = process.env.BENCH_BEFORE;
const here = fileURLToPath(new URL('.', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, USER_HZ 100
};

function startChild(script: string, args: string[], from = here): { child: ChildProcess; lines: string[]; first: Promise<string> } {
  const child = spawn(process.execPath, [join(from, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let out = '';
  const first = new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const parts = out.split('\n');
      out = parts.pop()!;
      lines.push(...parts);
      if (lines.length > 0) resolve(lines[0]);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return { child, lines, first };
}

const dir = mkdtempSync(join(tmpdir(), 'gpushare-bench-desktop-lab-'));
const boxes = startChild('lab-boxes.js', [dir, String(BOXES)]);
try {
  await boxes.first;
  console.log(`bench/desktop-lab: ${BOXES} boxes × ${LAB_GPUS} GPUs × ${LAB_PROCESSES_PER_GPU} processes, 1 Hz each; the app's main-process side in its own process, its hub's process apart; Node ${process.version}`);
  const WINDOWS = { none: 'no window on the hub', lab: 'one Lab window', box: "box1's console" } as const;
  const SIDES: Array<{ name: string; from: string }> = [...(BEFORE ? [{ name: 'before', from: join(BEFORE, 'bench') }] : []), { name: BEFORE ? 'after' : 'this tree', from: here }];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const window of Object.keys(WINDOWS) as Array<keyof typeof WINDOWS>) {
      for (const side of SIDES) {
        const app = startChild('lab-desktop-hub.js', [dir, String(BOXES), window], side.from);
        // "ready N" (the hub in the app's own process), or "ready N PID" (the hub's process)
        const [, connected, hubPid] = (await app.first).split(' ');
        await sleep(3000); // past the first snapshots and the JIT's warm-up
        const relayed = (): [number, number] => {
          const [messages, cloned] = (app.lines.at(-1) ?? '').split(' ').map(Number);
          return [messages || 0, cloned || 0];
        };
        const hubCpu = (): number => (hubPid ? cpuMs(Number(hubPid)) : 0);
        const [c0, h0, t0, [m0, k0]] = [cpuMs(app.child.pid!), hubCpu(), Date.now(), relayed()];
        await sleep(SECONDS * 1000);
        const [c1, h1, t1, [m1, k1]] = [cpuMs(app.child.pid!), hubCpu(), Date.now(), relayed()];
        const seconds = (t1 - t0) / 1000;
        const load = loadavg()[0].toFixed(1);
        const main = ((c1 - c0) / seconds).toFixed(1).padStart(6);
        const hub = hubPid ? `${((h1 - h0) / seconds).toFixed(1).padStart(6)} ms` : '   (in main)';
        console.log(`round ${round}, ${side.name.padEnd(9)} ${WINDOWS[window].padEnd(20)}: main ${main} ms CPU per second, hub process ${hub}; ${((m1 - m0) / seconds).toFixed(1).padStart(5)} messages to the window per second, ${((k1 - k0) / seconds).toFixed(1)} ms of main's cloning them (${connected}/${BOXES} boxes, ${seconds.toFixed(0)} s, load ${load})`);
        app.child.kill();
        await sleep(500); // its hub's process ends with it
      }
    }
  }
} finally {
  boxes.child.kill();
  await sleep(200);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
