// The tray: an icon that says all well / contention / alert for this user's jobs and the GPUs
// they use (engine-view.ts decides which conditions those are), and a small menu.
import { Menu, nativeImage, Tray, type NativeImage } from 'electron';
import { readFileSync } from 'node:fs';
import type { ActiveCondition } from '../../shared/api.js';
import type { DesktopLabStatus } from '../../shared/bridge.js';
import type { EngineView } from './engine-view.js';
import { trayIconFiles } from './tray-icons.js';
import { TRAY_TOOLTIPS, trayMenu, trayState, trayTooltip, type TrayAction, type TrayState } from './tray-state.js';

/** How often the menu looks at the lab list again (two small files): one written while the app runs gets its Lab item. */
const LAB_LIST_CHECK_MS = 5000;

export interface TrayActions {
  show(): void;
  /** Open the Lab window, or focus the one showing the Lab view. */
  showLab(): void;
  /** Is there a lab list (lab-windows.ts status()): the menu's Lab item follows it. */
  labStatus(): DesktopLabStatus;
  quit(): void;
  /** Tell the user something the tray could not do. */
  tell(title: string, body: string): void;
}

export function createTray(view: EngineView, assetsDir: string, actions: TrayActions): () => void {
  const icon = (state: TrayState): NativeImage => {
    const image = nativeImage.createEmpty();
    for (const file of trayIconFiles(assetsDir, state)) {
      image.addRepresentation({ scaleFactor: file.scaleFactor, width: file.size, height: file.size, buffer: readFileSync(file.path) });
    }
    return image;
  };
  const tray = new Tray(icon('ok'));
  let shown: TrayState = 'ok';
  let tooltip = TRAY_TOOLTIPS.ok;
  const refresh = (conditions: readonly ActiveCondition[]): void => {
    const state = trayState(conditions);
    if (state !== shown) tray.setImage(icon(state));
    shown = state;
    const text = trayTooltip(conditions);
    if (text !== tooltip) tray.setToolTip((tooltip = text));
  };
  const pause = async (): Promise<void> => {
    try {
      const { refused } = await view.pauseMyBestEffort();
      if (refused.length > 0) actions.tell('Some jobs were not paused', `The engine refused to suspend ${refused.join(', ')}.`);
    } catch (error) {
      actions.tell('Could not pause your best-effort jobs', error instanceof Error ? error.message : String(error));
    }
  };
  const clicks: Record<TrayAction, () => void> = { show: actions.show, lab: actions.showLab, pause: () => void pause(), quit: actions.quit };
  let menuShown = '';
  const refreshMenu = (): void => {
    const items = trayMenu(actions.labStatus());
    const key = JSON.stringify(items);
    if (key === menuShown) return;
    menuShown = key;
    tray.setContextMenu(Menu.buildFromTemplate(items.map((item) => ('separator' in item ? { type: 'separator' } : { label: item.label, click: clicks[item.action] }))));
  };
  tray.setToolTip(TRAY_TOOLTIPS.ok);
  refreshMenu();
  const labCheck = setInterval(refreshMenu, LAB_LIST_CHECK_MS);
  tray.on('click', actions.show);
  const off = view.onMyConditions(refresh);
  refresh(view.myConditions());
  return () => {
    off();
    clearInterval(labCheck);
    tray.destroy();
  };
}
