// `gpushare daemon`: the box daemon (one engine for every user, run as root by systemd),
// and `gpushare daemon install`, which writes its unit and default config.
import { resolve } from 'node:path';
import { DaemonConfigError } from '../../engine/daemon/config-file.js';
import { DAEMON_CONFIG, DAEMON_DB, DAEMON_SOCKET, runDaemon, type DaemonOptions } from '../../engine/daemon/daemon-host.js';
import { DEFAULT_SCENARIO } from '../../engine/gpu/open-backend.js';
import { parseFlags, UsageError } from '../args.js';
import { METRICS_USAGE, metricsOption } from '../metrics-option.js';
import { LD_SO_PRELOAD } from './preload-all.js';
import { defaultInstallOptions, installDaemon, InstallError, START_COMMAND, UNIT_PATH } from './daemon-install.js';

/** The exit status for a config the daemon will not start with (EX_CONFIG): the unit does not restart on it. */
export const EXIT_BAD_CONFIG = 78;

export const daemonRunUsage = `Usage: gpushare daemon [--socket PATH] [--db PATH] [--config PATH] [--simulate [SCENARIO]] [--metrics [ADDR:]PORT]
  Runs the engine as root for the whole box: every user's CLI, desktop app and console are its
  clients, named by the kernel. Socket ${DAEMON_SOCKET}, store ${DAEMON_DB},
  config ${DAEMON_CONFIG} unless given (a missing config means the defaults; a bad one is an
  error naming the key, and the daemon does not start: exit status 78). systemd runs it: see \`daemon install\`.
  ${METRICS_USAGE}`;

export const daemonInstallUsage = `Usage: gpushare daemon install [--root DIR] [--node PATH] [--preload-all | --no-preload-all]
  As root: writes ${UNIT_PATH} (running this installation), the default config if there is
  none (an existing one is kept), creates the admin group (gpushare-admin) if missing, and prints
  the command that starts it. --root DIR writes under DIR instead and creates no group (packaging,
  tests); --node PATH is the node binary the unit runs (default: this one, ${process.execPath}).
  --preload-all adds this installation's preload library to ${LD_SO_PRELOAD}, so that every program
  started on the box loads it and enrols at its first CUDA call (it stays inert in programs that never
  use CUDA); --no-preload-all takes it out. The file's other entries are kept.`;

export const daemonUsage = `${daemonRunUsage}\n${daemonInstallUsage}`;

export async function daemonCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'install') return daemonInstall(argv.slice(1));
  const options = daemonRunOptions(argv);
  try {
    return await runDaemon(options);
  } catch (error) {
    if (!(error instanceof DaemonConfigError)) throw error;
    process.stderr.write(`gpushare daemon: not started: ${error.message}\n`);
    return EXIT_BAD_CONFIG;
  }
}

/** The run options from the command line: absolute paths (systemd starts us in /), defaults filled in. */
export function daemonRunOptions(argv: string[]): Required<Pick<DaemonOptions, 'socket' | 'db' | 'config'>> & Pick<DaemonOptions, 'simulate' | 'metrics'> {
  const { values, positionals } = parseFlags(
    argv,
    { socket: { type: 'string' }, db: { type: 'string' }, config: { type: 'string' }, simulate: { type: 'string' }, metrics: { type: 'string' } },
    { simulate: DEFAULT_SCENARIO },
  );
  if (positionals.length > 0) throw new UsageError(`Unknown daemon command "${positionals[0]}": gpushare daemon runs the daemon, \`gpushare daemon install\` installs it.\n${daemonUsage}`);
  const path = (flag: 'socket' | 'db' | 'config', fallback: string): string => {
    const value = values[flag];
    if (value === undefined) return fallback;
    if (value.trim() === '') throw new UsageError(`--${flag} needs a path, got "".`);
    return resolve(value);
  };
  return {
    socket: path('socket', DAEMON_SOCKET),
    db: path('db', DAEMON_DB),
    config: path('config', DAEMON_CONFIG),
    ...(values.simulate === undefined ? {} : { simulate: values.simulate }),
    ...(values.metrics === undefined ? {} : { metrics: metricsOption(values.metrics) }),
  };
}

/** `daemon install`; `euid` is who runs it (root, unless --root stages the files elsewhere). */
export async function daemonInstall(argv: string[], euid = process.geteuid?.()): Promise<number> {
  const { values, positionals } = parseFlags(argv, { root: { type: 'string' }, node: { type: 'string' }, 'preload-all': { type: 'boolean' }, 'no-preload-all': { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`gpushare daemon install takes no arguments, got "${positionals[0]}".`);
  if (values['preload-all'] && values['no-preload-all']) throw new UsageError('--preload-all and --no-preload-all contradict each other: give one.');
  const preloadAll = values['preload-all'] ? true : values['no-preload-all'] ? false : undefined;
  if (values.root !== undefined && values.root.trim() === '') throw new UsageError('--root needs a directory, got "".');
  if (values.root === undefined && euid !== 0) {
    throw new UsageError(`gpushare daemon install writes ${UNIT_PATH} and creates a group: run it as root (sudo), or with --root DIR to write the files under DIR.`);
  }
  const staged = values.root !== undefined;
  try {
    installDaemon({
      ...defaultInstallOptions(),
      ...(values.node === undefined ? {} : { node: values.node }),
      root: staged ? resolve(values.root!) : '/',
      refuseUnsafe: !staged,
      createGroup: !staged,
      ...(preloadAll === undefined ? {} : { preloadAll }),
      say: (line) => process.stdout.write(line + '\n'),
      warn: (line) => process.stderr.write(line + '\n'),
    });
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    process.stderr.write(`gpushare daemon install: ${error.message}\n`);
    return 1;
  }
  process.stdout.write(`Start it now and at every boot:\n  ${START_COMMAND}\n`);
  return 0;
}
