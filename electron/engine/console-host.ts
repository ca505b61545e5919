// Everything the console needs running, whoever hosts it (Electron main or the browser
// fallback of `gpushare start`): GPU backend, engine, unix socket, scheduler, usage
// store, and the demo when the GPUs are simulated. close() undoes it all.
import { Engine } from './engine.js';
import { openGpuBackend } from './gpu/open-backend.js';
import type { GpuBackend } from './gpu/gpu-backend.js';
import { DEFAULT_SCENARIO } from './gpu/simulated-box-names.js';
import { attachScheduler, type AttachedScheduler } from './scheduler/attach.js';
import { otherEnginesWarning, otherUsersEngines } from './other-engines.js';
import { listenOnSocket, refuseBesideRunningEngine } from './server/socket-server.js';
import { attachUsageStore } from './store/attach.js';
import { openEngineStores } from './store/engine-stores.js';
import { defaultUsageDbPath } from './store/usage-store.js';
import { startDemo, type Demo } from './demo.js';
import { attachMetrics } from './metrics/attach-metrics.js';
import type { MetricsAddress } from './metrics/metrics-address.js';
import { ownerConfigFile, registerSettingsCommands } from './settings/settings-commands.js';
import { keepStoreOwnerOnly } from './store/owner-only.js';
import type { MetricsListener } from './metrics/metrics-server.js';

export interface ConsoleHostOptions {
  /** A scenario forces the simulated driver; undefined uses the real one if there is one. */
  simulate?: string;
  rateHz?: number;
  /** Start the demo jobs on simulated GPUs (default true). */
  demo?: boolean;
  /** Called with a sentence for the person who started it. */
  say?: (line: string) => void;
  /** Serve Prometheus metrics here (`--metrics`); absent: no metrics endpoint. */
  metrics?: MetricsAddress | null;
  /** The usage database (default $XDG_DATA_HOME/gpushare/usage.db). */
  db?: string;
  /** Idle managed jobs give their memory to queued jobs after this long (config engine.autoParkIdleSeconds); absent: off. */
  autoParkIdleSeconds?: number;
}

export interface ConsoleHost {
  engine: Engine;
  backend: GpuBackend;
  demo: Demo | null;
  socketPath: string;
  /** The metrics endpoint's URL, when one was asked for. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

export async function openConsoleHost(options: ConsoleHostOptions = {}): Promise<ConsoleHost> {
  const say = options.say ?? (() => undefined);
  const backend = await openGpuBackend({
    simulate: options.simulate,
    fallBackToSimulated: true,
    onFallback: (reason) => say(`No NVIDIA driver found (${reason.split('\n')[0]}), so gpushare starts on simulated GPUs (scenario ${DEFAULT_SCENARIO}).`),
  });
  const engine = new Engine(backend, { rateHz: options.rateHz });
  try {
    await refuseBesideRunningEngine();
  } catch (error) {
    backend.close();
    throw error;
  }
  const others = otherEnginesWarning(otherUsersEngines(engine.owner.uid));
  if (others) say(others);
  // a database that cannot be opened is said (and shown in the console), not a reason to stop
  const dbPath = options.db ?? defaultUsageDbPath();
  keepStoreOwnerOnly(dbPath);
  const { store, jobStore } = await openEngineStores(dbPath, (line) => say(`gpushare: ${line}`));
  const autoPark = options.autoParkIdleSeconds ? { idleMs: options.autoParkIdleSeconds * 1000 } : null;
  const scheduler: AttachedScheduler = attachScheduler(engine, { jobStore: jobStore ?? undefined, autoPark });
  // at once after the scheduler, before any event: a job's child processes are the job's
  attachUsageStore(engine, store, { ownership: scheduler.scheduler.ownership, jobStore });
  if (scheduler.gateMissing) say(`Launch gate off: ${scheduler.gateMissing}.`);
  registerSettingsCommands(engine.dispatcher, ownerConfigFile(engine.owner.uid)); // the console keeps its choices in the owner's config
  let socket: Awaited<ReturnType<typeof listenOnSocket>> | null = null;
  let metrics: MetricsListener | null = null;
  try {
    if (options.metrics) metrics = await attachMetrics(engine, scheduler.scheduler, options.metrics); // a port in use stops the start
    socket = await listenOnSocket(engine); // last: the socket answers once every command is there
  } catch (error) {
    await metrics?.close();
    await scheduler.stop();
    await jobStore?.close();
    await store.close();
    backend.close();
    throw error;
  }
  engine.start();
  const demo = backend.simulated && options.demo !== false ? await startDemo(engine, backend.simulated) : null;
  if (metrics) say(`Metrics for Prometheus: ${metrics.url}`);
  const openSocket = socket;
  return {
    engine,
    backend,
    demo,
    socketPath: socket.path,
    metricsUrl: metrics?.url ?? null,
    async close() {
      await demo?.stop();
      const stillParked = await scheduler.stop(); // before anything else stops: nothing stays suspended; managed jobs keep running
      if (stillParked.length > 0) say(`Still parked (no room on their GPU to restore them): ${stillParked.join(', ')}. The next engine shows them.`);
      engine.stop();
      await Promise.all([openSocket.close(), jobStore?.close(), metrics?.close()]);
      await store.close();
      backend.close();
    },
  };
}
