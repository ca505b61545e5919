// The box the benchmarks measure: 8 simulated GPUs × 64 processes, one busy trainer per GPU
// (real work for the driver's per-process samples) and 63 memory holders beside it.
import { spawn, type ChildProcess } from 'node:child_process';
import type { SimulatedDriver } from '../electron/engine/gpu/simulated-driver.js';

export const GPUS = 8;
export const PROCESSES_PER_GPU = 64;

/** Fills the driver's box; returns the holders to kill afterwards. */
export async function fillBusyBox(driver: SimulatedDriver): Promise<ChildProcess[]> {
  process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath;
  const trainers = Array.from({ length: GPUS }, (_, gpu) => driver.spawnFakejob(['--device', String(gpu), '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '600']));
  await Promise.all(trainers.map((t) => t.ready));
  const holders: ChildProcess[] = [];
  for (let gpu = 0; gpu < GPUS; gpu++) {
    for (let i = 1; i < PROCESSES_PER_GPU; i++) {
      const holder = spawn('sleep', ['600'], { stdio: 'ignore' });
      holders.push(holder);
      await driver.attach({ device: gpu, pid: holder.pid!, mem: (64 + i) * 1024 * 1024 });
    }
  }
  return holders;
}
