// The box daemon: one engine for the whole box, run as root, every user a client on a unix
// socket whose callers the kernel names. It never listens on TCP (browsers come through
// each user's `gpushare console`). Managed jobs run as their users and outlive it.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DaemonConfig } from '../../../shared/lab-policy.js';
import { Engine } from '../engine.js';
import { openGpuBackend, type GpuBackend } from '../gpu/open-backend.js';
import { attachScheduler, type AttachedScheduler } from '../scheduler/attach.js';
import { rootOnlyProblem, spawnHelperPath } from '../scheduler/spawn-as-user.js';
import { listenOnSocket, refuseBesideRunningEngine } from '../server/socket-server.js';
import { attachUsageStore } from '../store/attach.js';
import { JobStore } from '../store/job-store.js';
import { UsageStore } from '../store/usage-store.js';
import { loadDaemonConfig, writeDaemonConfig } from './config-file.js';
import { attachMetrics } from '../metrics/attach-metrics.js';
import { parseMetricsAddress, type MetricsAddress } from '../metrics/metrics-address.js';
import type { MetricsListener } from '../metrics/metrics-server.js';
import { DAEMON_CONFIG, DAEMON_DB, DAEMON_SOCKET } from './daemon-paths.js';
import { perUserFiles, registerSettingsCommands } from '../settings/settings-commands.js';

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

  await refuseBesideRunningEngine(socketPath); // a running daemon's jobs are not ours to re-adopt
  const backend: GpuBackend = await openGpuBackend({ simulate: options.simulate, simulatedState: { dir: runDir, everyone: true } });
  let store: UsageStore | null = null;
  let jobStore: JobStore | null = null;
  try {
    keepPrivate(dbPath);
    store = await UsageStore.open({ path: dbPath });
    jobStore = await JobStore.open(store.path, { onNotice: say }); // a change it cannot write is said in the journal once, and retried
  } catch (error) {
    await store?.close();
    backend.close();
    throw new Error(`The daemon cannot open its store ${dbPath}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const engine = new Engine(backend, { rateHz: config.rateHz, kind: 'daemon', adminGroup: config.adminGroup });
  const scheduler: AttachedScheduler = attachScheduler(engine, {
    backend,
    jobStore,
    stateDir: dirname(dbPath),
    runtimeDir: runDir,
    labPolicy: config.policy,
    usage: store, // fair share and the high-priority hours read recent usage from it
    persistPolicy: (policy) => writeDaemonConfig(configPath, { ...config, policy }),
    autoPark: config.autoParkIdleSeconds ? { idleMs: config.autoParkIdleSeconds * 1000 } : null,
    maxQueuedPerUser: config.maxQueuedJobsPerUser,
    slurm: config.slurm,
  });
  attachUsageStore(engine, store, { ownership: scheduler.scheduler.ownership, jobStore });
  registerSettingsCommands(engine.dispatcher, perUserFiles(join(dirname(dbPath), 'preferences'))); // each user's console choices, root's files
  if (scheduler.gateMissing) say(`Launch gate off: ${scheduler.gateMissing}.`);
  const helperProblem = rootOnlyProblem(spawnHelperPath());
  if (helperProblem) say(`Users' jobs cannot start: their exec helper gpushare-spawn is not safe to run as root (${helperProblem}).`);
  let socket: Awaited<ReturnType<typeof listenOnSocket>> | null = null;
  let metrics: MetricsListener | null = null;
  try {
    const metricsAddress = options.metrics ?? (config.metrics === null ? null : parseMetricsAddress(config.metrics, 'metrics')); // the command line wins
    if (metricsAddress) metrics = await attachMetrics(engine, scheduler.scheduler, metricsAddress); // a port in use stops the start
    socket = await listenOnSocket(engine, socketPath, { shared: true, limits: config.connections, limitsFrom: configPath }); // last: the socket answers once every command is there
  } catch (error) {
    await metrics?.close();
    await scheduler.stop();
    await Promise.all([jobStore.close(), store.close()]);
    backend.close();
    throw error;
  }
  engine.start();
  const files = openFileLimit();
  if (files !== null && files < config.connections.total + RESERVED_FILES)
    say(`connections.total (${config.connections.total}) leaves fewer than ${RESERVED_FILES} of the daemon's ${files} open files (its limit, LimitNOFILE in the unit) for its store, jobs and logs: lower it in ${configPath} or raise the limit.`);
  const simulated = backend.simulated ? ` on SIMULATED GPUs (scenario ${backend.simulated.scenario})` : '';
  say(`gpushare daemon: listening on ${socket.path}${simulated}; store ${dbPath}; config ${configPath}; administrators: root and group ${config.adminGroup}.`);
  if (metrics) say(`Metrics for Prometheus: ${metrics.url}`);
  const openSocket = socket;
  const openedStore = store;
  const openedJobs = jobStore;
  return {
    engine,
    config,
    socketPath: socket.path,
    metricsUrl: metrics?.url ?? null,
    async close() {
      const stillParked = await scheduler.stop(); // first: nothing stays suspended; managed jobs keep running
      if (stillParked.length > 0) say(`Still parked (no room on their GPU to restore them): ${stillParked.join(', ')}. The next daemon shows them.`);
      engine.stop();
      await Promise.all([openSocket.close(), openedJobs.close(), metrics?.close()]);
      await openedStore.close();
      backend.close();
    },
  };
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

/** The store keeps every submitter's environment for jobs still to start: root's alone (SQLite gives its -wal and -shm the same mode). */
function keepPrivate(dbPath: string): void {
  mkdirSync(dirname(dbPath), { recursive: true, mode: 0o755 });
  closeSync(openSync(dbPath, 'a', 0o600));
  for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
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
