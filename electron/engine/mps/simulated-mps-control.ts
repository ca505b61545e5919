// MPS on the simulated driver: the daemon is a record in the fakegpu state (`fakegpu mps`),
// per GPU with its owner and pipe directory; clients whose CUDA_MPS_PIPE_DIRECTORY matches
// run concurrently within their thread percentages (native/fakegpu/README.md, "MPS").
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MpsGpuStatus } from '../../../shared/spatial.js';
import { fakegpuBuildDir } from '../paths.js';
import { heldMessage, mpsDirectories, type GpuRef, type MpsControl, type MpsIdentity } from './mps-control.js';

interface FakegpuMpsDevice {
  device: number;
  running: boolean;
  user: string;
  uid: number;
  pid: number;
  pipeDir: string;
  clients: Array<{ pid: number; share: number; active: boolean }>;
}

export interface SimulatedMpsControlOptions {
  statePath: string;
  runtimeDir: string;
  identity: MpsIdentity;
}

export class SimulatedMpsControl implements MpsControl {
  readonly kind = 'simulated' as const;

  constructor(private readonly options: SimulatedMpsControlOptions) {}

  status(gpus: readonly GpuRef[]): MpsGpuStatus[] {
    const devices = this.read();
    return gpus.map((gpu) => this.statusOf(gpu.index, devices));
  }

  start(gpu: GpuRef): MpsGpuStatus {
    const now = this.statusOf(gpu.index, this.read());
    if (now.state === 'ours') return now;
    if (now.state === 'held') throw new Error(`Cannot start MPS on GPU ${gpu.index}: ${now.message}`);
    const { pipeDir, logDir } = mpsDirectories(this.options.runtimeDir, gpu.index);
    mkdirSync(pipeDir, { recursive: true, mode: 0o755 });
    mkdirSync(logDir, { recursive: true, mode: 0o755 });
    const me = this.options.identity;
    this.fakegpu(['--device', String(gpu.index), 'start', '--user', me.user, '--uid', String(me.uid), '--pid', String(process.pid), '--pipe-dir', pipeDir]);
    return this.statusOf(gpu.index, this.read());
  }

  stop(gpu: GpuRef): MpsGpuStatus {
    const now = this.statusOf(gpu.index, this.read());
    if (now.state === 'held') throw new Error(`Cannot stop MPS on GPU ${gpu.index}: it is not ours. ${now.message}`);
    if (now.state === 'ours') this.fakegpu(['--device', String(gpu.index), 'stop']);
    return this.statusOf(gpu.index, this.read());
  }

  clientEnv(gpu: number): Record<string, string> {
    const { pipeDir, logDir } = mpsDirectories(this.options.runtimeDir, gpu);
    return { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir };
  }

  terminateClient(gpu: number, clientPid: number): boolean {
    try {
      this.fakegpu(['--device', String(gpu), 'terminate-client', String(clientPid)]);
      return true;
    } catch {
      return false; // not (or no longer) a client
    }
  }

  private statusOf(gpu: number, devices: FakegpuMpsDevice[]): MpsGpuStatus {
    const me = this.options.identity;
    const d = devices.find((x) => x.device === gpu);
    if (d?.running && d.user === me.user) {
      return { gpu, state: 'ours', user: me.user, controlPid: d.pid || null, serverPids: [], pipeDir: d.pipeDir, message: `MPS runs for GPU ${gpu} (simulated daemon, pipe ${d.pipeDir}).` };
    }
    // one user's MPS per box: another user's daemon on any GPU holds them all
    const other = (d?.running ? d : undefined) ?? devices.find((x) => x.running && x.user !== me.user);
    if (other) {
      return { gpu, state: 'held', user: other.user, heldBy: other.user, controlPid: other.pid || null, serverPids: [], pipeDir: other.pipeDir, message: heldMessage(other.user, `simulated daemon on GPU ${other.device}`) };
    }
    return { gpu, state: 'off', user: null, controlPid: null, serverPids: [], pipeDir: null, message: `No MPS daemon serves GPU ${gpu}.` };
  }

  private read(): FakegpuMpsDevice[] {
    return JSON.parse(this.fakegpu(['status'])) as FakegpuMpsDevice[];
  }

  private fakegpu(args: string[]): string {
    try {
      return execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['mps', '--state', this.options.statePath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '').replace(/^fakegpu: /, '').trim();
      throw new Error(stderr || (error as Error).message);
    }
  }
}
