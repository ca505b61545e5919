// Real NVML clients (nvtop, nvitop, gpustat) on the simulated libnvidia-ml.so.1:
// every entry point of the NVIDIA driver resolves, and what those clients read at
// start answers from the simulated driver's state. Runs native/fakegpu's
// nvml_check, which dlopens the library as they do.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../paths.js';
import { SimulatedDriver, type FakegpuDevice } from './simulated-driver.js';

const NOT_SUPPORTED = { error: 3 };
const ENTRY_POINTS = join(packageRoot(), 'native', 'fakegpu', 'nvml-entry-points.txt');

type ClientReading = Record<string, number | string | { error: number }>;

function nvmlCheck(driver: SimulatedDriver, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(driver.libDir, 'nvml_check'), [driver.nvmlLibraryPath, ...args], { env: { ...process.env, ...driver.env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

async function clientReading(driver: SimulatedDriver, device: number): Promise<ClientReading> {
  const { code, stdout, stderr } = await nvmlCheck(driver, ['client', String(device)]);
  assert.equal(code, 0, `nvml_check client ${device} failed: ${stderr}`);
  return JSON.parse(stdout) as ClientReading;
}

interface MigScan {
  profiles: Array<{
    index: number;
    id: number;
    instanceCount: number;
    memorySizeMB: number;
    placements: Array<[number, number]>;
    remaining: number | { error: number };
    instances: Array<{ gpuInstanceId: number; start: number; computeInstances: Array<{ id: number; profileId: number; slices: number }> }>;
    instancesError?: number;
  }>;
}

interface MigList {
  instances: Array<{ gpuInstanceId: number; profileId: number; placement: { start: number; size: number }; computeInstanceIds: number[] }>;
}

async function migScan(driver: SimulatedDriver, device: number): Promise<MigScan> {
  const { code, stdout, stderr } = await nvmlCheck(driver, ['mig', String(device)]);
  assert.equal(code, 0, `nvml_check mig ${device} failed: ${stderr}`);
  return JSON.parse(stdout) as MigScan;
}

/** `fakegpu mig --device N ARGS…`: the exit code and stdout. */
function fakegpuMig(driver: SimulatedDriver, device: number, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(join(driver.libDir, 'fakegpu'), ['mig', '--state', driver.statePath, '--device', String(device), ...args],
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }));
  });
}

/** The GPU instances NVML enumerates, profile by profile, as `fakegpu mig list` shows them. */
function instancesOf(scan: MigScan): MigList['instances'] {
  return scan.profiles.flatMap((p) => p.instances.map((gi) => ({
    gpuInstanceId: gi.gpuInstanceId,
    profileId: p.id,
    placement: { start: gi.start, size: p.placements[0]![1] },
    computeInstanceIds: gi.computeInstances.map((ci) => ci.id),
  }))).sort((a, b) => a.gpuInstanceId - b.gpuInstanceId);
}

async function withDriver(scenario: string, body: (driver: SimulatedDriver) => Promise<void>): Promise<void> {
  const driver = await SimulatedDriver.create({ scenario });
  try {
    await body(driver);
  } finally {
    await driver.dispose();
  }
}

const entryPointNames = (): string[] =>
  readFileSync(ENTRY_POINTS, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

/** What every real board reads the same way, against `fakegpu dump`. */
function assertReadsDumpedState(reading: ClientReading, device: FakegpuDevice, deviceCount: number, cudaDriverVersion: number): void {
  assert.equal(reading.count, deviceCount, 'nvmlDeviceGetCount (v1)');
  assert.equal(reading.handleByIndexV1, 1, 'nvmlDeviceGetHandleByIndex gives the _v2 handle');
  assert.equal(reading.cudaDriverVersion, cudaDriverVersion, 'nvmlSystemGetCudaDriverVersion (v1)');
  assert.equal(reading.uuid, device.uuid);
  assert.equal(reading.handleByUuidSame, 1, 'nvmlDeviceGetHandleByUUID finds the same device');
  assert.equal(reading.handleByPciSame, 1, 'nvmlDeviceGetHandleByPciBusId_v2 finds the same device');
  assert.equal(reading.pciV1BusId, device.pciBusId.slice(4), 'the v1 layout carries the legacy 16-byte bus id');
  assert.equal(reading.minorNumber, device.index);
  assert.equal(reading.temperatureV, device.temperatureC, 'nvmlDeviceGetTemperatureV');
  assert.equal(reading.temperature, device.temperatureC);
  assert.deepEqual(reading.temperatureVBadVersion, { error: 25 }, 'a wrong struct version is refused');
  assert.equal(reading.powerUsage, device.powerMilliwatts);
  assert.equal(reading.powerLimit, device.powerLimitMilliwatts, 'nvmlDeviceGetPowerManagementLimit');
  assert.equal(reading.enforcedPowerLimit, device.powerLimitMilliwatts);
  assert.equal(reading.powerLimitMax, device.powerLimitMilliwatts);
  assert.equal(reading.powerLimitMin, Math.floor(device.powerLimitMilliwatts / 4));
  assert.equal(reading.clockSm, device.smClockMHz);
  assert.equal(reading.clockMem, device.memClockMHz);
  assert.equal(reading.persistenceMode, 1);
  assert.equal(reading.displayActive, 0);
  assert.equal(reading.encoderUtilization, 0);
  assert.equal(reading.decoderUtilization, 0);
  assert.equal(reading.pcieTxKBps, 0);
  assert.equal(reading.pcieRxKBps, 0);
  assert.equal(reading.computeProcessesV3, device.processes.filter((p) => p.type === 'compute').length);
  assert.deepEqual(reading.driverModel, NOT_SUPPORTED, 'nvmlDeviceGetDriverModel_v2 is Windows-only');
  assert.deepEqual(reading.nvLinkState, NOT_SUPPORTED, 'a call of the NOT_SUPPORTED table, with its real arguments');
}

test('the simulated libnvidia-ml.so.1 exports every NVML entry point of the NVIDIA driver', async () => {
  const names = entryPointNames();
  // the calls nvtop, nvitop and gpustat were refused on, among the list
  for (const name of ['nvmlInit', 'nvmlInitWithFlags', 'nvmlDeviceGetCount', 'nvmlDeviceGetHandleByIndex',
    'nvmlSystemGetCudaDriverVersion', 'nvmlSystemGetCudaDriverVersion_v2', 'nvmlDeviceGetPerformanceState',
    'nvmlDeviceGetDriverModel_v2', 'nvmlDeviceGetTemperatureV', 'nvmlDeviceGetConfComputeMemSizeInfo',
    'nvmlDeviceGetPcieThroughput', 'nvmlDeviceGetComputeRunningProcesses_v3']) {
    assert.ok(names.includes(name), `${name} is in ${ENTRY_POINTS}`);
  }
  await withDriver('a100-40gb', async (driver) => {
    const { code, stdout } = await nvmlCheck(driver, ['symbols', ENTRY_POINTS]);
    const missing = stdout.split('\n').filter((l) => l.startsWith('missing ')).map((l) => l.slice(8));
    assert.deepEqual(missing, [], `${missing.length} entry points are missing from the simulated libnvidia-ml.so.1: ${missing.join(', ')}`);
    assert.equal(code, 0);
    assert.match(stdout, new RegExp(`^resolved ${names.length} of ${names.length}$`, 'm'));
    assert.match(stdout, /^before init nvmlDeviceGetNvLinkState: 1$/m, 'a NOT_SUPPORTED entry point answers UNINITIALIZED before nvmlInit');
  });
});

test('an A100 with a process: the calls real clients make at start read the driver state', async () => {
  await withDriver('a100-40gb', async (driver) => {
    const sleeper: ChildProcess = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await driver.attach({ device: 0, pid: sleeper.pid!, mem: 512 * 1024 ** 2 });
      await driver.set(0, { temperature: 71, power: 123456, sm_clock: 1005 }); // pinned, so the readings are exact
      const reading = await clientReading(driver, 0);
      const state = await driver.dump();
      const device = state.devices[0]!;
      assert.equal(device.temperatureC, 71);
      assertReadsDumpedState(reading, device, state.devices.length, state.cudaDriverVersion);
      assert.equal(reading.computeProcessesV3, 1);
      // the board facts of an A100-SXM4 (scenario: sm_clock=1410 mem_clock=1215)
      assert.equal(reading.maxClockSm, 1410);
      assert.equal(reading.maxClockGraphics, 1410);
      assert.equal(reading.maxClockMem, 1215);
      assert.equal(reading.architecture, 7, 'NVML_DEVICE_ARCH_AMPERE');
      assert.equal(reading.brand, 14, 'NVML_BRAND_NVIDIA');
      assert.deepEqual([reading.ccMajor, reading.ccMinor], [8, 0]);
      assert.deepEqual([reading.thresholdShutdown, reading.thresholdSlowdown, reading.thresholdGpuMax], [92, 89, 85]);
      assert.deepEqual([reading.pcieLinkGenCurrent, reading.pcieLinkGenMax, reading.pcieLinkWidthCurrent, reading.pcieLinkWidthMax], [4, 4, 16, 16]);
      assert.equal(reading.eccModeCurrent, 1);
      assert.equal(reading.totalEccErrorsUncorrectedVolatile, 0);
      assert.equal(reading.encoderSamplingPeriodUs, 167000);
      assert.deepEqual([reading.bar1TotalMiB, reading.bar1UsedMiB], [65536, 1], 'BAR1: the A100-40GB aperture');
      // passively cooled, no confidential computing: as on the real board
      assert.deepEqual(reading.fanSpeed, NOT_SUPPORTED);
      assert.deepEqual(reading.numFans, NOT_SUPPORTED);
      assert.deepEqual(reading.ccUnprotectedKiB, NOT_SUPPORTED);
      // no kernel ran: idle performance state, and idle is the clocks' reason
      assert.equal(device.utilizationGpu, 0);
      assert.equal(reading.performanceState, 8);
      assert.equal(reading.clocksEventReasons, 1);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });
});

test('two H100s, one in MIG mode: PCIe gen 5 and the confidential-computing memory split', async () => {
  await withDriver('h100x2-mig', async (driver) => {
    const state = await driver.dump();
    for (const device of state.devices) {
      const reading = await clientReading(driver, device.index);
      assertReadsDumpedState(reading, device, 2, state.cudaDriverVersion);
      assert.equal(reading.architecture, 9, 'NVML_DEVICE_ARCH_HOPPER');
      assert.deepEqual([reading.pcieLinkGenMax, reading.pcieLinkWidthMax], [5, 16]);
      assert.deepEqual([reading.maxClockSm, reading.maxClockMem], [1980, 2619]);
      assert.equal(reading.thresholdGpuMax, 87);
      assert.equal(reading.ccProtectedKiB, 0, 'confidential computing is off');
      assert.equal(reading.ccUnprotectedKiB, device.memoryTotal / 1024);
      assert.equal(reading.bar1TotalMiB, 131072);
    }
    // nvitop reads BAR1 of every MIG device (and fails without it): the slice's share of the aperture
    const mig0 = state.devices[1]!.migDevices.find((m) => m.index === 0)!;
    const onMigGpu = await clientReading(driver, 1);
    assert.equal(onMigGpu.mig0Bar1TotalMiB, (131072 * mig0.placement.size) / 8);
    assert.deepEqual((await clientReading(driver, 0)).mig0Bar1TotalMiB, { error: 6 }, 'MIG off: no MIG device 0 (NOT_FOUND)');
  });
});

test('a desktop card: one fan, at 30 % when idle; no ECC', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fakegpu-nvml-'));
  try {
    const scenario = join(dir, 'desktop.scn');
    writeFileSync(scenario, 'gpu model="NVIDIA GeForce RTX 3090"\n');
    await withDriver(scenario, async (driver) => {
      const reading = await clientReading(driver, 0);
      const state = await driver.dump();
      assertReadsDumpedState(reading, state.devices[0]!, 1, state.cudaDriverVersion);
      assert.equal(state.devices[0]!.utilizationGpu, 0);
      assert.equal(reading.numFans, 1);
      assert.equal(reading.fanSpeed, 30, '30 % when idle');
      assert.equal(reading.brand, 5, 'NVML_BRAND_GEFORCE');
      assert.equal(reading.architecture, 7, 'compute capability 8.6: Ampere');
      assert.deepEqual(reading.eccModeCurrent, NOT_SUPPORTED);
      assert.deepEqual(reading.totalEccErrorsUncorrectedVolatile, NOT_SUPPORTED);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('MIG enumeration (profiles, placements, GPU and compute instances) follows fakegpu mig, and the remaining capacity is what create-gi can still make', async () => {
  await withDriver('h100x2-mig', async (driver) => {
    const listed = async (): Promise<MigList['instances']> => {
      const { stdout } = await fakegpuMig(driver, 1, ['list']);
      return (JSON.parse(stdout) as MigList).instances
        .map(({ gpuInstanceId, profileId, placement, computeInstanceIds }) => ({ gpuInstanceId, profileId, placement, computeInstanceIds }))
        .sort((a, b) => a.gpuInstanceId - b.gpuInstanceId);
    };
    let scan = await migScan(driver, 1);
    assert.deepEqual(instancesOf(scan), await listed());
    const byName = (index: number) => scan.profiles.find((p) => p.index === index)!;
    assert.deepEqual(byName(0x0).placements, [[0, 1], [1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 1]], '1g: any of slices 0..6');
    assert.deepEqual(byName(0x2).placements, [[0, 4], [4, 4]], '3g: at 0 or 4');
    assert.deepEqual(byName(0x4).placements, [[0, 8]], '7g: the whole GPU');
    assert.ok(scan.profiles.every((p) => p.remaining === 0), 'all 8 memory slices and 7 compute slices are taken');

    // free the 2g.20gb at slices 2-3 (GPU instance 2), and leave GPU instance 3 without its compute instance
    for (const args of [['destroy-ci', '2', '0'], ['destroy-gi', '2'], ['destroy-ci', '3', '0']]) {
      assert.equal((await fakegpuMig(driver, 1, args)).code, 0, args.join(' '));
    }
    scan = await migScan(driver, 1);
    assert.deepEqual(instancesOf(scan), await listed());
    assert.deepEqual(byName(0x0).instances.find((gi) => gi.gpuInstanceId === 3)!.computeInstances, [], 'a GPU instance without its compute instance');
    assert.equal(byName(0x0).remaining, 2, 'two 1g: slices 2 and 3, compute slices 6 and 7');
    assert.equal(byName(0x1).remaining, 1, 'one 2g.20gb fits at 2');
    assert.equal(byName(0x2).remaining, 0);
    // exactly that many 1g.10gb instances can be created, and then no more
    assert.equal((await fakegpuMig(driver, 1, ['create-gi', '1g.10gb', '-C'])).code, 0);
    assert.equal((await fakegpuMig(driver, 1, ['create-gi', '1g.10gb', '-C'])).code, 0);
    assert.equal((await fakegpuMig(driver, 1, ['create-gi', '1g.10gb', '-C'])).code, 1);
    scan = await migScan(driver, 1);
    assert.equal(byName(0x0).remaining, 0);
    assert.deepEqual(instancesOf(scan), await listed());

    // MIG off: the instance calls answer NOT_SUPPORTED, the profiles and placements still answer
    const off = await migScan(driver, 0);
    assert.ok(off.profiles.length > 0);
    assert.ok(off.profiles.every((p) => JSON.stringify(p.remaining) === JSON.stringify(NOT_SUPPORTED) && p.instancesError === 3));
  });
});
