// One GPU at a glance; a queued job dropped on it is placed there.
import { memo, useMemo, useState, type DragEvent } from 'react';
import type { GpuProcessView, GpuView } from '../../../shared/snapshot.js';
import { placeJob } from '../actions/job-actions.js';
import { draggedJob, endJobDrag, JOB_DRAG_TYPE } from '../data/drag-state.js';
import { formatBytes, formatPercent } from '../format.js';
import { MemoryBar } from './MemoryBar.js';
import { MigDiagram } from './MigDiagram.js';
import { MpsSliceList } from './mps/MpsSliceList.js';
import { MpsZone } from './mps/MpsZone.js';

const MODE_NAMES: Record<string, string> = {
  default: 'time-sliced',
  'exclusive-process': 'exclusive',
  'exclusive-thread': 'exclusive (thread)',
  prohibited: 'compute prohibited',
};

interface StatsProps {
  util: number | null;
  temperature: number | null;
  power: number | null;
  powerLimit: number | null;
  processes: number;
}

/** Figures as shown: whole units, so a tenth of a watt does not redraw the card. */
const whole = (value: number | null): number | null => (value === null ? null : Math.round(value));

/** The card's figures: redrawn only when one of them changes, not whenever a process's memory moves. */
const GpuStats = memo(function GpuStats({ util, temperature, power, powerLimit, processes }: StatsProps) {
  return (
    <div className="gpu-stats">
      <div className="stat">
        <span className="stat-label">Util</span>
        <span className="stat-value">{formatPercent(util)}</span>
        <span className="util-bar" style={{ backgroundSize: `${util ?? 0}% 100%` }} />
      </div>
      <div className="stat">
        <span className="stat-label">Temp</span>
        <span className={`stat-value${(temperature ?? 0) >= 85 ? ' hot' : ''}`}>{temperature ?? '–'} °C</span>
      </div>
      <div className="stat">
        <span className="stat-label">Power</span>
        <span className="stat-value">
          {power ?? '–'}
          <small> / {powerLimit ?? '–'} W</small>
        </span>
      </div>
      <div className="stat">
        <span className="stat-label">Procs</span>
        <span className="stat-value">{processes}</span>
      </div>
    </div>
  );
});

/** Its own store slice: nothing on the card above it concerns it. */
const MemoMpsZone = memo(MpsZone);

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
  const sorted = useMemo(() => [...processes].sort((a, b) => (b.usedMemory ?? 0) - (a.usedMemory ?? 0)), [processes]);
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
      <GpuStats util={whole(gpu.utilizationGpu)} temperature={whole(gpu.temperatureC)} power={whole(gpu.powerWatts)} powerLimit={whole(gpu.powerLimitWatts)} processes={processes.length} />
      <div className="memory-line">
        <span className="stat-label">Memory</span>
        <span className="memory-figures">{formatBytes(gpu.memoryUsed)} / {formatBytes(gpu.memoryTotal)}</span>
      </div>
      <MemoryBar total={gpu.memoryTotal} used={gpu.memoryUsed} processes={sorted} />
      {gpu.migEnabled && <MigDiagram gpu={gpu.index} slices={gpu.migSlices} processes={processes} />}
      {gpu.migEnabled && <MpsSliceList gpu={gpu.index} slices={gpu.migSlices} />}
      {!gpu.migEnabled && !gpu.lost && <MemoMpsZone gpu={gpu.index} />}
      {gpu.errors.length > 0 && <div className="gpu-errors">{gpu.errors.join(' · ')}</div>}
      {dropping && <div className="drop-hint">Drop to place the job on GPU {gpu.index}</div>}
    </article>
  );
}
