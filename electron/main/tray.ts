// The tray: an icon that says all well / contention / alert, and a small menu.
import { Menu, nativeImage, Tray } from 'electron';
import { join } from 'node:path';
import type { Alert } from '../../shared/jobs.js';
import type { Engine } from '../engine/engine.js';
import { TRAY_TOOLTIPS, trayState, type TrayState } from './tray-state.js';

export interface TrayActions {
  show(): void;
  quit(): void;
}

export function createTray(engine: Engine, assetsDir: string, actions: TrayActions): () => void {
  const icon = (state: TrayState) => nativeImage.createFromPath(join(assetsDir, `tray-${state}.png`));
  const tray = new Tray(icon('ok'));
  const alerts: Alert[] = [];
  let shown: TrayState = 'ok';
  const refresh = (): void => {
    const state = trayState(alerts);
    if (state === shown) return;
    shown = state;
    tray.setImage(icon(state));
    tray.setToolTip(TRAY_TOOLTIPS[state]);
  };
  tray.setToolTip(TRAY_TOOLTIPS.ok);
  tray.setContextMenu(
    Menu.buildFromTemplate([
      { label: 'Show gpushare', click: actions.show },
      { label: 'Pause all best-effort jobs', click: () => void pauseBestEffort(engine) },
      { type: 'separator' },
      { label: 'Quit', click: actions.quit },
    ]),
  );
  tray.on('click', actions.show);
  const off = engine.events.on('alert', (alert) => {
    alerts.push(alert);
    if (alerts.length > 200) alerts.shift();
    refresh();
  });
  const timer = setInterval(refresh, 10_000);
  return () => {
    off();
    clearInterval(timer);
    tray.destroy();
  };
}

async function pauseBestEffort(engine: Engine): Promise<void> {
  try {
    const jobs = await engine.call('jobs.list', {});
    const running = jobs.filter((j) => j.priority === 'best-effort' && (j.state === 'running' || j.state === 'gated'));
    await Promise.allSettled(running.map((j) => engine.call('jobs.suspend', { job: j.id })));
  } catch (error) {
    engine.raiseAlert({ kind: 'suspended', severity: 'warning', gpu: null, jobId: null, message: `Could not pause best-effort jobs: ${error instanceof Error ? error.message : String(error)}` });
  }
}
