// MPS on the simulated driver: the daemon is a record in the fakegpu state (`fakegpu mps`),
// per GPU and per MIG instance (`--gi`), with its owner and pipe directory; clients whose
// CUDA_MPS_PIPE_DIRECTORY matches run concurrently within their thread percentages
// (native/fakegpu/README.md, "MPS").
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MpsGpuStatus, MpsSliceStatus } from '../../../shared/spatial.js';
import { fakegpuBuildDir } from '../paths.js';
import { heldMessage, mpsDirectories, mpsSliceDirectories, sliceLabel, type GpuRef, type MpsControl, type MpsIdentity, type SliceRef } from './mps-control.js';
import { toolEnvironment } from '../root-env.js';

interface FakegpuMpsDaemon {
  running: boolean;
  user: string;
  uid: number;
  pid: number;
  pipeDir: string;
  clients: Array<{ pid: number; share: number; active: boolean }>;
}

interface FakegpuMpsDevice extends FakegpuMpsDaemon {
  device: number;
  instances?: Array<FakegpuMpsDaemon & { gpuInstanceId: number; uuid: string }>;
}

export interface SimulatedMpsControlOptions {
  statePath: string;
  runtimeDir: string;
  identity: MpsIdentity;
}

/** One daemon of the state file: a GPU's (slice null) or a MIG slice's. */
interface Target {
  gpu: number;
  slice: SliceRef | null;
}

export class SimulatedMpsControl implements MpsControl {
  readonly kind = 'simulated' as const;

  constructor(private readonly options: SimulatedMpsControlOptions) {}

  status(gpus: readonly GpuRef[]): MpsGpuStatus[] {
    const devices = this.read();
    return gpus.map((gpu) => this.statusOf({ gpu: gpu.index, slice: null }, devices));
  }

  start(gpu: GpuRef): MpsGpuStatus {
    return this.startTarget({ gpu: gpu.index, slice: null });
  }

  stop(gpu: GpuRef): MpsGpuStatus {
    return this.stopTarget({ gpu: gpu.index, slice: null });
  }

  clientEnv(gpu: number): Record<string, string> {
    return this.daemonEnv({ gpu, slice: null });
  }

  terminateClient(gpu: number, clientPid: number): boolean {
    return this.terminate({ gpu, slice: null }, clientPid);
  }

  sliceStatus(slices: readonly SliceRef[]): MpsSliceStatus[] {
    const devices = this.read();
    return slices.map((slice) => this.sliceView(slice, this.statusOf({ gpu: slice.gpu, slice }, devices), devices));
  }

  startSlice(slice: SliceRef): MpsSliceStatus {
    const status = this.startTarget({ gpu: slice.gpu, slice });
    return this.sliceView(slice, status, this.read());
  }

  stopSlice(slice: SliceRef): MpsSliceStatus {
    const status = this.stopTarget({ gpu: slice.gpu, slice });
    return this.sliceView(slice, status, this.read());
  }

  private sliceView(slice: SliceRef, status: MpsGpuStatus, devices: FakegpuMpsDevice[]): MpsSliceStatus {
    const daemon = devices.find((x) => x.device === slice.gpu)?.instances?.find((i) => i.gpuInstanceId === slice.gpuInstanceId);
    return { ...status, gpuInstanceId: slice.gpuInstanceId, uuid: slice.uuid, daemonRunning: daemon?.running ?? false, ...(daemon?.running ? { daemonUser: daemon.user } : {}) };
  }

  sliceClientEnv(slice: SliceRef): Record<string, string> {
    return this.daemonEnv({ gpu: slice.gpu, slice });
  }

  terminateSliceClient(slice: SliceRef, clientPid: number): boolean {
    return this.terminate({ gpu: slice.gpu, slice }, clientPid);
  }

  /** None: the simulated daemon is a record in the fakegpu state, and its clients compute as themselves. */
  ownServerPids(): ReadonlySet<number> {
    return new Set();
  }

  private startTarget(target: Target): MpsGpuStatus {
    const now = this.statusOf(target, this.read());
    if (now.state === 'ours') return now;
    if (now.state === 'held') throw new Error(`Cannot start MPS on ${label(target)}: ${now.message}`);
    const { pipeDir, logDir } = this.directories(target);
    mkdirSync(pipeDir, { recursive: true, mode: 0o755 });
    mkdirSync(logDir, { recursive: true, mode: 0o755 });
    const me = this.options.identity;
    this.fakegpu([...where(target), 'start', '--user', me.user, '--uid', String(me.uid), '--pid', String(process.pid), '--pipe-dir', pipeDir]);
    return this.statusOf(target, this.read());
  }

  private stopTarget(target: Target): MpsGpuStatus {
    const now = this.statusOf(target, this.read());
    if (now.state === 'held') throw new Error(`Cannot stop MPS on ${label(target)}: it is not ours. ${now.message}`);
    if (now.state === 'ours') this.fakegpu([...where(target), 'stop']);
    return this.statusOf(target, this.read());
  }

  private terminate(target: Target, clientPid: number): boolean {
    try {
      this.fakegpu([...where(target), 'terminate-client', String(clientPid)]);
      return true;
    } catch {
      return false; // not (or no longer) a client
    }
  }

  private directories(target: Target): { pipeDir: string; logDir: string } {
    return target.slice ? mpsSliceDirectories(this.options.runtimeDir, target.slice) : mpsDirectories(this.options.runtimeDir, target.gpu);
  }

  private daemonEnv(target: Target): Record<string, string> {
    const { pipeDir, logDir } = this.directories(target);
    return { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_LOG_DIRECTORY: logDir };
  }

  private statusOf(target: Target, devices: FakegpuMpsDevice[]): MpsGpuStatus {
    const me = this.options.identity;
    const gpu = target.gpu;
    const device = devices.find((x) => x.device === gpu);
    const d = target.slice ? device?.instances?.find((i) => i.gpuInstanceId === target.slice!.gpuInstanceId) : device;
    if (d?.running && d.user === me.user) {
      return { gpu, state: 'ours', user: me.user, controlPid: d.pid || null, serverPids: [], pipeDir: d.pipeDir, message: `MPS runs for ${label(target)} (simulated daemon, pipe ${d.pipeDir}).` };
    }
    // one user's MPS per box: another user's daemon on any GPU or slice holds them all
    const running = devices.flatMap((x) => [{ where: `GPU ${x.device}`, daemon: x as FakegpuMpsDaemon }, ...(x.instances ?? []).map((i) => ({ where: sliceLabel({ gpu: x.device, gpuInstanceId: i.gpuInstanceId }), daemon: i as FakegpuMpsDaemon }))]);
    const other = (d?.running ? { where: label(target), daemon: d } : undefined) ?? running.find((x) => x.daemon.running && x.daemon.user !== me.user);
    if (other) {
      const { daemon } = other;
      return { gpu, state: 'held', user: daemon.user, heldBy: daemon.user, controlPid: daemon.pid || null, serverPids: [], pipeDir: daemon.pipeDir, message: heldMessage(daemon.user, `simulated daemon on ${other.where}`) };
    }
    return { gpu, state: 'off', user: null, controlPid: null, serverPids: [], pipeDir: null, message: `No MPS daemon serves ${label(target)}.` };
  }

  private read(): FakegpuMpsDevice[] {
    return JSON.parse(this.fakegpu(['status'])) as FakegpuMpsDevice[];
  }

  private fakegpu(args: string[]): string {
    try {
      return execFileSync(join(fakegpuBuildDir(), 'fakegpu'), ['mps', '--state', this.options.statePath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: toolEnvironment() });
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '').replace(/^fakegpu: /, '').trim();
      throw new Error(stderr || (error as Error).message);
    }
  }
}

const label = (target: Target): string => (target.slice ? sliceLabel(target.slice) : `GPU ${target.gpu}`);
const where = (target: Target): string[] => ['--device', String(target.gpu), ...(target.slice ? ['--gi', String(target.slice.gpuInstanceId)] : [])];
