// A job's memory against its GPU, with a handle that sets the quota: drag it, or focus
// it and use the arrow keys (Shift for 1 GiB steps), Enter to apply, Delete for none.
import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import type { JobView } from '../../../shared/jobs.js';
import { setJobQuota } from '../actions/job-actions.js';
import { formatBytes, GIB_BYTES, QUOTA_STEP_BYTES } from '../format.js';

interface Props {
  job: JobView;
  quota: number | null;
  /** Memory of the GPU the job runs on: the bar's full length. */
  capacity: number;
  editable: boolean;
  onDraggingChange(dragging: boolean): void;
}

const snap = (bytes: number, capacity: number): number => Math.min(capacity, Math.max(QUOTA_STEP_BYTES, Math.round(bytes / QUOTA_STEP_BYTES) * QUOTA_STEP_BYTES));

export function QuotaBar({ job, quota, capacity, editable, onDraggingChange }: Props) {
  const track = useRef<HTMLDivElement>(null);
  const [draft, setDraft] = useState<number | null | undefined>(undefined); // undefined: not editing
  const dragging = useRef(false);
  useEffect(() => setDraft(undefined), [quota]);
  const shown = draft === undefined ? quota : draft;
  const position = shown === null ? 100 : Math.min(100, (shown / capacity) * 100);
  const perGpu = Math.max(1, job.gpus?.length ?? 1); // a job on several GPUs: its quota is per GPU, so the bar is one GPU's share
  const used = (job.usedMemory ?? 0) / perGpu;
  const over = shown !== null && used > shown;

  const bytesAt = (clientX: number): number => {
    const box = track.current!.getBoundingClientRect();
    return snap(((clientX - box.left) / box.width) * capacity, capacity);
  };
  const onPointerDown = (e: PointerEvent<HTMLSpanElement>): void => {
    if (!editable) return;
    e.preventDefault();
    e.stopPropagation();
    e.currentTarget.setPointerCapture(e.pointerId);
    dragging.current = true;
    onDraggingChange(true);
  };
  const onPointerMove = (e: PointerEvent<HTMLSpanElement>): void => {
    if (dragging.current) setDraft(bytesAt(e.clientX));
  };
  const onPointerUp = (e: PointerEvent<HTMLSpanElement>): void => {
    if (!dragging.current) return;
    dragging.current = false;
    onDraggingChange(false);
    void setJobQuota(job, bytesAt(e.clientX));
  };
  const onKeyDown = (e: KeyboardEvent<HTMLSpanElement>): void => {
    if (!editable) return;
    const step = e.shiftKey ? GIB_BYTES : QUOTA_STEP_BYTES;
    const base = shown ?? capacity;
    const keys: Record<string, () => void> = {
      ArrowLeft: () => setDraft(snap(base - step, capacity)),
      ArrowDown: () => setDraft(snap(base - step, capacity)),
      ArrowRight: () => setDraft(snap(base + step, capacity)),
      ArrowUp: () => setDraft(snap(base + step, capacity)),
      Enter: () => draft !== undefined && void setJobQuota(job, draft),
      Escape: () => setDraft(undefined),
      Delete: () => void setJobQuota(job, null),
      Backspace: () => void setJobQuota(job, null),
    };
    const action = keys[e.key];
    if (!action) return;
    e.preventDefault();
    e.stopPropagation(); // the card's own keys must not fire
    action();
  };
  return (
    <div className="quota-row">
      <div className="quota-bar" ref={track} style={{ backgroundSize: `${Math.min(100, (used / capacity) * 100).toFixed(1)}% 100%` }} data-over={over || undefined}>
      {shown !== null && <span className="quota-zone" style={{ left: `${position}%` }} />}
      <span
        className={`quota-handle${draft !== undefined ? ' editing' : ''}`}
        style={{ left: `${position}%` }}
        role="slider"
        tabIndex={editable ? 0 : -1}
        aria-label={`Memory quota of ${job.id}`}
        aria-valuemin={0}
        aria-valuemax={capacity}
        aria-valuenow={shown ?? capacity}
        aria-valuetext={shown === null ? 'no quota' : formatBytes(shown)}
        aria-disabled={!editable}
        title={editable ? 'Drag to set the memory quota (arrow keys + Enter; Delete removes it)' : 'The engine sets quotas only when its scheduler runs'}
        draggable={false}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onKeyDown={onKeyDown}
        onBlur={() => setDraft(undefined)}
      />
      </div>
      <span className="quota-text">
        {formatBytes(used)}
        {' / '}
        {shown === null ? 'no quota' : formatBytes(shown)}
        {perGpu > 1 && ` per GPU ×${perGpu}`}
        {draft !== undefined && <b> ⏎</b>}
      </span>
    </div>
  );
}
