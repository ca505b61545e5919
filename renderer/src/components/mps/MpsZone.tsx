// A GPU's MPS zone: whose MPS daemon serves it, with a button to start or stop ours; drop a queued
// job here (or press Enter) to run it under MPS with an SM share.
import { useState, type DragEvent, type KeyboardEvent } from 'react';
import type { MpsGpuStatus } from '../../../../shared/spatial.js';
import { draggedJob, endJobDrag, JOB_DRAG_TYPE } from '../../data/drag-state.js';
import { daemonStateText, startedForHint } from '../../data/slice-mps.js';
import { useSpatial } from '../../stores/hooks.js';
import { MpsControls } from './MpsControls.js';
import { MpsSharePrompt } from './MpsSharePrompt.js';

function statusText(status: MpsGpuStatus | undefined, unavailable: string | null): string {
  if (!status) return unavailable ? 'unavailable' : '…';
  if (status.state === 'held') return `MPS ${daemonStateText(status)}`;
  const clients = status.state === 'ours' && status.serverPids.length > 0 ? ` · server pid ${status.serverPids.join(', ')}` : '';
  return `${daemonStateText(status)}${clients}`;
}

export function MpsZone({ gpu }: { gpu: number }) {
  const status = useSpatial((s) => s.mps.find((m) => m.gpu === gpu));
  const unavailable = useSpatial((s) => s.mpsUnavailable);
  const [over, setOver] = useState(false);
  const [prompt, setPrompt] = useState<{ jobId: string | null } | null>(null);
  const accepts = (e: DragEvent): boolean => e.dataTransfer.types.includes(JOB_DRAG_TYPE);
  const onDrop = (e: DragEvent): void => {
    e.preventDefault();
    e.stopPropagation(); // the card would place it without MPS
    setOver(false);
    const job = draggedJob();
    endJobDrag();
    if (job) setPrompt({ jobId: job.id });
  };
  const onKeyDown = (e: KeyboardEvent): void => {
    if (e.target !== e.currentTarget || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    setPrompt({ jobId: null });
  };
  const state = status?.state ?? 'unknown';
  return (
    <div
      className={`mps-zone mps-${state}${over ? ' drop-target' : ''}`}
      data-mps-state={state}
      tabIndex={0}
      role="group"
      aria-label={`MPS on GPU ${gpu}: ${statusText(status, unavailable)}. Press Enter to run a queued job under MPS.`}
      title={status ? [status.message, startedForHint(status.startedFor)].filter(Boolean).join('\n') : (unavailable ?? undefined)}
      onDragOver={(e) => {
        if (!accepts(e)) return;
        e.preventDefault();
        e.stopPropagation();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
      onKeyDown={onKeyDown}
    >
      <div className="mps-line">
        <span className="stat-label">MPS</span>
        <span className={`mps-status mps-status-${state}`}>{statusText(status, unavailable)}</span>
        {!prompt && <span className="mps-hint">{over ? 'drop to run it under MPS' : 'drop a queued job here for an SM share'}</span>}
        <MpsControls gpu={gpu} status={status} />
      </div>
      {prompt && <MpsSharePrompt gpu={gpu} jobId={prompt.jobId} onClose={() => setPrompt(null)} />}
    </div>
  );
}
