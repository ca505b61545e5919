// What a MIG layout is: GPU instances on memory slices, each holding one job or idle.
import type { MigDeviceInfo } from '../gpu/nvml-types.js';
import type { MpsShare } from './mps-sharing.js';
import type { Priority } from '../../../shared/jobs.js';

export type JobPriority = Priority;

/** What a job asks of a MIG slice. */
export interface MigJobNeed {
  id: string;
  /** Memory the job needs; memoryMiB is used when memoryBytes is absent. */
  memoryBytes?: number;
  memoryMiB?: number;
  /** Fraction 0..1 of the whole GPU's SMs (in MIG mode) the job needs. */
  smShare?: number;
  priority?: JobPriority;
}

export interface MigPlacement {
  start: number;
  size: number;
}

export interface MigInstance {
  /** Profile name, e.g. "3g.40gb". */
  profile: string;
  /** GPU instance profile id, as `nvidia-smi mig -cgi` takes it. */
  profileId: number;
  placement: MigPlacement;
  /** The job it holds; null when idle. */
  jobId: string | null;
  /** Set on instances that exist on the GPU now: the ids to destroy or keep them by. */
  gpuInstanceId?: number;
  computeInstanceIds?: number[];
  /** Set on today's instances with processes in them: the planner keeps them as they are. */
  busy?: MigBusy;
  /** Jobs sharing this instance through MPS (jobId is the first of them), with each one's SM limit. */
  mps?: MpsShare[];
}

/** Work running in a slice now, and the memory it leaves free now (not the profile's size). */
export interface MigBusy {
  pids: number[];
  memoryFreeBytes: number;
}

export const jobMemoryBytes = (job: MigJobNeed): number => job.memoryBytes ?? (job.memoryMiB ?? 0) * 2 ** 20;

/** Today's layout from the MIG devices NVML lists (one per compute instance), grouped by GPU instance. */
export function migLayoutFromDevices(devices: MigDeviceInfo[]): MigInstance[] {
  const byGpuInstance = new Map<number, MigInstance>();
  for (const device of devices) {
    const known = byGpuInstance.get(device.gpuInstanceId);
    if (known) {
      known.computeInstanceIds!.push(device.computeInstanceId);
      continue;
    }
    if (!device.placement || device.profileId === null) continue; // cannot be planned around without them
    byGpuInstance.set(device.gpuInstanceId, {
      profile: device.profileName ?? `profile ${device.profileId}`,
      profileId: device.profileId,
      placement: { ...device.placement },
      jobId: null,
      gpuInstanceId: device.gpuInstanceId,
      computeInstanceIds: [device.computeInstanceId],
    });
  }
  return [...byGpuInstance.values()].sort((a, b) => a.placement.start - b.placement.start);
}
