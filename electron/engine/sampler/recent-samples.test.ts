// The engine's recent samples: bounded in ticks and in time, values as sampled, labels of the pids served.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GpuProcessView, Snapshot } from '../../../shared/snapshot.js';
import { RecentSampleRing } from './recent-samples.js';

const GiB = 1024 ** 3;

function proc(pid: number, gpuIndex: number, smPercent: number | null, usedMemory: number | null, command = `job${pid}`): GpuProcessView {
  return { pid, gpuIndex, gpuUuid: `GPU-${gpuIndex}`, kind: 'compute', user: 'ada', uid: 1000, command, argv: [], startedAt: null, usedMemory, smPercent, memPercent: null, gpuInstanceId: null, computeInstanceId: null };
}

/** Only what the ring reads from a snapshot: its time, its GPUs' indices, its processes. */
function snapshot(takenAt: number, processes: GpuProcessView[], gpus = [0, 1]): Snapshot {
  return { takenAt, gpus: gpus.map((index) => ({ index })), processes } as unknown as Snapshot;
}

test('ticks come back oldest first with each process\'s SM % and memory as sampled, null where the driver gave none', () => {
  const ring = new RecentSampleRing();
  ring.add(snapshot(1000, [proc(10, 0, 33.3, 2 * GiB), proc(11, 1, null, null)]));
  ring.add(snapshot(2000, [proc(10, 0, 50, 3 * GiB)]));
  const recent = ring.read();
  assert.deepEqual(recent.ticks.map((t) => t.takenAt), [1000, 2000]);
  assert.deepEqual(recent.ticks[0].gpus, [0, 1]);
  assert.deepEqual(recent.ticks[0].processes, [[10, 0, 33.3, 2 * GiB], [11, 1, null, null]]);
  assert.deepEqual(recent.ticks[1].processes, [[10, 0, 50, 3 * GiB]]);
  assert.deepEqual(recent.processes.sort((a, b) => a.pid - b.pid), [{ pid: 10, command: 'job10', user: 'ada' }, { pid: 11, command: 'job11', user: 'ada' }]);
});

test('the ring keeps at most its tick count and its time span, and a read asks for the last seconds only', () => {
  const ring = new RecentSampleRing(5, 10_000);
  for (let t = 1; t <= 8; t++) ring.add(snapshot(t * 1000, [proc(10, 0, t, GiB)]));
  assert.deepEqual(ring.read().ticks.map((t) => t.takenAt), [4000, 5000, 6000, 7000, 8000], 'the newest five ticks');
  ring.add(snapshot(20_000, [proc(10, 0, 1, GiB)]));
  assert.deepEqual(ring.read().ticks.map((t) => t.takenAt), [20_000], 'ticks older than 10 s before the newest are gone');
  for (let t = 21; t <= 23; t++) ring.add(snapshot(t * 1000, [proc(12, 0, 1, GiB)]));
  assert.deepEqual(ring.read(2).ticks.map((t) => t.takenAt), [21_000, 22_000, 23_000]);
  assert.deepEqual(ring.read(2).processes, [{ pid: 12, command: 'job12', user: 'ada' }], 'only the pids in the ticks served');
});

test('a process\'s label is its latest command, and labels of pids no tick holds are forgotten', () => {
  const ring = new RecentSampleRing(2, 60_000);
  ring.add(snapshot(1000, [proc(10, 0, 1, GiB, 'python')]));
  ring.add(snapshot(2000, [proc(10, 0, 1, GiB, 'python train.py')]));
  assert.deepEqual(ring.read().processes, [{ pid: 10, command: 'python train.py', user: 'ada' }]);
  ring.add(snapshot(3000, [proc(20, 0, 1, GiB)]));
  ring.add(snapshot(4000, [proc(20, 0, 1, GiB)]));
  const labels = (ring as unknown as { labels: Map<number, unknown> }).labels;
  ring.read();
  assert.deepEqual([...labels.keys()], [20], 'pid 10 left the ring, and its label with it');
});
