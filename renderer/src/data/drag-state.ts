// The job being dragged: drop targets cannot read dataTransfer during dragover.
import type { JobView } from '../../../shared/jobs.js';

export const JOB_DRAG_TYPE = 'application/x-gpushare-job';

let dragged: JobView | null = null;

export const startJobDrag = (job: JobView): void => {
  dragged = job;
};
export const endJobDrag = (): void => {
  dragged = null;
};
export const draggedJob = (): JobView | null => dragged;
