// MPS, one interface: start/stop a control daemon per GPU or per MIG slice, say whose daemon runs,
// end a client the safe way (terminate_client before any kill). Real (nvidia-cuda-mps-control) and
// simulated (the fakegpu state) implementations; the scheduler never knows which.
import { join } from 'node:path';
import { mpsClientPriorityOf, type Priority } from '../../../shared/jobs.js';
import type { MpsGpuStatus, MpsSliceStatus } from '../../../shared/spatial.js';

export interface GpuRef {
  index: number;
  /** GPU-… UUID: the daemon is started with CUDA_VISIBLE_DEVICES set to it. */
  uuid: string;
}

/** A MIG slice with a daemon of its own: CUDA_VISIBLE_DEVICES=MIG-… for the daemon and its clients. */
export interface SliceRef {
  gpu: number;
  gpuInstanceId: number;
  /** MIG-… UUID. */
  uuid: string;
}

/** Who the engine is: its daemons are "ours", anyone else's "held". */
export interface MpsIdentity {
  uid: number;
  user: string;
}

export interface MpsControl {
  readonly kind: 'real' | 'simulated';
  status(gpus: readonly GpuRef[]): MpsGpuStatus[];
  /** Start our daemon for this GPU (no-op when it runs). Throws a sentence when another user holds MPS. */
  start(gpu: GpuRef): MpsGpuStatus;
  /** Stop our daemon for this GPU (its clients lose their server). Throws when it is not ours. */
  stop(gpu: GpuRef): MpsGpuStatus;
  /** Environment that makes a CUDA process a client of our daemon for this GPU. */
  clientEnv(gpu: number): Record<string, string>;
  /** `terminate_client <server pid> <client pid>`: ends the client's GPU work; false when it was no client. */
  terminateClient(gpu: number, clientPid: number): boolean;
  /** The same, for the daemon inside each MIG slice asked about. */
  sliceStatus(slices: readonly SliceRef[]): MpsSliceStatus[];
  startSlice(slice: SliceRef): MpsSliceStatus;
  stopSlice(slice: SliceRef): MpsSliceStatus;
  sliceClientEnv(slice: SliceRef): Record<string, string>;
  terminateSliceClient(slice: SliceRef, clientPid: number): boolean;
  /**
   * Pids of the MPS servers our own control daemons started (each one's child, for its pipe): the only processes
   * that are no job. Any other process named nvidia-cuda-mps-server (a name anyone can take) is its owner's.
   */
  ownServerPids(): ReadonlySet<number>;
}

/** The MPS server's command name, as the driver's process list shows it; by itself it proves nothing (`exec -a`). */
export const MPS_SERVER_COMMAND = 'nvidia-cuda-mps-server';

/** Our per-GPU pipe and log directories (CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY). */
export function mpsDirectories(runtimeDir: string, gpu: number): { pipeDir: string; logDir: string } {
  const base = join(runtimeDir, 'mps', `gpu${gpu}`);
  return { pipeDir: join(base, 'pipe'), logDir: join(base, 'log') };
}

/** A slice's own directories, by GPU and GPU instance id (short: the control socket's path must stay under 108 bytes). */
export function mpsSliceDirectories(runtimeDir: string, slice: Pick<SliceRef, 'gpu' | 'gpuInstanceId'>): { pipeDir: string; logDir: string } {
  const base = join(runtimeDir, 'mps', `gpu${slice.gpu}-gi${slice.gpuInstanceId}`);
  return { pipeDir: join(base, 'pipe'), logDir: join(base, 'log') };
}

export const DEFAULT_MPS_PIPE_DIR = '/tmp/nvidia-mps';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** CUDA_MPS_PINNED_DEVICE_MEM_LIMIT for one device as the client sees it: "0=20G", "0=1536MB". */
export function pinnedMemLimit(bytes: number, device = 0): string {
  if (bytes % GiB === 0) return `${device}=${bytes / GiB}G`;
  return `${device}=${Math.max(1, Math.floor(bytes / MiB))}MB`;
}

/**
 * CUDA_MPS_CLIENT_PRIORITY for a job's priority: 1 (BELOW_NORMAL) for best-effort, 0 (NORMAL) otherwise. MPS reads it
 * once, when the client connects, so a later priority change of a running client does not reach it.
 */
// docs.nvidia.com/deploy/mps 4.2.8: 0 NORMAL, 1 BELOW_NORMAL; a preference for normal clients' waiting thread blocks, no preemption of running ones.
export const mpsClientPriority = (priority: Priority): string => (mpsClientPriorityOf(priority) === 'below-normal' ? '1' : '0');

/** The environment of a managed job in MPS mode: its daemon, its SM share, its priority, its memory quota as the pinned limit. */
export function mpsJobEnv(control: MpsControl, gpu: number, sharePercent: number, quotaBytes: number | null, priority: Priority): Record<string, string> {
  return clientSettings(control.clientEnv(gpu), sharePercent, quotaBytes, priority);
}

/**
 * The environment of a managed job sharing a MIG slice through MPS: the slice's daemon, its SM share of
 * the slice, its priority, its quota as the pinned limit (device 0: a slice client sees only its slice).
 */
export function mpsSliceJobEnv(control: MpsControl, slice: SliceRef, sharePercent: number, quotaBytes: number | null, priority: Priority): Record<string, string> {
  return { ...clientSettings(control.sliceClientEnv(slice), sharePercent, quotaBytes, priority), CUDA_VISIBLE_DEVICES: slice.uuid };
}

function clientSettings(daemonEnv: Record<string, string>, sharePercent: number, quotaBytes: number | null, priority: Priority): Record<string, string> {
  if (!Number.isInteger(sharePercent) || sharePercent < 1 || sharePercent > 100) {
    throw new RangeError(`The MPS share must be a whole percentage from 1 to 100, got ${sharePercent}.`);
  }
  const env: Record<string, string> = { ...daemonEnv, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: String(sharePercent), CUDA_MPS_CLIENT_PRIORITY: mpsClientPriority(priority) };
  if (quotaBytes !== null) env.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT = pinnedMemLimit(quotaBytes);
  return env;
}

/** "GPU 1 slice GI 2": how messages name a slice's daemon. */
export const sliceLabel = (slice: Pick<SliceRef, 'gpu' | 'gpuInstanceId'>): string => `GPU ${slice.gpu} slice GI ${slice.gpuInstanceId}`;

/** "MPS held by user alice (…)": the one sentence both implementations use. */
export function heldMessage(user: string, detail: string): string {
  return `MPS held by user ${user}${detail ? ` (${detail})` : ''}: only one user's MPS server can be active on a box at a time.`;
}
