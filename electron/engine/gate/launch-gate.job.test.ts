// Enforcement per job, not per process: one quota and one gate slot shared by
// all of a job's processes, per-process accounting inside the slot, gate
// domains per GPU instance, and membership taken away from a frozen job.
// Deterministic: asserts on bytes, counters and the driver's execution record.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { spawnSync } from 'node:child_process';
import { LaunchGate } from './launch-gate.js';
import { enqueuedUnderHigh, preloadProbePath, readUntil, recordsOf, runProbe, type ProbeRun } from './testing/launch-gate-sim.js';
import { useGateRig } from './testing/gate-rig.js';
import { until } from '../../testing/until.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
let driver: SimulatedDriver;
let gate: LaunchGate;
let dir: string;
// The fixed window: these tests hold best-effort back behind a high trainer throughout (the learned window
// lets it into the trainer's gaps; launch-gate.learned.test.ts covers that).
const skip = useGateRig('gpushare-gate-job-', { heartbeatIntervalMs: 200, activeWindowMs: 50, windowPolicy: 'fixed' }, (rig) => ({ driver, gate, dir } = rig));

/** How long a running job may take to launch again after what the engine did. */
const LAUNCH_WAIT = { timeoutMs: 10_000, intervalMs: 25 };

const codes = (probe: ProbeRun, op: string): number[] => probe.steps.filter((s) => s.op === op).map((s) => s.code as number);

describe('memory quota per job', { skip }, () => {
  test('two processes of one job share its 1 GiB quota: the second one’s 768 MiB is refused and counted', async () => {
    const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: GiB });
    try {
      const a = runProbe(driver, [`alloc:${768 * MiB}`, 'wait'], env);
      assert.equal((await readUntil(a, 'alloc')).code, 0);
      const b = runProbe(driver, [`alloc:${768 * MiB}`, `alloc:${256 * MiB}`, 'meminfo'], env);
      assert.equal(await b.exited, 0);
      assert.deepEqual(codes(b, 'alloc'), [2, 0], 'over the job’s quota: CUDA_ERROR_OUT_OF_MEMORY; within it: success');
      assert.deepEqual([b.steps.find((s) => s.op === 'meminfo')!.total, b.steps.find((s) => s.op === 'meminfo')!.free], [GiB, 0], 'cuMemGetInfo shows the job’s quota and what the job left free');
      const s = gate.readSlot(slot);
      assert.equal(s.usedBytes, 768 * MiB, 'b gave its bytes back when it exited; a still holds 768 MiB');
      assert.equal(s.oomCount, 1);
      assert.deepEqual(s.processes.map((p) => [p.pid, p.alive, p.usedBytes]), [[a.pid, true, 768 * MiB]]);
      a.resume();
      assert.equal(await a.exited, 0);
      assert.equal(gate.readSlot(slot).usedBytes, 0);
    } finally {
      gate.releaseSlot(slot);
    }
  });

  test('forked children inherit the job’s quota: two children asking 768 MiB each of a 1 GiB job get 768 MiB in all', async () => {
    const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: GiB });
    try {
      const job = driver.spawnFakejob(['--children', '2', 'alloc', '--chunk', '384M', '--count', '2', '--hold'], env);
      await until('both children reporting their memory', () => job.events.filter((e) => e.event === 'meminfo').length >= 2, { timeoutMs: 10_000 });
      const allocs = job.events.filter((e) => e.event === 'alloc');
      assert.equal(allocs.length, 4);
      assert.equal(allocs.filter((e) => e.code === 0).length, 2, 'two 384 MiB chunks fit in 1 GiB, whichever child asked');
      assert.equal(allocs.filter((e) => e.code === 2).length, 2);
      const s = gate.readSlot(slot);
      assert.equal(s.usedBytes, 768 * MiB);
      assert.equal(s.oomCount, 2);
      assert.equal(s.processes.length, 2, 'each child has its own entry in the slot');
      job.kill('SIGTERM');
      await job.exited;
      assert.equal(gate.readSlot(slot).usedBytes, 0);
    } finally {
      gate.releaseSlot(slot);
    }
  });

  test('a process SIGKILLed without its destructor: a sibling gets its bytes back for the job', async () => {
    const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: GiB });
    try {
      const a = runProbe(driver, [`alloc:${768 * MiB}`, 'wait'], env);
      assert.equal((await readUntil(a, 'alloc')).code, 0);
      assert.equal(gate.readSlot(slot).usedBytes, 768 * MiB);
      process.kill(a.pid, 'SIGKILL');
      await a.exited.catch(() => null);
      assert.equal(gate.readSlot(slot).usedBytes, 768 * MiB, 'nothing gave the dead process’s bytes back yet');
      assert.deepEqual(gate.readSlot(slot).processes.map((p) => [p.pid, p.alive, p.usedBytes]), [[a.pid, false, 768 * MiB]], 'the engine sees whose they are');
      const b = runProbe(driver, [`alloc:${768 * MiB}`, 'wait'], env);
      assert.equal((await readUntil(b, 'alloc')).code, 0, 'the dead sibling’s bytes no longer count');
      const s = gate.readSlot(slot);
      assert.equal(s.usedBytes, 768 * MiB);
      assert.equal(s.reclaimedCount, 1);
      assert.deepEqual(s.processes.map((p) => p.pid), [b.pid]);
      b.resume();
      assert.equal(await b.exited, 0);
    } finally {
      gate.releaseSlot(slot);
    }
  });
});

describe('launch gate per process and per domain', { skip }, () => {
  test('a process that exits does not mark a sibling’s queued launches as synced', async () => {
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const bs = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    try {
      const queued = runProbe(driver, ['launchq:10:50000', 'wait', 'sync'], hs.env); // 0.5 s of work left queued until the end
      await readUntil(queued, 'launchq');
      const sibling = runProbe(driver, ['launch:1:0'], hs.env); // launches, synchronises its own stream, exits
      assert.equal(await sibling.exited, 0);
      const be = runProbe(driver, ['launch:5:1000'], bs.env);
      assert.equal(await be.exited, 0);
      queued.resume();
      assert.equal(await queued.exited, 0);
      const log = await driver.execlog(0);
      const high = recordsOf(log, queued.pid);
      assert.equal(high.length, 10);
      assert.equal(recordsOf(log, be.pid).length, 5);
      assert.deepEqual(enqueuedUnderHigh(high, recordsOf(log, be.pid)), [], 'best-effort kernels enqueued while the high job’s queued work ran');
    } finally {
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(bs.slot);
    }
  });

  test('a waiting best-effort job dragged to High launches at once, while the high job still runs', async () => {
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const bs = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    try {
      const high = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '8'], hs.env);
      await high.ready;
      await sleep(200);
      const be = runProbe(driver, ['launch:20:1000'], bs.env);
      await readUntil(be, 'ready');
      await sleep(300);
      assert.equal(gate.readSlot(bs.slot).launches, 0, 'held back while best-effort');
      gate.setPriority(bs.slot, 'high');
      assert.equal(await be.exited, 0);
      assert.equal(high.child.exitCode, null, 'it ran while the high job was still running');
      assert.equal(recordsOf(await driver.execlog(0), be.pid).length, 20);
      high.kill('SIGTERM');
      await high.exited;
    } finally {
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(bs.slot);
    }
  });

  test('gate domains: a high job in one MIG slice does not hold back a best-effort job in another slice of the GPU', async () => {
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high', migSlice: 'MIG-slice-a' });
    const other = gate.allocateSlot({ gpu: 0, priority: 'best-effort', migSlice: 'MIG-slice-b' });
    const same = gate.allocateSlot({ gpu: 0, priority: 'best-effort', migSlice: 'MIG-slice-a' });
    try {
      const high = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '8'], hs.env);
      await high.ready;
      await sleep(200);
      const held = runProbe(driver, ['launch:5:1000'], same.env);
      const free = runProbe(driver, ['launch:20:1000'], other.env);
      assert.equal(await free.exited, 0);
      assert.equal(high.child.exitCode, null, 'the other slice’s job ran while the high job was still running');
      assert.equal(gate.readSlot(other.slot).gatedNs, 0, 'and never waited for it');
      assert.equal(gate.readSlot(same.slot).launches, 0, 'the same slice’s best-effort job is held back');
      high.kill('SIGTERM');
      await high.exited;
      assert.equal(await held.exited, 0);
    } finally {
      for (const s of [hs, other, same]) gate.releaseSlot(s.slot);
    }
  });

  test('a lower job frozen inside a launch call stalls a high job until the engine takes it out of the domain (setMember)', async () => {
    const ls = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    gate.setMember(hs.slot, false); // arrives later: the lower job fills its stream's queue without syncing first
    let lower: ProbeRun | null = null;
    try {
      lower = runProbe(driver, ['launchq:2000:10000'], ls.env); // the driver's queue holds 1024: a launch past it blocks
      for (let i = 0; i < 300; i++) {
        await sleep(50);
        const s = gate.readSlot(ls.slot);
        if (s.launches < 1024 || s.inLaunch !== 1) continue;
        process.kill(lower.pid, 'SIGSTOP');
        await sleep(20);
        if (gate.readSlot(ls.slot).inLaunch === 1) break; // stopped inside the blocked launch
        process.kill(lower.pid, 'SIGCONT'); // stopped between two launches: try again
      }
      assert.equal(gate.readSlot(ls.slot).inLaunch, 1, 'the lower job is frozen inside a launch');
      gate.setMember(hs.slot, true);
      const stalled = runProbe(driver, ['launch:1:0'], hs.env);
      assert.equal(await stalled.exited, 0);
      assert.equal(gate.readSlot(hs.slot).stuckWaits, 1, 'while the frozen job is a member, the high job’s launch waited for it until the 1 s limit');
      gate.setMember(ls.slot, false);
      const high = runProbe(driver, ['launch:20:0'], hs.env);
      assert.equal(await high.exited, 0);
      assert.equal(gate.readSlot(hs.slot).stuckWaits, 1, 'out of the domain, it held back none of the high job’s 20 launches');
      assert.equal(gate.readSlot(ls.slot).inLaunch, 1, 'the lower job was frozen mid-launch all along');
      assert.equal(recordsOf(await driver.execlog(0), high.pid).length, 20);
    } finally {
      if (lower) {
        process.kill(lower.pid, 'SIGKILL');
        process.kill(lower.pid, 'SIGCONT');
        await lower.exited.catch(() => null);
      }
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(ls.slot);
    }
  });
});

describe('CUDA graphs and stream capture', { skip }, () => {
  test('a best-effort job capturing a graph while a high job is active completes its capture; its graph launches are gated', async () => {
    const hs = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const bs = gate.allocateSlot({ gpu: 0, priority: 'best-effort' });
    try {
      const high = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '4'], hs.env);
      await high.ready;
      await sleep(200);
      const be = driver.spawnFakejob(['capture', '--kernels', '20', '--kernel-ms', '1', '--launches', '5', '--mode', 'global'], bs.env);
      const captured = await be.waitFor('captured');
      assert.equal(captured.end, 'CUDA_SUCCESS', 'the capture was not invalidated by a synchronise of ours');
      assert.equal(high.child.exitCode, null, 'it captured while the high job was running');
      assert.equal(await be.exited, 0, JSON.stringify(be.events.at(-1)));
      const log = await driver.execlog(0);
      const b = recordsOf(log, be.pid);
      assert.equal(b.length, 100, 'five launches of the 20-kernel graph ran');
      assert.deepEqual(enqueuedUnderHigh(recordsOf(log, high.pid), b), [], 'graph kernels enqueued under high-priority kernels');
      assert.ok(gate.readSlot(bs.slot).gatedNs > 0, 'its graph launches waited for the high job');
    } finally {
      gate.releaseSlot(hs.slot);
      gate.releaseSlot(bs.slot);
    }
  });
});

describe('a job’s processes and the engine’s restarts', { skip }, () => {
  test('processes a shell exec’d (no file descriptor inherited) join the job’s slot through the environment', () => {
    const { slot, env } = gate.allocateSlot({ gpu: 0, priority: 'normal', quotaBytes: GiB });
    try {
      const probe = preloadProbePath();
      // closes every descriptor above 2 before each exec, as Python's subprocess does
      const script = `for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done; "${probe}" launch:3:0 && exec "${probe}" launch:4:0`;
      const run = spawnSync('/bin/sh', ['-c', script], { env: { ...process.env, ...driver.env, ...env }, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const s = gate.readSlot(slot);
      assert.deepEqual([s.attachCount, s.launches], [2, 7], 'both processes attached to the slot and counted their launches');
    } finally {
      gate.releaseSlot(slot);
    }
  });

  test('an engine that resumes the gate adopts a running job: it reads its activity and its pause reaches it', async () => {
    const first = LaunchGate.create({ dir, name: 'restart', heartbeatIntervalMs: 200 });
    let resumed: LaunchGate | null = null;
    const { slot, env } = first.allocateSlot({ gpu: 0, priority: 'normal' });
    const other = first.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot; // its job is gone by the restart
    const job = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '60'], env);
    try {
      await job.ready;
      first.setPid(slot, job.pid);
      await until('the job launching under the first engine', () => first.readSlot(slot).launches > 10, LAUNCH_WAIT);
      first.close({ keepFile: true }); // the engine stops; the job runs on
      resumed = LaunchGate.create({ dir, name: 'restart', heartbeatIntervalMs: 200, resume: true });
      assert.equal(resumed.adoptSlot(slot, { pid: job.pid + 1, gpu: 0, priority: 'normal' }), false, 'not its pid: not adopted');
      assert.equal(resumed.adoptSlot(slot, { pid: job.pid, gpu: 0, priority: 'normal' }), true);
      assert.deepEqual(resumed.releaseLeftovers(), [other]);
      const before = resumed.readSlot(slot).launches;
      await until('the job launching under the resumed engine', () => resumed!.readSlot(slot).launches > before + 10, LAUNCH_WAIT);
      assert.equal(resumed.readSlot(slot).attachedPid, job.pid, 'the resumed engine reads the job’s activity file');
      resumed.setPaused(slot, true);
      const paused = resumed.readSlot(slot).launches;
      await sleep(500);
      assert.ok(resumed.readSlot(slot).launches <= paused + 1, 'the paused job launched nothing (but the one launch already past the gate)');
      assert.ok(resumed.readSlot(slot).pausedNs > 0);
      resumed.setPaused(slot, false);
      await until('the job launching once unpaused', () => resumed!.readSlot(slot).launches > paused, LAUNCH_WAIT);
      job.kill('SIGTERM');
      assert.equal(await job.exited, 0);
    } finally {
      job.kill('SIGKILL');
      resumed?.close();
      first.close();
    }
  });
});

