// bench/lab's boxes: N box daemons on unix sockets in one process, speaking the engine's socket
// protocol to the hub (session.whoami, snapshot.latest, jobs.list, policy.get; snapshot and jobs
// events), each with 8 GPUs × 64 processes shaped like a real snapshot, one per second, the boxes'
// ticks spread over the second. Stand-ins for the daemons: 20 real engines would need 10,240 GPU
// processes on this machine. Run: node lab-boxes.js DIR COUNT; prints "ready" once all listen.
import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { JobView } from '../shared/jobs.js';
import type { Snapshot } from '../shared/snapshot.js';
import { readLines } from '../electron/engine/server/read-lines.js';

export const LAB_GPUS = 8;
export const LAB_PROCESSES_PER_GPU = 64;
const GIB = 1024 ** 3;
const USERS = ['ana', 'bo', 'chen', 'dev', 'eli', 'fay', 'gus', 'hai', 'ida', 'jo'];

/** When every simulated process started: a process's start time does not change from one tick to the next. */
const STARTED_AT = Date.now() - 3_600_000;

type Row = Snapshot['processes'][number];
// as the sampler's (sampler/snapshot-budget.ts): a process's argv and context are the same objects while it lives
const kept = new Map<number, { argv: Row['argv']; context: Row['context'] }>();
function keptOf(pid: number, user: string, p: number): { argv: Row['argv']; context: Row['context'] } {
  let row = kept.get(pid);
  if (!row) {
    row = { argv: ['python', `/home/${user}/train_${p}.py`, '--epochs', '90', '--batch-size', '64'], context: { container: null, containerUser: null, systemdUnit: null, slurmJobId: null, jupyterKernel: null, sshSession: null } };
    kept.set(pid, row);
  }
  return row;
}

/** Box `box`'s snapshot at `second`: every process's memory and SM move, as a busy box's do. */

export function labBoxSnapshot(box: number, second: number, takenAt: number): Snapshot {
  const processes: Snapshot['processes'] = [];
  const gpus: Snapshot['gpus'] = [];
  for (let g = 0; g < LAB_GPUS; g++) {
    let used = 0;
    for (let p = 0; p < LAB_PROCESSES_PER_GPU; p++) {
      const pid = 100_000 + box * 10_000 + g * 100 + p;
      const wave = Math.sin(second / 30 + pid) * 0.5 + 0.5;
      const user = USERS[(box + g + p) % USERS.length];
      const usedMemory = Math.round((0.1 + wave * 0.9) * GIB);
      used += usedMemory;
      processes.push({
        pid, gpuIndex: g, gpuUuid: `GPU-${box}-${g}`, kind: 'compute', user, uid: 1000 + ((box + g + p) % USERS.length),
        command: p % 3 === 0 ? 'python' : 'jupyter', argv: keptOf(pid, user, p).argv, argvCut: null,
        startedAt: STARTED_AT, usedMemory, smPercent: Math.round((100 / LAB_PROCESSES_PER_GPU) * (0.5 + wave)), memPercent: Math.round(wave * 10),
        gpuInstanceId: null, computeInstanceId: null,
        context: keptOf(pid, user, p).context,
      });
    }
    gpus.push({
      index: g, uuid: `GPU-${box}-${g}`, name: 'NVIDIA H100 80GB HBM3', pciBusId: `00000000:${(16 + g).toString(16)}:00.0`, lost: false,
      memoryTotal: 80 * GIB, memoryUsed: used, memoryFree: 80 * GIB - used, utilizationGpu: Math.round(50 + 49 * Math.sin(second / 10 + box + g)), utilizationMemory: 40,
      temperatureC: 70, powerWatts: 500, powerLimitWatts: 700, smClockMHz: 1980, memClockMHz: 2619, smCount: 132,
      computeMode: 'default', migEnabled: false, migPending: false, migSlices: [], errors: [],
    });
  }
  return {
    seq: second, takenAt, intervalMs: 1000, nominalIntervalMs: 1000,
    driver: { driverVersion: '550.54.15', nvmlVersion: '12.550.54.15', cudaDriverVersion: 12040, simulated: true, scenario: 'bench-lab' },
    gpus, processes,
  } as Snapshot;
}

/** A few managed jobs per box: one running per GPU and four queued, so the queue and the totals have something. */
export function labBoxJobs(box: number, snapshot: Snapshot): JobView[] {
  const job = (n: number, state: 'running' | 'queued', gpu: number | null): JobView =>
    ({
      id: `j${n}`, managed: true, owner: USERS[(box + n) % USERS.length], uid: 1000 + ((box + n) % USERS.length), argv: ['python', 'train.py'], cwd: null, logPath: null,
      state, priority: 'normal', mode: 'shared', gpu, requestedGpu: gpu ?? 'auto', pid: state === 'running' ? snapshot.processes[gpu! * LAB_PROCESSES_PER_GPU].pid : null,
      usedMemory: state === 'running' ? snapshot.processes[gpu! * LAB_PROCESSES_PER_GPU].usedMemory : null, smPercent: null,
      memoryQuotaBytes: null, memoryRequestBytes: 8 * GIB, history: [{ at: snapshot.takenAt - 60_000 * (n + 1), state: 'queued', reason: 'submitted' }],
    }) as unknown as JobView;
  return [...Array.from({ length: LAB_GPUS }, (_, g) => job(g + 1, 'running', g)), ...Array.from({ length: 4 }, (_, q) => job(LAB_GPUS + q + 1, 'queued', null))];
}

async function serveBox(dir: string, box: number, count: number): Promise<void> {
  const path = join(dir, `box${box + 1}.sock`);
  rmSync(path, { force: true });
  const subscribers = new Set<Socket>();
  let latest = labBoxSnapshot(box, 0, Date.now());
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.on('close', () => subscribers.delete(socket));
    readLines(socket, (line) => {
      if (!line.trim()) return;
      const m = JSON.parse(line) as { kind: string; id: number; method: string };
      if (m.kind === 'subscribe') return void subscribers.add(socket);
      const results: Record<string, unknown> = {
        'session.whoami': { user: 'ana', uid: 1000, admin: false, engine: { kind: 'daemon', owner: 'root', pid: process.pid }, otherEngines: [], consoleUrl: null },
        'snapshot.latest': latest,
        'jobs.list': labBoxJobs(box, latest),
        'policy.get': null,
      };
      const ok = Object.hasOwn(results, m.method);
      socket.write(JSON.stringify(ok ? { kind: 'response', id: m.id, ok: true, result: results[m.method] } : { kind: 'response', id: m.id, ok: false, error: { code: 'unsupported', message: m.method } }) + '\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  let second = 0;
  const tick = (): void => {
    latest = labBoxSnapshot(box, ++second, Date.now());
    // one line per event, built once, as the daemon does for all its subscribers
    const lines = Buffer.from(JSON.stringify({ kind: 'event', event: 'snapshot', data: latest }) + '\n' + JSON.stringify({ kind: 'event', event: 'jobs', data: labBoxJobs(box, latest) }) + '\n');
    for (const socket of subscribers) socket.write(lines);
  };
  setTimeout(() => setInterval(tick, 1000), Math.round((box * 1000) / count)); // ticks spread over the second
}

if (process.argv[1]?.endsWith('lab-boxes.js')) {
  const [dir, count] = [process.argv[2], Number(process.argv[3])];
  await Promise.all(Array.from({ length: count }, (_, i) => serveBox(dir, i, count)));
  process.stdout.write('ready\n');
}
