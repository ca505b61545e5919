// One GPU backend, as nvtop's gpu_vendor struct: the driver's NVML, and the sharing mechanisms
// that driver provides (MPS daemons, MIG changes, checkpoints, the environment its jobs need).
// The real driver and the simulated one each fill it once, when the backend opens: nothing
// downstream asks which it has.
import type { ProcessCheckpointer } from '../holds/checkpointer.js';
import { DriverCheckpointer } from '../holds/driver-checkpointer.js';
import { RealMigExecutor, SimulatedMigExecutor, type MigExecutor } from '../mig/executor.js';
import type { MpsControl, MpsIdentity } from '../mps/mps-control.js';
import { RealMpsControl } from '../mps/real-mps-control.js';
import { SimulatedMpsControl } from '../mps/simulated-mps-control.js';
import type { NvmlBinding } from './nvml-types.js';
import type { SimulatedDriver } from './simulated-driver.js';

/** How every view names the driver: the snapshot's driver.simulated and scenario, the banners. */
export interface BackendLabel {
  simulated: boolean;
  scenario: string | null;
}

/** What a host's start line adds about its GPUs: " — SIMULATED GPUs (scenario X)" on simulated ones, nothing on real ones. */
export const labelSuffix = (label: BackendLabel): string => (label.simulated ? ` — SIMULATED GPUs (scenario ${label.scenario})` : '');

export interface GpuBackend {
  readonly nvml: NvmlBinding;
  readonly label: BackendLabel;
  /** The MPS control daemons of this driver, run from runtimeDir as identity. */
  mpsControl(where: { runtimeDir: string; identity: MpsIdentity }): MpsControl;
  /** What carries out a MIG layout change on this driver. */
  migExecutor(): MigExecutor;
  /** Parking: this driver's cuCheckpointProcess* calls (never throws; supported() says why not). */
  checkpointer(): ProcessCheckpointer;
  /** The libcuda the engine's own restores load (freezer, guardian); undefined: the system's. */
  readonly cudaLibraryPath: string | undefined;
  /** Environment every managed job starts with, so it finds this driver; undefined: none. */
  readonly jobEnv: Record<string, string> | undefined;
  /** The simulated driver itself, for what only a simulated box has (the demo's jobs, tests' faults); null on real GPUs. */
  readonly simulated: SimulatedDriver | null;
  close(): void;
}

/** The NVIDIA driver: nvidia-cuda-mps-control, nvidia-smi mig, the system's libcuda. */
export function realBackend(nvml: NvmlBinding, close: () => void = () => nvml.close()): GpuBackend {
  return {
    nvml,
    label: { simulated: false, scenario: null },
    mpsControl: (where) => new RealMpsControl(where),
    migExecutor: () => new RealMigExecutor(),
    checkpointer: () => DriverCheckpointer.open(),
    cudaLibraryPath: undefined,
    jobEnv: undefined,
    simulated: null,
    close,
  };
}

/** The simulated driver (native/fakegpu): its state file stands for the MPS daemons and MIG, its libcuda for checkpoints. */
export function simulatedBackend(driver: SimulatedDriver, nvml: NvmlBinding, close: () => void = () => nvml.close()): GpuBackend {
  const { statePath, cudaLibraryPath } = driver;
  return {
    nvml,
    label: { simulated: true, scenario: driver.scenario },
    mpsControl: (where) => new SimulatedMpsControl({ statePath, ...where }),
    migExecutor: () => new SimulatedMigExecutor({ statePath }),
    checkpointer: () => DriverCheckpointer.open({ libraryPath: cudaLibraryPath }),
    cudaLibraryPath,
    jobEnv: { GPUSHARE_FAKEGPU_STATE: statePath, GPUSHARE_NVML_LIB: driver.nvmlLibraryPath, LD_LIBRARY_PATH: driver.env.LD_LIBRARY_PATH },
    simulated: driver,
    close,
  };
}
