// Every GPU the driver reports, as cards.
import { useMemo } from 'react';
import type { GpuProcessView } from '../../../shared/snapshot.js';
import { useGpus } from '../stores/hooks.js';
import { GpuCard } from './GpuCard.js';

export function GpuGrid() {
  const snapshot = useGpus((s) => s.snapshot);
  const byGpu = useMemo(() => {
    const map = new Map<number, GpuProcessView[]>();
    for (const p of snapshot?.processes ?? []) map.set(p.gpuIndex, [...(map.get(p.gpuIndex) ?? []), p]);
    return map;
  }, [snapshot]);
  if (!snapshot) return <section className="gpu-grid empty">Waiting for the first sample from the engine…</section>;
  if (snapshot.gpus.length === 0) return <section className="gpu-grid empty">The driver reports no GPUs.</section>;
  return (
    <section className="gpu-grid" aria-label="GPUs">
      {snapshot.gpus.map((gpu) => (
        <GpuCard key={gpu.index} gpu={gpu} processes={byGpu.get(gpu.index) ?? []} />
      ))}
    </section>
  );
}
