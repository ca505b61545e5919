// The MIG commands of the engine's API: a GPU's layout (instances, profiles, placements, processes
// per slice) and applying a plan for a job mix or a given layout.
import { ApiError } from '../api/api-error.js';
import type { Dispatcher } from '../api/dispatcher.js';
import { applyMigLayout, MigApplyRefused, readMigLayout, type MigDeps } from './apply.js';
import type { MigExecutor } from './executor.js';

export interface MigCommandOptions extends MigDeps {
  executor: MigExecutor;
  gpuCount: () => number;
  /** The layout of this GPU changed (the sampler re-reads it). */
  changed?: (gpu: number) => void;
}

export function registerMigCommands(dispatcher: Dispatcher, options: MigCommandOptions): void {
  const checkGpu = (gpu: number): void => {
    const count = options.gpuCount();
    if (gpu >= count) throw new ApiError('invalid-request', `GPU ${gpu} does not exist: this box has GPU${count === 1 ? ' 0' : `s 0-${count - 1}`}.`);
  };

  dispatcher.register('mig.layout', ({ gpu }) => {
    checkGpu(gpu);
    return readMigLayout(gpu, options);
  });

  // only an administrator applies a layout (the API registry's `who`; a dry run is open to all)
  dispatcher.register('mig.apply', async (params) => {
    checkGpu(params.gpu);
    try {
      const result = await applyMigLayout(params, options, options.executor);
      if (result.applied) options.changed?.(params.gpu);
      return result;
    } catch (error) {
      if (error instanceof MigApplyRefused) {
        if (error.result.commands.length > 0 && !params.dryRun) options.changed?.(params.gpu); // it may have stopped half-way
        throw new ApiError(error.kind, error.message);
      }
      throw error;
    }
  });
}
