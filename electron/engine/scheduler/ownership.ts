// Which managed job a process belongs to: the job's own process or any descendant of it
// (a wrapper script's python, a DataLoader worker). One answer for the scheduler and the store,
// so a job's usage, its quota and its reports all count the same processes.
import { readProcStatus, type ProcStatus } from '../proc/proc-status.js';

/** How far up the parent chain a process is followed. */
export const OWNERSHIP_DEPTH = 32;
/** After a job ends, samples taken up to this long after its end are still its (the exit is seen late). */
export const OWNERSHIP_GRACE_MS = 5_000;

export interface JobOwner {
  jobId: string;
  owner: string;
}

interface Claim extends JobOwner {
  pid: number;
  startTicks: number | null;
  /** When the job ended; null while it runs. */
  endedAt: number | null;
}

export class JobOwnership {
  /** The main process of each job, by pid (the latest claim of a pid wins). */
  private readonly byPid = new Map<number, Claim>();
  /** Each claimed pid's start time (null: unknown), and the snapshot's startedAt last seen to match it: a pid alone may be reused. */
  private readonly claimedAs = new Map<number, { startTicks: number | null; startedAt: number | null }>();
  private readonly byJob = new Map<string, Claim>();
  /** pid → the job its lineage leads to (null: none), valid for that pid's start time (and the snapshot's startedAt for it). */
  private readonly lineage = new Map<number, { startTicks: number; startedAt: number | null; jobId: string | null }>();

  constructor(private readonly readStatus: (pid: number) => ProcStatus | null = readProcStatus) {}

  /** A managed job's main process (startTicks: its /proc start time, null when unknown). */
  claim(jobId: string, owner: string, pid: number, startTicks: number | null): void {
    const old = this.byJob.get(jobId);
    if (old && this.byPid.get(old.pid) === old) this.forgetPid(old.pid);
    const claim: Claim = { jobId, owner, pid, startTicks, endedAt: null };
    this.byJob.set(jobId, claim);
    this.byPid.set(pid, claim);
    this.claimedAs.set(pid, { startTicks, startedAt: null });
    // a process seen before this claim may descend from it now
    for (const [p, entry] of this.lineage) if (entry.jobId === null || entry.jobId === jobId) this.lineage.delete(p);
  }

  /**
   * Another process of a running job, outside its main process's tree (an enrolled job's member from its
   * process group): it and its descendants are the job's too, until the job ends.
   */
  member(jobId: string, pid: number, startTicks: number): void {
    const claim = this.byJob.get(jobId);
    if (!claim || claim.endedAt !== null || (this.byPid.get(pid) === claim && this.claimedAs.get(pid)?.startTicks === startTicks)) return;
    this.byPid.set(pid, claim);
    this.claimedAs.set(pid, { startTicks, startedAt: null });
    for (const [p, entry] of this.lineage) if (entry.jobId === null) this.lineage.delete(p); // seen before as nobody's
  }

  /** The job ended at `at`: its processes stay its for samples up to `at` + the grace. */
  release(jobId: string, at: number): void {
    const claim = this.byJob.get(jobId);
    if (claim && claim.endedAt === null) claim.endedAt = at;
    this.prune(at);
  }

  /**
   * The job the pid belongs to at time `at` (default: now, only jobs that have not ended): the pid
   * is a job's main process, or one of its ancestors (up to 32 levels) is. `startedAt`, the process's
   * start time as a snapshot lists it, spares the /proc read that tells a reused pid once it is cached.
   */
  jobOf(pid: number, at?: number, startedAt?: number | null): JobOwner | null {
    if (this.byJob.size === 0) return null; // nothing managed: no /proc reads
    const direct = this.byPid.get(pid);
    if (direct && this.stillClaimed(pid, startedAt)) return this.ownerAt(direct, at);
    const cached = this.lineage.get(pid);
    if (cached && startedAt != null && cached.startedAt === startedAt) return this.ownerOf(cached.jobId, at);
    const status = this.readStatus(pid);
    if (!status) return null;
    if (cached && cached.startTicks === status.startTicks) {
      if (startedAt != null) cached.startedAt = startedAt;
      return this.ownerOf(cached.jobId, at);
    }
    let jobId: string | null = null;
    let parent = status.ppid;
    for (let depth = 0; depth < OWNERSHIP_DEPTH && parent > 1 && jobId === null; depth++) {
      const claim = this.byPid.get(parent);
      if (claim && this.stillClaimed(parent, undefined)) jobId = claim.jobId; // a claimed pid another process took since is nobody's ancestor in the job
      else parent = this.readStatus(parent)?.ppid ?? 0;
    }
    this.lineage.set(pid, { startTicks: status.startTicks, startedAt: startedAt ?? null, jobId });
    return this.ownerOf(jobId, at);
  }

  /** The claimed pid still names the process claimed (a gone one stays claimed: samples from before its exit); another process that took it drops the claim. */
  private stillClaimed(pid: number, startedAt: number | null | undefined): boolean {
    const claimed = this.claimedAs.get(pid);
    if (!claimed || claimed.startTicks === null || (startedAt != null && claimed.startedAt === startedAt)) return true;
    const status = this.readStatus(pid);
    if (status !== null && status.startTicks !== claimed.startTicks) {
      this.forgetPid(pid);
      return false;
    }
    if (startedAt != null && status !== null) claimed.startedAt = startedAt;
    return true;
  }

  private forgetPid(pid: number): void {
    this.byPid.delete(pid);
    this.claimedAs.delete(pid);
  }

  /** Forget the lineage of pids no longer on any GPU (keeps the cache as small as the process list). */
  retainOnly(pids: ReadonlySet<number>): void {
    for (const pid of this.lineage.keys()) if (!pids.has(pid)) this.lineage.delete(pid);
  }

  private ownerOf(jobId: string | null, at: number | undefined): JobOwner | null {
    const claim = jobId === null ? undefined : this.byJob.get(jobId);
    return claim ? this.ownerAt(claim, at) : null;
  }

  private ownerAt(claim: Claim, at: number | undefined): JobOwner | null {
    const ended = claim.endedAt !== null && (at === undefined || at > claim.endedAt + OWNERSHIP_GRACE_MS);
    return ended ? null : { jobId: claim.jobId, owner: claim.owner };
  }

  /** Drop jobs that ended more than a grace before `now`: memory stays bounded by the live jobs. */
  private prune(now: number): void {
    for (const claim of this.byJob.values()) {
      if (claim.endedAt === null || now - claim.endedAt <= OWNERSHIP_GRACE_MS) continue;
      this.byJob.delete(claim.jobId);
      for (const [pid, c] of this.byPid) if (c === claim) this.forgetPid(pid); // its main process and its members
    }
  }
}
