// The person's own config file, $XDG_CONFIG_HOME/gpushare/config.json (default ~/.config): defaults
// for their personal engine, read at start, and the console's choices, written back by settings.set.
// Read whole and checked (syntax with line and column, then the key); written whole by rename, 0600.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ValidationError } from '../../../shared/schema.js';
import { userConfigSchema, type ConsolePreferences, type UserConfig } from '../../../shared/settings.js';
import { JsonSyntaxError, parseJsonStrict } from '../daemon/config-file-json.js';
import { MetricsAddressError, parseMetricsAddress } from '../metrics/metrics-address.js';

export class UserConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'UserConfigError';
  }
}

export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'gpushare', 'config.json');
}

/** The settings in `file`; a missing file is no settings; anything wrong is a UserConfigError naming the file and key. */
export function loadUserConfig(file = userConfigPath()): UserConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UserConfigError(file, `cannot be read (${(error as Error).message})`);
  }
  return parseUserConfigText(file, text);
}

export function parseUserConfigText(file: string, text: string): UserConfig {
  let value: unknown;
  try {
    value = parseJsonStrict(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new UserConfigError(`${file}:${error.line}:${error.column}`, `not valid JSON: ${error.problem}`);
    throw error;
  }
  try {
    const config = userConfigSchema.parse(value, '');
    if (config.engine?.metrics !== undefined) parseMetricsAddress(config.engine.metrics, 'engine.metrics');
    return config;
  } catch (error) {
    if (error instanceof ValidationError) throw new UserConfigError(file, error.path ? error.message : `the whole file ${error.problem}`);
    if (error instanceof MetricsAddressError) throw new UserConfigError(file, error.message);
    throw error;
  }
}

/**
 * Keep the console's choices in `file`: the ones given replace those kept (the console sends its
 * filters, the desktop app its window size), the rest of the file stays as it was. A file that is
 * not valid is not overwritten (the person's engine settings would be lost): the error says what to fix.
 */
export function saveConsolePreferences(preferences: ConsolePreferences, file = userConfigPath()): ConsolePreferences {
  const config = loadUserConfig(file);
  const kept = { ...config.console, ...preferences };
  writeWhole(file, JSON.stringify({ ...config, console: kept }, null, 2) + '\n');
  return kept;
}

function writeWhole(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = join(dirname(file), `.config.json.${randomBytes(6).toString('hex')}`);
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, file); // readers see the old file or the new one, never half of it
}
