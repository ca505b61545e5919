// A scavenger Slurm job held back at the launch gate by an urgent one, cancelled as scancel does it (SIGTERM,
// which the job's own handler catches), with its epilog run while its process still lives — what the real
// Slurm of slurm.multiuser.test does under proctrack/linuxproc, where the shell's death ends the step. The
// held launch must stay held (execution record) until the urgent job is done: ending the Slurm job does not
// take its live process out of its lane. Slurm is emulated by the pid → job answer slurmd gives
// (`scontrol pidinfo`): each program's session is one job's.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { enqueuedUnderHigh, ensurePreloadBuilt, recordsOf } from '../gate/testing/launch-gate-sim.js';
import { LaunchGate, preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { listenOnSocket } from '../server/socket-server.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { sessionOf } from '../../testing/proc-session.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-slurm-epilog-gate-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

const alive = (pid: number): boolean => {
  try {
    return !/^[ZX]$/.test(readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1][0]);
  } catch {
    return false;
  }
};

test("a scavenger Slurm job held back by an urgent one, sent SIGTERM (its handler catches it) and then ended by its epilog while its process lives, launches nothing under the urgent job: it stays in its lane until its last process exits", { skip }, async (t) => {
  const jobOfSession = new Map<number, string>();
  const gate = LaunchGate.create({ dir: join(dir, 'gate'), heartbeatIntervalMs: 200 });
  const r = schedulerRig(
    { driver, nvml, dir },
    'epilog-gate',
    { gate, slurm: { qosLanes: [], partitionLanes: [{ name: 'urgent', lane: 'high' }, { name: 'scavenger', lane: 'best-effort' }] }, slurmPidInfo: (pid) => jobOfSession.get(sessionOf(pid) ?? -1) ?? null },
    cleanups,
  );
  const socketPath = join(dir, 'epilog-gate', 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  const uid = process.getuid!();

  /** A task of Slurm job `jobId`: fakejob under its batch shell, in a session of its own, the preload library loaded as the task prolog loads it. */
  const task = (jobId: string, args: string[]): { child: ChildProcess; out: () => string } => {
    const child = spawn('sh', ['-c', '"$0" "$@" & wait', FAKEJOB, ...args], {
      env: { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: socketPath, GPUSHARE_PRELOAD_DEBUG: '1' },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    jobOfSession.set(child.pid!, jobId); // detached: it leads a session of its own
    cleanups.push(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return { child, out: () => out };
  };
  const enrolled = (jobId: string, out: () => string) =>
    r.until(`Slurm job ${jobId}'s task enrolled`, async () => (await r.engine.call('jobs.list', {})).find((j) => j.enrolled?.slurm?.jobId === jobId && j.pid !== null)).catch((e: Error) => {
      throw new Error(`${e.message}\nthe task said: ${out()}`);
    });

  // the gate lets a best-effort launch through in a gap between urgent kernels: a scavenger let through between
  // SIGTERM and its epilog ends by its handler's stop before the epilog, and the scenario is run again (a new pair)
  for (let attempt = 0; ; attempt++) {
    assert.ok(attempt < 4, 'in 4 tries the scavenger was never still held when its epilog ran');
    const [scavId, urgentId] = [String(81 + 2 * attempt), String(82 + 2 * attempt)];
    await r.engine.call('slurm.prolog', { jobId: scavId, uid, gpus: [0], partition: 'scavenger', node: 'n1' });
    await r.engine.call('slurm.prolog', { jobId: urgentId, uid, gpus: [0], partition: 'urgent', node: 'n1' });
    const scav = task(scavId, ['train', '--kernel-ms', '2', '--duration', '120']);
    const low = await enrolled(scavId, scav.out);
    assert.equal(low.priority, 'best-effort');
    const urgent = task(urgentId, ['train', '--kernel-ms', '4', '--batch', '50', '--duration', '6']);
    const high = await enrolled(urgentId, urgent.out);
    assert.equal(high.priority, 'high');
    // held in a launch: the urgent job's kernels go on while the scavenger's record stands still
    let seen = { low: -1, high: -1 };
    await r.until('the scavenger is held in a launch at the gate', async () => {
      const log = await driver.execlog(0);
      const now = { low: recordsOf(log, low.pid!).length, high: recordsOf(log, high.pid!).length };
      const held = now.low === seen.low && now.high > seen.high && seen.high > 0 && (await r.job(low.id))?.state === 'gated';
      seen = now;
      return held || undefined;
    });

    // scancel: SIGTERM to every process of the job; the shell dies, fakejob's handler only sets its stop flag
    const termAt = Number(process.hrtime.bigint()); // CLOCK_MONOTONIC, the execution record's clock
    process.kill(-scav.child.pid!, 'SIGTERM');
    await r.until('the batch shell died of SIGTERM', async () => !alive(scav.child.pid!) || undefined);
    if (!alive(low.pid!)) {
      t.diagnostic(`try ${attempt + 1}: the scavenger was let through between urgent kernels and ended before its epilog; again`);
      await r.until("the urgent job's task exited", async () => !alive(high.pid!) || undefined, 200);
      continue;
    }
    // the epilog, as Slurm runs it once the step's shell is gone (proctrack/linuxproc), the task still alive in its handler's stop
    const epilogAt = Number(process.hrtime.bigint());
    const ended = await r.engine.call('slurm.epilog', { jobId: scavId });
    assert.deepEqual(ended.leftOnGpu.map((p) => p.pid), [low.pid], 'the epilog names the task still on the GPU');
    await r.until("the urgent job's task exited", async () => !alive(high.pid!) || undefined, 200);
    await r.until("the scavenger's last process exited and its job ended with it", async () => (!alive(low.pid!) && ['finished', 'failed', 'lost'].includes((await r.job(low.id))?.state ?? '')) || undefined, 200);

    const log = await driver.execlog(0);
    const highs = recordsOf(log, high.pid!);
    const lows = recordsOf(log, low.pid!);
    const afterTerm = lows.filter((k) => k.enqueueNs >= termAt);
    t.diagnostic(`scavenger kernels after SIGTERM: ${afterTerm.length} (enqueued ${afterTerm.map((k) => ((k.enqueueNs - epilogAt) / 1e6).toFixed(1)).join(', ')} ms after the epilog); the urgent job's last kernel ended ${((highs.at(-1)!.endNs - epilogAt) / 1e6).toFixed(1)} ms after it`);
    t.diagnostic(scav.out().split('\n').filter((l) => l.includes('gate') || l.includes('"done"')).join('\n'));
    assert.ok(highs.length > 0 && lows.length > 0, 'both ran kernels');
    assert.deepEqual(enqueuedUnderHigh(highs, lows), [], 'no scavenger kernel was enqueued under an urgent one: not before SIGTERM, not after it, not after the epilog');
    assert.equal(afterTerm.length, 1, 'after SIGTERM, only the launch it was held in went through (between urgent kernels, as the gate lets a best-effort launch)');
    assert.match(scav.out(), /"event":"done"/, "then its handler's stop ended it as its own code says");
    assert.doesNotMatch(scav.out(), /gate slot \d+ was released: not gated/, 'its lane was never let go while it lived');
    return;
  }
});

test("a Slurm job's task its owner suspended is resumed by the epilog, so Slurm's signals can end it, and stays in its job until it exits", { skip }, async () => {
  let jobSession = -1;
  const gate = LaunchGate.create({ dir: join(dir, 'gate-suspended'), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, 'epilog-suspended', { gate, slurmPidInfo: (pid) => (sessionOf(pid) === jobSession ? '71' : null) }, cleanups);
  const socketPath = join(dir, 'epilog-suspended', 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  await r.engine.call('slurm.prolog', { jobId: '71', uid: process.getuid!(), gpus: [0], partition: 'gpu', node: 'n1' });
  const child = spawn('sh', ['-c', '"$0" "$@" & wait', FAKEJOB, 'train', '--kernel-ms', '2', '--duration', '120'], {
    env: { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: socketPath },
    detached: true,
    stdio: 'ignore',
  });
  jobSession = child.pid!;
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  const view = await r.until("the task enrolled as Slurm job 71's", async () => (await r.engine.call('jobs.list', {})).find((j) => j.enrolled?.slurm?.jobId === '71' && j.pid !== null));
  await r.engine.call('jobs.suspend', { job: view.id });
  await r.until('its owner suspended it', async () => (await r.job(view.id))?.state === 'suspended' || undefined);

  const ended = await r.engine.call('slurm.epilog', { jobId: '71' });
  assert.equal(ended.released, 1, 'its hold was let go');
  const after = await r.until('resumed, still its job', async () => {
    const job = await r.job(view.id);
    return job && job.state !== 'suspended' ? job : undefined;
  });
  assert.ok(['running', 'gated'].includes(after.state), `its job lives on with its process: ${after.state}`);
  assert.match(after.history.at(-1)!.reason, /resumed by Slurm job 71's epilog/);
  process.kill(-child.pid!, 'SIGTERM'); // Slurm's signal reaches a process that runs
  await r.until('its job ended with its last process', async () => ['finished', 'failed', 'lost'].includes((await r.job(view.id))?.state ?? '') || undefined, 200);
  assert.match((await r.job(view.id))!.history.at(-1)!.reason, /last process exited/);
});
