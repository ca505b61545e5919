// A synthetic stream with a known answer (see the usage-store and report tests).
import type { JobView } from '../../../../shared/jobs.js';
import { JobOwnership } from '../../scheduler/ownership.js';
import { HOUR_MS, UsageStore } from '../usage-store.js';
import { fakeGpu, fakeTicks, type FakeProcess } from './synthetic.js';

const GiB = 2 ** 30;
export const KNOWN_T = Date.UTC(2026, 0, 5, 10, 0, 0); // on the hour
const T = KNOWN_T;
const gpus = [fakeGpu(0), fakeGpu(1)];

function job(partial: Partial<JobView> & Pick<JobView, 'id' | 'owner' | 'history'>): JobView {
  return {
    managed: true, uid: 1001, argv: ['python', 'finetune.py', '--lr', '3e-4, "warm"'], cwd: null, gpu: 1, requestedGpu: 1, priority: 'normal',
    memoryQuotaBytes: null, memoryRequestBytes: null, mode: 'shared', mpsSharePercent: null, migSlice: null, suspendedBy: null, state: partial.history.at(-1)!.state,
    pid: null, exitCode: null, signal: null, logPath: null, usedMemory: null, smPercent: null, ...partial,
    gpus: partial.gpus ?? [partial.gpu ?? 1],
  };
}

/**
 * Ticks 1 s apart (nominal 1 s) at k = 0..9, a 90 s gap (the engine was down), then ticks at +100 s, +101 s, +102.5 s.
 *   p1 alice gpu0 SM 50 % 2 GiB on every tick        → dt: 10 × 1 + 1 (after the gap) + 1 + 1.5 = 13.5 s
 *   p2 bob   gpu0 SM 30 % 1 GiB at k = 0..4          → 5 s, contended with p1
 *   p3 alice gpu1 SM 0 %  4 GiB at k = 0..9          → 10 s
 *   p4 alice gpu0 SM 10 % 1 GiB at k = 5..9          → 5 s, contended with p1 (alice's own other job)
 *   pid 500 = managed job j1 (carol) gpu1 SM 80 % 512 MiB at k = 3..8, queued from T−60 s to T+2 s, suspended T+5 s..T+7 s
 */
export function knownStream(): Array<{ t: number; procs: FakeProcess[] }> {
  const times = [...Array.from({ length: 10 }, (_, k) => T + k * 1000), T + 100_000, T + 101_000, T + 102_500];
  return times.map((t, i) => {
    const k = i; // k >= 10 are after the gap
    const procs: FakeProcess[] = [{ pid: 101, gpu: 0, user: 'alice', sm: 50, mem: 2 * GiB }];
    if (k <= 4) procs.push({ pid: 102, gpu: 0, user: 'bob', sm: 30, mem: GiB });
    if (k <= 9) procs.push({ pid: 103, gpu: 1, user: 'alice', sm: 0, mem: 4 * GiB });
    if (k >= 5 && k <= 9) procs.push({ pid: 104, gpu: 0, user: 'alice', sm: 10, mem: GiB });
    if (k >= 3 && k <= 8) procs.push({ pid: 500, gpu: 1, user: 'carol', sm: 80, mem: GiB / 2 });
    return { t, procs };
  });
}

/** A store at path holding knownStream() and job j1 (flushed, open). */
export async function writeKnownStream(path: string): Promise<UsageStore> {
  const store = await UsageStore.open({ path, now: () => T + HOUR_MS, onNotice: () => undefined });
  // pid 500 is j1's process (the scheduler claims it at start); no other pid has a parent here
  const ownership = new JobOwnership(() => null);
  ownership.claim('j1', 'carol', 500, null);
  store.useOwnership(ownership);
  store.recordJob(job({
    id: 'j1', owner: 'carol', pid: 500,
    history: [
      { state: 'queued', at: T - 60_000, reason: 'submitted' },
      { state: 'running', at: T + 2000, reason: 'placed on GPU 1' },
      { state: 'suspended', at: T + 5000, reason: 'suspended by alice' },
      { state: 'running', at: T + 7000, reason: 'resumed' },
      { state: 'finished', at: T + 9000, reason: 'exit code 0' },
    ],
  }));
  ownership.release('j1', T + 9000);
  const tick = fakeTicks(1000);
  knownStream().forEach(({ t, procs }) => store.ingest(tick(t, gpus, procs)));
  await store.flush();
  return store;
}

