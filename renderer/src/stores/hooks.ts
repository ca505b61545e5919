// React bindings of the vanilla stores: components read slices through selectors.
import { useMemo } from 'react';
import { useStore } from 'zustand';
import type { JobView } from '../../../shared/jobs.js';
import { processesAsJobs } from '../data/board-jobs.js';
import { alertsStore, type AlertsState } from './alerts-store.js';
import { gpusStore, type GpusState } from './gpus-store.js';
import { useVisibleSlice } from './in-view.js';
import { jobsStore, type JobsState } from './jobs-store.js';
import { migPlanStore, type MigPlanState } from './mig-plan-store.js';
import { navigationStore, type NavigationState } from './navigation-store.js';
import { reportsStore, type ReportsState } from './reports-store.js';
import { spatialStore, type SpatialState } from './spatial-store.js';
import { uiStore, type UiState } from './ui-store.js';

// the live feeds pause inside a section scrolled out of view (see in-view.ts)
export const useGpus = <T,>(select: (s: GpusState) => T): T => useVisibleSlice(gpusStore, select);
export const useJobs = <T,>(select: (s: JobsState) => T): T => useVisibleSlice(jobsStore, select);
export const useAlerts = <T,>(select: (s: AlertsState) => T): T => useVisibleSlice(alertsStore, select);
export const useUi = <T,>(select: (s: UiState) => T): T => useStore(uiStore, select);

/** The engine's jobs, or the snapshot's processes while there is no scheduler. */
export function useBoardJobs(): JobView[] {
  const jobs = useJobs((s) => s.jobs);
  const schedulerMissing = useJobs((s) => s.schedulerMissing);
  const snapshot = useGpus((s) => (schedulerMissing ? s.snapshot : null));
  return useMemo(() => (schedulerMissing ? processesAsJobs(snapshot) : jobs), [jobs, schedulerMissing, snapshot]);
}

export const useNavigation = <T,>(select: (s: NavigationState) => T): T => useStore(navigationStore, select);
export const useReports = <T,>(select: (s: ReportsState) => T): T => useStore(reportsStore, select);
export const useSpatial = <T,>(select: (s: SpatialState) => T): T => useStore(spatialStore, select);
export const useMigPlan = <T,>(select: (s: MigPlanState) => T): T => useStore(migPlanStore, select);
