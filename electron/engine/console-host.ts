// Everything the console needs running, whoever hosts it (Electron main or the browser
// fallback of `gpushare start`): the personal engine's profile for assembleEngine, with the
// demo when the GPUs are simulated. close() undoes it all.
import { assembleEngine, type AssembledEngine, type EngineProfile } from './assemble-engine.js';
import type { MetricsAddress } from './metrics/metrics-address.js';
import { defaultUsageDbPath } from './store/usage-store.js';

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
  /** The box's name in the metrics (config engine.boxName); absent: the host name. */
  boxName?: string;
  /** The browser console on loopback (`gpushare serve`, start's fallback); absent: none. */
  web?: { port?: number };
}

export type ConsoleHost = AssembledEngine;

/** One person's engine: the owner's store, config and socket; simulated GPUs where no driver is found. */
export function personalProfile(options: ConsoleHostOptions = {}): EngineProfile {
  return {
    kind: 'personal',
    gpus: { simulate: options.simulate, fallBackToSimulated: true },
    rateHz: options.rateHz,
    store: { path: options.db ?? defaultUsageDbPath(), owner: 'person' }, // one that cannot be opened is said (and shown in the console), not a reason to stop
    scheduler: { autoPark: options.autoParkIdleSeconds ? { idleMs: options.autoParkIdleSeconds * 1000 } : null },
    settings: {}, // the console keeps its choices in the owner's config
    socket: {},
    web: options.web ?? null,
    metrics: options.metrics ?? null,
    boxName: options.boxName,
    demo: options.demo !== false,
    warnOtherEngines: true,
    say: options.say ?? (() => undefined),
  };
}

export async function openConsoleHost(options: ConsoleHostOptions = {}): Promise<ConsoleHost> {
  const profile = personalProfile(options);
  const host = await assembleEngine(profile);
  const say = profile.say;
  if (host.metricsUrl) say(`Metrics for Prometheus: ${host.metricsUrl}`);
  return host;
}
