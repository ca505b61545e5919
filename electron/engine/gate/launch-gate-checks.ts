// Argument checks of the launch gate's API: a bad value is a LaunchGateError naming it, before anything is written.
import { LaunchGateError } from './launch-gate-files.js';
import * as L from './launch-gate-layout.js';

export type JobPriority = 'high' | 'normal' | 'best-effort';
export const JOB_PRIORITIES: readonly JobPriority[] = ['high', 'normal', 'best-effort'];

export const msToNs = (ms: number | undefined, fallback: bigint, what: string): bigint => {
  if (ms === undefined) return fallback;
  if (!Number.isFinite(ms) || ms <= 0) throw new LaunchGateError(`${what} must be a positive number of milliseconds (got ${ms}).`);
  return BigInt(Math.round(ms * 1e6));
};

export function checkSlot(slot: number): void {
  if (!Number.isInteger(slot) || slot < 0 || slot >= L.GATE_MAX_SLOTS) {
    throw new LaunchGateError(`Launch-gate slot must be an integer from 0 to ${L.GATE_MAX_SLOTS - 1} (got ${String(slot)}).`);
  }
}

export function checkGpu(gpu: number): number {
  if (!Number.isInteger(gpu) || gpu < 0 || gpu >= L.GATE_MAX_GPUS) {
    throw new LaunchGateError(`GPU index must be an integer from 0 to ${L.GATE_MAX_GPUS - 1} (got ${String(gpu)}).`);
  }
  return gpu;
}

export function checkMigSlice(slice: string | null | undefined): string | null {
  if (slice === null || slice === undefined) return null;
  if (typeof slice !== 'string' || !slice) throw new LaunchGateError(`A MIG slice must be a non-empty string (its UUID), or null for the whole GPU (got ${JSON.stringify(slice)}).`);
  return slice;
}

export function checkPid(pid: number): number {
  if (!Number.isInteger(pid) || pid <= 0 || pid > 0x7fffffff) throw new LaunchGateError(`A job pid must be a positive integer (got ${String(pid)}).`);
  return pid;
}

export function priorityIndex(priority: JobPriority): number {
  const i = JOB_PRIORITIES.indexOf(priority);
  if (i < 0) throw new LaunchGateError(`Priority must be one of ${JOB_PRIORITIES.map((p) => `'${p}'`).join(', ')} (got ${JSON.stringify(priority)}).`);
  return i;
}

export function quotaValue(quota: number | bigint | null | undefined): bigint {
  if (quota === null || quota === undefined) return L.GATE_NO_QUOTA;
  if (typeof quota === 'number') {
    if (!Number.isSafeInteger(quota) || quota < 0) throw new LaunchGateError(`A memory quota must be a whole number of bytes ≥ 0 (got ${quota}).`);
    return BigInt(quota);
  }
  if (typeof quota === 'bigint' && quota >= 0n && quota < L.GATE_NO_QUOTA) return quota;
  throw new LaunchGateError(`A memory quota must be a whole number of bytes ≥ 0, or null for none (got ${String(quota)}).`);
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // someone else's: alive
  }
}
