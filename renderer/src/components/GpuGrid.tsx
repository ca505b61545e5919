// Every GPU the driver reports, as cards. A card re-renders only when its own GPU or
// processes changed: snapshots arrive as new objects every tick.
import { memo, useMemo, useRef } from 'react';
import type { GpuProcessView, GpuView } from '../../../shared/snapshot.js';
import { useGpus } from '../stores/hooks.js';
import { GpuCard } from './GpuCard.js';

const NO_PROCESSES: readonly GpuProcessView[] = [];

/** Same own fields (arrays such as MIG slices and errors compared by content). */
function sameRecord(a: object, b: object): boolean {
  if (a === b) return true;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const key of keys) {
    const u = x[key];
    const v = y[key];
    if (u === v) continue;
    if (typeof u !== 'object' || typeof v !== 'object' || u === null || v === null) return false;
    if (Array.isArray(u) && Array.isArray(v) && u.length === v.length && u.every((item, i) => item === v[i])) continue; // argv
    if (JSON.stringify(u) !== JSON.stringify(v)) return false;
  }
  return true;
}

const sameProcesses = (a: readonly GpuProcessView[], b: readonly GpuProcessView[]): boolean =>
  a === b || (a.length === b.length && a.every((p, i) => sameRecord(p, b[i])));

const sameCard = (a: { gpu: GpuView; processes: readonly GpuProcessView[] }, b: { gpu: GpuView; processes: readonly GpuProcessView[] }): boolean =>
  sameRecord(a.gpu, b.gpu) && sameProcesses(a.processes, b.processes);

const MemoGpuCard = memo(GpuCard, sameCard);

export function GpuGrid() {
  const snapshot = useGpus((s) => s.snapshot);
  const connection = useGpus((s) => s.connection);
  const previous = useRef(new Map<number, readonly GpuProcessView[]>());
  const byGpu = useMemo(() => {
    const map = new Map<number, GpuProcessView[]>();
    for (const p of snapshot?.processes ?? []) {
      const list = map.get(p.gpuIndex);
      if (list) list.push(p);
      else map.set(p.gpuIndex, [p]);
    }
    // an unchanged GPU keeps last tick's array, so its card skips the comparison too
    const stable = new Map<number, readonly GpuProcessView[]>();
    for (const [gpu, list] of map) {
      const before = previous.current.get(gpu);
      stable.set(gpu, before && sameProcesses(before, list) ? before : list);
    }
    previous.current = stable;
    return stable;
  }, [snapshot]);
  if (!snapshot) return <section className="gpu-grid empty">{connection === 'closed' ? 'No samples: this page is not connected to the engine (why is said above).' : 'Waiting for the first sample from the engine…'}</section>;
  if (snapshot.gpus.length === 0) return <section className="gpu-grid empty">The driver reports no GPUs.</section>;
  return (
    <section className="gpu-grid" aria-label="GPUs">
      {snapshot.gpus.map((gpu) => (
        <MemoGpuCard key={gpu.index} gpu={gpu} processes={byGpu.get(gpu.index) ?? NO_PROCESSES} />
      ))}
    </section>
  );
}
