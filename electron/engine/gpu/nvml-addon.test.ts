// The NVML addon against the simulated driver (native/fakegpu): every field it
// reports must equal the driver's own state, through every fallback and fault.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { NvmlError, loadNvmlAddon, openNvml } from './nvml-addon.js';
import type { ComputeMode, DeviceSample, GpuProcessRecord, NvmlBinding } from './nvml-types.js';
import { SimulatedDriver, type FakegpuDevice, type FakejobEvent } from './simulated-driver.js';

const MiB = 1024 ** 2;
const NONE = 0xffffffff;
const COMPUTE_MODES: ComputeMode[] = ['default', 'exclusive-thread', 'prohibited', 'exclusive-process'];

interface Rig {
  driver: SimulatedDriver;
  nvml: NvmlBinding;
  /** Live `sleep` processes registered with the driver as GPU processes; killed after the test. */
  attachSleepers(device: number, mems: number[], opts?: { type?: 'compute' | 'graphics' | 'mps'; mig?: number }): Promise<number[]>;
}

/** A fresh simulated box for one test; every child is killed and the state removed, even on failure. */
async function withDriver(scenario: string, body: (rig: Rig) => Promise<void>): Promise<void> {
  const driver = await SimulatedDriver.create({ scenario });
  const children: ChildProcess[] = [];
  const savedState = process.env.GPUSHARE_FAKEGPU_STATE;
  let nvml: NvmlBinding | undefined;
  try {
    process.env.GPUSHARE_FAKEGPU_STATE = driver.statePath; // the fake reads it at nvmlInit
    nvml = openNvml(driver.nvmlLibraryPath);
    const attachSleepers: Rig['attachSleepers'] = async (device, mems, opts = {}) => {
      const pids: number[] = [];
      for (const mem of mems) {
        const child = spawn('sleep', ['60'], { stdio: 'ignore' });
        children.push(child);
        await driver.attach({ device, pid: child.pid!, mem, ...opts });
        pids.push(child.pid!);
      }
      return pids;
    };
    await body({ driver, nvml, attachSleepers });
  } finally {
    nvml?.close();
    for (const child of children) child.kill('SIGKILL');
    await driver.dispose();
    if (savedState === undefined) delete process.env.GPUSHARE_FAKEGPU_STATE;
    else process.env.GPUSHARE_FAKEGPU_STATE = savedState;
  }
}

const byKindAndPid = (a: GpuProcessRecord, b: GpuProcessRecord): number => a.kind.localeCompare(b.kind) || a.pid - b.pid;
const idOrNull = (id: number): number | null => (id === NONE ? null : id);

function expectedProcesses(device: FakegpuDevice): GpuProcessRecord[] {
  return device.processes
    .map((p) => ({
      pid: p.pid,
      kind: p.type,
      usedMemory: p.usedMemory,
      gpuInstanceId: idOrNull(p.gpuInstanceId),
      computeInstanceId: idOrNull(p.computeInstanceId),
    }))
    .sort(byKindAndPid);
}

function assertSampleMatches(sample: DeviceSample, device: FakegpuDevice): void {
  const at = `GPU ${device.index}`;
  assert.equal(sample.index, device.index, at);
  assert.equal(sample.lost, false, at);
  assert.deepEqual(sample.errors, [], at);
  // the dump's memoryUsed counts the driver's reservation (nvidia-smi's "used"); NVML _v2 reports it apart
  assert.deepEqual(
    sample.memory,
    {
      total: device.memoryTotal,
      used: device.memoryUsed - device.memoryReserved,
      free: device.memoryTotal - device.memoryUsed,
      reserved: device.memoryReserved,
    },
    at,
  );
  // NVML has no whole-GPU utilization while MIG is on (NOT_SUPPORTED → null)
  const utilization = device.migMode.current ? null : { gpu: device.utilizationGpu, memory: device.utilizationMemory };
  assert.deepEqual(sample.utilization, utilization, at);
  assert.equal(sample.temperatureC, device.temperatureC, at);
  assert.equal(sample.powerMilliwatts, device.powerMilliwatts, at);
  assert.equal(sample.powerLimitMilliwatts, device.powerLimitMilliwatts, at);
  assert.equal(sample.smClockMHz, device.smClockMHz, at);
  assert.equal(sample.memClockMHz, device.memClockMHz, at);
  assert.equal(sample.computeMode, COMPUTE_MODES[device.computeMode], at);
  assert.deepEqual(sample.migMode, { current: device.migMode.current === 1, pending: device.migMode.pending === 1 }, at);
  assert.deepEqual([...sample.processes].sort(byKindAndPid), expectedProcesses(device), at);
  assert.equal(sample.processSource, 'nvmlDeviceGetRunningProcessDetailList', at);
  // GPM (smUtil, smOccupancy) is checked in sampler/mig-activity.sim.test.ts: nothing computes here, so 0 once read
  for (const m of sample.migDevices) for (const sm of [m.smUtil, m.smOccupancy]) assert.ok(sm === undefined || sm === null || sm === 0, at);
  assert.deepEqual(
    sample.migDevices.map(({ smUtil: _sm, smOccupancy: _occupancy, ...memory }) => memory),
    device.migDevices.map((m) => ({
      gpuInstanceId: m.gpuInstanceId,
      computeInstanceId: m.computeInstanceId,
      memoryUsed: m.memoryUsed,
      memoryTotal: m.memoryTotal,
    })),
    at,
  );
}

async function assertEveryFieldMatches(rig: Rig): Promise<void> {
  const { driver, nvml } = rig;
  const state = await driver.dump();
  assert.deepEqual(nvml.system(), {
    driverVersion: state.driverVersion,
    nvmlVersion: state.nvmlVersion,
    cudaDriverVersion: state.cudaDriverVersion,
    libraryPath: driver.nvmlLibraryPath,
  });
  assert.equal(nvml.deviceCount(), state.devices.length);
  const samples = nvml.sampleAll();
  assert.equal(samples.length, state.devices.length);
  for (const device of state.devices) {
    const info = nvml.describeDevice(device.index);
    // nvmlDeviceGetAttributes_v2 answers for MIG devices only (real NVML too), so a whole GPU may say null
    assert.ok(info.smCount === null || info.smCount === device.smCount, `GPU ${device.index} smCount ${info.smCount}`);
    assert.deepEqual({ ...info, smCount: device.smCount }, {
      index: device.index,
      uuid: device.uuid,
      name: device.name,
      pciBusId: device.pciBusId,
      memoryTotal: device.memoryTotal,
      smCount: device.smCount,
      migMode: { current: device.migMode.current === 1, pending: device.migMode.pending === 1 },
      migDevices: device.migDevices.map((m) => ({
        index: m.index,
        uuid: m.uuid,
        name: m.name,
        profileName: m.profileName,
        profileId: m.profileId,
        gpuInstanceId: m.gpuInstanceId,
        computeInstanceId: m.computeInstanceId,
        memoryTotal: m.memoryTotal,
        smCount: m.smCount,
        computeSlices: m.computeSlices,
        placement: m.placement,
      })),
      migComputeSlices: device.migComputeSlices,
      errors: [],
    });
    assertSampleMatches(samples[device.index], device);
    assertSampleMatches(nvml.sampleDevice(device.index), device);
  }
}

/** Pins the readings that otherwise drift, so the addon and the dump can be compared exactly. */
async function pinReadings(driver: SimulatedDriver, devices: number): Promise<void> {
  for (let i = 0; i < devices; i++) {
    await driver.set(i, { temperature: 50 + i, power: 120000 + i, sm_clock: 1400 + i, mem_clock: 1500 + i, compute_mode: i % 4 });
  }
}

test('every field equals the driver state on one A100 with a job holding memory', async () => {
  await withDriver('a100-40gb', async (rig) => {
    await pinReadings(rig.driver, 1);
    const job = rig.driver.spawnFakejob(['--device', '0', '--mem', '1G', 'hold']);
    await job.ready;
    await rig.attachSleepers(0, [300 * MiB], { type: 'graphics' });
    await assertEveryFieldMatches(rig);
  });
});

test('every field equals the driver state on two H100s, one in MIG mode, MIG devices included', async () => {
  await withDriver('h100x2-mig', async (rig) => {
    await pinReadings(rig.driver, 2);
    const [first, second] = (await rig.driver.dump()).devices[1].migDevices;
    assert.ok(first && second, 'the scenario has MIG devices on GPU 1');
    const job = rig.driver.spawnFakejob(['--device', '0', '--mem', '2G', 'hold']);
    await job.ready;
    await rig.attachSleepers(1, [3 * 1024 * MiB], { mig: first.gpuInstanceId });
    await rig.attachSleepers(1, [512 * MiB], { mig: second.gpuInstanceId, type: 'mps' });
    await assertEveryFieldMatches(rig);
    const info = rig.nvml.describeDevice(1);
    assert.deepEqual(
      info.migDevices.map((m) => m.profileName),
      ['3g.40gb', '2g.20gb', '1g.10gb', '1g.10gb'],
    );
  });
});

test("a fakejob's allocation shows in its process memory on the next sample", async () => {
  await withDriver('a100-40gb', async ({ driver, nvml }) => {
    const before = nvml.sampleAll()[0];
    const job = driver.spawnFakejob(['--device', '0', '--mem', '768M', 'hold']);
    const ready = await job.ready;
    assert.equal(before.processes.some((p) => p.pid === job.pid), false);
    const row = nvml.sampleAll()[0].processes.find((p) => p.pid === job.pid);
    assert.deepEqual(row, { pid: job.pid, kind: 'compute', usedMemory: ready.allocated, gpuInstanceId: null, computeInstanceId: null });
    assert.equal(ready.allocated, 768 * MiB);
  });
});

test('two training jobs contending on one GPU: per-process SM % matches each job’s measured share', async (t) => {
  await withDriver('a100-40gb', async ({ driver, nvml }) => {
    const args = ['--device', '0', '--mem', '64M', 'train', '--kernel-ms', '5', '--duration', '3'];
    const jobs = [driver.spawnFakejob(args), driver.spawnFakejob(args)];
    await Promise.all(jobs.map((j) => j.ready));
    // the first samples set this device's last-seen timestamp once kernels have run
    for (let i = 0; i < 40 && nvml.sampleDevice(0).processUtilization.length === 0; i++) await sleep(25);
    const sums = new Map<number, { total: number; n: number }>(jobs.map((j) => [j.pid, { total: 0, n: 0 }]));
    const running = (): boolean => jobs.every((j) => !j.events.some((e) => e.event === 'done'));
    while (running()) {
      await sleep(500);
      if (!running()) break; // a tick that overlaps a job's end would under-count it
      for (const s of nvml.sampleDevice(0).processUtilization) {
        const sum = sums.get(s.pid);
        if (sum) {
          sum.total += s.smUtil;
          sum.n += 1;
        }
      }
    }
    const done: FakejobEvent[] = await Promise.all(jobs.map((j) => j.waitFor('done')));
    const averages = jobs.map((j) => {
      const sum = sums.get(j.pid)!;
      assert.ok(sum.n >= 3, `pid ${j.pid} sampled ${sum.n} times`);
      return sum.total / sum.n;
    });
    done.forEach((d, i) => {
      const share = (100 * Number(d.busyMs)) / Number(d.wallMs);
      assert.ok(Math.abs(averages[i] - share) <= 10, `job ${i}: sampled ${averages[i].toFixed(1)} % vs measured ${share.toFixed(1)} %`);
    });
    assert.ok(averages[0] + averages[1] <= 101, `the two sum to ${averages[0] + averages[1]}`);
    t.diagnostic(`sampled ${averages.map((a) => a.toFixed(1)).join(' / ')} % vs measured ${done.map((d) => ((100 * Number(d.busyMs)) / Number(d.wallMs)).toFixed(1)).join(' / ')} %`);
  });
});

test('200 processes on one GPU are all listed with their memory', async () => {
  await withDriver('a100-40gb', async ({ nvml, attachSleepers }) => {
    const mems = Array.from({ length: 200 }, (_, i) => (i + 1) * MiB);
    const pids = await attachSleepers(0, mems);
    const listed = new Map(nvml.sampleDevice(0).processes.map((p) => [p.pid, p.usedMemory]));
    assert.equal(listed.size, 200);
    pids.forEach((pid, i) => assert.equal(listed.get(pid), mems[i], `pid ${pid}`));
  });
});

test('both _v3 record sizes parse (24-byte records and the R535 32-byte ones)', async () => {
  await withDriver('h100x2-mig', async ({ driver, nvml, attachSleepers }) => {
    await driver.fault(['--call', 'nvmlDeviceGetRunningProcessDetailList', '--code', '3']);
    const gi = (await driver.dump()).devices[1].migDevices[0].gpuInstanceId;
    await attachSleepers(0, [5 * MiB, 6 * MiB, 7 * MiB, 8 * MiB]);
    await attachSleepers(1, [9 * MiB, 10 * MiB, 11 * MiB], { mig: gi });
    for (const size of [24, 32, 24, 32]) {
      await driver.fault(['--v3-record-size', String(size)]);
      const state = await driver.dump();
      assert.equal(state.v3RecordSize, size);
      for (const sample of nvml.sampleAll()) {
        const at = `GPU ${sample.index}, ${size}-byte records`;
        assert.equal(sample.processSource, 'nvmlDeviceGetComputeRunningProcesses_v3', at);
        assert.deepEqual([...sample.processes].sort(byKindAndPid), expectedProcesses(state.devices[sample.index]), at);
      }
    }
  });
});

test('a lost GPU is marked lost with one GPU_IS_LOST error while the others keep updating, and recovers', async () => {
  await withDriver('h100x8', async ({ driver, nvml }) => {
    await driver.fault(['--device', '0', '--lost', 'on']);
    const job = driver.spawnFakejob(['--device', '1', '--mem', '256M', 'hold']);
    const ready = await job.ready;
    const samples = nvml.sampleAll();
    assert.equal(samples.length, 8);
    const lost = samples[0];
    assert.equal(lost.lost, true);
    assert.equal(lost.errors.length, 1);
    assert.equal(lost.errors[0].code, 15);
    assert.equal(lost.errors[0].name, 'NVML_ERROR_GPU_IS_LOST');
    assert.deepEqual(
      { memory: lost.memory, temperatureC: lost.temperatureC, processes: lost.processes, migMode: lost.migMode },
      { memory: null, temperatureC: null, processes: [], migMode: null },
    );
    assert.deepEqual(samples.slice(1).map((s) => s.lost), Array(7).fill(false));
    assert.equal(samples[1].processes.find((p) => p.pid === job.pid)?.usedMemory, ready.allocated);
    assert.throws(() => nvml.describeDevice(0), (e: unknown) => e instanceof NvmlError && e.codeName === 'NVML_ERROR_GPU_IS_LOST');

    await driver.fault(['--device', '0', '--lost', 'off']);
    const back = nvml.sampleAll()[0];
    assert.equal(back.lost, false);
    assert.deepEqual(back.errors, []);
    assert.ok(back.memory && back.memory.total > 0);
  });
});

test('an absent library is an NvmlError naming GPUSHARE_NVML_LIB, not a crash', () => {
  const nvml = loadNvmlAddon();
  nvml.close();
  const missing = (path: string) => (e: unknown) =>
    e instanceof NvmlError && e.kind === 'library-missing' && e.message.includes(path) && /GPUSHARE_NVML_LIB/.test(e.message);
  assert.throws(() => openNvml('/nonexistent/libnvidia-ml.so.1'), missing('/nonexistent/libnvidia-ml.so.1'));
  const saved = process.env.GPUSHARE_NVML_LIB;
  process.env.GPUSHARE_NVML_LIB = '/nowhere/at/all/libnvidia-ml.so.1';
  try {
    assert.throws(() => openNvml(), missing('/nowhere/at/all/libnvidia-ml.so.1'));
  } finally {
    if (saved === undefined) delete process.env.GPUSHARE_NVML_LIB;
    else process.env.GPUSHARE_NVML_LIB = saved;
  }
  assert.equal(nvml.isOpen(), false);
  assert.throws(() => nvml.sampleAll(), (e: unknown) => e instanceof NvmlError && e.codeName === 'NVML_ERROR_UNINITIALIZED');
});

test('a failing field is null with an error naming the call; NOT_SUPPORTED is null without one', async () => {
  await withDriver('a100-40gb', async ({ driver, nvml }) => {
    await driver.fault(['--call', 'nvmlDeviceGetTemperature', '--code', '4', '--device', '0']);
    const denied = nvml.sampleDevice(0);
    assert.equal(denied.temperatureC, null);
    assert.deepEqual(denied.errors, [
      {
        call: 'nvmlDeviceGetTemperature',
        code: 4,
        name: 'NVML_ERROR_NO_PERMISSION',
        message: denied.errors[0]?.message,
      },
    ]);
    assert.match(denied.errors[0].message, /^nvmlDeviceGetTemperature failed on GPU 0: NVML_ERROR_NO_PERMISSION \(4\)/);
    assert.notEqual(denied.powerMilliwatts, null, 'the other fields still read');

    await driver.fault(['--call', 'nvmlDeviceGetTemperature', '--code', '3', '--device', '0']);
    const unsupported = nvml.sampleDevice(0);
    assert.equal(unsupported.temperatureC, null);
    assert.deepEqual(unsupported.errors, []);

    await driver.fault(['--call', 'nvmlDeviceGetTemperature', '--code', '0', '--device', '0']);
    assert.equal(typeof nvml.sampleDevice(0).temperatureC, 'number');
    assert.throws(() => nvml.describeDevice(7), (e: unknown) => e instanceof NvmlError && e.call.startsWith('nvmlDevice') && e.code === 2);
  });
});

test('process lists fall back to _v3, then _v2, when the newer calls are not supported', async () => {
  await withDriver('a100-40gb', async ({ driver, nvml, attachSleepers }) => {
    await attachSleepers(0, [20 * MiB, 30 * MiB]);
    await attachSleepers(0, [40 * MiB], { type: 'graphics' });
    const expected = expectedProcesses((await driver.dump()).devices[0]);
    const read = (): DeviceSample => nvml.sampleDevice(0);
    assert.equal(read().processSource, 'nvmlDeviceGetRunningProcessDetailList');

    await driver.fault(['--call', 'nvmlDeviceGetRunningProcessDetailList', '--code', '3']);
    let sample = read();
    assert.equal(sample.processSource, 'nvmlDeviceGetComputeRunningProcesses_v3');
    assert.deepEqual([...sample.processes].sort(byKindAndPid), expected);

    await driver.fault(['--call', 'nvmlDeviceGetComputeRunningProcesses_v3', '--code', '3']);
    sample = read();
    assert.equal(sample.processSource, 'nvmlDeviceGetComputeRunningProcesses_v2');
    assert.deepEqual([...sample.processes].sort(byKindAndPid), expected);
    assert.deepEqual(sample.errors, []);
  });
});
