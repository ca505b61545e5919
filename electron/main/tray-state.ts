// The tray icon's state from recent alerts: alert (errors, out-of-memory, quota),
// contention, or all well.
import type { Alert } from '../../shared/jobs.js';

export type TrayState = 'ok' | 'contention' | 'alert';

export const RECENT_MS = 2 * 60_000;

export function trayState(alerts: readonly Alert[], now = Date.now()): TrayState {
  const recent = alerts.filter((a) => now - a.at < RECENT_MS);
  if (recent.some((a) => a.severity === 'error' || a.kind === 'out-of-memory' || a.kind === 'quota' || a.kind === 'gpu-lost')) return 'alert';
  if (recent.some((a) => a.kind === 'contention')) return 'contention';
  return 'ok';
}

export const TRAY_TOOLTIPS: Record<TrayState, string> = {
  ok: 'gpushare — all well',
  contention: 'gpushare — jobs are contending for a GPU',
  alert: 'gpushare — an alert needs a look',
};
