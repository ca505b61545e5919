// The Plan MIG view: the GPU, the job mix (queued jobs picked and typed specs), and the plan the engine returned.
import { createStore } from 'zustand/vanilla';
import type { MigApplyResult, MigLayoutView } from '../../../shared/spatial.js';

export interface MigPlanState {
  gpu: number | null;
  /** Queued jobs in the mix, by id. */
  pickedJobs: string[];
  /** Typed specs, "30G,10G:0.2,20G@high" (as `gpushare mig plan`). */
  typedSpecs: string;
  dryRun: boolean;
  busy: 'planning' | 'applying' | null;
  /** The GPU's layout today (mig.layout). */
  current: MigLayoutView | null;
  result: MigApplyResult | null;
  /** The names of the mix's entries in order ("j7" or a typed spec): the engine calls them job1, job2, … */
  mixNames: string[];
  /** The engine's refusal, verbatim (one reason a line). */
  refusal: string | null;
  /** The refusal answers a real Apply of the plan shown (kept: it is what Apply would run); a refused Plan clears the plan. */
  applyRefused: boolean;
}

export const migPlanStore = createStore<MigPlanState>(() => ({
  gpu: null,
  pickedJobs: [],
  typedSpecs: '',
  dryRun: true,
  busy: null,
  current: null,
  result: null,
  mixNames: [],
  refusal: null,
  applyRefused: false,
}));
