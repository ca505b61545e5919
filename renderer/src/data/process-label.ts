// One name for a GPU process wherever the console shows it (timeline, memory bar, MIG slice,
// table): the job id the table lists it under ("j12" for a managed job, "p4242" otherwise),
// its command and its user.
import type { JobView } from '../../../shared/jobs.js';

const managedJobOfPid = new Map<number, string>();

/** The jobs list changed: which pids are managed jobs now. */
export function learnJobs(jobs: readonly JobView[]): void {
  managedJobOfPid.clear();
  for (const job of jobs) if (job.managed && job.pid !== null) managedJobOfPid.set(job.pid, job.id);
}

/** "j12" for a managed job's process, "p4242" for any other: the id jobs.list and the table use. */
export const jobIdOfPid = (pid: number): string => managedJobOfPid.get(pid) ?? `p${pid}`;

export function processLabel(process: { pid: number; command: string | null; user: string | null }): string {
  return `${jobIdOfPid(process.pid)} · ${process.command ?? '?'} · ${process.user ?? '?'}`;
}
