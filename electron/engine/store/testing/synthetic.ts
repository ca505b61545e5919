// Synthetic snapshots for store tests and the benchmark: only the fields the store reads are real.
import type { GpuProcessView, GpuView, Snapshot } from '../../../../shared/snapshot.js';
import type { NvmlBinding } from '../../gpu/nvml-types.js';

export interface FakeProcess {
  pid: number;
  gpu: number;
  user: string | null;
  sm: number | null;
  mem: number | null;
  argv?: string[];
  /** Its MIG slice's GPU instance id; absent: the whole GPU. */
  gi?: number;
}

export function fakeGpu(index: number): GpuView {
  return {
    index, uuid: `GPU-synthetic-${index}`, name: `Synthetic GPU ${index}`, pciBusId: '', lost: false, memoryTotal: 80 * 2 ** 30,
    memoryUsed: null, memoryFree: null, utilizationGpu: null, utilizationMemory: null, temperatureC: null, powerWatts: null,
    powerLimitWatts: null, smClockMHz: null, memClockMHz: null, smCount: null, computeMode: null, migEnabled: false, migPending: false,
    migSlices: [], errors: [],
  };
}

/** A GPU in MIG mode of `of` compute slices, with slices (GPU instance id, compute slices). */
export function fakeMigGpu(index: number, slices: Array<{ gi: number; computeSlices: number }>, of = 7): GpuView {
  return {
    ...fakeGpu(index),
    migEnabled: true,
    migComputeSlices: of,
    migSlices: slices.map(({ gi, computeSlices }) => ({
      uuid: `MIG-synthetic-${index}-${gi}`, name: `slice ${gi}`, profileName: `${computeSlices}g.${computeSlices * 10}gb`, gpuInstanceId: gi, computeInstanceId: 0,
      smCount: null, placement: null, memoryTotal: null, memoryUsed: null, computeSlices,
    })),
  };
}

/** The interval a snapshot covers, as the sampler stamps it (default: a first tick at 1 Hz). */
export interface FakeInterval {
  intervalMs: number | null;
  nominalIntervalMs: number;
}

export function fakeSnapshot(seq: number, takenAt: number, gpus: GpuView[], processes: FakeProcess[], interval: FakeInterval = { intervalMs: null, nominalIntervalMs: 1000 }): Snapshot {
  return {
    seq,
    takenAt,
    intervalMs: interval.intervalMs,
    nominalIntervalMs: interval.nominalIntervalMs,
    driver: { driverVersion: 'synthetic', nvmlVersion: 'synthetic', cudaDriverVersion: null, simulated: true, scenario: 'synthetic' },
    gpus,
    processes: processes.map((p): GpuProcessView => ({
      pid: p.pid, gpuIndex: p.gpu, gpuUuid: `GPU-synthetic-${p.gpu}`, kind: 'compute', user: p.user, uid: p.user ? 1000 : null,
      command: 'train', argv: p.argv ?? ['python', 'train.py', `--run=${p.pid}`], startedAt: null, usedMemory: p.mem, smPercent: p.sm,
      memPercent: null, gpuInstanceId: p.gi ?? null, computeInstanceId: p.gi === undefined ? null : 0,
    })),
  };
}

/** Snapshots stamped as a sampler at a fixed rate stamps them: each covers the time since the previous one. */
export function fakeTicks(nominalIntervalMs: number): (takenAt: number, gpus: GpuView[], processes: FakeProcess[]) => Snapshot {
  let seq = 0;
  let last: number | null = null;
  return (takenAt, gpus, processes) => {
    const snapshot = fakeSnapshot(++seq, takenAt, gpus, processes, { intervalMs: last === null ? null : takenAt - last, nominalIntervalMs });
    last = takenAt;
    return snapshot;
  };
}

/** A deterministic pseudo-random stream (xorshift32). */
export function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** The crash test's child stream: tick i at CHILD_BASE + i × CHILD_TICK_MS. */
export const CHILD_BASE = Date.UTC(2026, 0, 5, 10, 0, 0);
export const CHILD_TICK_MS = 10;

/** An NVML binding with no GPUs, for engines whose snapshots a test feeds itself. */
export const noGpus = {
  system: () => ({ driverVersion: 'none', nvmlVersion: 'none', cudaDriverVersion: null, libraryPath: 'none' }),
  deviceCount: () => 0,
  describeDevice: () => {
    throw new Error('no GPUs');
  },
  sampleAll: () => [],
  close: () => undefined,
} as unknown as NvmlBinding;
