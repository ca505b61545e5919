// The usage store: samples, rollups, jobs, events and the audit log in SQLite (WAL).
// Recording never touches the database: it appends to an in-memory batch, and a timer
// writes each batch in one transaction, so a sampling tick never waits on a disk and a
// crash loses at most the last flush interval.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Alert, AuditEntry, JobView } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { JobOwner, JobOwnership } from '../scheduler/ownership.js';
import { accountTick, NO_CONTAINER, tickSeconds, type AccountedSample, type ProcessSample } from './accounting.js';
import { migrate } from './migrations.js';
import { isCorruption, SqliteDb } from './sqlite.js';
import { rerollup, rollup, writeAudit, writeContainers, writeEvents, writeGpus, writeJobs, writeProcessJobs, writeRollup, writeSamples, type ContainerSeen } from './writers.js';

export { rerollup, rollup, writeRollup, type RollupRow, type RollupTable } from './writers.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export interface Retention {
  /** Raw per-process samples (default 48 hours). */
  rawMs: number;
  /** Per-minute rollups (default 30 days). */
  minuteMs: number;
  /** Per-hour rollups, events and the audit log (default a year). */
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

export class UsageDatabaseError extends Error {}

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
  private readonly jobSignatures = new Map<string, string>();
  private readonly knownGpus = new Map<number, string>();
  private ownership: Attribution | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private lastPrune = 0;
  private closed = false;
  readonly retention: Retention;
  readonly notices: string[] = [];

  private constructor(
    private database: SqliteDb,
    private readonly options: UsageStoreOptions,
  ) {
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    if (options.readOnly) return;
    const every = Math.min(1000, Math.max(10, options.flushIntervalMs ?? 250));
    this.timer = setInterval(() => void this.flush().catch(() => undefined), every);
    this.timer.unref();
  }

  static async open(options: UsageStoreOptions): Promise<UsageStore> {
    const notices: string[] = [];
    const db = await openDatabase(options, (message) => notices.push(message));
    const store = new UsageStore(db, options);
    for (const message of notices) store.notice(message);
    return store;
  }

  get db(): SqliteDb {
    return this.database;
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
    const signature = `${job.state}|${job.history.length}|${last?.at}|${job.gpu}|${job.pid}|${job.priority}|${job.mode}|${job.memoryQuotaBytes}`;
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

  recordAudit(entry: AuditEntry): void {
    this.audits.push(entry);
  }

  // ---- writing ----

  /** Write everything recorded so far in one transaction (one flush at a time). */
  flush(): Promise<void> {
    if (this.options.readOnly) return Promise.resolve();
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.ticks.length === 0 && this.jobs.size === 0 && this.events.length === 0 && this.audits.length === 0) {
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
    this.ticks = [];
    this.jobs = new Map();
    this.events = [];
    this.audits = [];
    const batch = this.account(ticks);
    try {
      await this.db.exec('BEGIN IMMEDIATE');
      try {
        await writeSamples(this.db, batch.samples);
        const minutes = rollup(batch.samples, MINUTE_MS);
        const hours = rerollup(minutes, HOUR_MS);
        await writeRollup(this.db, 'usage_minute', minutes);
        await writeRollup(this.db, 'usage_hour', hours);
        await writeRollup(this.db, 'usage_day', rerollup(hours, DAY_MS));
        await writeGpus(this.db, batch.gpus);
        await writeProcessJobs(this.db, batch.processJobs);
        await writeContainers(this.db, batch.containers);
        await writeJobs(this.db, jobs);
        await writeEvents(this.db, events);
        await writeAudit(this.db, audits);
        await this.db.exec('COMMIT');
      } catch (error) {
        await this.db.exec('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } catch (error) {
      await this.writeFailed(error, batch.samples.length);
      return;
    }
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
        return { gpu: p.gpuIndex, pid: p.pid, user, job, smPercent: p.smPercent, usedMemory: p.usedMemory, container };
      });
      samples.push(...accountTick(t, dt, inputs));
    }
    return { samples, gpus, processJobs: [...processJobs.values()], containers: [...containers.values()] };
  }

  private async writeFailed(error: unknown, lost: number): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    if (isCorruption(error) && this.options.onCorrupt !== 'fail') {
      await this.database.close().catch(() => undefined);
      const aside = moveAside(this.options.path);
      this.notice(`The usage database ${this.options.path} is damaged (${message}); kept it as ${aside} and started a fresh one.`);
      this.database = await openDatabase(this.options, (m) => this.notice(m));
      return;
    }
    this.notice(`Could not write ${lost} usage samples to ${this.options.path}: ${message}`);
  }

  private notice(message: string): void {
    this.notices.push(message);
    if (this.options.onNotice) this.options.onNotice(message);
    else console.warn(`gpushare: ${message}`);
  }

  /** Drop what is older than the retention windows. */
  async prune(now = this.now()): Promise<void> {
    this.lastPrune = now;
    const r = this.retention;
    await this.db.run('DELETE FROM samples WHERE t < ?', [now - r.rawMs]);
    await this.db.run('DELETE FROM usage_minute WHERE bucket < ?', [now - r.minuteMs - MINUTE_MS]);
    await this.db.run('DELETE FROM usage_hour WHERE bucket < ?', [now - r.hourMs - HOUR_MS]);
    await this.db.run('DELETE FROM usage_day WHERE bucket < ?', [now - r.dayMs - DAY_MS]);
    await this.db.run('DELETE FROM events WHERE at < ?', [now - r.hourMs]);
    await this.db.run('DELETE FROM audit WHERE at < ?', [now - r.hourMs]);
  }

  /** Flush what is left and close. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush().catch(() => undefined);
    this.closed = true;
    await this.database.close();
  }
}

// ---- opening ----

async function openDatabase(options: UsageStoreOptions, notice: (message: string) => void): Promise<SqliteDb> {
  mkdirSync(dirname(options.path), { recursive: true });
  try {
    return await openAndMigrate(options.path);
  } catch (error) {
    if (!isCorruption(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    if (options.onCorrupt === 'fail') {
      throw new UsageDatabaseError(`The usage database ${options.path} is damaged (${reason}). The engine (gpushare serve or the console) keeps it aside and starts a fresh one when it next opens it.`);
    }
    const aside = moveAside(options.path);
    notice(`The usage database ${options.path} is damaged (${reason}); kept it as ${aside} and started a fresh one.`);
    return openAndMigrate(options.path);
  }
}

async function openAndMigrate(path: string): Promise<SqliteDb> {
  const db = await SqliteDb.open(path);
  try {
    await db.exec('PRAGMA busy_timeout = 5000');
    await db.get('PRAGMA journal_mode = WAL'); // the first read of the file: a damaged header fails here
    await db.exec('PRAGMA synchronous = NORMAL'); // WAL + NORMAL: a process crash loses nothing committed
    await db.get('SELECT count(*) AS n FROM sqlite_master');
    await migrate(db);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** Rename the file (and its WAL) to <path>.corrupt-<timestamp>; returns the new name. */
function moveAside(path: string): string {
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  if (existsSync(path)) renameSync(path, aside);
  if (existsSync(`${path}-wal`)) renameSync(`${path}-wal`, `${aside}-wal`);
  rmSync(`${path}-shm`, { force: true });
  return aside;
}
