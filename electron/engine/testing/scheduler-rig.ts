// Test fixture: an engine with its scheduler on a simulated box, ticks driven by the test.
import { join } from 'node:path';
import * as wait from '../../testing/until.js';
import type { JobView } from '../../../shared/jobs.js';
import { Engine } from '../engine.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { attachScheduler, type AttachedScheduler, type AttachSchedulerOptions } from '../scheduler/attach.js';
import { simulatedBackend } from '../gpu/gpu-backend.js';
import { LaunchGate } from '../gate/launch-gate.js';
import { listenOnSocket } from '../server/socket-server.js';

export interface SchedulerRig {
  engine: Engine;
  attached: AttachedScheduler;
  /** One sampler tick through the scheduler, after `waitMs` of GPU time. */
  tick(waitMs?: number): Promise<void>;
  job(id: string): Promise<JobView | undefined>;
  /** Tick until `step` gives a value (or true); fails naming what it waited for and the jobs' states. */
  until<T>(what: string, step: () => Promise<T | undefined | false>, tries?: number): Promise<T>;
  /** The scheduler's clean stop (once; the cleanups call it too). */
  stop(): Promise<string[]>;
}

/**
 * A scheduler named `name` (its own state and runtime folders under `dir`), without a launch gate or
 * guardian unless the options say otherwise. Its stop is pushed onto `cleanups`.
 */
export function schedulerRig(
  box: { driver: SimulatedDriver; nvml: NvmlBinding; dir: string },
  name: string,
  options: Partial<AttachSchedulerOptions>,
  cleanups: Array<() => unknown>,
): SchedulerRig {
  const engine = new Engine(simulatedBackend(box.driver, box.nvml, () => undefined));
  const attached = attachScheduler(engine, {
    gate: null,
    guardian: false,
    ...options,
    stateDir: join(box.dir, name, 'state'),
    runtimeDir: join(box.dir, name, 'run'),
  });
  let stopped: Promise<string[]> | null = null;
  const stop = () => (stopped ??= attached.stop());
  cleanups.push(stop);
  const tick = async (waitMs = 150) => {
    await new Promise((r) => setTimeout(r, waitMs));
    engine.sampler.sampleNow();
  };
  const jobs = () => engine.call('jobs.list', { includeFinished: true });
  const job = async (id: string) => (await jobs()).find((j) => j.id === id);
  // one scheduler tick before each look
  const until = <T>(what: string, step: () => Promise<T>, tries = 40) =>
    wait.until(
      what,
      async () => {
        await tick();
        return step();
      },
      { tries, intervalMs: 0, detail: async () => JSON.stringify((await jobs()).map((j) => [j.id, j.state, j.history.at(-1)?.reason])) },
    );
  return { engine, attached, tick, job, until, stop };
}

/**
 * A scheduler rig with a launch gate of its own (under `dir`/`name`, 200 ms heartbeat) and the engine's API on
 * `dir`/`name`/engine.sock, as a box's daemon serves it: the tests whose processes enrol or call in.
 */
export async function socketSchedulerRig(
  box: { driver: SimulatedDriver; nvml: NvmlBinding; dir: string },
  name: string,
  options: Partial<AttachSchedulerOptions>,
  cleanups: Array<() => unknown>,
): Promise<{ r: SchedulerRig; gate: LaunchGate; socketPath: string }> {
  const gate = LaunchGate.create({ dir: join(box.dir, name), heartbeatIntervalMs: 200 });
  const r = schedulerRig(box, name, { gate, ...options }, cleanups);
  const socketPath = join(box.dir, name, 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  return { r, gate, socketPath };
}
