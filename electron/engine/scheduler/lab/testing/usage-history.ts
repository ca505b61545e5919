// Test fixture: a usage store holding a synthetic history, written through the store's own
// accounting (ticks → samples → minute, hour and day rollups), as the lab policy reads it.
import type { Priority } from '../../../../../shared/jobs.js';
import { fakeGpu, fakeTicks, type FakeProcess } from '../../../store/testing/synthetic.js';
import { UsageStore } from '../../../store/usage-store.js';
import { newJobView } from '../../job-table.js';

/** One process of `user` busy on its own GPU over [from, to) (ms), as job p<pid> at `priority`. */
export interface UsageSpan {
  user: string;
  pid: number;
  gpu: number;
  from: number;
  to: number;
  priority?: Priority;
}

/** A store at `path` whose history is the given spans, sampled every `stepMs` (each user's GPU-seconds are their spans' lengths). */
export async function storeWithHistory(path: string, spans: readonly UsageSpan[], now: number, stepMs = 5 * 60_000): Promise<UsageStore> {
  const store = await UsageStore.open({ path, now: () => now, onNotice: () => undefined });
  const gpus = [...new Set(spans.map((s) => s.gpu))].sort((a, b) => a - b).map(fakeGpu);
  const tick = fakeTicks(stepMs);
  const start = Math.min(...spans.map((s) => s.from));
  const end = Math.max(...spans.map((s) => s.to));
  // a tick at t covers (t − step, t]: a span [from, to) is in the ticks from + step … to
  for (let t = start; t <= end; t += stepMs) {
    const processes: FakeProcess[] = spans.filter((s) => t > s.from && t <= s.to).map((s) => ({ pid: s.pid, gpu: s.gpu, user: s.user, sm: 100, mem: 2 ** 30 }));
    store.ingest(tick(t, gpus, processes));
  }
  for (const s of spans) {
    store.recordJob(newJobView({ id: `p${s.pid}`, managed: false, owner: s.user, uid: 1000, argv: ['train'], gpu: s.gpu, priority: s.priority ?? 'normal' }, 'running', 'seen', s.from));
  }
  await store.flush();
  return store;
}
