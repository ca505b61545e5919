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
