// The usage store: samples, rollups, jobs, events and the audit log in SQLite (WAL).
// Recording never touches the database: it appends to an in-memory batch, and a timer
// writes each batch in one transaction, so a sampling tick never waits on a disk and a
// crash loses at most the last flush interval.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Alert, AuditEntry, JobView } from '../../../shared/jobs.js';
import { storeTrouble, type StoreStatus } from '../../../shared/store-status.js';
import { gpuShareOfPlace, type Snapshot } from '../../../shared/snapshot.js';
import type { SlurmUsageRow } from '../../../shared/slurm.js';
import type { JobOwner, JobOwnership } from '../scheduler/ownership.js';
import { accountTick, NO_CONTAINER, tickSeconds, type AccountedSample, type ProcessSample } from './accounting.js';
import { moveAside, openDatabase } from './open-database.js';
import { salvageInto } from './salvage.js';
import { isCorruption, type SqliteDb } from './sqlite.js';
import { boundBatch, combineBatches, DEFAULT_KEPT_SAMPLES, type StoreBatch } from './unwritten.js';
import { readAudit, rerollup, rollup, writeAudit, writeContainers, writeEvents, writeGpus, writeJobs, writeProcessJobs, writeRollup, writeSamples, writeSlurmUsage, type ContainerSeen } from './writers.js';
import { StatusListeners } from './status-listeners.js';

export { rerollup, rollup, writeRollup, type RollupRow, type RollupTable } from './writers.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export interface Retention {
  /** Raw per-process samples (default 48 hours). */
  rawMs: number;
  /** Per-minute rollups (default 30 days). */
  minuteMs: number;
  /** Per-hour rollups, events, the audit log and Slurm jobs' usage rows (default a year). */
  hourMs: number;
  /** Per-day rollups, which keep long reports fast (default a year). */
  dayMs: number;
}
export const DEFAULT_RETENTION: Retention = { rawMs: 2 * DAY_MS, minuteMs: 30 * DAY_MS, hourMs: 365 * DAY_MS, dayMs: 365 * DAY_MS };

export interface UsageStoreOptions {
  path: string;
  /** How often batches are written (default 250 ms; at most 1000 so a crash loses at most a second). */
  flushIntervalMs?: number;
  retention?: Partial<Retention>;
  /** A damaged file: move it aside and start afresh ("recover", the engine) or throw ("fail", a report). */
  onCorrupt?: 'recover' | 'fail';
  /** Sentences a person should read (a damaged file moved aside, a batch that could not be written). */
  onNotice?: (message: string) => void;
  /** The clock for retention (tests). */
  now?: () => number;
  /** Only read (a report): no flush timer, no pruning, nothing written. */
  readOnly?: boolean;
  /** A file that cannot be opened: throw (a report, the daemon), or run without it, keep samples within the bound and retry each flush (an engine). */
  whenUnopenable?: 'throw' | 'record-later';
  /** Samples kept in memory while writes fail (default DEFAULT_KEPT_SAMPLES); past it the oldest are dropped and counted. */
  keptSamples?: number;
  /** Test seam: while it returns an error, each batch fails with it inside its transaction, as a full disk would. */
  writeFault?: () => Error | null;
}

/** What the scheduler (or an alert) records as a job event. */
export interface UsageEvent {
  /** An alert kind ("contention", "quota", "out-of-memory", "suspended", …) or "parked", "unparked", …. */
  kind: string;
  at?: number;
  gpu?: number | null;
  jobId?: string | null;
  message: string;
  severity?: 'info' | 'warning' | 'error';
}

/** $XDG_DATA_HOME/gpushare/usage.db, else ~/.local/share/gpushare/usage.db. */
export function defaultUsageDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'gpushare', 'usage.db');
}

export { UsageDatabaseError } from './open-database.js';

interface PendingTick {
  snapshot: Snapshot;
  /** The managed job of each of the snapshot's processes (null: its own job, p<pid>), resolved when it was taken; null without ownership. */
  owners: Array<JobOwner | null> | null;
}

/** What the store needs of the scheduler's JobOwnership. */
export type Attribution = Pick<JobOwnership, 'jobOf' | 'retainOnly'>;

const PRUNE_EVERY_MS = 10 * MINUTE_MS;

export class UsageStore {
  private ticks: PendingTick[] = [];
  private jobs = new Map<string, JobView>();
  private events: Required<UsageEvent>[] = [];
  private audits: AuditEntry[] = [];
  private slurmUsage: SlurmUsageRow[] = [];
  private pendingSummaries = new Set<AuditEntry>();
  /** The row of each summary of refusals already written (its count is updated there). */
  private readonly summaryRows = new WeakMap<AuditEntry, number>();
  private readonly jobSignatures = new Map<string, string>();
  private readonly knownGpus = new Map<number, string>();
  private ownership: Attribution | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private lastPrune = 0;
  private closed = false;
  /** What failed flushes could not write, retried with the next one. */
  private unwritten: StoreBatch | null = null;
  private trouble: { problem: string; since: number } | null = null;
  private droppedSamples = 0;
  private readonly statusListeners = new StatusListeners<StoreStatus>('store');
  readonly retention: Retention;
  readonly notices: string[] = [];

  private constructor(
    private database: SqliteDb | null,
    private readonly options: UsageStoreOptions,
    openProblem: string | null = null,
  ) {
    if (openProblem) this.trouble = { problem: openProblem, since: Date.now() };
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    if (options.readOnly) return;
    const every = Math.min(1000, Math.max(10, options.flushIntervalMs ?? 250));
    this.timer = setInterval(() => void this.flush().catch(() => undefined), every);
    this.timer.unref();
  }

  static async open(options: UsageStoreOptions): Promise<UsageStore> {
    const notices: string[] = [];
    let db: SqliteDb | null = null;
    let problem: string | null = null;
    try {
      db = await openDatabase(options, (message) => notices.push(message));
    } catch (error) {
      if (options.whenUnopenable !== 'record-later' || options.readOnly) throw error;
      problem = `it cannot be opened (${errorText(error)})`;
    }
    const store = new UsageStore(db, options, problem);
    for (const message of notices) store.notice(message);
    if (problem) store.notice(storeTroubleLine(store.status()));
    return store;
  }

  /** The open database; throws naming the path and why while there is none (it could not be opened). */
  get db(): SqliteDb {
    if (!this.database) throw new Error(`The usage database ${this.options.path} is not open: ${this.trouble?.problem ?? 'it was closed'}.`);
    return this.database;
  }

  /** Is usage reaching the database, and if not why. */
  status(): StoreStatus {
    return {
      path: this.options.path,
      recording: this.trouble === null,
      problem: this.trouble?.problem ?? null,
      since: this.trouble?.since ?? null,
      keptSamples: this.unwritten?.samples.length ?? 0,
      droppedSamples: this.droppedSamples,
    };
  }

  /** Hear each change of status (trouble begins, changes, drops start, it ends). Returns the unsubscribe. */
  onStatus(listener: (status: StoreStatus) => void): () => void {
    return this.statusListeners.add(listener);
  }

  get path(): string {
    return this.options.path;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  // ---- recording: synchronous, memory only ----

  /** Attribute processes to managed jobs as the scheduler does (a job's child processes are the job's). */
  useOwnership(ownership: Attribution | null): void {
    this.ownership = ownership;
  }

  /** One sampling tick; it accounts the interval the snapshot says it covers. Owners are resolved now, while the processes exist. */
  ingest(snapshot: Snapshot): void {
    if (this.closed) return;
    const ownership = this.ownership;
    if (!ownership) return void this.ticks.push({ snapshot, owners: null });
    const owners = snapshot.processes.map((p) => ownership.jobOf(p.pid, snapshot.takenAt, p.startedAt));
    ownership.retainOnly(new Set(snapshot.processes.map((p) => p.pid)));
    this.ticks.push({ snapshot, owners });
  }

  /** A job as the scheduler sees it now (upserted; its new state changes appended). Cheap when unchanged. */
  recordJob(job: JobView): void {
    const last = job.history[job.history.length - 1];
    const signature = `${job.state}|${job.history.length}|${last?.at}|${job.gpus?.join(',') ?? job.gpu}|${job.pid}|${job.priority}|${job.mode}|${job.memoryQuotaBytes}`;
    if (this.jobSignatures.get(job.id) === signature) return;
    this.jobSignatures.set(job.id, signature);
    this.jobs.set(job.id, structuredClone(job));
  }

  recordEvent(event: UsageEvent): void {
    this.events.push({ at: this.now(), gpu: null, jobId: null, severity: 'info', ...event });
  }

  recordAlert(alert: Alert): void {
    this.recordEvent({ kind: alert.kind, at: alert.at, gpu: alert.gpu, jobId: alert.jobId, message: alert.message, severity: alert.severity });
  }

  /** An audit row; a summary of refusals comes again each time its count grows, and is written once per flush, as it is then. */
  recordAudit(entry: AuditEntry): void {
    if (entry.count !== undefined) {
      if (this.pendingSummaries.has(entry)) return;
      this.pendingSummaries.add(entry);
    }
    this.audits.push(entry);
  }

  /** A Slurm job's usage as its epilog settled it; written with the next flush (the epilog awaits it: flush()). */
  recordSlurmUsage(row: SlurmUsageRow): void {
    if (this.closed) return;
    this.slurmUsage.push({ ...row });
  }

  /**
   * Rows from elsewhere (a legacy rows file), written now in their own transaction, between flushes; resolves to
   * how many were new (a row already there is kept). Throws while no database is open: nothing was written.
   */
  async importSlurmUsage(rows: SlurmUsageRow[]): Promise<number> {
    while (this.flushing) await this.flushing;
    const db = this.db;
    const written = (async () => {
      await db.exec('BEGIN IMMEDIATE');
      try {
        const added = await writeSlurmUsage(db, rows);
        await db.exec('COMMIT');
        return added;
      } catch (error) {
        await db.exec('ROLLBACK').catch(() => undefined);
        throw error;
      }
    })();
    this.flushing = written.then(() => undefined, () => undefined).finally(() => (this.flushing = null)); // a flush waits for it
    return written;
  }

  /** One page of the audit log from the database, with what is recorded so far written first; null while no database is open. */
  auditPage(page: { limit: number; before?: number }, reader: { uid: number; user: string; everyone: boolean }): Promise<AuditEntry[]> | null {
    if (!this.database || this.trouble || this.closed) return null;
    return this.flush().then(() => readAudit(this.db, page, reader));
  }

  // ---- writing ----

  /** Write everything recorded so far in one transaction (one flush at a time). */
  flush(): Promise<void> {
    if (this.options.readOnly) return Promise.resolve();
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.ticks.length === 0 && this.jobs.size === 0 && this.events.length === 0 && this.audits.length === 0 && this.slurmUsage.length === 0 && !this.unwritten && this.database) {
      return this.now() - this.lastPrune >= PRUNE_EVERY_MS ? this.prune() : Promise.resolve();
    }
    this.flushing = this.writeBatch().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async writeBatch(): Promise<void> {
    const ticks = this.ticks;
    const jobs = [...this.jobs.values()];
    const events = this.events;
    const audits = this.audits;
    const slurmUsage = this.slurmUsage;
    this.ticks = [];
    this.jobs = new Map();
    this.events = [];
    this.audits = [];
    this.slurmUsage = [];
    this.pendingSummaries = new Set();
    const fresh: StoreBatch = { ...this.account(ticks), jobs, events, audits, slurmUsage };
    const batch = this.unwritten ? combineBatches(this.unwritten, fresh) : fresh; // the older rows first
    this.unwritten = null;
    try {
      const db = (this.database ??= await openDatabase(this.options, (m) => this.notice(m))); // a file that could not be opened is tried again
      await db.exec('BEGIN IMMEDIATE');
      const written = new Map<AuditEntry, number>();
      try {
        const fault = this.options.writeFault?.();
        if (fault) throw fault;
        await writeSamples(db, batch.samples);
        const minutes = rollup(batch.samples, MINUTE_MS);
        const hours = rerollup(minutes, HOUR_MS);
        await writeRollup(db, 'usage_minute', minutes);
        await writeRollup(db, 'usage_hour', hours);
        await writeRollup(db, 'usage_day', rerollup(hours, DAY_MS));
        await writeGpus(db, batch.gpus);
        await writeProcessJobs(db, batch.processJobs);
        await writeContainers(db, batch.containers);
        await writeJobs(db, batch.jobs);
        await writeEvents(db, batch.events);
        await writeSlurmUsage(db, batch.slurmUsage);
        await writeAudit(db, batch.audits, { get: (e) => written.get(e) ?? this.summaryRows.get(e), set: (e, id) => written.set(e, id) });
        await db.exec('COMMIT');
        for (const [entry, id] of written) this.summaryRows.set(entry, id); // a row id only once its row is there
      } catch (error) {
        await db.exec('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } catch (error) {
      await this.writeFailed(error, batch);
      return;
    }
    if (this.trouble) this.recovered(batch.samples.length - fresh.samples.length);
    if (this.now() - this.lastPrune >= PRUNE_EVERY_MS) await this.prune();
  }

  /** Turn pending ticks into accounted samples, in tick order. */
  private account(ticks: PendingTick[]) {
    const samples: AccountedSample[] = [];
    const gpus: Array<{ gpu: number; uuid: string; name: string; memoryTotal: number; at: number }> = [];
    const processJobs = new Map<string, { id: string; owner: string; command: string; gpu: number; first: number; last: number }>();
    const containers = new Map<string, ContainerSeen>();
    for (const { snapshot, owners } of ticks) {
      const t = snapshot.takenAt;
      const dt = tickSeconds(snapshot.intervalMs, snapshot.nominalIntervalMs);
      for (const g of snapshot.gpus) {
        const id = `${g.uuid}\0${g.name}`;
        if (g.uuid && this.knownGpus.get(g.index) !== id) {
          this.knownGpus.set(g.index, id);
          gpus.push({ gpu: g.index, uuid: g.uuid, name: g.name, memoryTotal: g.memoryTotal, at: t });
        }
      }
      const gpuByIndex = new Map(snapshot.gpus.map((g) => [g.index, g]));
      const inputs: ProcessSample[] = snapshot.processes.map((p, i) => {
        const mine = owners?.[i] ?? null;
        // a job's processes all count for its owner, so by-user and by-job totals agree
        const user = mine?.owner ?? p.user ?? (p.uid !== null ? `uid ${p.uid}` : 'unknown');
        const job = mine?.jobId ?? `p${p.pid}`;
        if (!mine) {
          const known = processJobs.get(job);
          if (known) known.last = t;
          else processJobs.set(job, { id: job, owner: user, command: (p.argv.length ? p.argv.join(' ') : p.command) ?? '', gpu: p.gpuIndex, first: t, last: t });
        }
        const inContainer = p.context?.container;
        const container = inContainer ? inContainer.id.slice(0, 12) : NO_CONTAINER;
        if (inContainer && !containers.has(container)) {
          containers.set(container, { id: container, runtime: inContainer.runtime, fullId: inContainer.id, name: inContainer.name, startedBy: p.context?.containerUser ?? null, at: t });
        }
        const gpuShare = p.gpuInstanceId === null ? 1 : gpuShareOfPlace(gpuByIndex.get(p.gpuIndex), p.gpuInstanceId);
        return { gpu: p.gpuIndex, pid: p.pid, user, job, smPercent: p.smPercent, usedMemory: p.usedMemory, container, gpuInstanceId: p.gpuInstanceId, gpuShare };
      });
      samples.push(...accountTick(t, dt, inputs));
    }
    return { samples, gpus, processJobs: [...processJobs.values()], containers: [...containers.values()] };
  }

  /** Keep the batch for the next flush (bounded), and say once that usage is not being recorded, and why. */
  private async writeFailed(error: unknown, batch: StoreBatch): Promise<void> {
    let message = errorText(error);
    if (isCorruption(error) && this.options.onCorrupt !== 'fail' && this.database) {
      await this.database.close().catch(() => undefined);
      this.database = null;
      const aside = moveAside(this.options.path);
      const salvage = await salvageInto(aside, this.options.path).catch((e: unknown) => `Nothing could be recovered from it (${errorText(e)}).`);
      this.notice(`The usage database ${this.options.path} is damaged (${message}); kept it as ${aside} and started a fresh one. ${salvage}`);
      try {
        this.database = await openDatabase(this.options, (m) => this.notice(m));
        this.unwritten = batch; // into the fresh file with the next flush
        this.droppedSamples += boundBatch(batch, this.options.keptSamples ?? DEFAULT_KEPT_SAMPLES).samples;
        return;
      } catch (reopen) {
        message = errorText(reopen); // the fresh file cannot be opened either: that is the trouble now
      }
    }
    this.unwritten = batch;
    const lost = boundBatch(batch, this.options.keptSamples ?? DEFAULT_KEPT_SAMPLES);
    const firstDrop = lost.samples > 0 && this.droppedSamples === 0;
    this.droppedSamples += lost.samples;
    const problem = this.database ? `writes fail (${message})` : `it cannot be opened (${message})`;
    if (this.trouble?.problem === problem && !firstDrop) return;
    this.trouble = { problem, since: this.trouble?.since ?? Date.now() };
    this.notice(storeTroubleLine(this.status()));
    this.emitStatus();
  }

  /** Writes work again: everything kept went in with this flush. */
  private recovered(kept: number): void {
    const since = new Date(this.trouble!.since).toISOString();
    this.trouble = null;
    const dropped = this.droppedSamples > 0 ? `; ${this.droppedSamples} older samples were dropped while it could not` : '';
    this.notice(`Usage is recorded again in ${this.options.path}: the ${kept} samples kept since ${since} are written${dropped}.`);
    this.emitStatus();
  }

  private emitStatus(): void {
    this.statusListeners.emit(this.status());
  }


  private notice(message: string): void {
    this.notices.push(message);
    if (this.options.onNotice) this.options.onNotice(message);
    else console.warn(`gpushare: ${message}`);
  }

  /** Drop what is older than the retention windows. */
  async prune(now = this.now()): Promise<void> {
    this.lastPrune = now;
    if (!this.database) return; // nothing to prune in a file that is not open
    const r = this.retention;
    await this.db.run('DELETE FROM samples WHERE t < ?', [now - r.rawMs]);
    await this.db.run('DELETE FROM usage_minute WHERE bucket < ?', [now - r.minuteMs - MINUTE_MS]);
    await this.db.run('DELETE FROM usage_hour WHERE bucket < ?', [now - r.hourMs - HOUR_MS]);
    await this.db.run('DELETE FROM usage_day WHERE bucket < ?', [now - r.dayMs - DAY_MS]);
    await this.db.run('DELETE FROM events WHERE at < ?', [now - r.hourMs]);
    await this.db.run('DELETE FROM audit WHERE at < ?', [now - r.hourMs]);
    await this.db.run('DELETE FROM slurm_usage WHERE end < ?', [now - r.hourMs]);
  }

  /** Flush what is left and close. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush().catch(() => undefined);
    this.closed = true;
    const lost = this.unwritten?.samples.length ?? 0;
    if (lost > 0) this.notice(`${lost} usage samples could not be written to ${this.options.path} before the engine stopped (${this.trouble?.problem ?? 'writes failed'}): they are lost.`);
    await this.database?.close();
  }
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The sentence for a store in trouble (the console's banner says the same). */
function storeTroubleLine(status: StoreStatus): string {
  return storeTrouble(status) ?? `Usage is recorded in ${status.path}.`;
}
