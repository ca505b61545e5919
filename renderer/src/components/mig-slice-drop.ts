// A MIG slice in the diagram as a drop target: a queued job dropped on it opens the slice's prompt with
// that job chosen (run it there, alone or sharing the slice through MPS).
// Plain DOM class toggling (no state), so the diagram stays a plain render of the snapshot.
import type { DragEvent } from 'react';
import { draggedJob, endJobDrag, JOB_DRAG_TYPE } from '../data/drag-state.js';

export function migSliceDropProps(slice: string, onJobDropped: (jobId: string) => void) {
  return {
    'data-slice': slice,
    onDragOver(e: DragEvent<HTMLElement>): void {
      if (!e.dataTransfer.types.includes(JOB_DRAG_TYPE)) return;
      e.preventDefault();
      e.stopPropagation(); // the card would place it on the whole GPU
      e.currentTarget.classList.add('drop-target');
    },
    onDragLeave(e: DragEvent<HTMLElement>): void {
      e.currentTarget.classList.remove('drop-target');
    },
    onDrop(e: DragEvent<HTMLElement>): void {
      e.preventDefault();
      e.stopPropagation();
      e.currentTarget.classList.remove('drop-target');
      const job = draggedJob();
      endJobDrag();
      if (job) onJobDropped(job.id);
    },
  };
}
