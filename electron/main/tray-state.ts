// The tray icon's state from the conditions that hold now: alert (an error, out-of-memory,
// a quota, a lost GPU), contention, or all well. An ended condition leaves the tray at once.
import type { ActiveCondition } from '../../shared/api.js';

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
