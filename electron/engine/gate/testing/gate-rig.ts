// Test fixture: a fresh simulated box and a launch gate on it, for one test file of the preload library.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { LaunchGate, type LaunchGateOptions } from '../launch-gate.js';
import { ensurePreloadBuilt } from './launch-gate-sim.js';
import { SimulatedDriver, simulatedDriverBuilt } from '../../gpu/simulated-driver.js';

export interface GateRig {
  driver: SimulatedDriver;
  gate: LaunchGate;
  /** A scratch directory (the gate's directory lives here), removed after the file's tests. */
  dir: string;
}

/**
 * Registers before/after hooks that create the box and the gate and tear both down. Returns the
 * reason to skip (a sentence) when the simulated driver or the preload library is not built, else false.
 */
export function useGateRig(dirPrefix: string, gateOptions: Omit<LaunchGateOptions, 'dir'>, onReady: (rig: GateRig) => void): string | false {
  const ready = simulatedDriverBuilt() && ensurePreloadBuilt();
  let rig: GateRig | null = null;
  before(async () => {
    if (!ready) return;
    const driver = await SimulatedDriver.create({ scenario: 'a100-40gb' });
    const dir = mkdtempSync(join(tmpdir(), dirPrefix));
    rig = { driver, dir, gate: LaunchGate.create({ dir, ...gateOptions }) };
    onReady(rig);
  });
  after(async () => {
    if (!rig) return;
    rig.gate.close();
    await rig.driver.dispose();
    rmSync(rig.dir, { recursive: true, force: true });
  });
  return ready ? false : 'the simulated driver or the preload library is not built (npm run build:native; make -C native/preload)';
}
