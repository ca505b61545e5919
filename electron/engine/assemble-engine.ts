// The one composition root: every host (the personal engine of `gpushare start`/`engine`, `gpushare
// serve`, the box daemon, the end-to-end harness) builds its engine here from a profile, so the order
// of construction and of shutdown is decided once. What differs between hosts is data, in the profile.
import { join } from 'node:path';
import { Engine } from './engine.js';
import type { GpuBackend } from './gpu/gpu-backend.js';
import { openGpuBackend, type OpenBackendOptions } from './gpu/open-backend.js';
import { DEFAULT_SCENARIO } from './gpu/simulated-box-names.js';
import { attachMetrics } from './metrics/attach-metrics.js';
import type { MetricsAddress } from './metrics/metrics-address.js';
import type { MetricsListener } from './metrics/metrics-server.js';
import { claimPlaces, jobLogsPlace, SECOND_ENGINE_NEEDS, storePlace } from './engine-claim.js';
import { otherEnginesWarning, otherUsersEngines } from './other-engines.js';
import { attachScheduler, defaultStateDir, type AttachedScheduler, type AttachSchedulerOptions } from './scheduler/attach.js';
import { importLegacySlurmUsage, LEGACY_SLURM_USAGE_FILE, legacySlurmUsageFileFor } from './reports/slurm-usage.js';
import { listenOnSocket, refuseBesideRunningEngine, defaultSocketPath, type SocketOptions, type SocketServer } from './server/socket-server.js';
import { listenOnLoopback, type WebServer } from './server/web-server.js';
import { ownerConfigFile, perUserFiles, registerSettingsCommands } from './settings/settings-commands.js';
import { attachUsageStore } from './store/attach.js';
import { openEngineStores } from './store/engine-stores.js';
import { JobStore } from './store/job-store.js';
import { keepBoxStorePrivate, keepStoreOwnerOnly } from './store/owner-only.js';
import { UsageStore } from './store/usage-store.js';
import { startDemo, type Demo } from './demo.js';
import type { EngineKind } from '../../shared/jobs.js';

export interface EngineProfile {
  /** One person's engine, or the whole box's (the root daemon: every user a client, admins by group). */
  kind: EngineKind;
  /** The GPU backend: a scenario forces the simulated driver; fallBackToSimulated where no driver is found. */
  gpus: Pick<OpenBackendOptions, 'simulate' | 'fallBackToSimulated' | 'simulatedState'>;
  rateHz?: number;
  /** The box daemon's administrators' group. */
  adminGroup?: string;
  /**
   * Usage and managed jobs, kept in one database. 'person': the owner's alone, and one that cannot be
   * opened is said and retried, not a reason to stop. 'box': root's, and the start stops without it.
   * null: nothing is recorded and jobs end with this engine.
   */
  store: { path: string; owner: 'person' | 'box'; flushIntervalMs?: number } | null;
  /** The scheduler's own settings (state and runtime dirs, lab policy, auto-park, bounds); the backend and stores come from here. */
  scheduler: Omit<AttachSchedulerOptions, 'jobStore' | 'usage'> & {
    /** Fair share and the high-priority hours read recent usage from the store (the box daemon's lab policy). */
    policyReadsUsage?: boolean;
  };
  /** Where each console keeps its choices: the owner's config file (its path, default $XDG_CONFIG_HOME's), or one file per user in a folder (root's). */
  settings: { ownerFile?: string } | { perUserDir: string };
  /** The unix socket every client talks to: default path the owner's; shared: every local user may connect. */
  socket: { path?: string } & SocketOptions;
  /** The browser console on loopback (serve, start's fallback); null: none. */
  web: { port?: number } | null;
  /** Prometheus metrics here; null: none. */
  metrics: MetricsAddress | null;
  /** The box's name on the metrics' engine info (config boxName); absent: the host name. */
  boxName?: string;
  /** Start the demo jobs where the GPUs are simulated. */
  demo: boolean;
  /** Say which other users' engines run on this box (a personal engine beside them shares nothing with them). */
  warnOtherEngines: boolean;
  /** Sentences for whoever started the engine (stderr, the journal). */
  say: (line: string) => void;
}

export interface AssembledEngine {
  engine: Engine;
  backend: GpuBackend;
  scheduler: AttachedScheduler;
  /** The usage store, when the profile keeps one. */
  usage: UsageStore | null;
  demo: Demo | null;
  socketPath: string;
  web: WebServer | null;
  /** The metrics endpoint's URL, when one was asked for. */
  metricsUrl: string | null;
  /** Undo it all, in the one order: nothing stays suspended, managed jobs keep running. */
  close(): Promise<void>;
}

/** Open everything, or nothing: a refusal part-way closes what was opened before it. */
export async function assembleEngine(profile: EngineProfile): Promise<AssembledEngine> {
  const { say } = profile;
  const socketPath = profile.socket.path ?? defaultSocketPath();
  await refuseBesideRunningEngine(socketPath, profile.kind === 'personal' ? SECOND_ENGINE_NEEDS : null); // a running engine's suspended pids and jobs are not ours
  // a personal engine's store and job logs are its own: another engine's ids, logs and jobs are not ours either
  const claim = profile.kind === 'personal' ? await claimPlaces([...(profile.store ? [storePlace(profile.store.path)] : []), jobLogsPlace(profile.scheduler.stateDir ?? defaultStateDir())], socketPath) : null;
  const backend = await openGpuBackend({
    ...profile.gpus,
    onFallback: (reason) => say(`No NVIDIA driver found (${reason.split('\n')[0]}), so gpushare starts on simulated GPUs (scenario ${DEFAULT_SCENARIO}).`),
  }).catch((error: unknown) => {
    claim?.release();
    throw error;
  });
  const undo: Array<() => unknown> = [() => claim?.release(), () => backend.close()];
  const unwind = async (): Promise<void> => {
    for (const step of undo.reverse()) await step();
  };
  try {
    const { store, jobStore } = await openStores(profile);
    undo.push(() => store?.close(), () => jobStore?.close());
    const engine = new Engine(backend, { rateHz: profile.rateHz, kind: profile.kind, adminGroup: profile.adminGroup });
    if (profile.warnOtherEngines) {
      const others = otherEnginesWarning(otherUsersEngines(engine.owner.uid));
      if (others) say(others);
    }
    const { policyReadsUsage, ...schedulerOptions } = profile.scheduler;
    if (store) await importLegacySlurmRows(store, [legacySlurmUsageFileFor(store.path), join(profile.scheduler.stateDir ?? defaultStateDir(), LEGACY_SLURM_USAGE_FILE)], say); // before any epilog writes a row
    const scheduler = attachScheduler(engine, { ...schedulerOptions, jobStore: jobStore ?? undefined, usage: policyReadsUsage && store ? store : undefined, slurmUsage: store ?? undefined });
    undo.push(() => scheduler.stop());
    // at once after the scheduler, before any event: a job's child processes are the job's
    if (store) attachUsageStore(engine, store, { ownership: scheduler.scheduler.ownership, jobStore });
    registerSettingsCommands(engine.dispatcher, 'perUserDir' in profile.settings ? perUserFiles(profile.settings.perUserDir) : ownerConfigFile(engine.owner.uid, profile.settings.ownerFile));
    if (scheduler.gateMissing) say(`Launch gate off: ${scheduler.gateMissing}.`);
    const metrics: MetricsListener | null = profile.metrics ? await attachMetrics(engine, scheduler.scheduler, profile.metrics, profile.boxName) : null; // a port in use stops the start
    undo.push(() => metrics?.close());
    const socket: SocketServer = await listenOnSocket(engine, socketPath, profile.socket); // the socket answers once every command is there
    undo.push(() => socket.close());
    const web = profile.web ? await listenOnLoopback(engine, { port: profile.web.port }) : null;
    undo.push(() => web?.close());
    engine.start();
    undo.push(() => engine.stop());
    const demo = backend.simulated && profile.demo ? await startDemo(engine, backend.simulated) : null;
    return {
      engine,
      backend,
      scheduler,
      usage: store,
      demo,
      socketPath: socket.path,
      web,
      metricsUrl: metrics?.url ?? null,
      async close() {
        await demo?.stop();
        const stillParked = await scheduler.stop(); // before anything else stops: nothing stays suspended; managed jobs keep running
        if (stillParked.length > 0) say(`Still parked (no room on their GPU to restore them): ${stillParked.join(', ')}. The next ${profile.kind === 'daemon' ? 'daemon' : 'engine'} shows them.`);
        engine.stop();
        await Promise.all([web?.close(), socket.close(), jobStore?.close(), metrics?.close()]);
        await store?.close();
        backend.close();
        claim?.release(); // last: nothing of this engine writes there any more
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/**
 * Slurm usage rows an earlier gpushare appended to a JSON-lines file (beside the store on a box, in the state
 * folder of a personal engine) go into the store once; a store not open yet, or a failed import, leaves the file for the next start.
 */
async function importLegacySlurmRows(store: UsageStore, files: string[], say: (line: string) => void): Promise<void> {
  if (!store.status().recording) return;
  for (const file of new Set(files)) {
    try {
      const done = await importLegacySlurmUsage(store, file);
      if (done) say(done);
    } catch (error) {
      say(`The Slurm usage rows in ${file} were not imported into the usage store (${error instanceof Error ? error.message : String(error)}); the file is left as it was and tried again at the next start.`);
    }
  }
}

async function openStores(profile: EngineProfile): Promise<{ store: UsageStore | null; jobStore: JobStore | null }> {
  const where = profile.store;
  if (!where) return { store: null, jobStore: null };
  if (where.owner === 'person') {
    keepStoreOwnerOnly(where.path);
    return openEngineStores(where.path, (line) => profile.say(`gpushare: ${line}`), { flushIntervalMs: where.flushIntervalMs });
  }
  let store: UsageStore | null = null;
  try {
    keepBoxStorePrivate(where.path);
    store = await UsageStore.open({ path: where.path, flushIntervalMs: where.flushIntervalMs });
    return { store, jobStore: await JobStore.open(store.path, { onNotice: profile.say }) }; // a change it cannot write is said once, and retried
  } catch (error) {
    await store?.close();
    throw new Error(`The daemon cannot open its store ${where.path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
