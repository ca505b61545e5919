// Who decides an MPS daemon's life (the one owner): the engine starts a GPU's daemon for the first job in
// mode mps, and a slice's for its first client, and stops it when the last client ends; a daemon a person
// started (`gpushare mps start`, the console's MPS switch) runs until they stop it; another user's is never
// touched. Why a daemon runs is kept beside its pipe and log directories (the runtime dir outlives the
// engine, like the daemon), so a restarted engine still knows whom it runs for. A stop that has not finished
// (the real control daemon exits after `quit` returns) holds back the next start until the old one is gone.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MpsGpuStatus, MpsSliceStatus, MpsStartedFor } from '../../../shared/spatial.js';
import { mpsDirectories, mpsSliceDirectories, sliceLabel, type GpuRef, type MpsControl, type SliceRef } from './mps-control.js';

/** One daemon: a whole GPU's, or the one inside a MIG slice. */
export type MpsDaemonRef = { gpu: GpuRef; slice?: undefined } | { slice: SliceRef; gpu?: undefined };

export interface MpsDaemonsOptions {
  control: MpsControl;
  /** The engine's runtime directory: the daemons' own directories are under its mps/ (mps-control.ts). */
  runtimeDir: string;
}

interface StartedRecord {
  startedFor: MpsStartedFor;
  at: string;
}

export class MpsDaemons {
  readonly control: MpsControl;
  /** Daemons asked to stop that still ran when last looked at, by key: when the stop was asked. */
  private readonly stopping = new Map<string, number>();

  constructor(private readonly options: MpsDaemonsOptions) {
    this.control = options.control;
  }

  status(gpus: readonly GpuRef[]): MpsGpuStatus[] {
    return this.control.status(gpus).map((s, i) => this.withReason(s, { gpu: gpus[i] }));
  }

  sliceStatus(slices: readonly SliceRef[]): MpsSliceStatus[] {
    return this.control.sliceStatus(slices).map((s, i) => this.withReason(s, { slice: slices[i] }));
  }

  /** A job is about to become a client: its daemon is started for jobs unless one of ours already runs (kept as it was started). */
  startForJob(daemon: MpsDaemonRef): void {
    this.refuseWhileStopping(daemon);
    if (this.statusOf(daemon).state === 'ours') return;
    this.start(daemon);
    this.keep(daemon, 'jobs');
  }

  /** A person asks for the GPU's daemon: it runs until they stop it, also when jobs started it. */
  startOnRequest(gpu: GpuRef): MpsGpuStatus {
    this.refuseWhileStopping({ gpu });
    const status = this.control.start(gpu);
    this.keep({ gpu }, 'request');
    return this.withReason(status, { gpu });
  }

  stopOnRequest(daemon: MpsDaemonRef): MpsGpuStatus {
    return this.withReason(this.stop(daemon), daemon);
  }

  /**
   * A client of this daemon ended (`others`: live jobs still on it): the last one stops a daemon started for
   * jobs; a person's, or one that is not ours, stays. True when it was stopped.
   */
  leave(daemon: MpsDaemonRef, others: number): boolean {
    if (others > 0 || this.stopping.has(key(daemon))) return false;
    const now = this.statusOf(daemon);
    if (now.state === 'off') this.forget(daemon); // stopped by hand meanwhile: the reason went with it
    if (now.state !== 'ours' || this.startedFor(daemon) !== 'jobs') return false;
    this.stop(daemon);
    return true;
  }

  /**
   * A new engine, its jobs back: a daemon its runtime dir says was started for jobs and that no client uses
   * (`clients`) lost its last one while no engine watched, so no end will stop it: stopped now. Only a daemon
   * recorded as the jobs' (never one of unknown origin). True when it was stopped.
   */
  releaseIfUnused(daemon: MpsDaemonRef, clients: number): boolean {
    return this.recorded(daemon) === 'jobs' && this.leave(daemon, clients);
  }

  /** Whether any daemon is recorded as started for jobs (nothing else for a new engine to look at). */
  anyStartedForJobs(): boolean {
    let dirs: string[];
    try {
      dirs = readdirSync(join(this.options.runtimeDir, 'mps'));
    } catch {
      return false; // no daemon ever started here
    }
    return dirs.some((dir) => this.readRecord(join(this.options.runtimeDir, 'mps', dir, RECORD)) === 'jobs');
  }

  /** Why no client may start on this daemon now (it is still stopping), or null; a finished stop is forgotten here. */
  stoppingBlock(daemon: MpsDaemonRef): string | null {
    const since = this.stopping.get(key(daemon));
    if (since === undefined) return null;
    if (this.statusOf(daemon).state === 'ours') {
      return `the MPS daemon for ${label(daemon)} is still stopping (asked ${Math.round((Date.now() - since) / 1000)} s ago); a new client waits until it is gone`;
    }
    this.stopping.delete(key(daemon));
    return null;
  }

  private refuseWhileStopping(daemon: MpsDaemonRef): void {
    const block = this.stoppingBlock(daemon);
    if (block) throw new Error(`Cannot start MPS on ${label(daemon)} yet: ${block}.`);
  }

  private start(daemon: MpsDaemonRef): MpsGpuStatus {
    return daemon.slice ? this.control.startSlice(daemon.slice) : this.control.start(daemon.gpu);
  }

  private stop(daemon: MpsDaemonRef): MpsGpuStatus {
    const status = daemon.slice ? this.control.stopSlice(daemon.slice) : this.control.stop(daemon.gpu);
    this.forget(daemon);
    if (status.state === 'ours') this.stopping.set(key(daemon), Date.now()); // quit asked, the daemon not gone yet
    return status;
  }

  private statusOf(daemon: MpsDaemonRef): MpsGpuStatus {
    return daemon.slice ? this.control.sliceStatus([daemon.slice])[0] : this.control.status([daemon.gpu])[0];
  }

  /** Ours: why it runs, or that it is stopping (quit sent, not gone yet: it serves nobody new). */
  private withReason<T extends MpsGpuStatus>(status: T, daemon: MpsDaemonRef): T {
    const { startedFor: _, ...rest } = status;
    if (status.state !== 'ours') return rest as T;
    if (this.stopping.has(key(daemon))) return { ...rest, message: `The MPS daemon for ${label(daemon)} is stopping: quit was sent, and no job becomes its client until it is gone.` } as T;
    return { ...rest, startedFor: this.startedFor(daemon) } as T;
  }

  /** Why our daemon runs; with no record (started outside this engine): a slice's only ever starts for jobs, a GPU's is kept. */
  private startedFor(daemon: MpsDaemonRef): MpsStartedFor {
    return this.recorded(daemon) ?? (daemon.slice ? 'jobs' : 'request');
  }

  private recorded(daemon: MpsDaemonRef): MpsStartedFor | null {
    return this.readRecord(this.recordPath(daemon));
  }

  private readRecord(path: string): MpsStartedFor | null {
    try {
      const kept = JSON.parse(readFileSync(path, 'utf8')) as Partial<StartedRecord>;
      if (kept.startedFor === 'jobs' || kept.startedFor === 'request') return kept.startedFor;
    } catch {
      // none, or unreadable: as if none
    }
    return null;
  }

  private keep(daemon: MpsDaemonRef, startedFor: MpsStartedFor): void {
    const path = this.recordPath(daemon);
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    const record: StartedRecord = { startedFor, at: new Date().toISOString() };
    writeFileSync(`${path}.tmp`, JSON.stringify(record) + '\n', { mode: 0o644 });
    renameSync(`${path}.tmp`, path); // a crash mid-write leaves the old reason, never half of one
  }

  private forget(daemon: MpsDaemonRef): void {
    rmSync(this.recordPath(daemon), { force: true });
  }

  /** Beside the daemon's pipe and log directories. */
  private recordPath(daemon: MpsDaemonRef): string {
    const { pipeDir } = daemon.slice ? mpsSliceDirectories(this.options.runtimeDir, daemon.slice) : mpsDirectories(this.options.runtimeDir, daemon.gpu.index);
    return join(dirname(pipeDir), RECORD);
  }
}

const RECORD = 'started-for.json';
const key = (daemon: MpsDaemonRef): string => (daemon.slice ? `gpu${daemon.slice.gpu}-gi${daemon.slice.gpuInstanceId}` : `gpu${daemon.gpu.index}`);
const label = (daemon: MpsDaemonRef): string => (daemon.slice ? sliceLabel(daemon.slice) : `GPU ${daemon.gpu.index}`);
