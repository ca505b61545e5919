// The MPS commands of the engine's API: status per GPU (whose daemon runs, "MPS held by user NAME"),
// start and stop the engine's daemon for one GPU.
import type { MpsGpuStatus } from '../../../shared/spatial.js';
import { ApiError } from '../api/api-error.js';
import type { Caller, Dispatcher } from '../api/dispatcher.js';
import { requireBoxRight, type BoxRights } from '../api/rights.js';
import type { GpuRef, MpsControl } from './mps-control.js';

export interface MpsCommandOptions {
  mps: MpsControl;
  /** The GPUs of the latest snapshot. */
  gpus: () => GpuRef[];
  /** Who may start and stop daemons: the engine's owner or an administrator. */
  rights: BoxRights;
}

export function registerMpsCommands(dispatcher: Dispatcher, options: MpsCommandOptions): void {
  const gpu = (index: number): GpuRef => {
    const all = options.gpus();
    const found = all.find((g) => g.index === index);
    if (!found) throw new ApiError('invalid-request', `GPU ${index} does not exist: this box has GPU${all.length === 1 ? ' 0' : `s 0-${all.length - 1}`}.`);
    return found;
  };
  const allowed = (caller: Caller, action: string): void => {
    requireBoxRight(caller, options.rights, action, 'the MPS daemon serves every user of the GPU');
  };
  const act = (fn: () => MpsGpuStatus): MpsGpuStatus => {
    try {
      return fn();
    } catch (error) {
      throw new ApiError('conflict', error instanceof Error ? error.message : String(error));
    }
  };

  dispatcher.register('mps.status', () => options.mps.status(options.gpus()));
  dispatcher.register('mps.start', ({ gpu: index }, caller) => {
    allowed(caller, 'start MPS');
    const target = gpu(index);
    return act(() => options.mps.start(target));
  });
  dispatcher.register('mps.stop', ({ gpu: index }, caller) => {
    allowed(caller, 'stop MPS');
    const target = gpu(index);
    return act(() => options.mps.stop(target));
  });
}
