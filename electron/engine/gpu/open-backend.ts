// Choose the GPU backend, once: the real NVIDIA driver, or the simulated one when asked
// (or, for the desktop console, when no driver is found). Both go through the same addon.
import { openNvml } from './nvml-addon.js';
import { DEFAULT_SCENARIO } from './simulated-box-names.js';
import { SimulatedDriver } from './simulated-driver.js';
import { realBackend, simulatedBackend, type GpuBackend } from './gpu-backend.js';

export interface OpenBackendOptions {
  /**
   * A scenario name to force the simulated driver (POINTED_BOX: the box this shell was pointed at,
   * else DEFAULT_SCENARIO's); undefined for the real driver.
   */
  simulate?: string;
  /** Fall back to the simulated driver when no NVIDIA driver can be opened. */
  fallBackToSimulated?: boolean;
  /** Called once with a plain sentence when falling back. */
  onFallback?: (reason: string) => void;
  /** Where the simulated box's state lives, and whether every user's jobs use it (the box daemon). */
  simulatedState?: { dir?: string; everyone?: boolean };
}

export async function openGpuBackend(options: OpenBackendOptions = {}): Promise<GpuBackend> {
  if (options.simulate !== undefined) return openSimulated(options.simulate, options.simulatedState);
  try {
    return realBackend(openNvml());
  } catch (error) {
    if (!options.fallBackToSimulated) throw error;
    options.onFallback?.(error instanceof Error ? error.message : String(error));
    return openSimulated(DEFAULT_SCENARIO, options.simulatedState);
  }
}

async function openSimulated(scenario: string, where: OpenBackendOptions['simulatedState']): Promise<GpuBackend> {
  const simulated = await SimulatedDriver.named(scenario, where);
  // the fake NVML finds its state through this variable, read at nvmlInit
  process.env.GPUSHARE_FAKEGPU_STATE = simulated.statePath;
  process.env.GPUSHARE_CUDA_LIB = simulated.cudaLibraryPath; // the engine's own libcuda (parking) is the fake too
  return simulatedBackend(simulated, openNvml(simulated.nvmlLibraryPath));
}
