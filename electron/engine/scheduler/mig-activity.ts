// Which jobs compute in a MIG slice shared by several: GPM measures the slice, not its processes, so the
// sampler leaves a process's SM % null where its computing slice has others. A held-back job (suspended,
// gated) cannot compute, so the slice's SM % is the one job's that is not held; with several not held,
// each may be the one computing, and counts as active (a high job there stays protected). The cost: beside an
// idle high job, a best-effort one is held until the high job has been idle ACTIVE_HOLD_MS, then tried again.
import type { Snapshot } from '../../../shared/snapshot.js';
import { gpuShareOfSlice } from '../sampler/sampler.js';
import type { JobRecord } from './job-table.js';

/** A job's SM % of the GPU from its slice (one computing job in it), or 'possibly' (one of several that may compute). */
export type SliceActivity = number | 'possibly';

/** `unsplit`: per slice ("GPU/GI"), the jobs with a process there whose SM % the sampler could not tell. */
export function sliceActivity(snapshot: Snapshot, unsplit: ReadonlyMap<string, ReadonlySet<JobRecord>>): Map<JobRecord, SliceActivity> {
  const sm = new Map<string, number>(); // as a share of the whole GPU, as a job's SM % is
  for (const gpu of snapshot.gpus) {
    for (const slice of gpu.migSlices) {
      if (typeof slice.smPercent !== 'number') continue;
      const share = slice.smCount !== null && gpu.smCount ? gpuShareOfSlice(slice.smPercent, slice.smCount, gpu.smCount) : null;
      // a slice whose SMs are not known still tells whether it computes
      sm.set(sliceKey(gpu.index, slice.gpuInstanceId), share ?? (slice.smPercent > 0 ? Number.NaN : 0));
    }
  }
  const activity = new Map<JobRecord, SliceActivity>();
  for (const [slice, records] of unsplit) {
    const busy = sm.get(slice);
    if (busy === undefined || busy === 0) continue;
    const free = [...records].filter((r) => r.holds.size === 0 && r.view.state === 'running');
    for (const r of free) activity.set(r, free.length === 1 && !Number.isNaN(busy) ? busy : 'possibly');
  }
  return activity;
}

/** The key sliceActivity groups a process under: its GPU and GPU instance. */
export const sliceKey = (gpuIndex: number, gpuInstanceId: number): string => `${gpuIndex}/${gpuInstanceId}`;
