// The jobs of an earlier engine, taken back by the control loop's steps: each found job goes into the
// table, and steps adopt, lose or keep waiting one after another (adoption.ts decides), a parked one's
// restore awaited by later steps; once all are back, the earlier engine's leftover gate slots and unused
// MPS daemons (mps-leftovers.ts counts their users) are released. Until then a step decides nothing else
// (Scheduler.takeBack asks; its step calls step() here).
import type { Alert } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { JobActuators } from './actuators.js';
import { decideAdoption, staysParked } from './adoption.js';
import type { JobEvent } from './job-state.js';
import type { JobRecord, JobTable } from './job-table.js';
import { mpsDaemonUsers } from './mps-leftovers.js';
import type { JobOwnership } from './ownership.js';

/** The jobs an earlier engine kept, as the job store gives them back. */
export type KeptJobs = ReadonlyArray<{ view: JobRecord['view']; kept: Partial<JobRecord> }>;

/** What taking back needs of the loop. */
export interface TakeBackContext {
  readonly table: JobTable;
  readonly act: JobActuators;
  readonly ownership: JobOwnership;
  /** Move the job by an event of the state machine (the loop's one way to change a state). */
  fire(record: JobRecord, event: JobEvent, reason: string): boolean;
  /** Its process still runs (same pid, same start time). */
  processAlive(record: JobRecord): boolean;
  /** The latest snapshot (taken now when there is none); throws when no GPU can be read. */
  snapshot(): Snapshot;
  raiseAlert(alert: Omit<Alert, 'id' | 'at'>): void;
  /** The store was read, or a restore ended: another step, now. */
  step(): void;
}

export class TakeBack {
  /** Resolves once all are back and the leftovers released; rejects when the store could not be read or the engine stopped first. */
  readonly done: Promise<void>;
  /** Null while the store is read. */
  private found: JobRecord[] | null = null;
  /** The parked job whose restore runs. */
  private restoring: JobRecord | null = null;
  /** The one whose restore ended, for the next step to adopt. */
  private restored: { record: JobRecord; parked: boolean } | null = null;
  /** The store could not be read: nothing to take back, the steps decide again. */
  private failed = false;
  private readonly fromStore: boolean;
  private resolve!: () => void;
  private reject!: (error: unknown) => void;

  /** `load`: the job store's jobs; null: no store, none. */
  constructor(
    private readonly loop: TakeBackContext,
    load: Promise<KeptJobs> | null,
  ) {
    this.fromStore = load !== null;
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    (load ?? Promise.resolve([])).then(
      (jobs) => {
        this.found = jobs.map(({ view, kept }) => this.loop.table.add(view, kept)); // observed: what the store kept
        this.loop.step();
      },
      (error: unknown) => {
        this.failed = true;
        this.reject(error);
        this.loop.step();
      },
    );
  }

  /** A step while jobs are taken back: the next found job is adopted (a parked one's restore is awaited by later steps); when all are, leftovers go. True once it is over. */
  step(): boolean {
    if (this.failed) return true;
    if (this.found === null) return false; // the store is still read
    if (this.restored) this.adoptedAfterRestore(this.restored.record, this.restored.parked);
    this.restored = null;
    while (!this.restoring) {
      const record = this.found.shift();
      if (!record) break;
      this.adopt(record);
    }
    if (this.restoring) return false; // its restore's end asks for the next step
    if (this.fromStore) this.loop.act.releaseLeftoverSlots(); // slots no job kept in the store took back
    this.releaseUnusedMps();
    this.resolve();
    return true;
  }

  /** The engine stops before all are back. */
  abandon(error: Error): void {
    this.reject(error);
  }

  /** A job of an earlier engine: lost, adopted with its gate slot, or (parked) adopted once its memory's restore ends. */
  private adopt(record: JobRecord): void {
    const adoption = decideAdoption(record.view, record.startTicks, () => this.loop.processAlive(record));
    if (adoption.kind === 'wait') return;
    if (adoption.kind === 'lose') {
      this.loop.fire(record, 'lose', adoption.reason);
      return;
    }
    record.adopted = true;
    record.holds.clear(); // the earlier engine let go of every hold when it stopped (or its guardian did)
    const keptSlot = record.slot;
    record.slot = null;
    this.loop.act.adoptSlot(record, keptSlot); // gated again where its slot is still its own
    this.loop.ownership.claim(record.view.id, record.view.owner, record.view.pid!, record.startTicks);
    if (!adoption.restore) return this.adoptedAfterRestore(record, false);
    this.restoring = record;
    this.loop.act.unpark(record).then(
      () => this.restoreEnded(record, false),
      (error: unknown) => this.restoreEnded(record, staysParked(error)),
    );
  }

  /** An adopted parked job's restore ended (observed): the next step adopts it. */
  private restoreEnded(record: JobRecord, parked: boolean): void {
    this.restoring = null;
    this.restored = { record, parked };
    this.loop.step();
  }

  private adoptedAfterRestore(record: JobRecord, parked: boolean): void {
    if (parked) {
      this.loop.act.setGateMember(record, false); // checkpointed: it holds nobody back
      this.loop.fire(record, 'adopt-parked', `re-adopted by a new engine, still parked (not enough free memory on GPU ${record.view.gpu})`);
      return;
    }
    this.loop.fire(record, 'adopt', `re-adopted by a new engine (pid ${record.view.pid})`);
    this.loop.act.attach(record);
  }

  /** Stop each daemon an earlier engine started for jobs that no live job and no running MPS process on its GPU (or slice) uses. */
  private releaseUnusedMps(): void {
    if (!this.loop.act.mpsStartedForJobs()) return; // nothing to judge: no snapshot taken for it
    let snapshot: Snapshot;
    try {
      snapshot = this.loop.snapshot();
    } catch {
      return; // no GPU to read: no daemon of ours to judge
    }
    const live = this.loop.table.live().filter((r) => r.view.state !== 'queued');
    for (const { gpu, daemon, users } of mpsDaemonUsers(snapshot, live, this.loop.act.ownMpsServers(snapshot))) {
      const failure = this.loop.act.releaseUnusedMps(daemon, users);
      if (failure) this.loop.raiseAlert({ kind: 'failed', severity: 'warning', gpu, jobId: null, message: `The MPS daemon an earlier engine started for jobs on GPU ${gpu} is unused and could not be stopped: ${failure}` });
    }
  }
}
