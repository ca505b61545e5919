// The box daemon: one engine for the whole box, run as root, every user a client on a unix
// socket whose callers the kernel names. It never listens on TCP (browsers come through
// each user's `gpushare console`). Managed jobs run as their users and outlive it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DaemonConfig } from '../../../shared/lab-policy.js';
import { assembleEngine } from '../assemble-engine.js';
import type { Engine } from '../engine.js';
import { rootOnlyProblem, spawnHelperPath } from '../scheduler/spawn-as-user.js';
import { loadDaemonConfig, writeDaemonConfig } from './config-file.js';
import { parseMetricsAddress, type MetricsAddress } from '../metrics/metrics-address.js';
import { DAEMON_CONFIG, DAEMON_DB, DAEMON_SOCKET } from './daemon-paths.js';

export { DAEMON_CONFIG, DAEMON_DB, DAEMON_SOCKET };

export interface DaemonOptions {
  socket?: string;
  db?: string;
  config?: string;
  /** A scenario: simulated GPUs (labelled so everywhere); absent: the real driver, or a clear error. */
  simulate?: string;
  /** Sentences for the admin (the journal). */
  say?: (line: string) => void;
  /** Serve Prometheus metrics here (`--metrics`); absent: the config file's `metrics`, if any. */
  metrics?: MetricsAddress | null;
}

export interface Daemon {
  engine: Engine;
  config: DaemonConfig;
  socketPath: string;
  /** The metrics endpoint's URL, when one was asked for. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/** Open everything, or nothing: a bad config or an unopenable store stops the start before any socket exists. */
export async function openDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const say = options.say ?? (() => undefined);
  if (process.getuid?.() !== 0) {
    throw new Error('gpushare daemon runs as root: it runs every user\'s jobs as their own users and signals any process. For your own use, run `gpushare start` or `gpushare serve`.');
  }
  const configPath = options.config ?? DAEMON_CONFIG;
  const config = loadDaemonConfig(configPath, say);
  const socketPath = options.socket ?? DAEMON_SOCKET;
  const runDir = dirname(socketPath);
  const dbPath = options.db ?? DAEMON_DB;

  const metricsAddress = options.metrics ?? (config.metrics === null ? null : parseMetricsAddress(config.metrics, 'metrics')); // the command line wins
  const host = await assembleEngine({
    kind: 'daemon',
    adminGroup: config.adminGroup,
    gpus: { simulate: options.simulate, simulatedState: { dir: runDir, everyone: true } }, // no driver: a clear error, never simulated GPUs unasked
    rateHz: config.rateHz,
    store: { path: dbPath, owner: 'box' },
    scheduler: {
      stateDir: dirname(dbPath),
      runtimeDir: runDir,
      labPolicy: config.policy,
      policyReadsUsage: true, // fair share and the high-priority hours read recent usage
      persistPolicy: (policy) => writeDaemonConfig(configPath, { ...config, policy }),
      autoPark: config.autoParkIdleSeconds ? { idleMs: config.autoParkIdleSeconds * 1000 } : null,
      maxQueuedPerUser: config.maxQueuedJobsPerUser,
      slurm: config.slurm,
    },
    settings: { perUserDir: join(dirname(dbPath), 'preferences') }, // each user's console choices, root's files
    socket: { path: socketPath, shared: true, limits: config.connections, limitsFrom: configPath },
    web: null, // browsers come through each user's `gpushare console`
    metrics: metricsAddress,
    boxName: config.boxName ?? undefined,
    demo: false,
    warnOtherEngines: false,
    say,
  });
  const helperProblem = rootOnlyProblem(spawnHelperPath());
  if (helperProblem) say(`Users' jobs cannot start: their exec helper gpushare-spawn is not safe to run as root (${helperProblem}).`);
  const files = openFileLimit();
  if (files !== null && files < config.connections.total + RESERVED_FILES)
    say(`connections.total (${config.connections.total}) leaves fewer than ${RESERVED_FILES} of the daemon's ${files} open files (its limit, LimitNOFILE in the unit) for its store, jobs and logs: lower it in ${configPath} or raise the limit.`);
  const simulated = host.backend.label.simulated ? ` on SIMULATED GPUs (scenario ${host.backend.label.scenario})` : '';
  say(`gpushare daemon: listening on ${host.socketPath}${simulated}; store ${dbPath}; config ${configPath}; administrators: root and group ${config.adminGroup}.`);
  if (host.metricsUrl) say(`Metrics for Prometheus: ${host.metricsUrl}`);
  return { engine: host.engine, config, socketPath: host.socketPath, metricsUrl: host.metricsUrl, close: () => host.close() };
}

/** Descriptors the daemon keeps for itself beyond its clients' connections (store, gate files, job logs, pipes). */
const RESERVED_FILES = 256;

/** The daemon's soft limit on open files (Node raises it to the hard limit at start), or null where unknown. */
function openFileLimit(): number | null {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return soft === undefined ? null : Number(soft);
  } catch {
    return null;
  }
}

/** `gpushare daemon`: run until SIGTERM / SIGINT / SIGHUP, then stop cleanly. */
export async function runDaemon(options: DaemonOptions = {}): Promise<number> {
  const say = options.say ?? ((line: string) => process.stderr.write(line + '\n'));
  // caught before the socket answers: systemd's stop during a start still ends cleanly
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  const daemon = await openDaemon({ ...options, say });
  await stopped;
  await daemon.close();
  return 0;
}
