// Which view the console shows: the live console, usage reports, the MIG planner or the lab policy.
// Kept in the URL hash (#reports, #mig-plan, #lab-policy) so a view survives a reload and can be linked.
import { createStore } from 'zustand/vanilla';
import type { DesktopLabStatus } from '../../../shared/bridge.js';

export const VIEWS = [
  { view: 'console', title: 'Console' },
  { view: 'reports', title: 'Reports' },
  { view: 'mig-plan', title: 'Plan MIG' },
  { view: 'lab-policy', title: 'Lab policy' },
] as const;
export type ConsoleView = (typeof VIEWS)[number]['view'];

export interface NavigationState {
  view: ConsoleView;
  /** The desktop app's lab list (its Lab tab); null in a browser, or with no list. */
  lab: DesktopLabStatus | null;
}

const viewOfHash = (hash: string): ConsoleView => VIEWS.find((v) => `#${v.view}` === hash)?.view ?? 'console';

export const navigationStore = createStore<NavigationState>(() => ({ view: viewOfHash(window.location.hash), lab: null }));

export function showView(view: ConsoleView): void {
  navigationStore.setState({ view });
  const { pathname, search } = window.location;
  window.history.replaceState(null, '', `${pathname}${search}${view === 'console' ? '' : `#${view}`}`);
}

window.addEventListener('hashchange', () => navigationStore.setState({ view: viewOfHash(window.location.hash) }));
