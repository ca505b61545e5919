// GPUs the driver lost: one 'gpu-lost' alert per onset, and a condition while it lasts.
import type { ActiveCondition } from '../../shared/api.js';
import type { Snapshot } from '../../shared/snapshot.js';

export interface GpuLostSink {
  raiseAlert(alert: ActiveCondition): unknown;
  setConditions(list: ActiveCondition[], source: string): void;
}

/** Follows snapshots; returns the function to call with each one. */
export function watchLostGpus(sink: GpuLostSink): (snapshot: Snapshot) => void {
  let lost = new Set<number>();
  return (snapshot) => {
    const now = new Set<number>();
    const conditions: ActiveCondition[] = [];
    for (const gpu of snapshot.gpus) {
      if (!gpu.lost) continue;
      now.add(gpu.index);
      const condition = lostCondition(gpu);
      conditions.push(condition);
      if (!lost.has(gpu.index)) sink.raiseAlert(condition); // an onset; staying lost says nothing new
    }
    lost = now;
    sink.setConditions(conditions, 'gpus');
  };
}

function lostCondition(gpu: Snapshot['gpus'][number]): ActiveCondition {
  const name = gpu.name && gpu.name !== `GPU ${gpu.index}` ? ` (${gpu.name})` : '';
  return {
    kind: 'gpu-lost',
    severity: 'error',
    gpu: gpu.index,
    jobId: null,
    // the driver's own error is on the GPU's card; the condition says what it means
    message: `GPU ${gpu.index}${name} is lost: the driver no longer answers for it. Its jobs cannot run there until it is reset or the machine restarts.`,
  };
}
