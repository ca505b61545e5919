// The sampler attaches where each GPU process runs (its context) to the snapshot, read once per process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { DeviceSample } from '../gpu/nvml-types.js';
import { ProcessContextReader } from '../proc/context-reader.js';
import { Sampler, type GpuReader } from './sampler.js';
import { until } from '../../testing/until.js';

const GiB = 1024 ** 3;

/** One scripted GPU whose process list is whatever `pids` holds at each tick. */
function scriptedGpu(pids: () => number[]): GpuReader {
  const sample = (): DeviceSample => ({
    index: 0,
    lost: false,
    memory: { total: 80 * GiB, used: GiB, free: 79 * GiB, reserved: 0 },
    utilization: { gpu: 10, memory: 1 },
    temperatureC: 40,
    powerMilliwatts: 100_000,
    powerLimitMilliwatts: 700_000,
    smClockMHz: 1980,
    memClockMHz: 2619,
    computeMode: 'default',
    migMode: { current: false, pending: false },
    processes: pids().map((pid) => ({ pid, kind: 'compute' as const, usedMemory: GiB, gpuInstanceId: null, computeInstanceId: null })),
    processUtilization: [],
    migDevices: [],
    processSource: 'nvmlDeviceGetRunningProcessDetailList',
    errors: [],
  });
  return {
    system: () => ({ driverVersion: '1.0', nvmlVersion: '1.0', cudaDriverVersion: 12040, libraryPath: 'scripted' }),
    deviceCount: () => 1,
    describeDevice: (index) => ({ index, uuid: 'GPU-0', name: 'Scripted GPU', pciBusId: '0', memoryTotal: 80 * GiB, smCount: 132, migMode: null, migDevices: [], errors: [] }),
    sampleAll: () => [sample()],
  };
}

/** Counts the reads the sampler asks of its context reader. */
class CountingReader extends ProcessContextReader {
  reads = 0;
  override lookup(pid: number, startedAt: number | null, argv: readonly string[]) {
    const before = this.size;
    const context = super.lookup(pid, startedAt, argv);
    if (this.size > before) this.reads++;
    return context;
  }
}

test('a GPU process started in a Slurm job over ssh carries that context in the snapshot; a vanished pid carries none', async (t) => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', 'worker'], {
    env: { PATH: process.env.PATH, SLURM_JOB_ID: '777', SSH_CONNECTION: '198.51.100.4 41000 198.51.100.1 22', SSH_TTY: '/dev/pts/9' },
    stdio: 'ignore',
  });
  t.after(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.once('spawn', resolve));
  await waitForExec(child.pid!, 'worker');
  const vanished = 2 ** 22 + 11; // above every default pid_max
  let onGpu = [child.pid!, vanished];
  const reader = new CountingReader();
  const sampler = new Sampler(scriptedGpu(() => onGpu), { simulated: true, scenario: 'scripted', contextReader: reader });

  const first = sampler.tick();
  const mine = first.processes.find((p) => p.pid === child.pid)!;
  assert.equal(mine.context?.slurmJobId, '777');
  assert.equal(mine.context?.sshSession, '198.51.100.4:41000 pts/9');
  assert.equal(first.processes.find((p) => p.pid === vanished)!.context, null);
  assert.equal(reader.reads, 1, 'only the visible process is read');

  sampler.tick();
  sampler.tick();
  assert.equal(reader.reads, 1, 'a steady process is not re-read each tick');

  onGpu = [];
  sampler.tick();
  assert.equal(reader.size, 0, 'a process that left every GPU is forgotten');
  onGpu = [child.pid!];
  assert.equal(sampler.tick().processes[0].context?.slurmJobId, '777');
  assert.equal(reader.reads, 2, 'and read afresh when it comes back');
});

async function waitForExec(pid: number, marker: string): Promise<void> {
  await until(`pid ${pid} to show its command line`, () => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker), { timeoutMs: 2_000, intervalMs: 10 });
}
