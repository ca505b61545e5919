// The driver's process checkpointing (cuCheckpointProcess*), through the same .node as
// NVML (native/nvml/src/checkpoint.cc). libcuda.so.1, or GPUSHARE_CUDA_LIB, is opened on
// first use; failures become CudaCheckpointError with the call and the CUDA error name.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { nvmlAddonPath } from '../paths.js';

/** CUprocessState, as the driver reports it for a pid. */
export type CudaProcessState = 'running' | 'locked' | 'checkpointed' | 'failed';

/** unsupported: the driver lacks the calls; call-failed: a call returned an error; addon-missing: the .node is not built. */
export type CudaCheckpointErrorKind = 'unsupported' | 'call-failed' | 'addon-missing';

export class CudaCheckpointError extends Error {
  override readonly name = 'CudaCheckpointError';
  readonly kind: CudaCheckpointErrorKind;
  /** The driver entry point, e.g. "cuCheckpointProcessRestore". */
  readonly call: string;
  /** CUresult, e.g. 2. */
  readonly code: number;
  /** e.g. "CUDA_ERROR_OUT_OF_MEMORY". */
  readonly codeName: string;

  constructor(message: string, details: { kind: CudaCheckpointErrorKind; call: string; code: number; codeName: string }, options?: ErrorOptions) {
    super(message, options);
    this.kind = details.kind;
    this.call = details.call;
    this.code = details.code;
    this.codeName = details.codeName;
  }
}

/** What the .node exports for checkpointing. */
interface CheckpointNative {
  checkpointSupported(libraryPath?: string): string | null;
  checkpointState(pid: number): CudaProcessState;
  checkpointRestoreThreadId(pid: number): number | null;
  checkpointLock(pid: number, timeoutMs: number): Promise<void>;
  checkpointCheckpoint(pid: number): Promise<void>;
  checkpointRestore(pid: number): Promise<void>;
  checkpointUnlock(pid: number): Promise<void>;
}

export interface CudaCheckpointBinding {
  /** null when the driver has the calls and cuInit worked; else why not, as a sentence. */
  supported(): string | null;
  state(pid: number): CudaProcessState;
  /** The target's restore thread (null where the driver lacks the call). */
  restoreThreadId(pid: number): number | null;
  /** RUNNING → LOCKED: its CUDA calls block, outstanding work completes. timeoutMs 0: none. */
  lock(pid: number, timeoutMs: number): Promise<void>;
  /** LOCKED → CHECKPOINTED: its device memory moves to host memory. */
  checkpoint(pid: number): Promise<void>;
  /** CHECKPOINTED → LOCKED, on the same GPUs; CUDA_ERROR_OUT_OF_MEMORY leaves it CHECKPOINTED. */
  restore(pid: number): Promise<void>;
  /** LOCKED → RUNNING. */
  unlock(pid: number): Promise<void>;
}

const KINDS: readonly CudaCheckpointErrorKind[] = ['unsupported', 'call-failed', 'addon-missing'];

function asCheckpointError(error: unknown): unknown {
  if (error instanceof CudaCheckpointError || !(error instanceof Error)) return error;
  const e = error as Error & { kind?: unknown; call?: unknown; code?: unknown; codeName?: unknown };
  if (typeof e.call !== 'string' || typeof e.code !== 'number' || typeof e.codeName !== 'string') return error;
  const kind = KINDS.includes(e.kind as CudaCheckpointErrorKind) ? (e.kind as CudaCheckpointErrorKind) : 'call-failed';
  return new CudaCheckpointError(e.message, { kind, call: e.call, code: e.code, codeName: e.codeName }, { cause: error });
}

function guard<T>(body: () => T): T {
  try {
    return body();
  } catch (error) {
    throw asCheckpointError(error);
  }
}

async function guardAsync(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    throw asCheckpointError(error);
  }
}

let native: CheckpointNative | null = null;

function loadNative(): CheckpointNative {
  if (native) return native;
  const path = nvmlAddonPath();
  const missing = (why: string) =>
    new CudaCheckpointError(`${why} Run \`npm run build:native\`.`, { kind: 'addon-missing', call: 'dlopen', code: 801, codeName: 'CUDA_ERROR_NOT_SUPPORTED' });
  if (!existsSync(path)) throw missing(`The native addon is not built (${path} is missing).`);
  const loaded = createRequire(import.meta.url)(path) as Partial<CheckpointNative>;
  if (typeof loaded.checkpointSupported !== 'function') throw missing(`The native addon at ${path} is out of date (it has no checkpoint calls).`);
  native = loaded as CheckpointNative;
  return native;
}

/**
 * The checkpoint calls of libraryPath (else GPUSHARE_CUDA_LIB, else libcuda.so.1). One
 * library per process: the last one asked for serves every binding.
 */
export function openCudaCheckpoint(libraryPath?: string): CudaCheckpointBinding {
  const n = guard(loadNative);
  const reason = guard(() => n.checkpointSupported(libraryPath));
  return {
    supported: () => reason,
    state: (pid) => guard(() => n.checkpointState(pid)),
    restoreThreadId: (pid) => guard(() => n.checkpointRestoreThreadId(pid)),
    lock: (pid, timeoutMs) => guardAsync(() => n.checkpointLock(pid, timeoutMs)),
    checkpoint: (pid) => guardAsync(() => n.checkpointCheckpoint(pid)),
    restore: (pid) => guardAsync(() => n.checkpointRestore(pid)),
    unlock: (pid) => guardAsync(() => n.checkpointUnlock(pid)),
  };
}
