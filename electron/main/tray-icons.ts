// The tray icon of each state at the sizes Linux panels draw them (16 px classic, 22 KDE and
// AppIndicator, 24 XFCE/MATE, 32 and 48 on HiDPI panels), as scale factors of one 16 px image, so
// Electron hands the panel the sharpest one rather than a blurred 16 px.
import { join } from 'node:path';
import type { TrayState } from './tray-state.js';

export const TRAY_ICON_SIZES = [16, 22, 24, 32, 48] as const;
const BASE_SIZE = 16;

export interface TrayIconFile {
  path: string;
  size: number;
  scaleFactor: number;
}

/** assets/tray/STATE-SIZE.png for each size (written by assets/generate-icons.mjs). */
export function trayIconFiles(assetsDir: string, state: TrayState): TrayIconFile[] {
  return TRAY_ICON_SIZES.map((size) => ({ path: join(assetsDir, 'tray', `${state}-${size}.png`), size, scaleFactor: size / BASE_SIZE }));
}
