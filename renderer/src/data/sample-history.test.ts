// The timeline rings: columns average what was sampled in them, the busiest processes are
// drawn alone and the rest summed as "others", a highlighted process is always its own series.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import type { GpuProcessView, GpuView, Snapshot } from '../../../shared/snapshot.js';
import type { JobView } from '../../../shared/jobs.js';
import { learnJobs } from './process-label.js';
import { clearHistory, historySpan, ingestRecent, ingestSnapshot, readTimeline, TIMELINE_TOP_PROCESSES } from './sample-history.js';

const GIB = 1024 ** 3;
const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

const gpu = (index: number): GpuView => ({
  index, uuid: `GPU-${index}`, name: 'test', pciBusId: '0', lost: false, memoryTotal: 80 * GIB, memoryUsed: null, memoryFree: null,
  utilizationGpu: null, utilizationMemory: null, temperatureC: null, powerWatts: null, powerLimitWatts: null, smClockMHz: null,
  memClockMHz: null, smCount: null, computeMode: 'default', migEnabled: false, migPending: false, migSlices: [], errors: [],
});
const process = (pid: number, sm: number | null, memoryGib: number, gpuIndex = 0): GpuProcessView => ({
  pid, gpuIndex, gpuUuid: `GPU-${gpuIndex}`, kind: 'compute', user: 'ana', uid: 1000, command: 'python', argv: ['python'], startedAt: T0,
  usedMemory: memoryGib * GIB, smPercent: sm, memPercent: null, gpuInstanceId: null, computeInstanceId: null,
});
const snapshotAt = (second: number, processes: GpuProcessView[]): Snapshot =>
  ({ seq: second, takenAt: T0 + second * 1000, intervalMs: 1000, nominalIntervalMs: 1000, driver: { driverVersion: '1', nvmlVersion: '1', cudaDriverVersion: null, simulated: true, scenario: null }, gpus: [gpu(0), gpu(1)], processes }) satisfies Snapshot;
const tick = (second: number, processes: GpuProcessView[]): void => ingestSnapshot(snapshotAt(second, processes));

describe('readTimeline', () => {
  beforeEach(() => clearHistory());

  test('each column is the mean of the samples taken in it, and empty columns are left out', () => {
    // seconds 0..3 in column 0, 4..7 in column 1, nothing in column 2
    for (let s = 0; s < 8; s++) tick(s, [process(100, s < 4 ? 10 + s : 50, 2)]);
    const data = readTimeline(0, 'sm', T0, T0 + 12_000, 3);
    assert.deepEqual(data.series.map((x) => x.key), ['p100']);
    assert.equal(data.rows.length, 2);
    assert.equal(data.rows[0].p100, (10 + 11 + 12 + 13) / 4);
    assert.equal(data.rows[1].p100, 50);
    assert.equal(data.rows[0].t, T0 + 2000, 'a row sits in the middle of its column');
    assert.equal(readTimeline(0, 'memory', T0, T0 + 12_000, 3).rows[0].p100, 2);
  });

  test('only the window is read, and each GPU keeps its own samples', () => {
    for (let s = 0; s < 10; s++) tick(s, [process(100, s, 1), process(200, 90, 1, 1)]);
    const data = readTimeline(0, 'sm', T0 + 5000, T0 + 9000, 1);
    assert.equal(data.rows[0].p100, (5 + 6 + 7 + 8 + 9) / 5);
    assert.deepEqual(readTimeline(1, 'sm', T0, T0 + 9000, 1).series.map((x) => x.key), ['p200']);
    assert.deepEqual(historySpan(0), { first: T0, last: T0 + 9000 });
  });

  test(`the ${TIMELINE_TOP_PROCESSES} busiest processes are drawn alone, the rest summed as others; a pinned one is drawn alone too`, () => {
    const many = Array.from({ length: 10 }, (_, i) => process(100 + i, i + 1, 1)); // pid 109 busiest
    for (let s = 0; s < 3; s++) tick(s, many);
    const data = readTimeline(0, 'sm', T0, T0 + 3000, 1);
    assert.deepEqual(data.series.map((x) => x.key), ['p109', 'p108', 'p107', 'p106', 'p105', 'p104', 'p103', 'others']);
    assert.equal(data.rows[0].others, 1 + 2 + 3, 'pids 100..102 summed');
    assert.equal(data.series.at(-1)!.label, '3 other processes');
    const pinned = readTimeline(0, 'sm', T0, T0 + 3000, 1, 100);
    assert.deepEqual(pinned.series.map((x) => x.key), ['p109', 'p108', 'p107', 'p106', 'p105', 'p104', 'p103', 'p100', 'others']);
    assert.equal(pinned.rows[0].p100, 1);
    assert.equal(pinned.rows[0].others, 2 + 3);
  });

  test('a process that left stays in the columns it was sampled in; SM % not reported (MIG) says so', () => {
    tick(0, [process(100, 40, 1), process(200, 60, 1)]);
    tick(1, [process(100, 40, 1)]);
    const data = readTimeline(0, 'sm', T0, T0 + 2000, 2);
    assert.equal(data.rows[0].p200, 60);
    assert.equal(data.rows[1].p200, 0, 'gone: nothing stacked for it');
    clearHistory();
    tick(0, [process(300, null, 5)]);
    assert.equal(readTimeline(0, 'sm', T0, T0 + 1000, 1).reported, false);
    assert.equal(readTimeline(0, 'memory', T0, T0 + 1000, 1).rows[0].p300, 5);
  });

  test('the engine\'s recent ticks go in before live ones; a tick already held is not taken twice', () => {
    ingestRecent({
      takenAt: [0, 1, 2].map((second) => T0 + second * 1000),
      gpus: [[0], [0], [0]],
      processes: [{ pid: 100, gpuIndex: 0, command: 'python', user: 'ana', from: 0, sm: [20, 20, 20], memoryMiB: [2048, 2048, 2048], absent: [] }],
    });
    tick(2, [process(100, 90, 2)]); // the live snapshot of the history's last tick: already held
    tick(3, [process(100, 40, 2)]);
    const data = readTimeline(0, 'sm', T0, T0 + 4000, 4);
    assert.deepEqual(data.rows.map((r) => r.p100), [20, 20, 20, 40]);
    assert.equal(data.series[0].label, 'p100 · python · ana', 'the id the table lists an unmanaged process under');
    assert.deepEqual(historySpan(0), { first: T0, last: T0 + 3000 });
  });

  test('a managed job\'s process is labelled with its job id from the next sample on', () => {
    tick(0, [process(100, 10, 1)]);
    assert.equal(readTimeline(0, 'sm', T0, T0 + 2000, 1).series[0].label, 'p100 · python · ana');
    learnJobs([{ id: 'j7', managed: true, pid: 100 } as JobView]);
    tick(1, [process(100, 10, 1)]);
    assert.equal(readTimeline(0, 'sm', T0, T0 + 2000, 1).series[0].label, 'j7 · python · ana');
    learnJobs([]);
  });
});
