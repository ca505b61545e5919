// The sampler's joins and failure handling, on a scripted GPU reader (the real driver paths are in sampler.sim.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DeviceInfo, DeviceSample } from '../gpu/nvml-types.js';
import type { ProcessContext } from '../../../shared/snapshot.js';
import type { ProcessContextReader } from '../proc/context-reader.js';
import { ProcTable, type ProcessIdentity } from '../proc/proc-table.js';
import { cutArgv, cutText } from '../proc/text-bounds.js';
import { Sampler, type GpuReader } from './sampler.js';

const GiB = 1024 ** 3;

function info(index: number, mig = false): DeviceInfo {
  return {
    index,
    uuid: `GPU-${index}`,
    name: 'Scripted GPU',
    pciBusId: `00000000:0${index}:00.0`,
    memoryTotal: 80 * GiB,
    smCount: 132,
    migMode: { current: mig, pending: mig },
    migDevices: mig
      ? [{ index: 0, uuid: 'MIG-a', name: 'MIG 3g.40gb', profileName: '3g.40gb', profileId: 2, gpuInstanceId: 1, computeInstanceId: 0, memoryTotal: 40 * GiB, smCount: 60, placement: { start: 0, size: 4 } }]
      : [],
    errors: [],
  };
}

function sample(index: number, over: Partial<DeviceSample> = {}): DeviceSample {
  return {
    index,
    lost: false,
    memory: { total: 80 * GiB, used: 10 * GiB, free: 70 * GiB, reserved: 0 },
    utilization: { gpu: 50, memory: 20 },
    temperatureC: 50,
    powerMilliwatts: 200_000,
    powerLimitMilliwatts: 700_000,
    smClockMHz: 1980,
    memClockMHz: 2619,
    computeMode: 'default',
    migMode: { current: false, pending: false },
    processes: [],
    processUtilization: [],
    migDevices: [],
    processSource: 'nvmlDeviceGetRunningProcessDetailList',
    errors: [],
    ...over,
  };
}

function reader(script: () => DeviceSample[], infos: DeviceInfo[], describe?: (i: number) => DeviceInfo): GpuReader {
  return {
    system: () => ({ driverVersion: '1.0', nvmlVersion: '1.0', cudaDriverVersion: 12040, libraryPath: 'scripted' }),
    deviceCount: () => infos.length,
    describeDevice: describe ?? ((i) => infos[i]),
    sampleAll: script,
  };
}

test('joins processes with /proc and per-process SM %, 0 % when the driver has no new sample', () => {
  const samples = [
    sample(0, {
      processes: [
        { pid: process.pid, kind: 'compute', usedMemory: 3 * GiB, gpuInstanceId: null, computeInstanceId: null },
        { pid: 2 ** 22 + 5, kind: 'compute', usedMemory: GiB, gpuInstanceId: null, computeInstanceId: null },
      ],
      processUtilization: [
        { pid: process.pid, smUtil: 64, memUtil: 10, timestampUs: 1 },
        { pid: 999_999_999, smUtil: 30, memUtil: 1, timestampUs: 1 }, // not on the GPU any more: dropped
      ],
    }),
  ];
  const sampler = new Sampler(reader(() => samples, [info(0)]), { simulated: true, scenario: 'scripted' });
  const snap = sampler.tick();
  assert.equal(snap.driver.simulated, true);
  assert.equal(snap.processes.length, 2);
  const mine = snap.processes.find((p) => p.pid === process.pid)!;
  assert.equal(mine.user !== null, true);
  assert.equal(mine.smPercent, 64);
  assert.equal(mine.usedMemory, 3 * GiB);
  const gone = snap.processes.find((p) => p.pid !== process.pid)!;
  assert.equal(gone.user, null, 'a pid that exited between the list and /proc is kept without identity');
  assert.equal(gone.smPercent, 0);
});

test('a lost GPU is marked lost and the others keep their processes', () => {
  const proc = { pid: process.pid, kind: 'compute' as const, usedMemory: GiB, gpuInstanceId: null, computeInstanceId: null };
  const lostError = { call: 'nvmlDeviceGetMemoryInfo_v2', code: 15, name: 'NVML_ERROR_GPU_IS_LOST', message: 'GPU 0 is lost' };
  const sampler = new Sampler(
    reader(() => [sample(0, { lost: true, memory: null, errors: [lostError] }), sample(1, { processes: [proc] })], [info(0), info(1)]),
    { simulated: false },
  );
  const snap = sampler.tick();
  assert.equal(snap.gpus[0].lost, true);
  assert.deepEqual(snap.gpus[0].errors, ['GPU 0 is lost']);
  assert.equal(snap.gpus[1].lost, false);
  assert.deepEqual(snap.processes.map((p) => p.gpuIndex), [1]);
});

test('on MIG GPUs per-process SM % is unknown, not zero, and slices carry live memory', () => {
  const mig = sample(0, {
    migMode: { current: true, pending: true },
    processes: [{ pid: process.pid, kind: 'compute', usedMemory: GiB, gpuInstanceId: 1, computeInstanceId: 0 }],
    migDevices: [{ gpuInstanceId: 1, computeInstanceId: 0, memoryUsed: 2 * GiB, memoryTotal: 40 * GiB }],
  });
  const snap = new Sampler(reader(() => [mig], [info(0, true)]), { simulated: true }).tick();
  assert.equal(snap.processes[0].smPercent, null);
  assert.equal(snap.processes[0].gpuInstanceId, 1);
  assert.equal(snap.gpus[0].migSlices[0].memoryUsed, 2 * GiB);
  assert.equal(snap.gpus[0].migSlices[0].profileName, '3g.40gb');
});

test('a GPU that cannot be described at start-up is described once it answers', () => {
  let answering = false;
  const sampler = new Sampler(
    reader(
      () => [sample(0, answering ? {} : { lost: true })],
      [info(0)],
      (i) => {
        if (!answering) throw new Error('lost');
        return info(i);
      },
    ),
    { simulated: false },
  );
  assert.equal(sampler.tick().gpus[0].uuid, '');
  answering = true;
  assert.equal(sampler.tick().gpus[0].uuid, 'GPU-0');
});

test('a driver that fails outright still yields a snapshot naming the failure', () => {
  const sampler = new Sampler(
    reader(() => {
      throw new Error('NVML_ERROR_DRIVER_NOT_LOADED');
    }, [info(0)]),
    { simulated: false },
  );
  const snap = sampler.tick();
  assert.equal(snap.gpus[0].lost, true);
  assert.match(snap.gpus[0].errors[0], /DRIVER_NOT_LOADED/);
  assert.equal(snap.seq, 1);
});

test('rates outside 0.2-10 Hz are refused with the range in the message', () => {
  const make = (rateHz: number) => new Sampler(reader(() => [], []), { simulated: false, rateHz });
  assert.throws(() => make(11), /between 0.2 and 10 Hz, got 11/);
  assert.throws(() => make(0), /between 0.2 and 10 Hz/);
  assert.equal(make(10).rateHz, 10);
});

test('start() publishes snapshots at the set rate and stop() ends them', async () => {
  const sampler = new Sampler(reader(() => [sample(0)], [info(0)]), { simulated: false, rateHz: 10, procTable: new ProcTable() });
  const seen: number[] = [];
  sampler.onSnapshot((s) => seen.push(s.seq));
  sampler.start();
  await new Promise((r) => setTimeout(r, 350));
  sampler.stop();
  const count = seen.length;
  await new Promise((r) => setTimeout(r, 250));
  assert.ok(count >= 2, `expected several ticks, got ${count}`);
  assert.equal(seen.length, count, 'no tick after stop()');
  assert.deepEqual(seen, seen.map((_, i) => i + 1));
});

test('each snapshot says the interval it covers (since the previous tick) and the interval the sampler meant then', () => {
  let now = 50_000;
  const sampler = new Sampler(reader(() => [sample(0)], [info(0)]), { simulated: true, rateHz: 1, procTable: new ProcTable(), now: () => now });
  const stamps: Array<[number | null, number]> = [];
  const take = (at: number): void => {
    now = at;
    const s = sampler.tick();
    stamps.push([s.intervalMs, s.nominalIntervalMs]);
  };
  take(50_000);
  take(51_000);
  take(52_300); // late
  sampler.setRate(10); // the tick already scheduled still covers the old interval
  take(53_300);
  take(53_400);
  take(53_450); // early
  assert.deepEqual(stamps, [[null, 1000], [1000, 1000], [1300, 1000], [1000, 1000], [100, 100], [50, 100]]);
});

test('a fresh sample between ticks (auto-park after it frees memory, the scheduler before the first tick) is published: the published snapshots cover every moment once', async () => {
  let now = 10_000;
  const sampler = new Sampler(reader(() => [sample(0)], [info(0)]), { simulated: true, rateHz: 10, procTable: new ProcTable(), now: () => (now += 50) });
  const published: Array<{ takenAt: number; intervalMs: number | null }> = [];
  sampler.onSnapshot((s) => published.push({ takenAt: s.takenAt, intervalMs: s.intervalMs }));
  sampler.sampleNow(); // before the loop's first tick
  sampler.start();
  await new Promise((r) => setTimeout(r, 150));
  sampler.sampleNow();
  sampler.sampleNow();
  await new Promise((r) => setTimeout(r, 150));
  sampler.stop();
  const covered = published.slice(1).reduce((sum, s) => sum + (s.intervalMs ?? 0), 0);
  assert.equal(covered, published.at(-1)!.takenAt - published[0].takenAt, `published: ${JSON.stringify(published)}`);
});

/** A /proc where every pid is a process with this command line and context. */
function procOf(argv: (pid: number) => string[], context: ProcessContext | null, uidOf: (pid: number) => number = () => 1000): { procTable: ProcTable; contextReader: ProcessContextReader } {
  const identities = new Map<number, ProcessIdentity>();
  const procTable = {
    lookup: (pid: number) => {
      let who = identities.get(pid);
      if (!who) {
        const { argv: shown, cut } = cutArgv(argv(pid));
        identities.set(pid, (who = { pid, uid: uidOf(pid), user: uidOf(pid) === 1000 ? 'mallory' : 'alice', command: 'python3', argv: shown, argvCut: cut ? { bytes: 6_000_000, args: 50 } : null, startedAt: 1, visible: true }));
      }
      return who;
    },
    retainOnly: () => undefined,
  } as unknown as ProcTable;
  const contextReader = { lookup: () => context, retainOnly: () => undefined } as unknown as ProcessContextReader;
  return { procTable, contextReader };
}

const processRecords = (n: number, gpu: number, memory: (i: number) => number) =>
  Array.from({ length: n }, (_, i) => ({ pid: 10_000 + gpu * 100_000 + i, kind: 'compute' as const, usedMemory: memory(i), gpuInstanceId: null, computeInstanceId: null }));

test("a snapshot's processes take at most 1 MB of JSON however many there are: another user's listed, the largest of the flood, the rest counted on their GPU", () => {
  // mallory's 2 × 1,500 processes with 4 KB command lines and a context of the longest texts, control characters and all
  const long = cutText('\x01'.repeat(1000));
  const context: ProcessContext = { container: { runtime: 'podman', id: 'f'.repeat(64), name: long }, containerUser: long, systemdUnit: long, slurmJobId: long, jupyterKernel: { id: long, notebook: long }, sshSession: long };
  const alicePids = [900_001, 900_002, 900_003];
  const { procTable, contextReader } = procOf((pid) => ['python3', `${pid}`.repeat(2000)], context, (pid) => (alicePids.includes(pid) ? 1001 : 1000));
  // and alice's three, each using less memory than any of mallory's
  const alice = alicePids.map((pid) => ({ pid, kind: 'compute' as const, usedMemory: 1024, gpuInstanceId: null, computeInstanceId: null }));
  const records = [[...processRecords(1500, 0, (i) => (i + 1) * 1024 ** 2), ...alice], processRecords(1500, 1, (i) => (1500 - i) * 1024 ** 2 + 1)];
  const sampler = new Sampler(reader(() => [sample(0, { processes: records[0] }), sample(1, { processes: records[1] })], [info(0), info(1)]), { simulated: true, procTable, contextReader });
  const snap = sampler.tick();
  const bytes = Buffer.byteLength(JSON.stringify(snap.processes));
  assert.ok(bytes <= 1024 * 1024, `at most 1 MB of processes, not ${bytes}`);
  assert.ok(snap.processes.length > 300, `still hundreds listed (${snap.processes.length})`);
  for (const gpu of [0, 1]) {
    const listed = snap.processes.filter((p) => p.gpuIndex === gpu);
    const all = records[gpu];
    assert.equal(listed.length + (snap.gpus[gpu].unlisted?.processes ?? 0), all.length, `GPU ${gpu}: every process listed or counted`);
    const memory = (list: Array<{ usedMemory: number | null }>) => list.reduce((sum, p) => sum + (p.usedMemory ?? 0), 0);
    assert.equal(memory(listed) + (snap.gpus[gpu].unlisted?.usedMemory ?? 0), memory(all), `GPU ${gpu}: and their memory`);
  }
  assert.deepEqual(snap.processes.filter((p) => p.uid === 1001).map((p) => p.pid).sort(), alicePids, "mallory's flood does not push out alice's processes");
  const mallorys = snap.processes.filter((p) => p.uid === 1000);
  const smallestListed = Math.min(...mallorys.map((p) => p.usedMemory!));
  const largestLeftOut = Math.max(...records.flat().filter((r) => !snap.processes.some((p) => p.pid === r.pid)).map((r) => r.usedMemory));
  assert.ok(smallestListed > largestLeftOut, 'of the flood, those left out use less memory than any listed');
  for (const p of snap.processes) {
    assert.ok(Buffer.byteLength(JSON.stringify(p.argv)) <= 4096);
    assert.ok(p.argvCut, 'each command line, cut, says how long it is');
  }
});

test('processes that fit only with shorter command lines are all listed, the largest users of memory with theirs whole', () => {
  // 400 processes with 4 KB command lines: 2 MB of JSON as read
  const { procTable, contextReader } = procOf((pid) => ['python3', `${pid}`.repeat(800)], null);
  const records = processRecords(400, 0, (i) => (i + 1) * GiB);
  const snap = new Sampler(reader(() => [sample(0, { processes: records })], [info(0)]), { simulated: true, procTable, contextReader }).tick();
  const bytes = Buffer.byteLength(JSON.stringify(snap.processes));
  assert.ok(bytes <= 1024 * 1024, `at most 1 MB of processes, not ${bytes}`);
  assert.equal(snap.processes.length, 400);
  assert.equal(snap.gpus[0].unlisted, undefined);
  const whole = snap.processes.filter((p) => p.argv[1].length === 4000);
  assert.ok(whole.length > 50, `the rest of the budget lengthens command lines again (${whole.length})`);
  const smallestWhole = Math.min(...whole.map((p) => p.usedMemory!));
  for (const p of snap.processes.filter((p) => p.argv[1].length < 4000)) {
    assert.ok(p.usedMemory! < smallestWhole, 'in order of memory');
    assert.ok(Buffer.byteLength(JSON.stringify(p.argv)) <= 256);
    assert.deepEqual(p.argvCut, { bytes: 'python3'.length + 1 + 4000 + 1, args: 2 }, 'a command line the budget cut says how long it is');
  }
});

test('a box of 8 GPUs × 64 processes with ordinary command lines is listed whole', () => {
  const { procTable, contextReader } = procOf((pid) => ['python3', '/home/ada/projects/vision/train.py', '--config', `configs/run-${pid}.yaml`, '--batch-size', '256'], null);
  const infos = Array.from({ length: 8 }, (_, i) => info(i));
  const samples = infos.map((_, gpu) => sample(gpu, { processes: processRecords(64, gpu, (i) => (i + 1) * GiB) }));
  const snap = new Sampler(reader(() => samples, infos), { simulated: true, procTable, contextReader }).tick();
  assert.equal(snap.processes.length, 512);
  assert.ok(snap.gpus.every((g) => g.unlisted === undefined));
  assert.ok(snap.processes.every((p) => p.argv.length === 6 && p.argvCut === null));
});

test('a process whose row did not change since the tick before is published as the same object; a changed one is rebuilt whole', () => {
  const memory = new Map([[10_000, GiB], [10_001, 2 * GiB]]);
  let util = 40;
  const script = () => [
    sample(0, {
      processes: [...memory].map(([pid, usedMemory]) => ({ pid, kind: 'compute' as const, usedMemory, gpuInstanceId: null, computeInstanceId: null })),
      processUtilization: [{ pid: 10_001, smUtil: util, memUtil: 5, timestampUs: 1 }],
    }),
    sample(1, { processes: [{ pid: 10_000, kind: 'compute', usedMemory: GiB, gpuInstanceId: null, computeInstanceId: null }] }), // the same pid on another GPU: its own row
  ];
  const sampler = new Sampler(reader(script, [info(0), info(1)]), { simulated: true, scenario: 'scripted', ...procOf((pid) => ['python3', `train_${pid}.py`], null) });
  const first = sampler.tick();
  const second = sampler.tick();
  assert.equal(second.processes.length, 3);
  second.processes.forEach((row, i) => assert.equal(row, first.processes[i], `row ${i} is the same object`));
  memory.set(10_000, 3 * GiB);
  util = 41;
  const third = sampler.tick();
  const [onGpu0, other, onGpu1] = third.processes;
  assert.notEqual(onGpu0, second.processes[0]);
  assert.deepEqual(onGpu0, { ...second.processes[0], usedMemory: 3 * GiB });
  assert.notEqual(other, second.processes[1]);
  assert.deepEqual(other, { ...second.processes[1], smPercent: 41 });
  assert.equal(onGpu1, second.processes[2], 'the same pid on GPU 1 did not change');
  assert.deepEqual(Object.keys(onGpu0), Object.keys(second.processes[0]), 'fields in the same order: the same JSON');
});
