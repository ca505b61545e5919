// `gpushare daemon install`: the systemd unit that runs this installation as root, the default
// config (never over an admin's), the admin group. Everything is checked before anything is written.
import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defaultConfigText, loadDaemonConfig } from '../../engine/daemon/config-file.js';
import { DAEMON_CONFIG } from '../../engine/daemon/daemon-host.js';
import { packageRoot } from '../../engine/paths.js';
import { applyPreloadAll, foreignLoaders, installedPreloadLibrary, PreloadAllError, preparePreloadAll } from './preload-all.js';

export const UNIT_PATH = '/etc/systemd/system/gpushare.service';
export const START_COMMAND = 'systemctl daemon-reload && systemctl enable --now gpushare';

export interface InstallOptions {
  /** Where / is: '/' for the box itself, a staging directory for packages and tests. */
  root: string;
  /** The node binary the unit runs (absolute). */
  node: string;
  /** The installation: its electron/cli/gpushare.js, assets/ and compiled tree. */
  packageRoot: string;
  /** The compiled tree gpushare.js loads, when not <packageRoot>/dist (GPUSHARE_DIST). */
  compiledTree?: string;
  /** Refuse (rather than warn) when someone other than root could change what the daemon runs. */
  refuseUnsafe: boolean;
  /** Create the config's admin group when the box has none (groupadd). */
  createGroup: boolean;
  /** The box-wide route: true names the preload library in /etc/ld.so.preload, false takes it out, absent leaves the file alone. */
  preloadAll?: boolean;
  say(line: string): void;
  warn(line: string): void;
}

export class InstallError extends Error {}

/** Install, or throw an InstallError before writing anything when a check fails. */
export function installDaemon(options: InstallOptions): void {
  const { root, say } = options;
  if (!isAbsolute(options.node)) throw new InstallError(`--node must be an absolute path, got "${options.node}".`);
  if (!isExecutableFile(options.node)) throw new InstallError(`${options.node} is not an executable file: --node names the node binary the daemon runs.`);
  const cli = join(options.packageRoot, 'electron', 'cli', 'gpushare.js');
  const tree = options.compiledTree ?? join(options.packageRoot, 'dist');
  if (!existsSync(join(tree, 'electron', 'cli', 'main.js'))) throw new InstallError(`${tree} holds no compiled gpushare: run \`npm install\` (or \`npm run build\`) in ${options.packageRoot} first.`);

  const unsafe = unsafePaths([options.node, cli, join(options.packageRoot, 'package.json')], [tree, join(options.packageRoot, 'node_modules'), join(options.packageRoot, 'native')]);
  if (unsafe.length > 0) {
    const problem = `someone other than root can change what the daemon would run as root, and so become root: ${unsafe.slice(0, 5).join('; ')}${unsafe.length > 5 ? `; and ${unsafe.length - 5} more` : ''}`;
    if (options.refuseUnsafe) throw new InstallError(`Not installed: ${problem}. Install gpushare where only root can write (a root-owned directory such as /opt/gpushare), or make these paths root's and not writable by others.`);
    options.warn(`warning: ${problem}.`);
  }

  const unitFile = join(root, UNIT_PATH);
  const configFile = join(root, DAEMON_CONFIG);
  const configExists = existsSync(configFile);
  let config;
  try {
    config = loadDaemonConfig(configFile);
  } catch (error) {
    throw new InstallError(`Not installed: the config in place would stop the daemon: ${(error as Error).message}`);
  }
  let preload;
  try {
    preload = options.preloadAll === undefined ? null : preparePreloadAll(root, installedPreloadLibrary(options.packageRoot), options.preloadAll);
  } catch (error) {
    if (error instanceof PreloadAllError) throw new InstallError(`Not installed: ${error.message}`);
    throw error;
  }
  const template = readFileSync(join(options.packageRoot, 'assets', 'systemd', 'gpushare.service'), 'utf8');
  const unit = renderUnit(template, { node: options.node, cli, readme: join(options.packageRoot, 'README.md'), compiledTree: options.compiledTree });
  const previous = existsSync(unitFile) ? readFileSync(unitFile, 'utf8') : null;

  if (previous === unit) say(`kept ${unitFile}: already runs ${options.node} ${cli} daemon`);
  else {
    writeRootFile(unitFile, unit);
    say(`${previous === null ? 'wrote' : 'updated'} ${unitFile}: runs ${options.node} ${cli} daemon as root`);
  }
  if (configExists) say(`kept ${configFile}: yours, and valid (administrators: root and group ${config.adminGroup}; ${config.policy.limits.length} limit${config.policy.limits.length === 1 ? '' : 's'})`);
  else {
    writeRootFile(configFile, defaultConfigText());
    say(`wrote ${configFile}: the defaults (administrators: root and group ${config.adminGroup}; no limits); the README lists every key`);
  }
  if (preload) applyPreloadAll(preload.file, installedPreloadLibrary(options.packageRoot), preload.plan, say);
  const foreign = preload?.plan.change === 'added' || preload?.plan.change === 'replaced' ? foreignLoaders() : [];
  if (foreign.length > 0) options.warn(`warning: 32-bit programs (loader ${foreign.join(', ')}) cannot load the 64-bit library: each prints one ld.so error line on stderr and runs on without it.`);
  if (!options.createGroup) say(`skipped the group ${config.adminGroup} (--root: create it on the box that runs the daemon)`);
  else {
    const members = groupMembers(config.adminGroup);
    if (members !== null) say(`kept the group ${config.adminGroup} (members: ${members.join(', ') || 'none yet'}): add an administrator with \`usermod -aG ${config.adminGroup} USER\``);
    else {
      addGroup(config.adminGroup);
      say(`created the group ${config.adminGroup}: add an administrator with \`usermod -aG ${config.adminGroup} USER\``);
    }
  }
}

/** The unit for this installation: ExecStart with its absolute paths, quoted as systemd reads them. */
export function renderUnit(template: string, paths: { node: string; cli: string; readme: string; compiledTree?: string }): string {
  const exec = /^ExecStart=@EXEC@ /m;
  const docs = /^Documentation=@README@$/m;
  if (!exec.test(template) || !docs.test(template)) throw new InstallError('The unit template has no ExecStart=@EXEC@ or Documentation=@README@ line: the installation is damaged.');
  let unit = template
    .replace(exec, () => `ExecStart=${systemdWord(paths.node, { expandsVariables: false })} ${systemdWord(paths.cli)} `) // systemd finds the binary before it expands $
    .replace(docs, () => `Documentation=${escapeSpecifiers(pathToFileURL(paths.readme).href)}`);
  if (paths.compiledTree) unit = unit.replace(/^(ExecStart=.*)$/m, (line) => `${line}\nEnvironment=${systemdWord(`GPUSHARE_DIST=${paths.compiledTree}`, { expandsVariables: false })}`);
  return unit;
}

const escapeSpecifiers = (text: string): string => text.replace(/%/g, '%%');

/** One word of a unit's command line: % (specifiers) and, where expanded, $ (variables) doubled; quoted when it has spaces or quotes. */
export function systemdWord(text: string, options: { expandsVariables?: boolean } = {}): string {
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new InstallError(`${JSON.stringify(text)} has a control character (a line break?): a systemd unit cannot hold it.`);
  let word = escapeSpecifiers(text);
  if (options.expandsVariables !== false) word = word.replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_@%$+=:,./-]+$/.test(word) ? word : `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Written whole by rename, mode 0644 and its new directories 0755 whatever the umask. */
function writeRootFile(file: string, text: string): void {
  const created = mkdirSync(dirname(file), { recursive: true });
  for (let dir = dirname(file); created !== undefined && dir.length >= created.length; dir = dirname(dir)) chmodSync(dir, 0o755);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o644 });
  chmodSync(temp, 0o644);
  renameSync(temp, file);
}

function addGroup(group: string): void {
  try {
    execFileSync('groupadd', ['--system', group], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim();
    throw new InstallError(`groupadd --system ${group} failed (${stderr || (error as Error).message}); the files above are written: create the group, or run the install again.`);
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The account's members, or null when the box has no such group. */
function groupMembers(group: string): string[] | null {
  try {
    const line = execFileSync('getent', ['group', group], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return line.split(':')[3]?.split(',').filter(Boolean) ?? [];
  } catch {
    return null; // getent exits 2 for an unknown group
  }
}

/** What node loads or a job maps: a change to any of these runs as root (or as another user's job). */
const LOADED = /\.(?:js|mjs|cjs|json|node)$|\.so(?:\.\d+)*$/;

/**
 * Paths that someone other than root could change, among `files`, the loaded files under `trees`
 * (build leftovers such as sources npm unpacked as uid 1000 are never loaded), and every
 * directory above them: not owned by root, or writable by group or others (a sticky
 * directory such as /tmp excepted: nobody else can replace what root put there).
 */
export function unsafePaths(files: string[], trees: string[]): string[] {
  const problems = new Map<string, string>();
  const checked = new Set<string>();
  const check = (path: string): void => {
    if (checked.has(path)) return;
    checked.add(path);
    const stats = lstatSync(path);
    if (stats.isSymbolicLink()) return; // its target is checked where it is loaded from
    if (stats.uid !== 0) problems.set(path, `${path} is owned by uid ${stats.uid}`);
    else if (stats.mode & 0o022 && !(stats.isDirectory() && stats.mode & 0o1000)) problems.set(path, `${path} is writable by ${stats.mode & 0o002 ? 'everyone' : `group ${stats.gid}`}`);
  };
  const withAncestors = (path: string): void => {
    for (let at = path; ; at = dirname(at)) {
      check(at);
      if (at === dirname(at)) return;
    }
  };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && LOADED.test(entry.name)) withAncestors(path);
    }
  };
  for (const file of files) for (const path of new Set([resolve(file), realpathSync(file)])) withAncestors(path);
  for (const tree of trees.filter((t) => existsSync(t))) walk(realpathSync(tree));
  return [...problems.values()];
}

export const defaultInstallOptions = (): Pick<InstallOptions, 'node' | 'packageRoot' | 'compiledTree'> => ({
  node: process.execPath,
  packageRoot: packageRoot(),
  compiledTree: process.env.GPUSHARE_DIST ? resolve(packageRoot(), process.env.GPUSHARE_DIST) : undefined,
});
