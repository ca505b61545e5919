// settings.get and settings.set: the console's choices, each person's own. A personal engine keeps
// them in its owner's config file and tells anyone else where theirs live; the box daemon keeps one
// file per user in its own folder (root's, 0600), never writing into a user's home as root.
import { join } from 'node:path';
import { ApiError } from '../api/api-error.js';
import type { Caller, Dispatcher } from '../api/dispatcher.js';
import { loadUserConfig, saveConsolePreferences, userConfigPath, UserConfigError } from './user-config.js';

/** Where a caller's choices are kept, or null when this engine keeps none for them. */
type FileFor = (caller: Caller) => string | null;

/** A personal engine: its owner's config file. */
export const ownerConfigFile = (ownerUid: number, file = userConfigPath()): FileFor => (caller) => (caller.uid === ownerUid ? file : null);

/** The box daemon: DIR/UID.json for each user. */
export const perUserFiles = (dir: string): FileFor => (caller) => join(dir, `${caller.uid}.json`);

export function registerSettingsCommands(dispatcher: Dispatcher, fileFor: FileFor): void {
  const fileOf = (caller: Caller): string => {
    const file = fileFor(caller);
    if (file === null) throw new ApiError('unsupported', `Console preferences are kept by each person's personal engine, in their own ${userConfigPath({ HOME: '~' })}; this engine is another user's.`);
    return file;
  };
  const asApiError = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (error instanceof UserConfigError) throw new ApiError('conflict', `${error.message}. Fix or remove it; the console's choices are not kept meanwhile.`);
      throw error;
    }
  };
  dispatcher.register('settings.get', (_params, caller) => {
    const file = fileOf(caller);
    return asApiError(() => loadUserConfig(file).console ?? {});
  });
  dispatcher.register('settings.set', ({ preferences }, caller) => {
    const file = fileOf(caller);
    return asApiError(() => saveConsolePreferences(preferences, file));
  });
}
