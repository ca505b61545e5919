// The jobs the scheduler knows: managed ones it started and the unmanaged GPU
// processes of the latest snapshot. State changes are recorded with time and reason.
import type { ChildProcess } from 'node:child_process';
import { FINAL_STATES, SUSPENSION_REASONS, type JobState, type JobView } from '../../../shared/jobs.js';
import type { Account } from '../accounts.js';
import type { ProcessRef } from '../proc/proc-status.js';
import { PARK_STATES } from './job-state.js';

/** What a parked job left on its GPU. */
export interface ParkedJob {
  gpu: number;
  /** GPU memory it held when parked (the last reading), bytes. */
  bytes: number;
  at: number;
  /** Its processes whose memory was checkpointed, by pid and start time, in the order they were. */
  processes?: ProcessRef[];
  /** An earlier engine's record: the pids alone, no start times (absent too: its main process alone). Read, never written. */
  pids?: number[];
}

/** A park or unpark someone asked for (a person, auto-park, the lab policy): the control loop carries it out and settles its promise. */
export interface ParkWish {
  want: 'park' | 'unpark';
  /** Who asked, as its history will say ("ann", "gpushare: idle for …"). */
  by: string;
  /** Asked by a policy of the engine (auto-park): no alert, nobody needs to act. */
  automatic: boolean;
  settle: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

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
  /** The whole argv to start it with, where the view shows it cut (argv-bounds.ts); null: the view's is whole. */
  launchArgv: string[] | null;
  runAs: Account | null;
  /** Set while parked: where its memory goes back to. */
  parked: ParkedJob | null;
  /** A park or unpark asked for and not yet begun (what users want; the loop's step carries it out). */
  parkWish: ParkWish | null;
  /** Adopted from an earlier engine: no child handle, so its end is seen in /proc, not as an exit event. */
  adopted: boolean;
  /** Stopped by someone else (Ctrl-Z, a debugger): out of its gate domain until it runs again. */
  stoppedOutside: boolean;
  /** Allocations its quota refused (the preload library counts them in its slot), and when that count last grew (ms). */
  oomCount: number;
  oomAt: number | null;
  /** The gate's count of time its launches waited for higher jobs (gatedNs) at the last look; null: not looked at since it was adopted. */
  gateWaitNs: number | null;
  /** When that count last grew (ms): the gate held it back for a higher job in the interval before. */
  gateWaitedAt: number | null;
}

/** Finished jobs kept in the live table (the store keeps them all for reports): the newest, by count and by size. */
export const FINISHED_KEPT = 500;
export const FINISHED_KEPT_BYTES = 4 * 1024 * 1024;

/** Where a job sits: waiting, on its GPU (or on its way), or ended. */
type Bucket = 'queued' | 'placed' | 'finished';
const bucketOf = (state: JobState): Bucket => (state === 'queued' ? 'queued' : FINAL_STATES.has(state) ? 'finished' : 'placed');

/**
 * The jobs, indexed by where they sit, so that a command touches only its own job: a lookup by id, a
 * count of an owner's queued jobs, the placed jobs without the queue. Every state change is told
 * through moved(); finished jobs are trimmed to the newest by count and by size as they end.
 */
export class JobTable {
  private readonly records = new Map<string, JobRecord>();
  private readonly buckets: Record<Bucket, Map<string, JobRecord>> = { queued: new Map(), placed: new Map(), finished: new Map() };
  private readonly queuedByUid = new Map<number, number>();
  private readonly sizes = new Map<string, number>();
  private finishedBytes = 0;
  /** What list() shows of queued and finished jobs, cloned once per change (placed jobs change every tick: cloned each time). */
  private readonly shown = new WeakMap<JobRecord, JobView>();
  /** Every job in the API's order, kept between lists (null: to sort again after an add or a removal). */
  private ordered: JobRecord[] | null = null;
  private nextManaged = 1;
  /** Rows handed out by all(), live(), placed(), queued() and list() since the engine started: what a command or an evaluation costs, counted. */
  rowsVisited = 0;

  get(id: string): JobRecord | undefined {
    return this.records.get(id);
  }

  all(): JobRecord[] {
    return this.rows(this.records);
  }

  /** Jobs that have not ended: queued and placed. */
  live(): JobRecord[] {
    return [...this.placed(), ...this.queued()];
  }

  /** Jobs on a GPU or on their way to or from one (starting, running, held, parked): live, not queued. */
  placed(): JobRecord[] {
    return this.rows(this.buckets.placed);
  }

  /** Jobs waiting to start, in submission order. */
  queued(): JobRecord[] {
    return this.rows(this.buckets.queued);
  }

  /** How many jobs of this user wait to start. */
  queuedOf(uid: number): number {
    return this.queuedByUid.get(uid) ?? 0;
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
      launchArgv: null,
      runAs: null,
      parked: null,
      adopted: false,
      stoppedOutside: false,
      oomCount: 0,
      oomAt: null,
      gateWaitNs: null,
      parkWish: null,
      gateWaitedAt: null,
      ...extra,
    };
    this.remove(view.id);
    this.records.set(view.id, record);
    this.ordered = null;
    this.enter(record);
    this.trimFinished();
    return record;
  }

  remove(id: string): void {
    const record = this.records.get(id);
    if (!record) return;
    this.leave(record, record.view.state);
    this.records.delete(id);
    this.ordered = null;
  }

  /** The job's view changed: list() shows it anew. */
  touch(record: JobRecord): void {
    this.shown.delete(record);
  }

  /** The job's state changed from `from` (the state machine moved it): it changes bucket. */
  moved(record: JobRecord, from: JobState): void {
    this.touch(record);
    if (this.records.get(record.view.id) !== record || bucketOf(from) === bucketOf(record.view.state)) return;
    this.leave(record, from);
    this.enter(record);
    this.trimFinished();
  }

  /**
   * Jobs as the API shows them: ordered managed first by number, then processes by pid. A queued or
   * finished job's copy is made once per change (touch(), moved()), not once per list.
   */
  list(includeFinished: boolean): JobView[] {
    const order = (id: string): number => (id[0] === 'j' ? 0 : 1e9) + Number(id.slice(1));
    this.ordered ??= [...this.records.values()].sort((a, b) => order(a.view.id) - order(b.view.id));
    this.rowsVisited += this.ordered.length;
    const out: JobView[] = [];
    for (const r of this.ordered) {
      const bucket = bucketOf(r.view.state);
      if (bucket === 'finished' && !includeFinished) continue;
      if (bucket === 'placed') {
        out.push(structuredClone(r.view));
        continue;
      }
      let copy = this.shown.get(r);
      if (!copy) this.shown.set(r, (copy = structuredClone(r.view)));
      out.push(copy);
    }
    return out;
  }

  private rows(map: Map<string, JobRecord>): JobRecord[] {
    this.rowsVisited += map.size;
    return [...map.values()];
  }

  private enter(record: JobRecord): void {
    const { id, state, uid } = record.view;
    const bucket = bucketOf(state);
    this.buckets[bucket].set(id, record);
    if (bucket === 'queued') this.queuedByUid.set(uid, this.queuedOf(uid) + 1);
    if (bucket === 'finished') {
      const size = viewBytes(record.view);
      this.sizes.set(id, size);
      this.finishedBytes += size;
    }
  }

  private leave(record: JobRecord, state: JobState): void {
    const { id, uid } = record.view;
    const bucket = bucketOf(state);
    this.buckets[bucket].delete(id);
    if (bucket === 'queued') {
      const left = this.queuedOf(uid) - 1;
      if (left > 0) this.queuedByUid.set(uid, left);
      else this.queuedByUid.delete(uid);
    }
    if (bucket === 'finished') {
      this.finishedBytes -= this.sizes.get(id) ?? 0;
      this.sizes.delete(id);
    }
  }

  /** The oldest finished jobs leave the live table (the store keeps them) past FINISHED_KEPT or FINISHED_KEPT_BYTES. */
  private trimFinished(): void {
    const finished = this.buckets.finished;
    while (finished.size > FINISHED_KEPT || (finished.size > 1 && this.finishedBytes > FINISHED_KEPT_BYTES)) {
      const oldest = finished.keys().next().value as string;
      this.remove(oldest);
    }
  }
}

/** About what a job's view costs to hold and to send: its strings, and a little for each field. */
export function viewBytes(view: JobView): number {
  let bytes = 512 + (view.cwd?.length ?? 0) + (view.logPath?.length ?? 0);
  for (const arg of view.argv) bytes += arg.length + 4;
  for (const h of view.history) bytes += h.reason.length + 48;
  return bytes;
}

/** A job's view; its GPUs from `gpus`, else from `gpu` (one GPU: a process, an older caller), `gpu` always their first. */
export function newJobView(fields: Pick<JobView, 'id' | 'managed' | 'owner' | 'uid' | 'argv'> & Partial<JobView>, state: JobState, reason: string, at = Date.now()): JobView {
  const gpus = fields.gpus ?? (fields.gpu === undefined || fields.gpu === null ? [] : [fields.gpu]);
  return {
    cwd: null,
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
    gpu: gpus[0] ?? null,
    gpus: [...gpus],
    suspendedBy: null,
    state,
    history: [{ state, at, reason }],
  };
}
