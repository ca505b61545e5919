// A snapshot of a simulated box with no GPUs and no processes, taken now: for unit tests whose engine
// needs a sampler's latest word but not what it says.
import type { Snapshot } from '../../../shared/snapshot.js';

export const emptySnapshot = (): Snapshot => ({
  seq: 1,
  takenAt: Date.now(),
  intervalMs: null,
  nominalIntervalMs: 1000,
  driver: { driverVersion: 'test', nvmlVersion: 'test', cudaDriverVersion: null, simulated: true, scenario: null },
  gpus: [],
  processes: [],
});
