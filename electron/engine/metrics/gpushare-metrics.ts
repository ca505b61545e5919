// The engine's metrics for Prometheus, built on prom-client and rendered on each scrape from the
// latest snapshot and the scheduler's jobs and counters (no history is kept here). Every gauge is
// reset before it is filled, so a process or job that left takes its series with it. The per-process
// and per-job families (hundreds of series) are written by GaugeFamily, after prom-client's text.
import { Counter, Gauge, Registry, type RegistryContentType } from 'prom-client';
import { gpusText, JOB_STATES, type AlertKind, type EngineKind, type JobView } from '../../../shared/jobs.js';
import { containerLabel } from '../../../shared/process-context.js';
import type { GpuProcessView, Snapshot } from '../../../shared/snapshot.js';
import type { SchedulerCounters } from '../scheduler/scheduler-counters.js';
import { GaugeFamily, labelText } from './series-family.js';

/** What the metrics are made from; the engine's host gives the real ones (metrics-sources.ts). */
export interface MetricsSources {
  kind: EngineKind;
  /** The box's name, for people: the info metric's `box` label (Prometheus keeps targets apart by `instance`). */
  box: string;
  latest(): Snapshot | null;
  /** Every job the scheduler knows (finished ones too), read-only. */
  jobs(): Iterable<JobView>;
  /** The job a GPU process belongs to (a managed job, or its own unmanaged entry); null if none yet. */
  jobOf(process: GpuProcessView, snapshot: Snapshot): JobView | null;
  counters: SchedulerCounters | null;
  /** Alerts raised since the engine started, by kind. */
  alerts: ReadonlyMap<AlertKind, number>;
}

export type MetricsFormat = 'prometheus' | 'openmetrics';

// job_id, not job: Prometheus gives every scraped series its own `job` label (ours would become exported_job)
const PROCESS_LABELS = ['gpu', 'pid', 'job_id', 'user', 'command', 'container', 'priority', 'state'] as const;
const JOB_LABELS = ['job_id', 'user', 'gpu', 'priority', 'state', 'mode'] as const;

/** The user a process is shown as: its account name, else its uid, else "unknown". */
export function processUser(p: GpuProcessView): string {
  return p.user ?? (p.uid === null ? 'unknown' : String(p.uid));
}

/** The container label as `gpushare ps` shows it: its name, else its id's first 12 characters; empty outside one. */
export function processContainer(p: GpuProcessView): string {
  return p.context?.container ? containerLabel(p.context.container) : '';
}

export class GpushareMetrics {
  readonly registry: Registry<RegistryContentType>;
  private readonly gauges: Gauge<string>[] = [];
  private readonly counters: Counter<string>[] = [];
  private readonly families: GaugeFamily[] = [];
  private readonly openMetrics: boolean;

  private readonly engineInfo;
  private readonly snapshotTime;
  private readonly gpuInfo;
  private readonly gpuLost;
  private readonly gpuUtilization;
  private readonly gpuMemoryUtilization;
  private readonly gpuMemoryUsed;
  private readonly gpuMemoryTotal;
  private readonly gpuTemperature;
  private readonly gpuPower;
  private readonly gpuPowerLimit;
  private readonly gpuMigEnabled;
  private readonly gpuMigSlices;
  private readonly migSliceMemoryTotal;
  private readonly migSliceMemoryUsed;
  private readonly migSliceSm;
  private readonly processMemory;
  private readonly processSm;
  private readonly userMemory;
  private readonly userSmShare;
  private readonly userProcesses;
  private readonly jobsByState;
  private readonly jobMemory;
  private readonly jobSm;
  private readonly jobQuota;
  private readonly gateWaits;
  private readonly suspensions;
  private readonly parks;
  private readonly quotaRefusals;
  private readonly alerts;

  constructor(
    private readonly sources: MetricsSources,
    format: MetricsFormat = 'prometheus',
  ) {
    this.openMetrics = format === 'openmetrics';
    this.registry = new Registry<RegistryContentType>();
    this.registry.setContentType(this.openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE);
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> => {
      const g = new Gauge<L>({ name, help, labelNames, registers: [this.registry] });
      this.gauges.push(g as Gauge<string>);
      return g;
    };
    const family = (name: string, help: string): GaugeFamily => {
      const f = new GaugeFamily(name, help);
      this.families.push(f);
      return f;
    };
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> => {
      const c = new Counter<L>({ name, help, labelNames, registers: [this.registry] });
      this.counters.push(c as Counter<string>);
      return c;
    };
    this.engineInfo = gauge('gpushare_engine_info', 'The engine serving these metrics (always 1): its box, daemon or personal, simulated GPUs or not, driver version.', ['box', 'kind', 'simulated', 'driver_version']);
    this.snapshotTime = gauge('gpushare_snapshot_timestamp_seconds', 'When the snapshot these metrics come from was taken (Unix time).');
    this.gpuInfo = gauge('gpushare_gpu_info', 'One series per GPU (always 1): its index, UUID, model and PCI bus id.', ['gpu', 'uuid', 'name', 'pci_bus_id']);
    this.gpuLost = gauge('gpushare_gpu_lost', '1 when the driver stopped answering for this GPU (NVML GPU_IS_LOST), else 0.', ['gpu']);
    this.gpuUtilization = gauge('gpushare_gpu_utilization_ratio', 'Share of the last sample period with a kernel running on the GPU (0-1).', ['gpu']);
    this.gpuMemoryUtilization = gauge('gpushare_gpu_memory_utilization_ratio', 'Share of the last sample period the GPU memory was read or written (0-1).', ['gpu']);
    this.gpuMemoryUsed = gauge('gpushare_gpu_memory_used_bytes', 'GPU memory in use.', ['gpu']);
    this.gpuMemoryTotal = gauge('gpushare_gpu_memory_total_bytes', 'GPU memory in all.', ['gpu']);
    this.gpuTemperature = gauge('gpushare_gpu_temperature_celsius', 'GPU temperature.', ['gpu']);
    this.gpuPower = gauge('gpushare_gpu_power_watts', 'GPU power draw.', ['gpu']);
    this.gpuPowerLimit = gauge('gpushare_gpu_power_limit_watts', 'GPU power limit.', ['gpu']);
    this.gpuMigEnabled = gauge('gpushare_gpu_mig_enabled', '1 when the GPU is in MIG mode, else 0.', ['gpu']);
    this.gpuMigSlices = gauge('gpushare_gpu_mig_slices', 'MIG slices (GPU and compute instance pairs) on the GPU.', ['gpu']);
    this.migSliceMemoryTotal = gauge('gpushare_mig_slice_memory_total_bytes', 'Memory of one MIG slice.', ['gpu', 'slice', 'profile']);
    this.migSliceMemoryUsed = gauge('gpushare_mig_slice_memory_used_bytes', 'Memory in use in one MIG slice.', ['gpu', 'slice', 'profile']);
    this.migSliceSm = gauge('gpushare_mig_slice_sm_ratio', "Share of one MIG slice's SMs busy in the last sample period (0-1), from GPM (Hopper and later).", ['gpu', 'slice', 'profile']);
    this.processMemory = family('gpushare_process_memory_used_bytes', 'GPU memory a process holds on one GPU.');
    this.processSm = family('gpushare_process_sm_ratio', "Share of the GPU's SM time a process held in the last sample period (0-1); absent where the driver cannot tell (a MIG slice shared by several processes, or before Hopper).");
    this.userMemory = gauge('gpushare_user_memory_used_bytes', "GPU memory a user's processes hold, all GPUs together.", ['user']);
    this.userSmShare = gauge('gpushare_user_sm_share_ratio', "Share of one GPU's SM time a user's processes held in the last sample period (0-1).", ['user', 'gpu']);
    this.userProcesses = gauge('gpushare_user_processes', "A user's GPU processes (one per process and GPU).", ['user']);
    this.jobsByState = gauge('gpushare_jobs', 'Jobs the scheduler knows, by state (finished ones: the last 500).', ['state']);
    this.jobMemory = family('gpushare_job_memory_used_bytes', "GPU memory a live job's processes hold.");
    this.jobSm = family('gpushare_job_sm_ratio', "Share of its GPU's SM time a live job's processes held in the last sample period (0-1).");
    this.jobQuota = family('gpushare_job_memory_quota_bytes', "A live job's memory quota, where it has one.");
    this.gateWaits = counter('gpushare_gate_waits_total', 'Times the launch gate held a job back for a higher-priority one.');
    this.suspensions = counter('gpushare_suspensions_total', 'Jobs suspended, by the hold that suspended them (user, quota, priority).', ['reason']);
    this.parks = counter('gpushare_parks_total', 'Jobs whose GPU memory was moved to host memory (parked).');
    this.quotaRefusals = counter('gpushare_quota_refusals_total', "GPU allocations refused for going over a job's memory quota.");
    this.alerts = counter('gpushare_alerts_total', 'Alerts raised, by kind.', ['kind']);
  }

  /** The text a scrape gets: every metric filled from the sources as they are now. */
  async render(): Promise<string> {
    this.refresh();
    const families = this.families.map((f) => f.text()).join('\n'); // before any wait: a scrape beside this one refreshes them again
    const text = await this.registry.metrics();
    if (!this.openMetrics) return `${text}\n${families}\n`;
    return `${text.slice(0, text.lastIndexOf('# EOF'))}${families}\n# EOF\n`; // OpenMetrics ends with # EOF
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private refresh(): void {
    for (const g of this.gauges) g.reset();
    for (const c of this.counters) c.reset();
    for (const f of this.families) f.reset();
    const snapshot = this.sources.latest();
    this.engineInfo.set({ box: this.sources.box, kind: this.sources.kind, simulated: snapshot?.driver.simulated ? 'true' : 'false', driver_version: snapshot?.driver.driverVersion ?? '' }, 1);
    this.refreshCounters();
    this.refreshJobs();
    if (!snapshot) return;
    this.snapshotTime.set(snapshot.takenAt / 1000);
    this.refreshGpus(snapshot);
    this.refreshProcesses(snapshot);
  }

  private refreshGpus(snapshot: Snapshot): void {
    for (const g of snapshot.gpus) {
      const gpu = { gpu: String(g.index) };
      this.gpuInfo.set({ ...gpu, uuid: g.uuid, name: g.name, pci_bus_id: g.pciBusId }, 1);
      this.gpuLost.set(gpu, g.lost ? 1 : 0);
      setIfKnown(this.gpuUtilization, gpu, g.utilizationGpu, 100);
      setIfKnown(this.gpuMemoryUtilization, gpu, g.utilizationMemory, 100);
      setIfKnown(this.gpuMemoryUsed, gpu, g.memoryUsed);
      this.gpuMemoryTotal.set(gpu, g.memoryTotal);
      setIfKnown(this.gpuTemperature, gpu, g.temperatureC);
      setIfKnown(this.gpuPower, gpu, g.powerWatts);
      setIfKnown(this.gpuPowerLimit, gpu, g.powerLimitWatts);
      if (g.migEnabled !== null) this.gpuMigEnabled.set(gpu, g.migEnabled ? 1 : 0);
      this.gpuMigSlices.set(gpu, g.migSlices.length);
      for (const s of g.migSlices) {
        const slice = { ...gpu, slice: s.uuid, profile: s.profileName ?? '' };
        setIfKnown(this.migSliceMemoryTotal, slice, s.memoryTotal);
        setIfKnown(this.migSliceMemoryUsed, slice, s.memoryUsed);
        setIfKnown(this.migSliceSm, slice, s.smPercent ?? null, 100);
      }
    }
  }

  private refreshProcesses(snapshot: Snapshot): void {
    const userMemory = new Map<string, number>();
    const userProcesses = new Map<string, number>();
    const userSm = new Map<string, Map<number, number>>();
    for (const p of snapshot.processes) {
      const user = processUser(p);
      const job = this.sources.jobOf(p, snapshot);
      const labels = labelText(PROCESS_LABELS, {
        gpu: String(p.gpuIndex),
        pid: String(p.pid),
        job_id: job?.id ?? '',
        user,
        command: p.command ?? '',
        container: processContainer(p),
        priority: job?.priority ?? '',
        state: job?.state ?? '',
      });
      this.processMemory.set(labels, p.usedMemory);
      this.processSm.set(labels, p.smPercent === null ? null : p.smPercent / 100);
      userMemory.set(user, (userMemory.get(user) ?? 0) + (p.usedMemory ?? 0));
      userProcesses.set(user, (userProcesses.get(user) ?? 0) + 1);
      if (p.smPercent !== null) {
        const byGpu = userSm.get(user) ?? new Map<number, number>();
        byGpu.set(p.gpuIndex, (byGpu.get(p.gpuIndex) ?? 0) + p.smPercent);
        userSm.set(user, byGpu);
      }
    }
    for (const [user, bytes] of userMemory) this.userMemory.set({ user }, bytes);
    for (const [user, count] of userProcesses) this.userProcesses.set({ user }, count);
    for (const [user, byGpu] of userSm) {
      for (const [gpu, percent] of byGpu) this.userSmShare.set({ user, gpu: String(gpu) }, Math.min(100, percent) / 100);
    }
  }

  private refreshJobs(): void {
    const perState = new Map<string, number>(JOB_STATES.map((s) => [s, 0]));
    for (const job of this.sources.jobs()) {
      perState.set(job.state, (perState.get(job.state) ?? 0) + 1);
      if (job.state === 'finished' || job.state === 'failed' || job.state === 'lost') continue;
      // a job on several GPUs is labelled gpu="0,2"; its quota is per GPU
      const labels = labelText(JOB_LABELS, { job_id: job.id, user: job.owner, gpu: job.gpu === null ? '' : gpusText(job), priority: job.priority, state: job.state, mode: job.mode });
      this.jobMemory.set(labels, job.usedMemory);
      this.jobSm.set(labels, job.smPercent === null ? null : job.smPercent / 100);
      this.jobQuota.set(labels, job.memoryQuotaBytes);
    }
    for (const [state, count] of perState) this.jobsByState.set({ state }, count);
  }

  private refreshCounters(): void {
    const counts = this.sources.counters;
    if (counts) {
      this.gateWaits.inc(counts.gateWaits);
      for (const [reason, count] of counts.suspensions) this.suspensions.inc({ reason }, count);
      this.parks.inc(counts.parks);
      this.quotaRefusals.inc(counts.quotaRefusals);
    }
    for (const [kind, count] of this.sources.alerts) this.alerts.inc({ kind }, count);
  }
}

/** Set the series unless the driver could not tell (null); `scale` turns a percentage into a ratio. */
function setIfKnown<L extends string>(gauge: Gauge<L>, labels: Partial<Record<L, string>>, value: number | null, scale = 1): void {
  if (value !== null && Number.isFinite(value)) gauge.set(labels, value / scale);
}
