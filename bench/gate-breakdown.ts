// Where the GPU time a gated best-effort job did not use went: every instant of the high jobs' span in
// which the simulated GPU ran no kernel, labelled by what the best-effort job was doing then, from the
// driver's execution record and the job's own gate timeline (GPUSHARE_GATE_TRACE, native/preload/src/gate_trace.c).
import { existsSync, readFileSync } from 'node:fs';
import type { KernelRecord } from '../electron/engine/gpu/simulated-driver.js';

/** One span of a process's gate timeline: W learned/fixed window, A launched work outstanding (a: woken by its end), F fit rule, P paused, S short sync, H step 3. */
export interface TraceSpan {
  kind: string;
  t0: number;
  t1: number;
}

export function readTrace(path: string): TraceSpan[] | null {
  if (!existsSync(path)) return null;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [kind, t0, t1] = l.split(' ');
      return { kind, t0: Number(t0), t1: Number(t1) };
    });
}

/** GPU idle time by what the best-effort job did meanwhile, each as a fraction of the span. */
export interface IdleBreakdown {
  idle: number; // the GPU ran no kernel
  hold: number; // (a) the BE waited out a higher job's window after it went idle (W), once the higher jobs had learned their holds
  holdLearning: number; // (a) the same before then: a new high job holds lower jobs its whole active window (5 ms) until it has seen 8 gaps
  outstanding: number; // (a') a higher job's launched work not yet seen complete: its kernel done, its synchronise not returned (A)
  fit: number; // (b) the fit rule held the BE's kernel (F)
  sync: number; // (c) inside the BE's own short synchronise (S)
  queued: number; // a BE kernel enqueued, not yet started: the driver's hand-over
  other: number; // (e) none of those: the BE's CPU between a synchronise and its next launch, its own syncs, paused
}

const US = 1000;

/** learnedAt: when the last high job learned its hold (W before it counts as holdLearning). */
export function idleBreakdown(from: number, to: number, all: KernelRecord[], be: KernelRecord[], trace: TraceSpan[], learnedAt = from): IdleBreakdown {
  const n = Math.max(1, Math.ceil((to - from) / US));
  const label = new Uint8Array(n); // 0 idle unexplained, 1 busy, then the labels below
  const mark = (t0: number, t1: number, value: number, onlyIdle: boolean): void => {
    const a = Math.max(0, Math.floor((t0 - from) / US));
    const b = Math.min(n, Math.ceil((t1 - from) / US));
    for (let i = a; i < b; i++) if (!onlyIdle || label[i] === 0) label[i] = value;
  };
  for (const r of all) mark(r.startNs, r.endNs, 1, false);
  const KIND: Record<string, number> = { Q: 2, F: 3, W: 4, A: 5, a: 5, S: 6 }; // a: the same wait, ended by the higher job going idle
  for (const r of be) mark(r.enqueueNs, r.startNs, KIND.Q, true);
  for (const s of trace) if (s.kind === 'W' && s.t0 < learnedAt) mark(s.t0, Math.min(s.t1, learnedAt), 7, true);
  for (const s of trace) if (KIND[s.kind]) mark(s.t0, s.t1, KIND[s.kind], true);
  const count = new Array<number>(8).fill(0);
  for (let i = 0; i < n; i++) count[label[i]]++;
  const frac = (k: number): number => count[k] / n;
  return {
    idle: 1 - frac(1),
    queued: frac(KIND.Q),
    fit: frac(KIND.F),
    hold: frac(KIND.W),
    holdLearning: frac(7),
    outstanding: frac(KIND.A),
    sync: frac(KIND.S),
    other: frac(0),
  };
}
