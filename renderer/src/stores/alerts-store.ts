// Contention, quota, out-of-memory and job-finished alerts, newest first; and the conditions that hold now.
import { createStore } from 'zustand/vanilla';
import type { ActiveCondition } from '../../../shared/api.js';
import type { Alert } from '../../../shared/jobs.js';

/** As many as the engine keeps (ALERTS_KEPT in engine.ts): the list can show every alert alerts.list gives. */
const ALERTS_SHOWN = 500;

export interface AlertsState {
  alerts: Alert[];
  /** What holds now (a GPU lost, jobs contending), as the engine last said. */
  conditions: ActiveCondition[];
}

export const alertsStore = createStore<AlertsState>(() => ({ alerts: [], conditions: [] }));

export function setConditions(conditions: ActiveCondition[]): void {
  alertsStore.setState({ conditions });
}

export function addAlerts(incoming: readonly Alert[]): void {
  if (incoming.length === 0) return;
  alertsStore.setState((state) => {
    const seen = new Set(state.alerts.map((a) => a.id));
    const fresh = incoming.filter((a) => !seen.has(a.id)).sort((a, b) => b.id - a.id);
    return { alerts: [...fresh, ...state.alerts].sort((a, b) => b.at - a.at || b.id - a.id).slice(0, ALERTS_SHOWN) };
  });
}
