// The guardian: a tiny detached process that lets go of every hold its engine has
// (SIGCONT what it stopped, restore what it parked) once the engine is gone — dead, or
// stopped or hung, which it tells by the engine's heartbeat no longer changing.
//   node guardian.js <enginePid> <engineStartTicks> <recordFile> [--stale-ms N] [--cuda-lib PATH]
//   node guardian.js --release <recordFile> [--cuda-lib PATH]   (once, for the next start; prints the pids let go)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readProcStatus, sameProcessAlive } from '../proc/proc-status.js';
import { releaseHolds } from './release-holds.js';
import { ROOT_PATH } from '../root-env.js';
import {
  heartbeatPath,
  readRecordOwner,
  readReleased,
  readSuspendRecord,
  sameOwner,
  writeReleased,
  writeSuspendRecord,
  type RecordOwner,
  type SuspendedEntry,
} from './suspend-record.js';

export const GUARDIAN_POLL_MS = 200;
/** After its engine died, how often the guardian tries again to restore a park that did not fit back on its GPU. */
export const GUARDIAN_RETRY_MS = 1000;
/** An engine whose heartbeat has not changed for this long counts as gone (stopped by Ctrl-Z, or hung). */
export const GUARDIAN_STALE_MS = 5000;

export interface GuardianOptions {
  recordPath: string;
  staleAfterMs?: number;
  /** libcuda to restore parked processes with; default the system's. */
  cudaLibraryPath?: string;
}

export interface GuardianHandle {
  readonly pid: number;
  /** False once the guardian process has exited (killed, or crashed). */
  alive(): boolean;
  /** The engine is stopping cleanly (and has let go of everything itself). */
  stop(): void;
}

const script = (): string => fileURLToPath(import.meta.url);

/** What the guardian needs of the engine's own environment (root's, for the daemon): where the (simulated) driver is. */
function guardianEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.getuid?.() === 0 ? ROOT_PATH : (process.env.PATH ?? '/usr/bin:/bin'), ELECTRON_RUN_AS_NODE: '1' };
  for (const name of ['GPUSHARE_FAKEGPU_STATE', 'GPUSHARE_CUDA_LIB', 'LD_LIBRARY_PATH']) if (process.env[name]) env[name] = process.env[name];
  return env;
}

const cudaArgs = (cudaLibraryPath: string | undefined): string[] => (cudaLibraryPath ? ['--cuda-lib', cudaLibraryPath] : []);

/** Start the guardian for this process; it exits by itself once this process is gone. */
export function spawnGuardian(options: GuardianOptions): GuardianHandle {
  const me = readProcStatus(process.pid);
  if (!me) throw new Error('Cannot read /proc for the engine itself; the suspend guardian needs /proc.');
  const args = [script(), String(process.pid), String(me.startTicks), options.recordPath, '--stale-ms', String(options.staleAfterMs ?? GUARDIAN_STALE_MS), ...cudaArgs(options.cudaLibraryPath)];
  const child: ChildProcess = spawn(process.execPath, args, {
    detached: true, // its own session: a Ctrl-C, a Ctrl-Z or a killed process group does not take it along
    stdio: 'ignore',
    env: guardianEnv(),
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  child.once('error', () => (exited = true));
  child.unref();
  return {
    pid: child.pid ?? -1,
    alive: () => !exited,
    stop: () => {
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}

/**
 * Let go of what a previous engine left in the record, once, in a guardian of its own
 * (the checkpoint calls are asynchronous; the caller is not). Returns the pids let go of;
 * holds that could not be let go of stay in the record.
 */
export function releaseRecordNow(recordPath: string, cudaLibraryPath?: string): number[] {
  const result = spawnSync(process.execPath, [script(), '--release', recordPath, ...cudaArgs(cudaLibraryPath)], {
    env: guardianEnv(),
    encoding: 'utf8',
    timeout: 60_000,
  });
  try {
    return (JSON.parse(result.stdout) as { released: number[] }).released;
  } catch {
    throw new Error(`Could not let go of what a previous engine left in ${recordPath}: ${result.stderr?.trim() || result.error?.message || `guardian exited ${result.status}`}`);
  }
}

interface ParsedArgs {
  positional: string[];
  staleMs: number;
  cudaLibraryPath?: string;
  release: boolean;
}

function parseArgs(args: string[]): ParsedArgs {
  const parsed: ParsedArgs = { positional: [], staleMs: GUARDIAN_STALE_MS, release: false };
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--stale-ms') parsed.staleMs = Number(args[++i]);
    else if (args[i] === '--cuda-lib') parsed.cudaLibraryPath = args[++i];
    else if (args[i] === '--release') parsed.release = true;
    else parsed.positional.push(args[i]);
  }
  return parsed;
}

const seqOf = (e: SuspendedEntry): string => `${e.pid}:${e.startTicks}:${e.seq ?? ''}`;

/** Run once for the next start: let go of every recorded hold, keep in the record only those that failed. */
async function releaseOnce(recordPath: string, cudaLibraryPath: string | undefined): Promise<void> {
  const outcome = await releaseHolds(readSuspendRecord(recordPath), { cudaLibraryPath });
  writeSuspendRecord(recordPath, outcome.failed.map((f) => f.entry));
  for (const f of outcome.failed) process.stderr.write(`pid ${f.entry.pid} (${f.entry.jobId}): ${f.reason}\n`);
  process.stdout.write(JSON.stringify({ released: outcome.released.map((e) => e.pid) }) + '\n');
}

function readBeat(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function guard(enginePid: number, engineStartTicks: number, recordPath: string, staleMs: number, cudaLibraryPath: string | undefined): void {
  const owner: RecordOwner = { engine: enginePid, engineStartTicks };
  const now = () => performance.now(); // monotonic: a wall-clock jump is not a stale heartbeat
  let beat = readBeat(heartbeatPath(recordPath));
  let beatChangedAt = now();
  // holds let go of while the engine was stopped: from an earlier guardian of this engine too
  const prior = readReleased(recordPath);
  const released = new Map<string, SuspendedEntry>(sameOwner(prior.owner, owner) ? prior.entries.map((e) => [seqOf(e), e]) : []);
  let busy = false;

  /** Let go of everything; a park that does not fit back yet is tried again until it does, its process exits, or a new engine takes the record over. */
  const engineGone = async (): Promise<void> => {
    let pending = readSuspendRecord(recordPath);
    for (;;) {
      const outcome = await releaseHolds(pending, { cudaLibraryPath });
      pending = outcome.failed.map((f) => f.entry);
      const ours = sameOwner(readRecordOwner(recordPath), owner); // a new engine's record is not ours to touch: it guards them now
      try {
        // done: the next start must not resume them again
        if (ours) writeSuspendRecord(recordPath, pending, owner);
      } catch {
        // a read-only or vanished directory: the start times still protect reused pids
      }
      if (pending.length === 0 || !ours) process.exit(0);
      await new Promise((r) => setTimeout(r, GUARDIAN_RETRY_MS));
    }
  };

  const engineStale = async (): Promise<void> => {
    const current = readSuspendRecord(recordPath);
    const fresh = current.filter((e) => !released.has(seqOf(e)));
    if (fresh.length === 0) return;
    const outcome = await releaseHolds(fresh, { cudaLibraryPath });
    for (const e of outcome.released) released.set(seqOf(e), e);
    // only what the engine still records: what it has acknowledged drops out
    const still = new Set(current.map(seqOf));
    for (const key of [...released.keys()]) if (!still.has(key)) released.delete(key);
    writeReleased(recordPath, owner, [...released.values()]);
  };

  const poll = async (): Promise<void> => {
    if (!sameProcessAlive(enginePid, engineStartTicks)) return engineGone();
    const latest = readBeat(heartbeatPath(recordPath));
    if (latest !== beat) {
      beat = latest;
      beatChangedAt = now();
      return;
    }
    if (now() - beatChangedAt >= staleMs) await engineStale();
  };

  process.on('SIGTERM', () => process.exit(0)); // a clean engine stop
  process.on('SIGINT', () => undefined);
  process.on('SIGHUP', () => undefined);
  setInterval(() => {
    if (busy) return;
    busy = true;
    poll().then(
      () => (busy = false),
      (error: unknown) => {
        busy = false;
        process.stderr.write(`guardian: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  }, GUARDIAN_POLL_MS);
}

function runGuardian(args: string[]): void {
  const parsed = parseArgs(args);
  if (parsed.release) {
    if (!parsed.positional[0]) {
      process.stderr.write('usage: guardian.js --release <recordFile> [--cuda-lib PATH]\n');
      process.exit(2);
    }
    void releaseOnce(parsed.positional[0], parsed.cudaLibraryPath);
    return;
  }
  const [enginePid, engineStartTicks, recordPath] = [Number(parsed.positional[0]), Number(parsed.positional[1]), parsed.positional[2]];
  if (!Number.isInteger(enginePid) || !Number.isFinite(engineStartTicks) || !recordPath || !(parsed.staleMs > 0)) {
    process.stderr.write('usage: guardian.js <enginePid> <engineStartTicks> <recordFile> [--stale-ms N] [--cuda-lib PATH]\n');
    process.exit(2);
  }
  guard(enginePid, engineStartTicks, recordPath, parsed.staleMs, parsed.cudaLibraryPath);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) runGuardian(process.argv.slice(2));
