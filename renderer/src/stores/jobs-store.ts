// Jobs as the engine reports them, plus drops in flight (shown where they were dropped
// until the engine answers; a refusal puts the card back).
import { createStore } from 'zustand/vanilla';
import type { JobView } from '../../../shared/jobs.js';

export type Lane = 'high' | 'normal' | 'best-effort' | 'paused' | 'queue';

export interface PendingChange {
  lane?: Lane;
  memoryQuotaBytes?: number | null;
  gpu?: number;
}

export interface JobsState {
  jobs: JobView[];
  /** Set when the engine has no scheduler: the board then shows GPU processes read-only. */
  schedulerMissing: string | null;
  pending: Record<string, PendingChange>;
}

export const jobsStore = createStore<JobsState>(() => ({ jobs: [], schedulerMissing: null, pending: {} }));

export function setPending(jobId: string, change: PendingChange | null): void {
  jobsStore.setState((state) => {
    const pending = { ...state.pending };
    if (change) pending[jobId] = { ...pending[jobId], ...change };
    else delete pending[jobId];
    return { pending };
  });
}
