// The jobs the scheduler knows: managed ones it started and the unmanaged GPU
// processes of the latest snapshot. State changes are recorded with time and reason.
import type { ChildProcess } from 'node:child_process';
import { FINAL_STATES, SUSPENSION_REASONS, type JobState, type JobView, type Priority } from '../../../shared/jobs.js';
import type { Account } from '../accounts.js';
import type { ParkedJob } from './parking.js';
import { PARK_STATES } from './job-state.js';

/** Why a job is held back; it runs again when none is left. */
export type HoldReason = 'user' | 'priority' | 'quota';

/** JobView.suspendedBy from the record: a parked job was parked by a person; a suspended one names its first hold. */
export function noteSuspension(record: JobRecord): void {
  const { state } = record.view;
  record.view.suspendedBy = PARK_STATES.has(state) ? 'user' : state === 'suspended' ? (SUSPENSION_REASONS.find((r) => record.holds.has(r)) ?? null) : null;
}

export interface JobRecord {
  view: JobView;
  /** Launch-gate slot of a managed job while it runs. */
  slot: number | null;
  child: ChildProcess | null;
  /** /proc start time of the job's main process (unmanaged: the process itself). */
  startTicks: number | null;
  holds: Set<HoldReason>;
  /** When its SM % was last above 0 (ms), for "active" with a little hysteresis. */
  lastActiveAt: number;
  /** Unmanaged memory over quota since (ms), for the grace period. */
  overQuotaSince: number | null;
  /** The user asked to terminate it (an exit by signal is then expected). */
  terminatedBy: string | null;
  /** Niceness to go back to after best-effort. */
  originalNice: number | null;
  /** Managed jobs: argv[0] resolved at submission, the environment and the account to start it with. */
  executable: string | null;
  launchEnv: Record<string, string>;
  runAs: Account | null;
  /** Set while parked: where its memory goes back to. */
  parked: ParkedJob | null;
  /** Adopted from an earlier engine: no child handle, so its end is seen in /proc, not as an exit event. */
  adopted: boolean;
  /** Stopped by someone else (Ctrl-Z, a debugger): out of its gate domain until it runs again. */
  stoppedOutside: boolean;
  /** Allocations its quota refused (the preload library counts them in its slot), and when that count last grew (ms). */
  oomCount: number;
  oomAt: number | null;
}

const FINISHED_KEPT = 500;
export const PRIORITY_RANK: Record<Priority, number> = { high: 0, normal: 1, 'best-effort': 2 };

export class JobTable {
  private readonly records = new Map<string, JobRecord>();
  private nextManaged = 1;
  /** Rows handed out by all(), live() and list() since the engine started: what a command or an evaluation costs, counted. */
  rowsVisited = 0;

  get(id: string): JobRecord | undefined {
    return this.records.get(id);
  }

  all(): JobRecord[] {
    this.rowsVisited += this.records.size;
    return [...this.records.values()];
  }

  live(): JobRecord[] {
    return this.all().filter((r) => !FINAL_STATES.has(r.view.state));
  }

  /** Continue numbering after `highest` (ids used by an earlier engine). */
  skipManagedIds(highest: number): void {
    this.nextManaged = Math.max(this.nextManaged, highest + 1);
  }

  nextManagedId(): string {
    return `j${this.nextManaged++}`;
  }

  add(view: JobView, extra: Partial<JobRecord> = {}): JobRecord {
    const record: JobRecord = {
      view,
      slot: null,
      child: null,
      startTicks: null,
      holds: new Set(),
      lastActiveAt: 0,
      overQuotaSince: null,
      terminatedBy: null,
      originalNice: null,
      executable: null,
      launchEnv: {},
      runAs: null,
      parked: null,
      adopted: false,
      stoppedOutside: false,
      oomCount: 0,
      oomAt: null,
      ...extra,
    };
    this.records.set(view.id, record);
    this.trimFinished();
    return record;
  }

  remove(id: string): void {
    this.records.delete(id);
  }

  /** Jobs as the API shows them: ordered managed first by number, then processes by pid. */
  list(includeFinished: boolean): JobView[] {
    const order = (id: string): number => (id[0] === 'j' ? 0 : 1e9) + Number(id.slice(1));
    return this.all()
      .filter((r) => includeFinished || !FINAL_STATES.has(r.view.state))
      .map((r) => structuredClone(r.view))
      .sort((a, b) => order(a.id) - order(b.id));
  }

  private trimFinished(): void {
    const finished = this.all().filter((r) => FINAL_STATES.has(r.view.state));
    for (const r of finished.slice(0, Math.max(0, finished.length - FINISHED_KEPT))) this.records.delete(r.view.id);
  }
}

export function newJobView(fields: Pick<JobView, 'id' | 'managed' | 'owner' | 'uid' | 'argv'> & Partial<JobView>, state: JobState, reason: string, at = Date.now()): JobView {
  return {
    cwd: null,
    gpu: null,
    requestedGpu: 'auto',
    priority: 'normal',
    memoryQuotaBytes: null,
    memoryRequestBytes: null,
    mode: 'shared',
    mpsSharePercent: null,
    migSlice: null,
    pid: null,
    exitCode: null,
    signal: null,
    logPath: null,
    usedMemory: null,
    smPercent: null,
    ...fields,
    suspendedBy: null,
    state,
    history: [{ state, at, reason }],
  };
}
