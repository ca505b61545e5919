// `gpushare run --mode mps --mps-share 100 --priority best-effort` beside a high `--mode mps` job, through the engine
// with its launch gate on the simulated driver: the best-effort client starts below normal (CUDA_MPS_CLIENT_PRIORITY=1)
// and is gated all the same, as a job in its own context is. Client priority alone does not protect the high client:
// on an H200 a best-effort training client at priority 1 beside a high inference client, ungated, made the high
// one's p99 713x its own (bench/device/README.md). Asserts job states, what the preload library published in the
// slot and the simulated driver's execution record, never a latency.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView, Priority } from '../../../shared/jobs.js';
import { LaunchGate } from '../gate/launch-gate.js';
import { enqueuedUnderHigh, ensurePreloadBuilt, recordsOf } from '../gate/testing/launch-gate-sim.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { schedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { killJobProcessesOn, useSimulatedRig } from '../testing/simulated-rig.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-mps-gate-', (rig) => ({ driver, nvml, dir } = rig));
const killAll = (jobId: string) => killJobProcessesOn(driver, jobId);
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

const train = (seconds: number) => [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', String(seconds)];

/** The CUDA_MPS_CLIENT_PRIORITY process `pid` started with (null: none). */
function clientPriorityOf(pid: number): string | null {
  const line = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((v) => v.startsWith('CUDA_MPS_CLIENT_PRIORITY='));
  return line === undefined ? null : line.slice('CUDA_MPS_CLIENT_PRIORITY='.length);
}

interface Lower {
  mode: 'mps' | 'shared';
  priority: Priority;
  /** Set once it runs: its priority changed while its MPS client keeps the one it connected with. */
  movedTo?: Priority;
}

interface Beside {
  /** The lower job's states at each tick while the high job ran. */
  states: string[];
  job: JobView;
  gatedNs: number;
  /** The CUDA_MPS_CLIENT_PRIORITY the lower job's process started with (null: none). */
  clientPriority: string | null;
  /** Their kernels in the simulated driver's execution record. */
  high: KernelRecord[];
  low: KernelRecord[];
}

/** A high MPS client (share 100) running, then `lower` beside it on GPU 0 for ~3 s of ticks. */
async function beside(name: string, lower: Lower): Promise<Beside> {
  const gate = LaunchGate.create({ dir: join(dir, name), heartbeatIntervalMs: 200 });
  const r: SchedulerRig = schedulerRig({ driver, nvml, dir }, name, { gate }, cleanups);
  try {
    const high = await r.engine.call('jobs.submit', { argv: train(30), cwd: dir, gpu: 0, mode: 'mps', mpsSharePercent: 100, priority: 'high' });
    await r.until('the high job runs', async () => (await r.job(high.id))?.state === 'running');
    const share = lower.mode === 'mps' ? { mpsSharePercent: 100 } : {};
    const low = await r.engine.call('jobs.submit', { argv: train(30), cwd: dir, gpu: 0, mode: lower.mode, ...share, priority: lower.priority });
    await r.until('the lower job started', async () => ['running', 'gated'].includes((await r.job(low.id))?.state ?? ''));
    if (lower.movedTo) await r.engine.call('jobs.setPriority', { job: low.id, priority: lower.movedTo });
    const states: string[] = [];
    for (let i = 0; i < 20; i++) {
      await r.tick();
      states.push((await r.job(low.id))!.state);
    }
    const job = (await r.job(low.id))!;
    const highJob = (await r.job(high.id))!;
    assert.equal(highJob.state, 'running', 'the high job ran throughout');
    const slot = gate.readSlot(gate.slotsInUse().find((s) => gate.readSlot(s).pid === job.pid)!);
    const log = await driver.execlog(0);
    return { states, job, gatedNs: slot.gatedNs, clientPriority: clientPriorityOf(job.pid!), high: recordsOf(log, highJob.pid!), low: recordsOf(log, job.pid!) };
  } finally {
    await r.stop();
    killAll('j1');
    killAll('j2');
  }
}

/** The lower job was held: shown gated, waited at the gate, and no kernel of it enqueued while a high kernel was queued or running. */
function assertGated({ states, gatedNs, high, low }: Beside): void {
  assert.ok(states.includes('gated'), `gated while the high job ran: ${states.join(' ')}`);
  assert.ok(gatedNs > 0, 'its launches waited at the gate');
  assert.ok(high.length > 0, 'the high job\'s kernels are in the execution record');
  assert.deepEqual(enqueuedUnderHigh(high, low), [], 'lower kernels enqueued while a high kernel was queued or running');
}

test('run --mode mps --priority best-effort beside a high --mode mps job: a below-normal client, gated as a job in its own context', { skip }, async () => {
  const seen = await beside('be-client', { mode: 'mps', priority: 'best-effort' });
  assert.equal(seen.clientPriority, '1', 'it starts below normal: MPS still orders the blocks it has waiting');
  assertGated(seen);
  assert.ok(seen.job.history.some((h) => h.state === 'gated'), `its history: ${seen.job.history.map((h) => `${h.state} (${h.reason})`).join(' → ')}`);
});

test('a best-effort job in its own context (--mode shared) beside a high MPS client is gated', { skip }, async () => {
  const seen = await beside('be-own', { mode: 'shared', priority: 'best-effort' });
  assert.equal(seen.clientPriority, null);
  assertGated(seen);
});

test('an MPS client started at normal priority and moved to best-effort is gated; it keeps the client priority it connected with', { skip }, async () => {
  const seen = await beside('moved', { mode: 'mps', priority: 'normal', movedTo: 'best-effort' });
  assert.equal(seen.job.priority, 'best-effort');
  assert.equal(seen.clientPriority, '0');
  assert.equal(seen.states.at(-1), 'gated', `gated at the end: ${seen.states.join(' ')}`);
  assertGated(seen);
});
