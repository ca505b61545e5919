// Wiring: the metrics endpoint of an engine and its scheduler, for the hosts (serve, the console
// host, the daemon). Alerts are counted here from the engine's events, from the moment it attaches.
import { hostname } from 'node:os';
import type { AlertKind } from '../../../shared/jobs.js';
import type { Engine } from '../engine.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { GpuProcessView, Snapshot } from '../../../shared/snapshot.js';
import type { JobView } from '../../../shared/jobs.js';
import type { MetricsSources } from './gpushare-metrics.js';
import type { MetricsAddress } from './metrics-address.js';
import { listenForMetrics, type MetricsListener } from './metrics-server.js';

/** The box's name where its config gives none: the machine's host name. */
export const defaultBoxName = (): string => hostname();

/** The engine's and scheduler's state as the metrics read it; `stop` ends the alert count. */
export function engineMetricsSources(engine: Pick<Engine, 'kind' | 'sampler' | 'events'>, scheduler: Scheduler | null, box = defaultBoxName()): MetricsSources & { stop(): void } {
  const alerts = new Map<AlertKind, number>();
  const stop = engine.events.on('alert', (alert) => alerts.set(alert.kind, (alerts.get(alert.kind) ?? 0) + 1));
  return {
    kind: engine.kind,
    box,
    latest: () => engine.sampler.latest,
    jobs: () => (scheduler ? scheduler.table.all().map((r) => r.view) : []),
    jobOf: (p: GpuProcessView, snapshot: Snapshot): JobView | null => {
      if (!scheduler) return null;
      const owner = scheduler.ownership.jobOf(p.pid, snapshot.takenAt, p.startedAt);
      return scheduler.table.get(owner?.jobId ?? `p${p.pid}`)?.view ?? null;
    },
    counters: scheduler?.counters ?? null,
    alerts,
    stop,
  };
}

/** Serve the engine's metrics at `address` until close(); `box` names the box in gpushare_engine_info (default: the host name). */
export async function attachMetrics(engine: Pick<Engine, 'kind' | 'sampler' | 'events'>, scheduler: Scheduler | null, address: MetricsAddress, box?: string | null): Promise<MetricsListener> {
  const sources = engineMetricsSources(engine, scheduler, box ?? defaultBoxName());
  let listener: MetricsListener;
  try {
    listener = await listenForMetrics(sources, address);
  } catch (error) {
    sources.stop();
    throw error;
  }
  return {
    url: listener.url,
    async close() {
      sources.stop();
      await listener.close();
    },
  };
}
