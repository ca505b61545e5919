// The person's engine defaults from their config file, for the commands that start an engine or a
// job; a flag on the command line wins. A bad file stops the command, naming the file and the key.
import type { EngineSettings } from '../../shared/settings.js';
import { loadUserConfig } from '../engine/settings/user-config.js';

export function engineDefaults(): EngineSettings {
  return loadUserConfig().engine ?? {};
}
