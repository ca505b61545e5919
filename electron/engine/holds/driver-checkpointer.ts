// Parking through the driver: ProcessCheckpointer over cuCheckpointProcess* (the
// native addon's libcuda lookup). On the simulated driver the same calls reach the
// fake libcuda.so.1, which moves the target's memory accounting to "host" and back.
import { CudaCheckpointError, openCudaCheckpoint, type CudaCheckpointBinding, type CudaProcessState } from '../gpu/cuda-checkpoint.js';
import type { ProcessCheckpointer } from './checkpointer.js';

/** How long a lock may wait for the target's outstanding GPU work. */
export const LOCK_TIMEOUT_MS = 10_000;

export class DriverCheckpointer implements ProcessCheckpointer {
  private constructor(
    private readonly binding: CudaCheckpointBinding | null,
    private readonly reason: string | null,
    private readonly lockTimeoutMs: number,
  ) {}

  /** Never throws: a missing addon or driver becomes the supported() sentence. */
  static open(options: { libraryPath?: string; lockTimeoutMs?: number } = {}): DriverCheckpointer {
    const timeout = options.lockTimeoutMs ?? LOCK_TIMEOUT_MS;
    try {
      const binding = openCudaCheckpoint(options.libraryPath);
      return new DriverCheckpointer(binding, binding.supported(), timeout);
    } catch (error) {
      return new DriverCheckpointer(null, error instanceof Error ? error.message : String(error), timeout);
    }
  }

  supported(): string | null {
    return this.reason;
  }

  state(pid: number): CudaProcessState {
    return this.use().state(pid);
  }

  // async: a refusal from use() becomes a rejection, as the interface promises
  lock = async (pid: number): Promise<void> => this.use().lock(pid, this.lockTimeoutMs);
  checkpoint = async (pid: number): Promise<void> => this.use().checkpoint(pid);
  restore = async (pid: number): Promise<void> => this.use().restore(pid);
  unlock = async (pid: number): Promise<void> => this.use().unlock(pid);

  private use(): CudaCheckpointBinding {
    if (!this.binding || this.reason) {
      throw new CudaCheckpointError(this.reason ?? 'not supported', { kind: 'unsupported', call: 'cuCheckpointProcessLock', code: 801, codeName: 'CUDA_ERROR_NOT_SUPPORTED' });
    }
    return this.binding;
  }
}
