// The launch gate beside MPS client priority (gate_abi.h, "MPS clients"): a best-effort job that is a
// below-normal client of the same MPS daemon as a high job is gated as every other pairing is (on an H200,
// client priority alone left the high client 713x slower at p99: bench/device/README.md). Deterministic:
// asserts on the simulated driver's execution record (enqueued under a high kernel or not) and on gatedNs, never on a latency.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakejobHandle, SimulatedDriver } from '../gpu/simulated-driver.js';
import { mpsJobEnv } from '../mps/mps-control.js';
import { SimulatedMpsControl } from '../mps/simulated-mps-control.js';
import { useGateRig } from './testing/gate-rig.js';
import type { JobPriority, LaunchGate } from './launch-gate.js';
import { enqueuedUnderHigh, recordsOf, runProbe } from './testing/launch-gate-sim.js';

let driver: SimulatedDriver;
let gate: LaunchGate;
let mps: SimulatedMpsControl;
const GPU = { index: 0, uuid: 'GPU-0' };
// the fixed window, as launch-gate.preload.test.ts: a high trainer the box descheduled still counts as active, so "held" is exact
const skip = useGateRig('gpushare-gate-mps-', { heartbeatIntervalMs: 200, activeWindowMs: 50, windowPolicy: 'fixed' }, (rig) => {
  ({ driver, gate } = rig);
  mps = new SimulatedMpsControl({ statePath: driver.statePath, runtimeDir: join(rig.dir, 'run'), identity: { uid: userInfo().uid, user: userInfo().username } });
  mps.start(GPU);
});

/** How a job runs: in MPS (a client of GPU 0's daemon, started at `mpsPriority`'s client priority) or in its own context. */
interface Side {
  priority: JobPriority;
  /** The job priority its MPS client environment is built for (what CUDA_MPS_CLIENT_PRIORITY it starts with); null: not an MPS client. */
  mpsAs: JobPriority | null;
}

/** A slot and the job's environment, as the engine starts it (the slot says nothing of MPS). */
function start(side: Side): { slot: number; env: Record<string, string> } {
  const mpsEnv = side.mpsAs === null ? {} : mpsJobEnv(mps, GPU.index, 100, null, side.mpsAs);
  const grant = gate.allocateSlot({ gpu: GPU.index, priority: side.priority });
  return { slot: grant.slot, env: { ...grant.env, ...mpsEnv } };
}

async function finished(job: FakejobHandle): Promise<void> {
  assert.equal(await job.exited, 0, `fakejob ${job.pid} failed: ${JSON.stringify(job.events.at(-1))}`);
}

const REQUESTS = 80;
/** The high job's requests: a 2 ms kernel, synchronised, then 8 ms of its own time (the gate's 50 ms window spans the gaps). */
const requests = (): string[] => Array.from({ length: REQUESTS }, () => ['launch:1:2000', 'sleep:8000']).flat();

/** A lower trainer (1 ms kernels) running alone, then a high job's requests arriving for ~1 s; `moved`: the lower job's priority set after it started. */
async function pair(high: Side, low: Side, moved?: JobPriority) {
  const hs = start(high);
  const ls = start(low);
  try {
    const be = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '120'], ls.env);
    await be.ready;
    if (moved) gate.setPriority(ls.slot, moved);
    await sleep(200);
    const probe = runProbe(driver, requests(), hs.env);
    assert.equal(await probe.exited, 0, JSON.stringify(probe.steps.at(-1)));
    const lowState = gate.readSlot(ls.slot);
    be.kill('SIGTERM');
    await be.exited;
    const log = await driver.execlog(0);
    const h = recordsOf(log, probe.pid);
    assert.equal(h.length, REQUESTS, 'the high job ran its requests');
    const b = recordsOf(log, be.pid);
    return { h, b, low: lowState, inSpan: b.filter((k) => k.enqueueNs > h[0].enqueueNs && k.enqueueNs < h.at(-1)!.endNs) };
  } finally {
    gate.releaseSlot(hs.slot);
    gate.releaseSlot(ls.slot);
  }
}

describe('launch gate and MPS client priority', { skip }, () => {
  for (const [what, high, low] of [
    ['a best-effort below-normal client of the high job\'s MPS daemon (client priority alone did not protect a high client on an H200)', { priority: 'high', mpsAs: 'high' }, { priority: 'best-effort', mpsAs: 'best-effort' }],
    ['the best-effort job in its own context (time-sliced against the MPS server)', { priority: 'high', mpsAs: 'high' }, { priority: 'best-effort', mpsAs: null }],
    ['the high job in its own context', { priority: 'high', mpsAs: null }, { priority: 'best-effort', mpsAs: 'best-effort' }],
    ['a normal client of the high job\'s daemon (both client priority 0: MPS does not tell them apart)', { priority: 'high', mpsAs: 'high' }, { priority: 'normal', mpsAs: 'normal' }],
  ] as Array<[string, Side, Side]>) {
    test(`gated with ${what}: no lower kernel enqueued while a high kernel is queued or running`, async () => {
      const { h, b, low: state } = await pair(high, low);
      assert.deepEqual(enqueuedUnderHigh(h, b), [], 'lower kernels enqueued under a high-priority kernel');
      assert.ok(state.gatedNs > 0, 'the lower job waited at the gate');
    });
  }

  test('a client started at normal MPS priority and moved to best-effort while running stays gated (MPS keeps the priority it connected with)', async () => {
    const { h, b, low } = await pair({ priority: 'high', mpsAs: 'high' }, { priority: 'normal', mpsAs: 'normal' }, 'best-effort');
    assert.equal(low.priority, 'best-effort');
    assert.deepEqual(enqueuedUnderHigh(h, b), [], 'lower kernels enqueued under a high-priority kernel');
    assert.ok(low.gatedNs > 0);
  });

  test('pause still holds a below-normal MPS client beside a high client of its daemon', async () => {
    const hs = start({ priority: 'high', mpsAs: 'high' });
    const ls = start({ priority: 'best-effort', mpsAs: 'best-effort' });
    try {
      gate.setPaused(ls.slot, true);
      const hi = driver.spawnFakejob(['train', '--kernel-ms', '2', '--duration', '1.5'], hs.env);
      await hi.ready;
      const be = driver.spawnFakejob(['train', '--kernel-ms', '1', '--iterations', '20'], ls.env);
      await be.ready;
      await sleep(500);
      assert.equal(recordsOf(await driver.execlog(0), be.pid).length, 0, 'kernels ran while paused');
      assert.ok(gate.readSlot(ls.slot).pausedNs > 0);
      gate.setPaused(ls.slot, false);
      await finished(be);
      assert.equal(recordsOf(await driver.execlog(0), be.pid).length, 20);
      await finished(hi);
    } finally {
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(ls.slot);
    }
  });
});
