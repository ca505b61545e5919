// One GPU at a glance; a queued job dropped on it is placed there.
import { useState, type DragEvent } from 'react';
import type { GpuProcessView, GpuView } from '../../../shared/snapshot.js';
import { placeJob } from '../actions/job-actions.js';
import { draggedJob, endJobDrag, JOB_DRAG_TYPE } from '../data/drag-state.js';
import { formatBytes, formatPercent } from '../format.js';
import { MemoryBar } from './MemoryBar.js';
import { MigDiagram } from './MigDiagram.js';
import { MpsZone } from './mps/MpsZone.js';

const MODE_NAMES: Record<string, string> = {
  default: 'time-sliced',
  'exclusive-process': 'exclusive',
  'exclusive-thread': 'exclusive (thread)',
  prohibited: 'compute prohibited',
};

export function sharingMode(gpu: GpuView, processes: readonly GpuProcessView[]): string {
  if (gpu.migEnabled) return 'MIG';
  if (processes.some((p) => p.kind === 'mps')) return 'MPS';
  return MODE_NAMES[gpu.computeMode ?? ''] ?? 'unknown mode';
}

export function GpuCard({ gpu, processes }: { gpu: GpuView; processes: readonly GpuProcessView[] }) {
  const [dropping, setDropping] = useState(false);
  const accepts = (e: DragEvent): boolean => e.dataTransfer.types.includes(JOB_DRAG_TYPE);
  const onDrop = (e: DragEvent): void => {
    e.preventDefault();
    setDropping(false);
    const job = draggedJob();
    endJobDrag();
    if (job) void placeJob(job, gpu.index);
  };
  const util = gpu.utilizationGpu;
  const sorted = [...processes].sort((a, b) => (b.usedMemory ?? 0) - (a.usedMemory ?? 0));
  return (
    <article
      className={`gpu-card${dropping ? ' drop-target' : ''}${gpu.lost ? ' lost' : ''}`}
      data-gpu={gpu.index}
      aria-label={`GPU ${gpu.index}`}
      onDragOver={(e) => {
        if (!accepts(e)) return;
        e.preventDefault();
        setDropping(true);
      }}
      onDragLeave={() => setDropping(false)}
      onDrop={onDrop}
    >
      <header className="gpu-card-head">
        <span className="gpu-index">GPU {gpu.index}</span>
        <span className="gpu-name" title={`${gpu.uuid} · ${gpu.pciBusId}`}>{gpu.name}</span>
        <span className="chip">{sharingMode(gpu, processes)}</span>
        {gpu.lost && <span className="chip chip-error">lost</span>}
      </header>
      <div className="gpu-stats">
        <div className="stat">
          <span className="stat-label">Util</span>
          <span className="stat-value">{formatPercent(util)}</span>
          <span className="util-bar" style={{ backgroundSize: `${util ?? 0}% 100%` }} />
        </div>
        <div className="stat">
          <span className="stat-label">Temp</span>
          <span className={`stat-value${(gpu.temperatureC ?? 0) >= 85 ? ' hot' : ''}`}>{gpu.temperatureC ?? '–'} °C</span>
        </div>
        <div className="stat">
          <span className="stat-label">Power</span>
          <span className="stat-value">
            {gpu.powerWatts === null ? '–' : Math.round(gpu.powerWatts)}
            <small> / {gpu.powerLimitWatts === null ? '–' : Math.round(gpu.powerLimitWatts)} W</small>
          </span>
        </div>
        <div className="stat">
          <span className="stat-label">Procs</span>
          <span className="stat-value">{processes.length}</span>
        </div>
      </div>
      <div className="memory-line">
        <span className="stat-label">Memory</span>
        <span className="memory-figures">{formatBytes(gpu.memoryUsed)} / {formatBytes(gpu.memoryTotal)}</span>
      </div>
      <MemoryBar total={gpu.memoryTotal} used={gpu.memoryUsed} processes={sorted} />
      {gpu.migEnabled && <MigDiagram slices={gpu.migSlices} processes={processes} />}
      {!gpu.migEnabled && !gpu.lost && <MpsZone gpu={gpu.index} />}
      {gpu.errors.length > 0 && <div className="gpu-errors">{gpu.errors.join(' · ')}</div>}
      {dropping && <div className="drop-hint">Drop to place the job on GPU {gpu.index}</div>}
    </article>
  );
}
