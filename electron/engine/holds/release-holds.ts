// Letting go of every hold an engine left: SIGCONT what it stopped, and restore then
// unlock what it parked (through the same libcuda the engine parked with), so that no
// job stays frozen or checkpointed after its engine is gone.
import { sameProcessAlive } from '../proc/proc-status.js';
import { continueHeld, holdOf, type SuspendedEntry } from './suspend-record.js';

export interface ReleaseOutcome {
  /** Holds let go of (or whose process had already gone). */
  released: SuspendedEntry[];
  /** Holds still in place, with why: the next start tries again. */
  failed: Array<{ entry: SuspendedEntry; reason: string }>;
}

export interface ReleaseOptions {
  /** libcuda for the checkpoint calls (the simulated driver's on simulated GPUs); default the system's. */
  cudaLibraryPath?: string;
  procRoot?: string;
}

const why = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export async function releaseHolds(entries: readonly SuspendedEntry[], options: ReleaseOptions = {}): Promise<ReleaseOutcome> {
  const outcome: ReleaseOutcome = { released: [], failed: [] };
  const parked: SuspendedEntry[] = [];
  for (const entry of entries) {
    if (holdOf(entry) === 'park') parked.push(entry);
    else {
      continueHeld(entry, options.procRoot);
      outcome.released.push(entry);
    }
  }
  const live = parked.filter((e) => sameProcessAlive(e.pid, e.startTicks, options.procRoot));
  outcome.released.push(...parked.filter((e) => !live.includes(e))); // exited: nothing left on the GPU to restore
  if (live.length === 0) return outcome;
  let cuda: Awaited<ReturnType<typeof openCuda>>;
  try {
    cuda = await openCuda(options.cudaLibraryPath);
  } catch (error) {
    for (const entry of live) outcome.failed.push({ entry, reason: why(error) });
    return outcome;
  }
  for (const entry of live) {
    try {
      await unpark(cuda, entry.pid);
      outcome.released.push(entry);
    } catch (error) {
      outcome.failed.push({ entry, reason: why(error) });
    }
  }
  return outcome;
}

/** The checkpoint calls, loaded only when something is parked (the guardian stays light otherwise). */
async function openCuda(libraryPath: string | undefined) {
  const { openCudaCheckpoint } = await import('../gpu/cuda-checkpoint.js');
  const cuda = openCudaCheckpoint(libraryPath);
  const unsupported = cuda.supported();
  if (unsupported) throw new Error(`cannot restore parked processes: ${unsupported}`);
  return cuda;
}

/** From wherever the park stopped: checkpointed → restore → unlock; locked → unlock. */
async function unpark(cuda: Awaited<ReturnType<typeof openCuda>>, pid: number): Promise<void> {
  let state = cuda.state(pid);
  if (state === 'checkpointed') {
    await cuda.restore(pid);
    state = cuda.state(pid);
  }
  if (state === 'locked') await cuda.unlock(pid);
}
