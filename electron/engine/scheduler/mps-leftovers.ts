// MPS daemons a new engine finds: one an earlier engine started for jobs whose last client ended while no
// engine ran has no job end left to stop it, so it is stopped once the jobs are back (mps-daemons.ts decides
// which daemons that may be: only those recorded as the jobs', never a person's or one of unknown origin).
// This module counts each daemon's users; the control loop's step asks for the stops (Scheduler.takeBack).
import type { Snapshot } from '../../../shared/snapshot.js';
import { readProcStatus } from '../proc/proc-status.js';
import type { MpsDaemonRef } from '../mps/mps-daemons.js';
import { mpsDaemonKey } from './actuators.js';
import type { JobRecord } from './job-table.js';

/** Every GPU's and MIG slice's daemon with how many live jobs (`live`: not queued) and running MPS processes (but `ownMpsServers`) use it. */
export function mpsDaemonUsers(snapshot: Snapshot, live: readonly JobRecord[], ownMpsServers: ReadonlySet<number>): Array<{ gpu: number; daemon: MpsDaemonRef; users: number }> {
  const clients = (key: string, gpu: number, gpuInstanceId: number | null): number =>
    live.filter((r) => mpsDaemonKey(r.view) === key).length +
    // the driver may list an exited client a while; our own MPS server is no client
    snapshot.processes.filter((p) => p.kind === 'mps' && !ownMpsServers.has(p.pid) && p.gpuIndex === gpu && p.gpuInstanceId === gpuInstanceId && readProcStatus(p.pid) !== null).length;
  return snapshot.gpus.flatMap((gpu) => [
    { gpu: gpu.index, daemon: { gpu: { index: gpu.index, uuid: gpu.uuid } }, users: clients(`gpu ${gpu.index}`, gpu.index, null) },
    ...gpu.migSlices.map((s) => ({ gpu: gpu.index, daemon: { slice: { gpu: gpu.index, gpuInstanceId: s.gpuInstanceId, uuid: s.uuid } }, users: clients(`slice ${s.uuid}`, gpu.index, s.gpuInstanceId) })),
  ]);
}
