// settings.get and settings.set: the console's choices, kept in the config file of the person this
// engine belongs to. A personal engine's socket answers its owner alone; anyone else asking (the box
// daemon's users) is told where preferences live rather than given another person's file.
import { ApiError } from '../api/api-error.js';
import type { Caller, Dispatcher } from '../api/dispatcher.js';
import { loadUserConfig, saveConsolePreferences, userConfigPath, UserConfigError } from './user-config.js';

export function registerSettingsCommands(dispatcher: Dispatcher, options: { ownerUid: number; file?: string }): void {
  const file = options.file ?? userConfigPath();
  const ownOnly = (caller: Caller): void => {
    if (caller.uid !== options.ownerUid) {
      throw new ApiError('unsupported', `Console preferences are kept by each person's personal engine, in their own ${userConfigPath({ HOME: '~' })}; this engine is another user's.`);
    }
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
    ownOnly(caller);
    return asApiError(() => loadUserConfig(file).console ?? {});
  });
  dispatcher.register('settings.set', ({ preferences }, caller) => {
    ownOnly(caller);
    return asApiError(() => saveConsolePreferences(preferences, file));
  });
}
