// MPS daemons a new engine finds: one an earlier engine started for jobs whose last client ended while no
// engine ran has no job end left to stop it, so it is stopped once the jobs are back (mps-daemons.ts decides
// which daemons that may be: only those recorded as the jobs', never a person's or one of unknown origin).
import type { Snapshot } from '../../../shared/snapshot.js';
import { readProcStatus } from '../proc/proc-status.js';
import type { MpsDaemonRef } from '../mps/mps-daemons.js';
import { mpsDaemonKey } from './actuators.js';
import type { Scheduler } from './scheduler.js';

/** Stop each daemon started for jobs that no live job and no running MPS process on its GPU (or slice) uses. */
export function releaseUnusedMpsDaemons(scheduler: Scheduler): void {
  if (!scheduler.act.mpsStartedForJobs()) return; // nothing to judge: no snapshot taken for it
  let snapshot: Snapshot;
  try {
    snapshot = scheduler.snapshot();
  } catch {
    return; // no GPU to read: no daemon of ours to judge
  }
  const live = scheduler.table.live().filter((r) => r.view.state !== 'queued');
  const clients = (key: string, gpu: number, gpuInstanceId: number | null): number =>
    live.filter((r) => mpsDaemonKey(r.view) === key).length +
    // the driver may list an exited client a while; the MPS server is no client
    snapshot.processes.filter((p) => p.kind === 'mps' && p.command !== 'nvidia-cuda-mps-server' && p.gpuIndex === gpu && p.gpuInstanceId === gpuInstanceId && readProcStatus(p.pid) !== null).length;
  for (const gpu of snapshot.gpus) {
    const daemons: Array<{ daemon: MpsDaemonRef; users: number }> = [
      { daemon: { gpu: { index: gpu.index, uuid: gpu.uuid } }, users: clients(`gpu ${gpu.index}`, gpu.index, null) },
      ...gpu.migSlices.map((s) => ({ daemon: { slice: { gpu: gpu.index, gpuInstanceId: s.gpuInstanceId, uuid: s.uuid } }, users: clients(`slice ${s.uuid}`, gpu.index, s.gpuInstanceId) })),
    ];
    for (const { daemon, users } of daemons) {
      const failure = scheduler.act.releaseUnusedMps(daemon, users);
      if (failure) scheduler.options.engine.raiseAlert({ kind: 'failed', severity: 'warning', gpu: gpu.index, jobId: null, message: `The MPS daemon an earlier engine started for jobs on GPU ${gpu.index} is unused and could not be stopped: ${failure}` });
    }
  }
}
