// Built-in MIG tables by device name, and tables built from what NVML reports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILT_IN_MIG_MODELS, builtInMigProfileTable, migProfileTableFromNvml, type NvmlGpuInstanceProfile } from './profiles.js';
import { planMigLayout } from './planner.js';

const GiB = 2 ** 30;

test('device names and short names find the right built-in table', () => {
  const cases: [string, number | undefined, string | null][] = [
    ['NVIDIA A100-SXM4-40GB', undefined, 'A100-40GB'],
    ['NVIDIA A100-PCIE-40GB', undefined, 'A100-40GB'],
    ['NVIDIA A100 80GB PCIe', undefined, 'A100-80GB'],
    ['NVIDIA A100-SXM4-80GB', undefined, 'A100-80GB'],
    ['NVIDIA A100-SXM4', 81920 * 2 ** 20, 'A100-80GB'],
    ['NVIDIA H100 80GB HBM3', undefined, 'H100-80GB'],
    ['NVIDIA H100 PCIe', 81559 * 2 ** 20, 'H100-80GB'],
    ['NVIDIA H200', undefined, 'H200-141GB'],
    ['NVIDIA H200 NVL', 143771 * 2 ** 20, 'H200-141GB'],
    ['a100-40gb', undefined, 'A100-40GB'],
    ['H100-80GB', undefined, 'H100-80GB'],
    ['H200-141GB', undefined, 'H200-141GB'],
    ['NVIDIA H100 NVL', 94 * GiB, null],
    ['NVIDIA A100-SXM4', undefined, null],
    ['Tesla V100-SXM2-32GB', undefined, null],
    ['NVIDIA A30', 24 * GiB, null],
  ];
  for (const [name, memory, model] of cases) assert.equal(builtInMigProfileTable(name, memory)?.model ?? null, model, name);
});

test('every built-in table has the A100/H100 shape: placements inside 8 memory slices, names matching slices', () => {
  for (const model of BUILT_IN_MIG_MODELS) {
    const table = builtInMigProfileTable(model)!;
    assert.equal(table.memorySlices, 8);
    assert.equal(table.computeSlices, 7);
    const byId = Object.fromEntries(table.profiles.map((p) => [p.id, p]));
    assert.deepEqual(Object.keys(byId).map(Number).sort((a, b) => a - b), [0, 5, 9, 14, 15, 19, 20], model);
    assert.deepEqual(byId[15].placementStarts, [0, 2, 4, 6]);
    assert.deepEqual(byId[9].placementStarts, [0, 4]);
    assert.equal(byId[20].maxInstances, 1);
    assert.ok(byId[20].mediaExtensions && byId[20].name.endsWith('+me'));
    for (const p of table.profiles) {
      assert.ok(p.name.startsWith(`${p.computeSlices}g.`), `${model} ${p.name}`);
      for (const start of p.placementStarts) assert.ok(start + p.memorySlices <= 8, `${model} ${p.name}@${start}`);
      // Memory grows with memory slices, SMs with compute slices.
      for (const q of table.profiles) {
        if (q.memorySlices > p.memorySlices) assert.ok(q.memoryMiB > p.memoryMiB, `${model} ${q.name} > ${p.name}`);
        if (q.computeSlices > p.computeSlices) assert.ok(q.smCount > p.smCount, `${model} ${q.name} SMs > ${p.name}`);
      }
    }
  }
});

test('a table built from NVML data is used as the driver reports it', () => {
  // What an A30 (4 memory slices, not built in) would report.
  const reported: NvmlGpuInstanceProfile[] = [
    { nvmlProfile: 0, id: 14, name: 'MIG 1g.6gb', sliceCount: 1, instanceCount: 4, multiprocessorCount: 14, memorySizeMB: 5952, placements: [0, 1, 2, 3].map((start) => ({ start, size: 1 })) },
    { nvmlProfile: 7, id: 21, name: 'MIG 1g.6gb+me', sliceCount: 1, instanceCount: 1, multiprocessorCount: 14, memorySizeMB: 5952, placements: [0, 1, 2, 3].map((start) => ({ start, size: 1 })) },
    { nvmlProfile: 1, id: 5, name: 'MIG 2g.12gb', sliceCount: 2, instanceCount: 2, multiprocessorCount: 28, memorySizeMB: 11968, placements: [{ start: 0, size: 2 }, { start: 2, size: 2 }] },
    { nvmlProfile: 3, id: 0, name: null, sliceCount: 4, instanceCount: 1, multiprocessorCount: 56, memorySizeMB: 24064, placements: [{ start: 0, size: 4 }] },
    { nvmlProfile: 4, id: 99, name: 'MIG 7g.0gb', sliceCount: 7, instanceCount: 0, multiprocessorCount: 0, memorySizeMB: 0, placements: [] },
  ];
  const table = migProfileTableFromNvml('NVIDIA A30', reported);
  assert.equal(table.source, 'driver');
  assert.equal(table.memorySlices, 4);
  assert.equal(table.computeSlices, 4);
  assert.deepEqual(table.profiles.map((p) => [p.name, p.id, p.memorySlices, p.placementStarts.join(','), p.mediaExtensions]), [
    ['1g.6gb', 14, 1, '0,1,2,3', false],
    ['1g.6gb+me', 21, 1, '0,1,2,3', true],
    ['2g.12gb', 5, 2, '0,2', false],
    ['4g.24gb', 0, 4, '0', false],
  ]);
  const plan = planMigLayout(table, [{ id: 'a', memoryBytes: 10e9 }, { id: 'b', memoryBytes: 5e9 }, { id: 'c', memoryBytes: 5e9 }]);
  assert.deepEqual(plan.instances.map((i) => `${i.profile}@${i.placement.start}`), ['2g.12gb@0', '1g.6gb@2', '1g.6gb@3']);
});
