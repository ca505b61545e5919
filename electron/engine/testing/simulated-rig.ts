// Test fixture: a fresh simulated box and the NVML addon opened on it, for one test file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, type TestContext } from 'node:test';
import { openNvml } from '../gpu/nvml-addon.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver, type FakejobHandle } from '../gpu/simulated-driver.js';

export interface SimulatedRig {
  driver: SimulatedDriver;
  nvml: NvmlBinding;
  /** A scratch directory, removed after the file's tests. */
  dir: string;
}

/**
 * Registers before/after hooks that create the box, open the addon on it and tear both down.
 * Returns the list of cleanups the tests may add to; they run last first, before the box goes.
 */
export function useSimulatedRig(scenario: string, dirPrefix: string, onReady: (rig: SimulatedRig) => void): Array<() => unknown> {
  const cleanups: Array<() => unknown> = [];
  let rig: SimulatedRig | null = null;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), dirPrefix));
    const driver = await SimulatedDriver.create({ scenario });
    process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath; // the fake NVML reads it at nvmlInit
    rig = { driver, nvml: openNvml(driver.nvmlLibraryPath), dir };
    onReady(rig);
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    rig?.nvml.close();
    await rig?.driver.dispose();
    if (rig) rmSync(rig.dir, { recursive: true, force: true });
  });
  return cleanups;
}

/** A fakejob started directly on the simulated box (not through gpushare), killed when the test ends. */
export function fakejobFor(t: TestContext, driver: SimulatedDriver, args: string[]): FakejobHandle {
  const job = driver.spawnFakejob(args);
  t.after(async () => {
    job.kill('SIGKILL');
    await job.exited;
  });
  return job;
}

/** Pids of the processes started for job `jobId` on this simulated box only (other tests' boxes have a j1 too). */
export function jobProcessesOn(driver: SimulatedDriver, jobId: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (env.includes(`GPUSHARE_JOB_ID=${jobId}`) && env.includes(`GPUSHARE_FAKEGPU_STATE=${driver.statePath}`)) pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** SIGKILLs job `jobId`'s processes on this simulated box (a test's cleanup). */
export function killJobProcessesOn(driver: SimulatedDriver, jobId: string): void {
  for (const pid of jobProcessesOn(driver, jobId)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
