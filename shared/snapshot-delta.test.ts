import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applySnapshotDelta, DeltaMismatch, snapshotDelta } from './snapshot-delta.js';
import type { GpuProcessView, Snapshot } from './snapshot.js';
import { simulatedProcess, simulatedRun } from './testing/snapshot-run.js';

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
      seen.drivers += delta.fields?.set?.driver ? 1 : 0;
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
  const twice = { ...b, processes: [...b.processes, simulatedProcess(1, 0, 0), simulatedProcess(1, 0, 0)] };
  assert.equal(snapshotDelta(a, twice), null);
});

test('a snapshot field the delta does not know by name still reaches the client', () => {
  const [a, b] = simulatedRun(11, 2);
  const later = { ...b, labelled: { box: 'box3' } } as typeof b;
  assert.deepEqual(applySnapshotDelta(a, snapshotDelta(a, later)!), later);
  assert.deepEqual(applySnapshotDelta(later, snapshotDelta(later, { ...b, seq: 3 })!), { ...b, seq: 3 });
});

test('a tick with the same processes in the same order compares rows by position, and its delta rebuilds the next snapshot exactly', () => {
  const a = simulatedRun(13, 20).find((s) => s.processes.length > 6)!;
  // every kind of row change with no process starting or ending: some rows kept as the same objects, one gaining and one losing a field
  const next: Snapshot = {
    ...a,
    seq: a.seq + 1,
    processes: a.processes.map((p, i): GpuProcessView => {
      if (i % 3 === 0) return p;
      if (i === 1) return { ...p, context: { container: { runtime: 'docker', id: 'c1', name: null }, containerUser: null, systemdUnit: null, slurmJobId: null, jupyterKernel: null, sshSession: null } as GpuProcessView['context'] };
      if (i === 2 && 'context' in p) {
        const { context: _gone, ...rest } = p;
        return rest;
      }
      return { ...p, usedMemory: (p.usedMemory ?? 0) + i, argv: [...p.argv] }; // argv equal, another object: compared by value
    }),
  };
  const delta = snapshotDelta(a, next)!;
  assert.deepEqual(delta.processes.removed, []);
  assert.deepEqual(delta.processes.added, []);
  assert.equal(delta.processes.order, undefined);
  assert.ok(delta.processes.changed.every(([, , c]) => !c.set?.argv), 'an argv equal in value is no change');
  assert.equal(delta.processes.changed.length, next.processes.filter((p, i) => p !== a.processes[i]).length);
  assert.deepEqual(applySnapshotDelta(a, JSON.parse(JSON.stringify(delta))), next);
  const twice = { ...next, seq: next.seq + 1, processes: [...next.processes.slice(0, -1), next.processes[0]] };
  assert.equal(snapshotDelta(next, twice), null, 'two rows with one key make no delta');
  assert.equal(snapshotDelta(twice, { ...twice, seq: twice.seq + 1, processes: [...twice.processes] }), null, 'nor do they the tick after, in the same places');
});

test('deltas made between rebuilt snapshots (the lab host relays a box it follows by deltas) rebuild them exactly', () => {
  for (const seed of [3, 17]) {
    const run = simulatedRun(seed, 120);
    // what a follower holds: each snapshot rebuilt from the one before, its unchanged rows the same objects
    const rebuilt = [run[0]];
    for (let i = 1; i < run.length; i++) rebuilt.push(applySnapshotDelta(rebuilt[i - 1], snapshotDelta(run[i - 1], run[i])!));
    let held = structuredClone(rebuilt[0]);
    for (let i = 1; i < rebuilt.length; i++) {
      held = applySnapshotDelta(held, JSON.parse(JSON.stringify(snapshotDelta(rebuilt[i - 1], rebuilt[i]))));
      assert.deepEqual(held, run[i], `seed ${seed} tick ${run[i].seq}`);
    }
  }
});
