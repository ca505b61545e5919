// What the CLI reads from the running engine's snapshot: the box as it sees it, and so the real
// bound of a --gpu index (the API's schema only knows the largest index any box may have).
import type { Snapshot } from '../../shared/snapshot.js';
import { UsageError } from './args.js';
import { callWithin, type EngineClient } from './engine-client.js';

// the engine's first sample after it starts: a second is its slowest rate, this is generous under load
const FIRST_SNAPSHOT_MS = 10_000;

/** The engine's latest snapshot; one that has just started has none yet: then its first. */
export async function latestSnapshot(engine: EngineClient): Promise<Snapshot> {
  const latest = await callWithin(engine, 'snapshot.latest', {});
  if (latest) return latest;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`The engine sent no snapshot within ${FIRST_SNAPSHOT_MS / 1000} s.`)), FIRST_SNAPSHOT_MS);
    const off = engine.on('snapshot', (snapshot) => {
      clearTimeout(timer);
      off();
      resolve(snapshot);
    });
  });
}

/** A usage error naming how many GPUs there are when `gpu` is not one of the box's `count`. */
export function checkGpuIndex(count: number, gpu: number, flag = '--gpu'): void {
  if (gpu < count) return;
  const gpus = count === 0 ? 'no GPUs' : count === 1 ? 'one GPU, index 0' : `${count} GPUs, indexes 0-${count - 1}`;
  throw new UsageError(`${flag} ${gpu}: there is no GPU ${gpu}; this box has ${gpus} (see gpushare ps).`);
}

/** checkGpuIndex against the running engine's box. */
export async function checkGpuOnEngine(engine: EngineClient, gpu: number, flag = '--gpu'): Promise<void> {
  checkGpuIndex((await latestSnapshot(engine)).gpus.length, gpu, flag);
}
