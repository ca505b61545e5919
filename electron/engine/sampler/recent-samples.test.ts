// The engine's recent samples: bounded in ticks and in time, values as sampled, labels of the pids served,
// per process arrays that decode to the ticks sampled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GpuProcessView, Snapshot } from '../../../shared/snapshot.js';
import { recentTicks, type RecentSamples } from '../../../shared/recent-samples.js';
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
  assert.deepEqual(recent.takenAt, [1000, 2000]);
  assert.deepEqual(recent.gpus, [[0, 1], [0, 1]]);
  assert.deepEqual(recent.processes, [
    { pid: 10, gpuIndex: 0, command: 'job10', user: 'ada', from: 0, sm: [33.3, 50], memoryMiB: [2048, 3072], absent: [] },
    { pid: 11, gpuIndex: 1, command: 'job11', user: 'ada', from: 0, sm: [null], memoryMiB: [null], absent: [] },
  ]);
  assert.deepEqual(recentTicks(recent), [
    { takenAt: 1000, gpus: [0, 1], processes: [{ pid: 10, gpuIndex: 0, smPercent: 33.3, usedMemory: 2 * GiB, command: 'job10', user: 'ada' }, { pid: 11, gpuIndex: 1, smPercent: null, usedMemory: null, command: 'job11', user: 'ada' }] },
    { takenAt: 2000, gpus: [0, 1], processes: [{ pid: 10, gpuIndex: 0, smPercent: 50, usedMemory: 3 * GiB, command: 'job10', user: 'ada' }] },
  ]);
});

test('a process missing from a tick is absent there (not a sample of zero), and one pid on two GPUs is two series', () => {
  const ring = new RecentSampleRing();
  ring.add(snapshot(1000, [proc(10, 0, 10, GiB), proc(10, 1, 20, 2 * GiB)]));
  ring.add(snapshot(2000, [proc(10, 1, 20, 2 * GiB)]));
  ring.add(snapshot(3000, [proc(10, 0, 30, GiB + 512 * 1024)]));
  const recent = ring.read();
  assert.deepEqual(recent.processes.map((p) => [p.gpuIndex, p.from, p.sm, p.absent]), [[0, 0, [10, null, 30], [1]], [1, 0, [20, 20], []]]);
  const ticks = recentTicks(recent);
  assert.deepEqual(ticks.map((t) => t.processes.map((p) => `${p.pid}@${p.gpuIndex}:${p.smPercent}/${p.usedMemory}`)), [['10@0:10/1073741824', '10@1:20/2147483648'], ['10@1:20/2147483648'], ['10@0:30/1074266112']]);
});

test('a full box (8 GPUs × 64 processes over 600 ticks) is served in under 2.5 MB of JSON and comes back exactly', () => {
  const ring = new RecentSampleRing();
  const MiB = 1024 ** 2;
  const snapshots: Snapshot[] = [];
  for (let s = 0; s < 600; s++) {
    const processes: GpuProcessView[] = [];
    for (let g = 0; g < 8; g++) for (let p = 0; p < 64; p++) processes.push(proc(10_000 + g * 1000 + p, g, (s + p) % 100, (200 + ((s * 7 + p * 13) % 20_000)) * MiB, 'python train.py'));
    snapshots.push(snapshot(1_700_000_000_000 + s * 1000, processes, [0, 1, 2, 3, 4, 5, 6, 7]));
    ring.add(snapshots[s]);
  }
  const wire = JSON.stringify(ring.read());
  // a tuple per process per tick ([pid, gpu, sm, bytes]) was 7.4 MB here
  assert.ok(Buffer.byteLength(wire) < 2.5e6, `${Buffer.byteLength(wire)} bytes`);
  const ticks = recentTicks(JSON.parse(wire));
  assert.equal(ticks.length, 600);
  for (const [s, tick] of ticks.entries()) {
    assert.equal(tick.takenAt, snapshots[s].takenAt);
    const got = tick.processes.map((p) => [p.pid, p.gpuIndex, p.smPercent, p.usedMemory]).sort((a, b) => a[0]! - b[0]!);
    assert.deepEqual(got, snapshots[s].processes.map((p) => [p.pid, p.gpuIndex, p.smPercent, p.usedMemory]), `tick ${s}`);
  }
});

test('an answer in another shape (an older engine\'s) gives no ticks rather than failing', () => {
  assert.deepEqual(recentTicks({ ticks: [{ takenAt: 1, gpus: [0], processes: [[1, 0, 1, 1]] }] } as unknown as RecentSamples), []);
});

test('the ring keeps at most its tick count and its time span, and a read asks for the last seconds only', () => {
  const ring = new RecentSampleRing(5, 10_000);
  for (let t = 1; t <= 8; t++) ring.add(snapshot(t * 1000, [proc(10, 0, t, GiB)]));
  assert.deepEqual(ring.read().takenAt, [4000, 5000, 6000, 7000, 8000], 'the newest five ticks');
  ring.add(snapshot(20_000, [proc(10, 0, 1, GiB)]));
  assert.deepEqual(ring.read().takenAt, [20_000], 'ticks older than 10 s before the newest are gone');
  for (let t = 21; t <= 23; t++) ring.add(snapshot(t * 1000, [proc(12, 0, 1, GiB)]));
  assert.deepEqual(ring.read(2).takenAt, [21_000, 22_000, 23_000]);
  assert.deepEqual(ring.read(2).processes.map((p) => [p.pid, p.command, p.user]), [[12, 'job12', 'ada']], 'only the pids in the ticks served');
});

test('a process\'s label is its latest command, and labels of pids no tick holds are forgotten', () => {
  const ring = new RecentSampleRing(2, 60_000);
  ring.add(snapshot(1000, [proc(10, 0, 1, GiB, 'python')]));
  ring.add(snapshot(2000, [proc(10, 0, 1, GiB, 'python train.py')]));
  assert.deepEqual(ring.read().processes.map((p) => [p.pid, p.command]), [[10, 'python train.py']]);
  ring.add(snapshot(3000, [proc(20, 0, 1, GiB)]));
  ring.add(snapshot(4000, [proc(20, 0, 1, GiB)]));
  const labels = (ring as unknown as { labels: Map<number, unknown> }).labels;
  ring.read();
  assert.deepEqual([...labels.keys()], [20], 'pid 10 left the ring, and its label with it');
});
