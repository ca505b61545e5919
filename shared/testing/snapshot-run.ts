// A run of simulated snapshots for the delta tests: processes start, change and end; GPUs come and go.
import type { GpuProcessView, GpuView, Snapshot } from '../snapshot.js';

/** A seeded generator, so a failure replays. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const gpu = (index: number): GpuView => ({
  index, uuid: `GPU-${index}`, name: 'NVIDIA H100', pciBusId: `0000:${index}:00.0`, lost: false,
  memoryTotal: 80e9, memoryUsed: 0, memoryFree: 80e9, utilizationGpu: 0, utilizationMemory: 0, temperatureC: 40,
  powerWatts: 100, powerLimitWatts: 700, smClockMHz: 1980, memClockMHz: 2619, smCount: 132, computeMode: 'default',
  migEnabled: false, migPending: false, migSlices: [], errors: [],
});

export const simulatedProcess = (pid: number, gpuIndex: number, at: number): GpuProcessView => ({
  pid, gpuIndex, gpuUuid: `GPU-${gpuIndex}`, kind: 'compute', user: `u${pid % 5}`, uid: 1000 + (pid % 5), command: 'python',
  argv: ['python', `train_${pid}.py`], startedAt: at, usedMemory: 1e9, smPercent: 10, memPercent: 5, gpuInstanceId: null, computeInstanceId: null,
});

/**
 * `ticks` snapshots of a busy box: each tick processes start (some in the middle of the list, some on two GPUs),
 * change their memory, SM share, arguments and context, and end; GPUs change fields, gain and lose optional ones;
 * now and then the list is reordered, a GPU is lost from the list, or the driver changes.
 */
export function simulatedRun(seed: number, ticks: number): Snapshot[] {
  const rand = seeded(seed);
  let nextPid = 1000;
  let gpus = [0, 1, 2, 3].map(gpu);
  let processes: GpuProcessView[] = [];
  let driver = { driverVersion: '550.54.15', nvmlVersion: '12.550', cudaDriverVersion: 12040, simulated: true, scenario: 'delta' as string | null };
  const run: Snapshot[] = [];
  for (let seq = 1; seq <= ticks; seq++) {
    const at = 1_700_000_000_000 + seq * 1000;
    processes = processes.filter(() => rand() > 0.1); // some end
    processes = processes.map((p) => {
      const r = rand();
      if (r < 0.5) return { ...p, usedMemory: Math.round(rand() * 8e9), smPercent: Math.round(rand() * 100) };
      if (r < 0.55) return { ...p, argv: [...p.argv, '--resume'] };
      if (r < 0.6) return { ...p, context: { container: null, containerUser: null, systemdUnit: `job-${p.pid}.service`, slurmJobId: null, jupyterKernel: null, sshSession: null } };
      if (r < 0.65 && 'context' in p) {
        const { context: _gone, ...rest } = p; // a field the next row no longer has
        return rest;
      }
      return p;
    });
    for (let n = Math.floor(rand() * 4); n > 0; n--) {
      const started = simulatedProcess(nextPid++, gpus[Math.floor(rand() * gpus.length)].index, at);
      processes.splice(Math.floor(rand() * (processes.length + 1)), 0, started); // anywhere in the list
      if (rand() < 0.2 && gpus.length > 1) processes.push({ ...started, gpuIndex: gpus[0].index === started.gpuIndex ? gpus[1].index : gpus[0].index }); // the same pid on a second GPU
    }
    if (rand() < 0.1) processes = [...processes].sort((a, b) => b.pid - a.pid || a.gpuIndex - b.gpuIndex); // reordered
    gpus = gpus.map((g) => {
      const r = rand();
      if (r < 0.7) return { ...g, utilizationGpu: Math.round(rand() * 100), memoryUsed: Math.round(rand() * 80e9) };
      if (r < 0.75) return { ...g, unlisted: { processes: 3, usedMemory: 1e9 } };
      if (r < 0.8 && 'unlisted' in g) {
        const { unlisted: _gone, ...rest } = g;
        return rest;
      }
      if (r < 0.83) return { ...g, errors: ['Unknown Error'] };
      return g;
    });
    if (rand() < 0.05 && gpus.length > 1) {
      const lost = gpus.pop()!;
      processes = processes.filter((p) => p.gpuIndex !== lost.index);
    } else if (rand() < 0.05) gpus = [...gpus, gpu(gpus.length)];
    if (rand() < 0.05) driver = { ...driver, scenario: rand() < 0.5 ? null : `delta-${seq}` };
    const interval = rand() < 0.1 ? 2000 : 1000; // the sampler's rate changed
    run.push({ seq, takenAt: at, intervalMs: seq === 1 ? null : interval, nominalIntervalMs: interval, driver, gpus, processes });
  }
  return run;
}
