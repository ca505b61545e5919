// The tray: an icon that says all well / contention / alert for this user's jobs and the GPUs
// they use (engine-view.ts decides which conditions those are), and a small menu.
import { Menu, nativeImage, Tray, type NativeImage } from 'electron';
import { readFileSync } from 'node:fs';
import type { ActiveCondition } from '../../shared/api.js';
import type { EngineView } from './engine-view.js';
import { trayIconFiles } from './tray-icons.js';
import { TRAY_TOOLTIPS, trayState, trayTooltip, type TrayState } from './tray-state.js';

export interface TrayActions {
  show(): void;
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
  tray.setToolTip(TRAY_TOOLTIPS.ok);
  tray.setContextMenu(
    Menu.buildFromTemplate([
      { label: 'Show gpushare', click: actions.show },
      { label: 'Pause my best-effort jobs', click: () => void pause() },
      { type: 'separator' },
      { label: 'Quit', click: actions.quit },
    ]),
  );
  tray.on('click', actions.show);
  const off = view.onMyConditions(refresh);
  refresh(view.myConditions());
  return () => {
    off();
    tray.destroy();
  };
}
