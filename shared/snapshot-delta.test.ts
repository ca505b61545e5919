import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GpuProcessView, GpuView, Snapshot } from './snapshot.js';
import { applySnapshotDelta, DeltaMismatch, snapshotDelta } from './snapshot-delta.js';

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

const process = (pid: number, gpuIndex: number, at: number): GpuProcessView => ({
  pid, gpuIndex, gpuUuid: `GPU-${gpuIndex}`, kind: 'compute', user: `u${pid % 5}`, uid: 1000 + (pid % 5), command: 'python',
  argv: ['python', `train_${pid}.py`], startedAt: at, usedMemory: 1e9, smPercent: 10, memPercent: 5, gpuInstanceId: null, computeInstanceId: null,
});

/**
 * `ticks` snapshots of a busy box: each tick processes start (some in the middle of the list, some on two GPUs),
 * change their memory, SM share, arguments and context, and end; GPUs change fields, gain and lose optional ones;
 * now and then the list is reordered, a GPU is lost from the list, or the driver changes.
 */
function simulatedRun(seed: number, ticks: number): Snapshot[] {
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
      const started = process(nextPid++, gpus[Math.floor(rand() * gpus.length)].index, at);
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
    run.push({ seq, takenAt: at, intervalMs: seq === 1 ? null : 1000, nominalIntervalMs: 1000, driver, gpus, processes });
  }
  return run;
}

test('applying each delta to the previous snapshot gives exactly the next one over a simulated run', () => {
  for (const seed of [1, 2, 3, 42]) {
    const run = simulatedRun(seed, 200);
    const seen = { added: 0, removed: 0, changed: 0, reordered: 0, gpuLists: 0, drivers: 0, unset: 0 };
    let held = run[0];
    for (let i = 1; i < run.length; i++) {
      const delta = snapshotDelta(run[i - 1], run[i]);
      assert.ok(delta, `seed ${seed} tick ${run[i].seq}: a delta`);
      const wire = JSON.parse(JSON.stringify(delta)); // what a client receives
      held = applySnapshotDelta(held, wire);
      assert.deepEqual(held, run[i], `seed ${seed} tick ${run[i].seq}`);
      seen.added += delta.processes.added.length;
      seen.removed += delta.processes.removed.length;
      seen.changed += delta.processes.changed.length;
      seen.reordered += delta.processes.order ? 1 : 0;
      seen.gpuLists += delta.gpus ? 1 : 0;
      seen.drivers += delta.driver ? 1 : 0;
      seen.unset += [...delta.processes.changed.map((c) => c[2]), ...(delta.gpuChanges ?? []).map((c) => c[1])].filter((c) => c.unset).length;
    }
    // the run went through every kind of change the delta carries
    for (const [kind, count] of Object.entries(seen)) assert.ok(count > 0, `seed ${seed}: no ${kind} in the run`);
  }
});

test('a delta leaves the snapshot it is applied to as it was and reuses its unchanged rows', () => {
  const [a, b] = simulatedRun(7, 2);
  const frozen = structuredClone(a);
  const next = applySnapshotDelta(a, snapshotDelta(a, b)!);
  assert.deepEqual(a, frozen);
  const kept = next.processes.filter((p) => a.processes.includes(p));
  assert.equal(kept.length, b.processes.filter((p) => a.processes.includes(p)).length);
});

test('a delta from another snapshot than the one held is refused', () => {
  const run = simulatedRun(5, 3);
  const delta = snapshotDelta(run[1], run[2])!;
  assert.equal(delta.baseSeq, 2);
  assert.throws(() => applySnapshotDelta(run[0], delta), (e: unknown) => e instanceof DeltaMismatch && /from snapshot 2, not 1/.test(e.message));
});

test('two rows with one pid and GPU make no delta: the snapshot goes whole', () => {
  const [a, b] = simulatedRun(9, 2);
  const twice = { ...b, processes: [...b.processes, process(1, 0, 0), process(1, 0, 0)] };
  assert.equal(snapshotDelta(a, twice), null);
});
