// The tray: an icon that says all well / contention / alert, and a small menu.
import { Menu, nativeImage, Tray } from 'electron';
import { join } from 'node:path';
import type { ActiveCondition } from '../../shared/api.js';
import type { Engine } from '../engine/engine.js';
import { TRAY_TOOLTIPS, trayState, trayTooltip, type TrayState } from './tray-state.js';

export interface TrayActions {
  show(): void;
  quit(): void;
}

export function createTray(engine: Engine, assetsDir: string, actions: TrayActions): () => void {
  const icon = (state: TrayState) => nativeImage.createFromPath(join(assetsDir, `tray-${state}.png`));
  const tray = new Tray(icon('ok'));
  let shown: TrayState = 'ok';
  let tooltip = TRAY_TOOLTIPS.ok;
  // the tray follows the conditions that hold now; the engine says when they change
  const refresh = (conditions: readonly ActiveCondition[]): void => {
    const state = trayState(conditions);
    if (state !== shown) tray.setImage(icon(state));
    shown = state;
    const text = trayTooltip(conditions);
    if (text !== tooltip) tray.setToolTip((tooltip = text));
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
  const off = engine.events.on('conditions', refresh);
  refresh(engine.conditions);
  return () => {
    off();
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
