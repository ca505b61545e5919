// Why a job is left out of a MIG plan, in one sentence with the sizes; and whether a job fits a profile.
import { formatByteSize } from '../../../shared/byte-size.js';
import type { MigInstance } from './layout.js';
import { largestProfile, type MigProfile, type MigProfileTable } from './profiles.js';

/** What the sentences need of a planned job: memory in bytes, SMs (of the whole GPU's), priority rank. */
interface JobNeed {
  id: string;
  bytes: number;
  sms: number;
  rank: number;
}

// sizes as the CLI and console write them: G is GiB
const formatGB = (bytes: number): string => formatByteSize(bytes);

// a busy slice holds a job only within the memory its running work leaves free now
export const fits = (job: Pick<JobNeed, 'bytes' | 'sms'>, profile: MigProfile, freeNow = Infinity): boolean =>
  Math.min(profile.memoryMiB * 2 ** 20, freeNow) >= job.bytes && profile.smCount + 1e-9 >= job.sms;

export function tooLargeReason(table: MigProfileTable, job: JobNeed, fullSms: number): string {
  const largest = largestProfile(table);
  const largestBytes = largest.memoryMiB * 2 ** 20;
  if (job.bytes > largestBytes) {
    return `needs ${formatGB(job.bytes)} but the largest profile on ${table.model}, ${largest.name}, has ${formatGB(largestBytes)}`;
  }
  const mostSms = Math.max(...table.profiles.filter((p) => !p.mediaExtensions).map((p) => p.smCount));
  if (job.sms > mostSms + 1e-9) {
    return `needs ${Math.ceil(job.sms - 1e-9)} SMs (${Math.round((job.sms / fullSms) * 100)}% of the GPU) but no profile on ${table.model} has more than ${mostSms}`;
  }
  return `no profile on ${table.model} has both ${formatGB(job.bytes)} and ${Math.ceil(job.sms - 1e-9)} SMs`;
}

export function noRoomReason(table: MigProfileTable, job: JobNeed, placed: JobNeed[], current: MigInstance[]): string {
  const smallest = table.profiles
    .filter((p) => !p.mediaExtensions && fits(job, p))
    .sort((a, b) => a.memorySlices + a.computeSlices - (b.memorySlices + b.computeSlices))[0];
  const higher = placed.filter((p) => p.rank < job.rank).map((p) => p.id);
  const why = placed.length === 0
    ? 'the slices are taken'
    : higher.length > 0
    ? `the slices went to higher-priority jobs (${higher.join(', ')})`
    : `the ${table.memorySlices} memory and ${table.computeSlices} compute slices are taken by ${placed.map((p) => p.id).join(', ')}`;
  const busy = current.filter((c) => c.busy);
  const kept = busy.length === 0
    ? ''
    : `; busy slices are kept as they are: ${busy.map((c) => `${c.profile} at ${c.placement.start} (GI ${c.gpuInstanceId ?? '?'}, pid ${c.busy!.pids.join(', ')}, ${formatGB(c.busy!.memoryFreeBytes)} free now)`).join(', ')}`;
  return `no room: it needs at least a ${smallest.name} and ${why}${kept}`;
}
