// Test fixture: a fresh simulated box and the NVML addon opened on it, for one test file.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, type TestContext } from 'node:test';
import { openNvml } from '../gpu/nvml-addon.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import { SimulatedDriver, type FakejobHandle } from '../gpu/simulated-driver.js';
import { readProcStatus } from '../proc/proc-status.js';
import { until } from '../../testing/until.js';

export interface SimulatedRig {
  driver: SimulatedDriver;
  nvml: NvmlBinding;
  /** A scratch directory, removed after the file's tests. */
  dir: string;
}

/**
 * Registers before/after hooks that create the box, open the addon on it and tear both down.
 * Returns the list of cleanups the tests may add to; they run last first, before the box goes.
 * A process of the box that outlives them all (a managed job: those outlive their engine) fails
 * the file, naming it, and is killed.
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
    const left = rig ? await survivorsOn(rig) : [];
    for (const p of left) killQuietly(p.pid);
    if (rig) rmSync(rig.dir, { recursive: true, force: true });
    if (left.length > 0) {
      throw new Error(`${left.length} process(es) of this test's simulated box outlived its cleanups (killed now): ${left.map((p) => `pid ${p.pid} ${p.what}`).join('; ')}`);
    }
  });
  return cleanups;
}

/** A fakejob started directly on the simulated box (not through gpushare), killed when the test ends. */
export function fakejobFor(t: TestContext, driver: SimulatedDriver, args: string[], argv0?: string): FakejobHandle {
  const job = driver.spawnFakejob(args, {}, argv0);
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

/** A process, not a zombie, whose environment names this box's driver state or whose working directory is in its scratch directory. */
function processesOf(rig: SimulatedRig): Array<{ pid: number; what: string }> {
  const found: Array<{ pid: number; what: string }> = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (!env.includes(`GPUSHARE_FAKEGPU_STATE=${rig.driver.statePath}`) && !cwd.startsWith(`${rig.dir}/`) && cwd !== rig.dir) continue;
      const state = readProcStatus(pid)?.state;
      if (state === undefined || state === 'Z' || state === 'X') continue;
      const job = env.find((e) => e.startsWith('GPUSHARE_JOB_ID='))?.slice('GPUSHARE_JOB_ID='.length);
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      found.push({ pid, what: `${job ? `(job ${job}) ` : ''}${argv}` });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** What is left of the box once its cleanups ran: a process they killed a moment ago may take a little while to go. */
async function survivorsOn(rig: SimulatedRig): Promise<Array<{ pid: number; what: string }>> {
  try {
    await until('the box\'s processes to end', () => processesOf(rig).length === 0, { timeoutMs: 3000 });
    return [];
  } catch {
    return processesOf(rig);
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
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
