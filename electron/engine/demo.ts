// The live demo on simulated GPUs: a training job, an inference service, an idle
// notebook holding memory (managed jobs when the engine has a scheduler), and one
// unmanaged process hogging a GPU. Everything it starts is stopped by stop().
import { join } from 'node:path';
import type { JobView } from '../../shared/jobs.js';
import type { Engine } from './engine.js';
import { fakegpuBuildDir } from './paths.js';
import type { FakejobHandle, FakegpuDevice, SimulatedDriver } from './gpu/simulated-driver.js';

const DEMO_SECONDS = '100000';

export interface Demo {
  /** Job ids ("j…") the demo submitted to the scheduler. */
  readonly jobs: string[];
  /** Pids of the fakejobs it started itself. */
  readonly pids: number[];
  stop(): Promise<void>;
}

interface DemoJob {
  name: string;
  device: FakegpuDevice;
  memoryFraction: number;
  args: string[];
  priority: 'high' | 'normal' | 'best-effort';
}

const mebibytes = (device: FakegpuDevice, fraction: number): string => `${Math.floor((device.memoryTotal * fraction) / 1024 ** 2)}M`;

export async function startDemo(engine: Engine, driver: SimulatedDriver): Promise<Demo> {
  const state = await driver.dump();
  const plain = state.devices.filter((d) => d.migMode.current === 0 && !d.lost);
  const main = plain[0] ?? state.devices[0];
  if (!main) return { jobs: [], pids: [], stop: async () => undefined };
  const migGpu = state.devices.find((d) => d.migMode.current === 1 && d.migDevices.length > 0);
  const biggestSlice = migGpu?.migDevices.slice().sort((a, b) => b.memoryTotal - a.memoryTotal)[0];

  const managed: DemoJob[] = [
    { name: 'train', device: main, memoryFraction: 0.3, args: ['train', '--kernel-ms', '5', '--duration', DEMO_SECONDS], priority: 'normal' },
    { name: 'infer', device: main, memoryFraction: 0.1, args: ['infer', '--rate', '40', '--kernel-ms', '4', '--duration', DEMO_SECONDS], priority: 'high' },
    { name: 'notebook', device: plain[1] ?? main, memoryFraction: 0.2, args: ['hold', '--duration', DEMO_SECONDS], priority: 'best-effort' },
  ];
  const handles: FakejobHandle[] = [];
  const jobs: string[] = [];
  const fakejob = join(fakegpuBuildDir(), 'fakejob');

  for (const job of managed) {
    const mem = mebibytes(job.device, job.memoryFraction);
    try {
      const view: JobView = await engine.call('jobs.submit', { argv: [fakejob, '--mem', mem, ...job.args], gpu: job.device.index, priority: job.priority });
      jobs.push(view.id);
    } catch {
      // no scheduler in this engine: the same program, unmanaged
      handles.push(driver.spawnFakejob(['--device', String(job.device.index), '--mem', mem, ...job.args]));
    }
  }
  // the hog: unmanaged, long kernels, on a MIG slice when there is one, else beside the others
  const hogMem = biggestSlice ? `${Math.floor((biggestSlice.memoryTotal * 0.8) / 1024 ** 2)}M` : mebibytes(main, 0.25);
  const hogEnv: Record<string, string> = biggestSlice ? { CUDA_VISIBLE_DEVICES: biggestSlice.uuid } : {};
  const hogDevice = biggestSlice ? [] : ['--device', String(main.index)];
  handles.push(driver.spawnFakejob([...hogDevice, '--mem', hogMem, 'train', '--kernel-ms', '20', '--duration', DEMO_SECONDS], hogEnv));

  return {
    jobs,
    pids: handles.map((h) => h.pid),
    async stop() {
      await Promise.all(jobs.map((id) => engine.call('jobs.terminate', { job: id }).catch(() => undefined)));
      for (const handle of handles) handle.kill('SIGTERM');
      await Promise.race([Promise.all(handles.map((h) => h.exited)), new Promise((r) => setTimeout(r, 2000))]);
      for (const handle of handles) handle.kill('SIGKILL');
    },
  };
}
