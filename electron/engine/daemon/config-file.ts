// The box daemon's config file (/etc/gpushare/config.json): read whole and checked before
// anything starts, written whole by rename, so the daemon never runs half-configured.
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseDaemonConfig, type DaemonConfig, type DaemonConfigInput } from '../../../shared/lab-policy.js';
import { ValidationError } from '../../../shared/schema.js';
import { JsonSyntaxError, parseJsonStrict } from './config-file-json.js';
import { MetricsAddressError, parseMetricsAddress } from '../metrics/metrics-address.js';

export class DaemonConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'DaemonConfigError';
  }
}

/**
 * The config at `file`, every default filled in. A missing file means the defaults (and `say`
 * tells the admin so); anything else wrong is a DaemonConfigError naming the file and the key.
 */
export function loadDaemonConfig(file: string, say: (line: string) => void = () => undefined): DaemonConfig {
  let text: string;
  try {
    const stats = statSync(file);
    if (!stats.isFile()) throw new DaemonConfigError(file, stats.isDirectory() ? 'is a directory, not a config file' : 'is not a regular file');
    checkOnlyRootCanChange(file, stats);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof DaemonConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      const defaults = parseDaemonConfig({});
      say(`${file} does not exist: using the defaults (administrators: root and group ${defaults.adminGroup}; no limits; fair share with a ${defaults.policy.fairShare.halfLifeHours} h half-life; idle holders ${defaults.policy.idleHolders.park ? 'parked after a grace period' : 'reported, never parked'}). \`gpushare daemon install\` writes the default file.`);
      return defaults;
    }
    throw new DaemonConfigError(file, `cannot be read (${(error as Error).message})`);
  }
  return parseConfigText(file, text);
}

/** Check a config file's text as the daemon would: syntax with line and column, then the schema with the key. */
export function parseConfigText(file: string, text: string): DaemonConfig {
  let value: unknown;
  try {
    value = parseJsonStrict(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new DaemonConfigError(`${file}:${error.line}:${error.column}`, `not valid JSON: ${error.problem}`);
    throw error;
  }
  try {
    const config = parseDaemonConfig(value);
    if (config.metrics !== null) parseMetricsAddress(config.metrics, 'metrics'); // the address itself, checked before anything starts
    return config;
  } catch (error) {
    if (error instanceof ValidationError) throw new DaemonConfigError(file, error.path ? error.message : `the whole file ${error.problem}`);
    if (error instanceof MetricsAddressError) throw new DaemonConfigError(file, error.message);
    throw error;
  }
}

/**
 * Replace the config file with `config` (checked first) in one rename: a reader sees the old file
 * or the new one, never half of it. Mode 0644, owned by whoever writes it (root, for the daemon).
 */
export function writeDaemonConfig(file: string, config: DaemonConfig | DaemonConfigInput): DaemonConfig {
  let checked: DaemonConfig;
  try {
    checked = parseDaemonConfig(config);
  } catch (error) {
    if (error instanceof ValidationError) throw new DaemonConfigError(file, `not written: ${error.message}`);
    throw error;
  }
  writeFileAtomic(file, configText(checked));
  return checked;
}

/** The file `gpushare daemon install` writes: every key at its default (JSON has no comments: the README explains each). */
export function defaultConfigText(): string {
  return configText(parseDaemonConfig({}));
}

const SIZE_UNITS = [
  ['T', 1024 ** 4],
  ['G', 1024 ** 3],
  ['M', 1024 ** 2],
  ['K', 1024],
] as const;

/** "40G" rather than 42949672960 where the size is a whole number of some unit: the way an admin writes it. */
function memoryText(bytes: number): string | number {
  for (const [unit, size] of SIZE_UNITS) if (bytes % size === 0) return `${bytes / size}${unit}`;
  return bytes;
}

function configText(config: DaemonConfig): string {
  const policy = { ...config.policy, limits: config.policy.limits.map((l) => (l.maxMemory === undefined ? l : { ...l, maxMemory: memoryText(l.maxMemory) })) };
  const connections = { ...config.connections, unreadBytesPerUser: memoryText(config.connections.unreadBytesPerUser), unreadBytesTotal: memoryText(config.connections.unreadBytesTotal) };
  return JSON.stringify({ ...config, policy, connections }, null, 2) + '\n';
}

function writeFileAtomic(file: string, text: string): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`);
  let fd: number | null = null;
  try {
    fd = openSync(temp, 'wx', 0o644);
    fchmodSync(fd, 0o644); // whatever the umask
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(temp, file);
  } catch (error) {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // never created, or already renamed
    }
    throw new DaemonConfigError(file, `could not be written (${(error as Error).message})`);
  }
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir); // the rename itself survives a crash
  } finally {
    closeSync(dir);
  }
}

/**
 * The config names the administrators: a root daemon refuses one that someone other than root
 * could change (the file, or its directory unless sticky), as sshd does with StrictModes.
 */
function checkOnlyRootCanChange(file: string, fileStats: Stats): void {
  const self = process.geteuid?.();
  if (self !== 0) return; // a daemon that is not root grants nobody anything
  const unsafe = (stats: Stats, what: string, path: string): string | null => {
    if (stats.uid !== 0) return `${what} is owned by uid ${stats.uid}, not root, who could make themselves a gpushare administrator (chown root ${path})`;
    if (stats.mode & 0o022 && !(stats.isDirectory() && stats.mode & 0o1000)) return `${what} can be written by users other than root, who could make themselves gpushare administrators (chmod go-w ${path})`;
    return null;
  };
  const dir = dirname(file);
  const problem = unsafe(fileStats, 'it', file) ?? unsafe(statSync(dir), `its directory ${dir}`, dir);
  if (problem) throw new DaemonConfigError(file, `refused: ${problem}`);
}
