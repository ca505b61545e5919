// `gpushare run --mode mps --mps-share 100 --priority best-effort` beside a high `--mode mps` job, through the engine
// with its launch gate on the simulated driver: MPS itself runs the high client's thread blocks first (the best-effort
// client starts below normal), so the engine does not gate the best-effort job; a job in its own context, or a client
// that started at normal client priority and was moved to best-effort later, is gated as before. Asserts job states
// and what the preload library published in the slots, never a latency.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JobView, Priority } from '../../../shared/jobs.js';
import { LaunchGate } from '../control/launch-gate.js';
import { ensurePreloadBuilt } from '../control/launch-gate-sim.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
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


interface Lower {
  mode: 'mps' | 'shared';
  priority: Priority;
  /** Set once it runs: its priority changed while its MPS client keeps the one it connected with. */
  movedTo?: Priority;
}

/** A high MPS client (share 100) running, then `lower` beside it on GPU 0 for ~3 s of ticks; the lower job's states and its slot. */
async function beside(name: string, lower: Lower): Promise<{ states: string[]; job: JobView; gatedNs: number; mpsClientPriority: number | null }> {
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
    assert.equal((await r.job(high.id))!.state, 'running', 'the high job ran throughout');
    const slot = gate.readSlot(gate.slotsInUse().find((s) => gate.readSlot(s).pid === job.pid)!);
    return { states, job, gatedNs: slot.gatedNs, mpsClientPriority: slot.mpsClientPriority };
  } finally {
    await r.stop();
    killAll('j1');
    killAll('j2');
  }
}

test('run --mode mps --priority best-effort beside a high --mode mps job: never gated, by the engine or in the preload library', { skip }, async () => {
  const { states, job, gatedNs, mpsClientPriority } = await beside('be-client', { mode: 'mps', priority: 'best-effort' });
  assert.deepEqual([...new Set(states)], ['running'], `its states while the high job ran: ${states.join(' ')}`);
  assert.ok(!job.history.some((h) => h.state === 'gated'), `never gated: ${job.history.map((h) => `${h.state} (${h.reason})`).join(' → ')}`);
  assert.equal(gatedNs, 0, 'its launches never waited at the gate');
  assert.equal(mpsClientPriority, 1, 'its slot names it a below-normal client');
});

test('a best-effort job in its own context (--mode shared) beside a high MPS client is gated as before', { skip }, async () => {
  const { states, gatedNs, mpsClientPriority } = await beside('be-own', { mode: 'shared', priority: 'best-effort' });
  assert.equal(mpsClientPriority, null);
  assert.ok(states.includes('gated'), `gated while the high job ran: ${states.join(' ')}`);
  assert.ok(gatedNs > 0);
});

test('an MPS client started at normal priority and moved to best-effort stays gated: its client priority is the one it connected with', { skip }, async () => {
  const { states, job, gatedNs, mpsClientPriority } = await beside('moved', { mode: 'mps', priority: 'normal', movedTo: 'best-effort' });
  assert.equal(job.priority, 'best-effort');
  assert.equal(mpsClientPriority, 0, 'its slot keeps the normal client priority it started with');
  assert.equal(states.at(-1), 'gated', `gated at the end: ${states.join(' ')}`);
  assert.ok(gatedNs > 0);
});
