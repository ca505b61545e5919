// The MPS commands of the engine's API: status per GPU (whose daemon runs, "MPS held by user NAME", whether
// jobs or a person started ours, and our daemons inside its MIG slices), start and stop the engine's daemon
// for one GPU (stop: or slice). A daemon started here is a person's: no job's end stops it.
import type { MpsGpuStatus } from '../../../shared/spatial.js';
import { ApiError } from '../api/api-error.js';
import type { Dispatcher } from '../api/dispatcher.js';
import type { GpuRef, SliceRef } from './mps-control.js';
import type { MpsDaemons } from './mps-daemons.js';

export interface MpsCommandOptions {
  mps: MpsDaemons;
  /** The GPUs of the latest snapshot. */
  gpus: () => GpuRef[];
  /** The MIG slices of the latest snapshot (each may have a daemon of its own); absent: none. */
  slices?: () => SliceRef[];
}

export function registerMpsCommands(dispatcher: Dispatcher, options: MpsCommandOptions): void {
  const gpu = (index: number): GpuRef => {
    const all = options.gpus();
    const found = all.find((g) => g.index === index);
    if (!found) throw new ApiError('invalid-request', `GPU ${index} does not exist: this box has GPU${all.length === 1 ? ' 0' : `s 0-${all.length - 1}`}.`);
    return found;
  };
  const act = (fn: () => MpsGpuStatus): MpsGpuStatus => {
    try {
      return fn();
    } catch (error) {
      throw new ApiError('conflict', error instanceof Error ? error.message : String(error));
    }
  };

  dispatcher.register('mps.status', () => {
    const slices = options.slices?.() ?? [];
    const running = slices.length ? options.mps.sliceStatus(slices).filter((s) => s.state === 'ours') : [];
    return options.mps.status(options.gpus()).map((status) => {
      const mine = running.filter((s) => s.gpu === status.gpu);
      return mine.length ? { ...status, slices: mine } : status;
    });
  });
  // who may start and stop daemons: the API registry says (an administrator)
  dispatcher.register('mps.start', ({ gpu: index }) => {
    const target = gpu(index);
    return act(() => options.mps.startOnRequest(target));
  });
  dispatcher.register('mps.stop', ({ gpu: index, gpuInstanceId }) => {
    const target = gpu(index);
    if (gpuInstanceId === undefined) return act(() => options.mps.stopOnRequest({ gpu: target }));
    const slice = options.slices?.().find((s) => s.gpu === index && s.gpuInstanceId === gpuInstanceId);
    if (!slice) throw new ApiError('invalid-request', `GPU ${index} has no MIG slice with GPU instance ${gpuInstanceId}; \`gpushare mig layout --gpu ${index}\` lists them.`);
    return act(() => options.mps.stopOnRequest({ slice }));
  });
}
