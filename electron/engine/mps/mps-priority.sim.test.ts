// MPS client priority on the simulated driver (CUDA_MPS_CLIENT_PRIORITY, the model in native/fakegpu/README.md):
// a normal client's kernel started while a below-normal client's long kernel runs takes the SMs, and the
// below-normal kernel waits for it; without the variable both stretch as MPS shares do. Read from the
// driver's execution record and its MPS table; both clients at 100 % of the whole GPU.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';

let driver: SimulatedDriver;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-mps-priority-', (rig) => ({ driver, dir } = rig));
const FAKEGPU = join(fakegpuBuildDir(), 'fakegpu');
const [LONG_MS, SHORT_MS] = [1000, 200];

const fakegpuMps = (...args: string[]): string => execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
type Client = { pid: number; share: number; active: boolean; priority: number };
const clients = (): Client[] => (JSON.parse(fakegpuMps('status')) as Array<{ clients: Client[] }>)[0].clients;

/**
 * A long kernel of one client (priority `longPriority`), then, once it runs, a short kernel of a normal client
 * (no variable: normal, as for a client that never sets it). Returns both kernels and the clients' priorities as the daemon saw them.
 */
async function longThenShort(name: string, longPriority: string | null): Promise<{ long: KernelRecord; short: KernelRecord; priorities: number[] }> {
  const pipeDir = join(dir, name);
  mkdirSync(pipeDir, { recursive: true });
  fakegpuMps('--device', '0', 'start', '--user', 'tester', '--pipe-dir', pipeDir);
  try {
    return await run(pipeDir, longPriority);
  } finally {
    fakegpuMps('--device', '0', 'stop');
  }
}

async function run(pipeDir: string, longPriority: string | null): Promise<{ long: KernelRecord; short: KernelRecord; priorities: number[] }> {
  const client = { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: '100' };
  const one = (ms: number, env: Record<string, string>) => {
    const job = driver.spawnFakejob(['--mem', '256M', 'train', '--kernel-ms', String(ms), '--iterations', '1'], { ...client, ...env });
    cleanups.push(() => job.kill('SIGKILL'));
    return job;
  };
  const longJob = one(LONG_MS, longPriority === null ? {} : { CUDA_MPS_CLIENT_PRIORITY: longPriority });
  for (let i = 0; !clients().some((c) => c.pid === longJob.pid && c.active); i++) {
    if (i > 400) throw new Error('the long kernel never started');
    await new Promise((r) => setTimeout(r, 10));
  }
  const shortJob = one(SHORT_MS, {});
  assert.equal(await shortJob.exited, 0);
  const priorities = [longJob.pid, shortJob.pid].map((pid) => clients().find((c) => c.pid === pid)!.priority);
  assert.equal(await longJob.exited, 0);
  const records = await driver.execlog(0);
  const only = (pid: number): KernelRecord => {
    const mine = records.filter((r) => r.pid === pid);
    assert.equal(mine.length, 1, `pid ${pid} ran one kernel`);
    return mine[0];
  };
  return { long: only(longJob.pid), short: only(shortJob.pid), priorities };
}

const ms = (ns: number): number => ns / 1e6;
const wall = (r: KernelRecord): number => ms(r.endNs - r.startNs);

test("a normal client's kernel started while a below-normal client's long kernel runs takes the SMs: it runs under 1.5x its nominal time (sharing stretches it to 2x) and the long kernel ends later by its whole duration", async () => {
  const { long, short, priorities } = await longThenShort('below', '1');
  assert.deepEqual(priorities, [1, 0], 'the daemon saw the long client below normal, the other normal');
  assert.ok(long.startNs < short.startNs && short.endNs < long.endNs, 'the short kernel ran inside the long one');
  // the below-normal kernel makes no progress while a normal one holds 100 % (the driver credits a step only at the
  // lower of its two ends' rates, so a slow wake-up cannot count as progress): its wall time is its own plus all of the
  // short one's, less 1 ms for the clock reads around the short kernel's start and end
  assert.ok(wall(long) >= LONG_MS + wall(short) - 1, `long kernel ${wall(long).toFixed(1)} ms, short ${wall(short).toFixed(1)} ms, nominal ${LONG_MS} ms`);
  // at most one 1 ms step shared before the long kernel's blocks leave; 1.5x: the stretch without priority is 2x
  assert.ok(wall(short) < 1.5 * SHORT_MS, `short kernel ${wall(short).toFixed(1)} ms for ${SHORT_MS} ms nominal`);
});

test('without CUDA_MPS_CLIENT_PRIORITY both clients are normal and share the SMs: the short kernel stretches, the long one is delayed by only part of it', async () => {
  const { long, short, priorities } = await longThenShort('normal', null);
  assert.deepEqual(priorities, [0, 0]);
  assert.ok(long.startNs < short.startNs && short.endNs < long.endNs, 'the short kernel ran inside the long one');
  // two at 100 % run at half their rate each while both run
  assert.ok(wall(short) >= 1.5 * SHORT_MS, `short kernel ${wall(short).toFixed(1)} ms for ${SHORT_MS} ms nominal`);
  assert.ok(wall(long) < LONG_MS + wall(short), `long kernel ${wall(long).toFixed(1)} ms, short ${wall(short).toFixed(1)} ms`);
});

// A GPU runs a stream's queued kernels back to back. The simulated MPS context must too: a kernel queued behind another
// starts when that one ended, not when the simulator's thread woke to it, or every short kernel pays a wake-up
// (0.1 ms kernels took ~0.16 ms and an MPS client seemed to lose a third of its throughput in bench/gate).
for (const priority of ['0', '1']) {
  test(`an MPS client's queued kernels (client priority ${priority}, alone) run back to back at their nominal time: each starts where the one before it ended`, async () => {
    const pipeDir = join(dir, `queued-${priority}`);
    mkdirSync(pipeDir, { recursive: true });
    fakegpuMps('--device', '0', 'start', '--user', 'tester', '--pipe-dir', pipeDir);
    try {
      const env = { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: '100', CUDA_MPS_CLIENT_PRIORITY: priority };
      const job = driver.spawnFakejob(['--mem', '256M', 'train', '--kernel-ms', '1', '--batch', '10', '--iterations', '40'], env);
      cleanups.push(() => job.kill('SIGKILL'));
      assert.equal(await job.exited, 0);
      const mine = (await driver.execlog(0)).filter((r) => r.pid === job.pid).sort((a, b) => a.startNs - b.startNs);
      assert.equal(mine.length, 40);
      let queued = 0;
      for (let i = 0; i < mine.length; i++) {
        const r = mine[i];
        assert.ok(Math.abs(r.endNs - r.startNs - 1_000_000) <= 1, `kernel ${i} ran ${r.endNs - r.startNs} ns for 1000000 nominal`);
        if (i > 0 && r.enqueueNs <= mine[i - 1].endNs) {
          queued++;
          assert.equal(r.startNs, mine[i - 1].endNs, `kernel ${i}, queued behind kernel ${i - 1}, starts where it ended`);
        }
      }
      assert.ok(queued >= 20, `${queued} of 40 kernels were queued behind another (batches of 10; 1 ms kernels leave the launches time to queue on a busy box)`);
    } finally {
      fakegpuMps('--device', '0', 'stop');
    }
  });
}
