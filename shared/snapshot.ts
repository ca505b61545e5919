// One sampling tick as the engine publishes it: every GPU and every GPU process.
// Plain data only, so it crosses IPC, WebSockets and `gpushare ps --json` unchanged.

export interface MigSliceView {
  uuid: string;
  name: string;
  profileName: string | null;
  gpuInstanceId: number;
  computeInstanceId: number;
  smCount: number | null;
  placement: { start: number; size: number } | null;
  memoryTotal: number | null;
  memoryUsed: number | null;
  /** SM activity of the slice in the last sample period, 0..100, from GPM (Hopper and later); null where unknown. */
  smPercent?: number | null;
  /** Compute slices of its profile (3 for a 3g slice), of its GPU's migComputeSlices; null or absent where unknown. */
  computeSlices?: number | null;
}

export interface GpuView {
  index: number;
  uuid: string;
  name: string;
  pciBusId: string;
  /** The driver stopped answering for this GPU (NVML_ERROR_GPU_IS_LOST). */
  lost: boolean;
  memoryTotal: number;
  memoryUsed: number | null;
  memoryFree: number | null;
  /** Percent of the last sample period with a kernel running. */
  utilizationGpu: number | null;
  utilizationMemory: number | null;
  temperatureC: number | null;
  powerWatts: number | null;
  powerLimitWatts: number | null;
  smClockMHz: number | null;
  memClockMHz: number | null;
  smCount: number | null;
  computeMode: string | null;
  migEnabled: boolean | null;
  migPending: boolean | null;
  migSlices: MigSliceView[];
  /** In MIG mode, the GPU's compute slices (7 on an A100 or H100): a slice's GPU-hours are its computeSlices of these. */
  migComputeSlices?: number | null;
  /** Readable driver errors of this tick (other than "not supported"). */
  errors: string[];
  /** Processes on this GPU that the snapshot leaves out to keep its size bounded (each user's smallest, past the others'): how many, and their memory. */
  unlisted?: { processes: number; usedMemory: number } | null;
}

export interface GpuProcessView {
  pid: number;
  gpuIndex: number;
  gpuUuid: string;
  kind: 'compute' | 'graphics' | 'mps';
  user: string | null;
  uid: number | null;
  command: string | null;
  /** The command line from /proc, cut to its first 4 KB of JSON when longer (argvCut then tells the whole one's size). */
  argv: string[];
  /** Set when argv is only the start of the command line: the whole one's bytes (NULs included, as /proc/PID/cmdline) and arguments. */
  argvCut?: { bytes: number; args: number } | null;
  startedAt: number | null;
  usedMemory: number | null;
  /** Share of SM time in the last sample period, 0..100; null where the driver cannot tell (a MIG slice before
   *  Hopper, or one shared by several processes while it computes: GPM measures the slice, not the process). */
  smPercent: number | null;
  memPercent: number | null;
  /** MIG slice, when the GPU is in MIG mode. */
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
  /** Where the process runs (container, unit, batch job, kernel, session); absent until attributed. */
  context?: ProcessContext | null;
}

/** A process's surroundings, read from /proc/PID/cgroup and its environment; null where not known. */
export interface ProcessContext {
  container: { runtime: 'docker' | 'podman' | 'containerd' | 'other'; id: string; name: string | null } | null;
  /** The user who started the container, where a root process inside one can be traced to them. */
  containerUser: string | null;
  systemdUnit: string | null;
  slurmJobId: string | null;
  jupyterKernel: { id: string; notebook: string | null } | null;
  sshSession: string | null;
}

export interface DriverView {
  driverVersion: string;
  nvmlVersion: string;
  cudaDriverVersion: number | null;
  /** True when the GPUs are the simulated driver's, never real hardware. */
  simulated: boolean;
  scenario: string | null;
}

export interface Snapshot {
  seq: number;
  /** Milliseconds since the epoch. */
  takenAt: number;
  /** Milliseconds this snapshot covers: since the sampler's previous tick (null for its first); usage integrates it. */
  intervalMs: number | null;
  /** The interval the sampler meant this tick to cover (its rate when the previous tick was taken). */
  nominalIntervalMs: number;
  driver: DriverView;
  gpus: GpuView[];
  processes: GpuProcessView[];
}

/**
 * The share of its GPU that a process's place is, for GPU-hours: its MIG slice's compute slices of the GPU's
 * (3/7 for a 3g slice of an H100), else 1 (a whole GPU, or a slice whose profile is not known).
 */
export function gpuShareOfPlace(gpu: Pick<GpuView, 'migSlices' | 'migComputeSlices'> | undefined, gpuInstanceId: number | null): number {
  if (!gpu || gpuInstanceId === null || !gpu.migComputeSlices) return 1;
  const slices = gpu.migSlices.find((m) => m.gpuInstanceId === gpuInstanceId)?.computeSlices;
  return slices ? Math.min(1, slices / gpu.migComputeSlices) : 1;
}
