// The tray icon's state from the conditions that hold now: alert (an error, out-of-memory,
// a quota, a lost GPU), contention, or all well. An ended condition leaves the tray at once.
// And its menu: "Lab…" whenever the console would show its Lab tab.
import type { ActiveCondition } from '../../shared/api.js';
import { showsLab, type DesktopLabStatus } from '../../shared/bridge.js';
import { servedBy } from './lab-windows.js';

export type TrayState = 'ok' | 'contention' | 'alert';

const ALERTING: ReadonlySet<ActiveCondition['kind']> = new Set(['out-of-memory', 'quota', 'gpu-lost']);

export function trayState(conditions: readonly ActiveCondition[]): TrayState {
  if (conditions.some((c) => c.severity === 'error' || ALERTING.has(c.kind))) return 'alert';
  if (conditions.some((c) => c.kind === 'contention')) return 'contention';
  return 'ok';
}

export const TRAY_TOOLTIPS: Record<TrayState, string> = {
  ok: 'gpushare — all well',
  contention: 'gpushare — jobs are contending for a GPU',
  alert: 'gpushare — an alert needs a look',
};

/** The tooltip: what matters most now, in the engine's words. */
export function trayTooltip(conditions: readonly ActiveCondition[]): string {
  const state = trayState(conditions);
  if (state === 'ok') return TRAY_TOOLTIPS.ok;
  const first = conditions.find((c) => trayState([c]) === state)!;
  const more = conditions.length - 1;
  return `gpushare — ${first.message}${more > 0 ? ` (and ${more} more)` : ''}`;
}

export type TrayAction = 'show' | 'lab' | 'pause' | 'quit';
export type TrayMenuItem = { label: string; action: TrayAction } | { separator: true };

/** The tray's menu; "Lab…" by the Lab tab's rule (a list with a mistake too: the Lab window names it). */
export function trayMenu(lab: DesktopLabStatus): TrayMenuItem[] {
  return [
    { label: 'Show gpushare', action: 'show' },
    ...(showsLab(lab) ? [{ label: 'Lab…', action: 'lab' as const }] : []),
    { label: 'Pause my best-effort jobs', action: 'pause' },
    { separator: true },
    { label: 'Quit', action: 'quit' },
  ];
}

/** "Lab…": the first window already showing the Lab view is focused (its index among these pages); null: open a Lab window. */
export function labWindowAmong(pageUrls: readonly string[]): number | null {
  const at = pageUrls.findIndex((url) => servedBy(url) === 'lab');
  return at >= 0 ? at : null;
}
