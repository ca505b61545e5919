// The desktop window opens at the size it had when it was last closed, kept in the user's settings
// file (console.window) beside the console's own choices. Pure: the file is reached through loader
// and saver functions, so tests need neither Electron nor a home directory.
import type { ConsolePreferences } from '../../shared/settings.js';

export interface WindowSize {
  width: number;
  height: number;
}

export const DEFAULT_WINDOW_SIZE: WindowSize = { width: 1440, height: 920 };
// the bounds shared/settings.ts accepts: a size outside them would make the file invalid
const MIN = { width: 320, height: 240 };
const MAX = 16384;

/** The size to open at: the one kept, or the default where none is kept or the file cannot be read (said once). */
export function initialWindowSize(load: () => ConsolePreferences | undefined, say: (line: string) => void): WindowSize {
  try {
    const kept = load()?.window;
    return kept ? { width: kept.width, height: kept.height } : DEFAULT_WINDOW_SIZE;
  } catch (error) {
    say(`gpushare: the window opens at its default size: ${(error as Error).message}`);
    return DEFAULT_WINDOW_SIZE;
  }
}

/** A window size as the settings file accepts it: whole pixels within its bounds. */
export function keepableSize(size: WindowSize): WindowSize {
  const clamp = (value: number, min: number): number => Math.min(MAX, Math.max(min, Math.round(value)));
  return { width: clamp(size.width, MIN.width), height: clamp(size.height, MIN.height) };
}

/**
 * Keep the window's size when it closes, if it changed; a settings file that cannot be written
 * (or is not valid, so it is left alone) costs only the size, said on stderr.
 */
export function keepWindowSize(size: WindowSize, opened: WindowSize, save: (preferences: ConsolePreferences) => void, say: (line: string) => void): boolean {
  const kept = keepableSize(size);
  if (kept.width === opened.width && kept.height === opened.height) return false;
  try {
    save({ window: kept });
    return true;
  } catch (error) {
    say(`gpushare: the window's size was not kept: ${(error as Error).message}`);
    return false;
  }
}
