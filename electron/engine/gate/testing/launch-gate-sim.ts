// Helpers shared by the launch-gate tests and bench/gate.bench.ts: build the
// preload library when missing, run the probe program, and read the simulated
// driver's execution record per job.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { KernelRecord, SimulatedDriver } from '../../gpu/simulated-driver.js';
import { packageRoot } from '../../paths.js';
import { preloadLibraryPath } from '../launch-gate.js';

export const preloadBuildDir = (): string => join(packageRoot(), 'native', 'preload', 'build');
export const preloadProbePath = (): string => join(preloadBuildDir(), 'preload_probe');

/** Builds native/preload when its outputs are missing; false when that is not possible here. */
export function ensurePreloadBuilt(): boolean {
  const outputs = [preloadLibraryPath(), preloadProbePath(), join(preloadBuildDir(), 'gate_layout'), join(preloadBuildDir(), 'launch_bench')];
  if (outputs.every(existsSync)) return true;
  try {
    execFileSync('make', ['-s', '-C', join(packageRoot(), 'native', 'preload')], { stdio: 'pipe' });
  } catch {
    return false;
  }
  return outputs.every(existsSync);
}

export interface ProbeStep {
  op: string;
  [key: string]: unknown;
}

export interface ProbeRun {
  pid: number;
  steps: ProbeStep[];
  /** Resolves with the next step's line (in order). */
  next(): Promise<ProbeStep>;
  /** Sends a line to a `wait` step. */
  resume(): void;
  exited: Promise<number | null>;
}

/** Runs native/preload's probe against the simulated driver with the given env. */
export function runProbe(driver: SimulatedDriver, args: string[], env: Record<string, string>): ProbeRun {
  const child = spawn(preloadProbePath(), args, { env: { ...process.env, ...driver.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const steps: ProbeStep[] = [];
  const waiting: Array<(s: ProbeStep) => void> = [];
  let read = 0;
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const step = JSON.parse(line) as ProbeStep;
    steps.push(step);
    const w = waiting.shift();
    if (w) w(steps[read++]);
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    pid: child.pid!,
    steps,
    next: () =>
      read < steps.length
        ? Promise.resolve(steps[read++])
        : new Promise<ProbeStep>((resolve, reject) => {
            waiting.push(resolve);
            void exited.then(() => reject(new Error(`probe exited before the next step: ${stderr.trim()}`)));
          }),
    resume: () => child.stdin.write('go\n'),
    exited,
  };
}

/** Execution records of one pid, in enqueue order. */
/** Reads the probe's steps up to and including the first `op`. */
export async function readUntil(probe: ProbeRun, op: string): Promise<ProbeStep> {
  for (;;) {
    const step = await probe.next();
    if (step.op === op) return step;
  }
}

export const recordsOf = (records: KernelRecord[], pid: number): KernelRecord[] =>
  records.filter((r) => r.pid === pid).sort((a, b) => a.enqueueNs - b.enqueueNs);

/**
 * Lower-priority kernels enqueued while a higher one was queued or running:
 * each `low` record with some `high` record h such that h.enqueueNs < low.enqueueNs < h.endNs.
 */
export function enqueuedUnderHigh(high: KernelRecord[], low: KernelRecord[]): KernelRecord[] {
  const byEnqueue = [...high].sort((a, b) => a.enqueueNs - b.enqueueNs);
  return low.filter((l) => byEnqueue.some((h) => h.enqueueNs < l.enqueueNs && l.enqueueNs < h.endNs));
}
