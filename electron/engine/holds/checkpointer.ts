// Parking: checkpoint a process's GPU memory to host memory and restore it later on
// the same GPU, with the driver's cuCheckpointProcess* calls (recent drivers only).
// The scheduler uses this interface and never knows which implementation it has.

export interface ProcessCheckpointer {
  /** null when parking works here; otherwise why not, as a sentence for the user. */
  supported(): string | null;
  /** cuCheckpointProcessLock: stop the process's CUDA work from making progress. */
  lock(pid: number): Promise<void>;
  /** cuCheckpointProcessCheckpoint: move its GPU memory to the host. */
  checkpoint(pid: number): Promise<void>;
  /** cuCheckpointProcessRestore: bring its memory back onto the same GPU. */
  restore(pid: number): Promise<void>;
  /** cuCheckpointProcessUnlock: let it run again. */
  unlock(pid: number): Promise<void>;
}

/** The CUDA error name of a failed checkpoint call ("CUDA_ERROR_OUT_OF_MEMORY"), if it has one. */
export function checkpointErrorName(error: unknown): string | null {
  const name = (error as { codeName?: unknown } | null)?.codeName;
  return typeof name === 'string' ? name : null;
}

export const CHECKPOINT_UNAVAILABLE = "parking is off in this engine (it was started without a checkpointer).";

/** Parking refused with a clear reason (no addon, or tests that want no checkpointing). */
export class UnavailableCheckpointer implements ProcessCheckpointer {
  supported(): string | null {
    return CHECKPOINT_UNAVAILABLE;
  }

  private refuse(): Promise<void> {
    return Promise.reject(new Error(CHECKPOINT_UNAVAILABLE));
  }

  lock = (): Promise<void> => this.refuse();
  checkpoint = (): Promise<void> => this.refuse();
  restore = (): Promise<void> => this.refuse();
  unlock = (): Promise<void> => this.refuse();
}
