// The sampler: polls the GPU backend, joins each GPU process with /proc and
// publishes one Snapshot per tick. A lost GPU or a vanished pid never breaks a tick.
import type { DeviceInfo, DeviceSample, GpuProcessRecord, MigDeviceSample, NvmlBinding } from '../gpu/nvml-types.js';
import { ProcessContextReader } from '../proc/context-reader.js';
import { builtInMigProfileTable, fullGpuSmCount } from '../mig/profiles.js';
import { ProcTable } from '../proc/proc-table.js';
import { fitProcessesToBudget } from './snapshot-budget.js';
import { checkRate, DEFAULT_RATE_HZ } from './sampling-rate.js';
import type { DriverView, GpuProcessView, GpuView, Snapshot } from '../../../shared/snapshot.js';

export type GpuReader = Pick<NvmlBinding, 'system' | 'deviceCount' | 'describeDevice' | 'sampleAll'>;

export { checkRate, DEFAULT_RATE_HZ, MAX_RATE_HZ, MIN_RATE_HZ } from './sampling-rate.js';

export interface SamplerOptions {
  rateHz?: number;
  simulated: boolean;
  scenario?: string | null;
  procTable?: ProcTable;
  /** Where each process runs (container, unit, Slurm job, kernel, ssh); tests give a fixture /proc. */
  contextReader?: ProcessContextReader;
  /** The clock (tests). */
  now?: () => number;
}

type Listener = (snapshot: Snapshot) => void;

export class Sampler {
  private readonly procs: ProcTable;
  private readonly contexts: ProcessContextReader;
  private readonly driver: DriverView;
  /** Static facts per GPU; null until describeDevice succeeds (a GPU lost at start-up is retried). */
  private described: Array<DeviceInfo | null> = [];
  private intervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  /** The previous tick's time and the interval in force then: what the next tick covers. */
  private previousAt: number | null = null;
  private aimedMs: number;
  private readonly now: () => number;
  private readonly listeners = new Set<Listener>();
  private last: Snapshot | null = null;
  /** Last tick's rows by process and GPU (rowKey): a row that did not change is published again as the same object. */
  private rowsBefore = new Map<number, GpuProcessView>();

  constructor(
    private readonly gpu: GpuReader,
    options: SamplerOptions,
  ) {
    this.intervalMs = 1000 / checkRate(options.rateHz ?? DEFAULT_RATE_HZ);
    this.aimedMs = this.intervalMs;
    this.now = options.now ?? Date.now;
    this.procs = options.procTable ?? new ProcTable();
    this.contexts = options.contextReader ?? new ProcessContextReader();
    const system = gpu.system();
    this.driver = {
      driverVersion: system.driverVersion,
      nvmlVersion: system.nvmlVersion,
      cudaDriverVersion: system.cudaDriverVersion,
      simulated: options.simulated,
      scenario: options.scenario ?? null,
    };
    const count = gpu.deviceCount();
    for (let i = 0; i < count; i++) this.described.push(this.tryDescribe(i));
  }

  get rateHz(): number {
    return 1000 / this.intervalMs;
  }

  /** Change the sampling rate (0.2–10 Hz); takes effect from the next tick. */
  setRate(hz: number): void {
    this.intervalMs = 1000 / checkRate(hz);
  }

  get latest(): Snapshot | null {
    return this.last;
  }

  onSnapshot(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    if (this.timer) return;
    let due = Date.now();
    const loop = (): void => {
      this.publish(this.tick());
      // schedule against the ideal clock so ticks do not drift by their own cost
      due = Math.max(due + this.intervalMs, Date.now() + 1);
      this.timer = setTimeout(loop, due - Date.now());
    };
    loop();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * A snapshot now, published as the loop's are: every listener (the usage store above all) sees it, so the
   * next tick's interval starts where one they saw ended. For a fresh sample between ticks inside the engine.
   */
  sampleNow(): Snapshot {
    const snapshot = this.tick();
    this.publish(snapshot);
    return snapshot;
  }

  /** Take one snapshot now, published to no one (`gpushare ps`, the benchmark; inside an engine: sampleNow). */
  tick(): Snapshot {
    const takenAt = this.now();
    let samples: DeviceSample[];
    try {
      samples = this.gpu.sampleAll();
    } catch (error) {
      // the whole driver failed: report every GPU as unreachable rather than dropping the tick
      const message = error instanceof Error ? error.message : String(error);
      return this.snapshot(takenAt, this.described.map((info, i) => unreachableGpu(i, info, message)), []);
    }
    const gpus: GpuView[] = [];
    const processes: GpuProcessView[] = [];
    const rows = new Map<number, GpuProcessView>();
    const onGpu = new Set<number>();
    for (const sample of samples) {
      const info = this.refreshDescription(sample);
      gpus.push(gpuView(sample, info));
      if (sample.lost) continue;
      const smByPid = new Map(sample.processUtilization.map((u) => [u.pid, u]));
      const perProcessSmKnown = sample.migMode?.current !== true; // NVML has no per-process SM % on MIG
      const migSm = perProcessSmKnown ? null : migProcessSm(sample, info);
      for (const record of sample.processes) {
        const who = this.procs.lookup(record.pid);
        const util = smByPid.get(record.pid);
        onGpu.add(record.pid);
        const gpuUuid = info?.uuid ?? '';
        const smPercent = perProcessSmKnown ? (util?.smUtil ?? 0) : migSm!(record);
        const memPercent = perProcessSmKnown ? (util?.memUtil ?? 0) : null;
        const context = who.visible ? this.contexts.lookup(record.pid, who.startedAt, who.argv) : null;
        const key = rowKey(record.pid, sample.index);
        const before = this.rowsBefore.get(key);
        // the row of the tick before when nothing in it changed: deltas (snapshot-delta.ts) skip a row that is the same object
        const row =
          before !== undefined && before.pid === record.pid && before.gpuIndex === sample.index && before.gpuUuid === gpuUuid && before.kind === record.kind && before.user === who.user && before.uid === who.uid &&
          before.command === who.command && before.argv === who.argv && before.argvCut === who.argvCut && before.startedAt === who.startedAt &&
          before.usedMemory === record.usedMemory && before.smPercent === smPercent && before.memPercent === memPercent &&
          before.gpuInstanceId === record.gpuInstanceId && before.computeInstanceId === record.computeInstanceId && before.context === context
            ? before
            : {
                pid: record.pid,
                gpuIndex: sample.index,
                gpuUuid,
                kind: record.kind,
                user: who.user,
                uid: who.uid,
                command: who.command,
                argv: who.argv,
                argvCut: who.argvCut,
                startedAt: who.startedAt,
                usedMemory: record.usedMemory,
                smPercent,
                memPercent,
                gpuInstanceId: record.gpuInstanceId,
                computeInstanceId: record.computeInstanceId,
                context,
              };
        rows.set(key, row);
        processes.push(row);
      }
    }
    this.rowsBefore = rows;
    this.procs.retainOnly(onGpu);
    this.contexts.retainOnly(onGpu);
    return this.snapshot(takenAt, gpus, fitProcessesToBudget(processes, gpus));
  }

  private snapshot(takenAt: number, gpus: GpuView[], processes: GpuProcessView[]): Snapshot {
    const intervalMs = this.previousAt === null ? null : Math.max(0, takenAt - this.previousAt);
    this.last = { seq: ++this.seq, takenAt, intervalMs, nominalIntervalMs: this.aimedMs, driver: this.driver, gpus, processes };
    this.previousAt = takenAt;
    this.aimedMs = this.intervalMs; // a rate change applies from the tick after the one already scheduled
    return this.last;
  }

  private publish(snapshot: Snapshot): void {
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch (error) {
        console.error('gpushare: a snapshot listener failed:', error);
      }
    }
  }

  /** Re-read a GPU's static facts on the next tick (its MIG layout was changed). */
  invalidateDescription(index: number): void {
    if (index < this.described.length) this.described[index] = null;
  }

  /** Re-read a GPU's static facts when it comes back from lost, or its MIG mode or MIG instances changed. */
  private refreshDescription(sample: DeviceSample): DeviceInfo | null {
    const known = this.described[sample.index] ?? null;
    if (sample.lost) return known;
    const migChanged = known !== null && sample.migMode !== null && known.migMode?.current !== sample.migMode.current;
    const instances = (list: Array<{ gpuInstanceId: number; computeInstanceId: number; memoryTotal: number | null }>) =>
      list.map((m) => `${m.gpuInstanceId}/${m.computeInstanceId}/${m.memoryTotal}`).sort().join(',');
    const layoutChanged = known !== null && !migChanged && sample.migMode?.current === true && instances(known.migDevices) !== instances(sample.migDevices);
    if (known === null || migChanged || layoutChanged) this.described[sample.index] = this.tryDescribe(sample.index);
    return this.described[sample.index] ?? known;
  }

  private tryDescribe(index: number): DeviceInfo | null {
    try {
      return this.gpu.describeDevice(index);
    } catch {
      return null; // lost or not answering: retried on the next tick it answers
    }
  }
}

/** One number for a process on a GPU (a pid is below 2^22 on Linux, an index below 64; a row found by it is checked field by field, so a clash costs a row rebuilt). */
const rowKey = (pid: number, gpuIndex: number): number => pid * 64 + gpuIndex;

/** The GPU's SMs: NVML reads them only from MIG device handles, so a MIG GPU's come from its profile table (its 7g profile). */
function gpuSmCount(info: DeviceInfo | null): number | null {
  if (!info) return null;
  if (info.smCount !== null) return info.smCount;
  const table = info.migMode?.current ? builtInMigProfileTable(info.name, info.memoryTotal) : null;
  return table ? fullGpuSmCount(table) : null;
}

/** A slice's SM % as a share of the whole GPU's SMs (what a process's SM % is everywhere). */
export const gpuShareOfSlice = (sliceSmPercent: number, sliceSms: number, gpuSms: number): number =>
  Math.round(((sliceSmPercent * sliceSms) / gpuSms) * 10) / 10;

const sliceSm = (m: MigDeviceSample | undefined): number | null =>
  m?.smUtil === undefined || m.smUtil === null ? null : Math.round(m.smUtil * 10) / 10;

/**
 * A process's SM % on a MIG GPU, from its slice's GPM reading: GPM measures a slice, not a process, so a
 * process gets it only when it is alone in its slice, or when the slice was idle (then every process in it was).
 * As everywhere a process's SM % is a share of the whole GPU's SMs: the slice's % times its share of the SMs.
 */
function migProcessSm(sample: DeviceSample, info: DeviceInfo | null): (record: GpuProcessRecord) => number | null {
  const pidsBySlice = new Map<number, Set<number>>();
  for (const p of sample.processes) {
    if (p.gpuInstanceId === null) continue;
    pidsBySlice.set(p.gpuInstanceId, (pidsBySlice.get(p.gpuInstanceId) ?? new Set()).add(p.pid));
  }
  return (record) => {
    if (record.gpuInstanceId === null) return null;
    const sm = sliceSm(sample.migDevices.find((m) => m.gpuInstanceId === record.gpuInstanceId));
    if (sm === null) return null;
    if (sm === 0) return 0;
    if (pidsBySlice.get(record.gpuInstanceId)?.size !== 1) return null;
    const sliceSms = info?.migDevices.find((m) => m.gpuInstanceId === record.gpuInstanceId)?.smCount ?? null;
    const gpuSms = gpuSmCount(info);
    return sliceSms === null || !gpuSms ? null : gpuShareOfSlice(sm, sliceSms, gpuSms);
  };
}

function gpuView(sample: DeviceSample, info: DeviceInfo | null): GpuView {
  // the driver's slice counts, else the built-in profile table's (a driver without GetGpuInstanceProfileInfoV)
  const migTable = info?.migMode?.current && (!info.migComputeSlices || info.migDevices.some((m) => !m.computeSlices)) ? builtInMigProfileTable(info.name, info.memoryTotal) : null;
  const migUsed = new Map(sample.migDevices.map((m) => [`${m.gpuInstanceId}/${m.computeInstanceId}`, m]));
  return {
    index: sample.index,
    uuid: info?.uuid ?? '',
    name: info?.name ?? `GPU ${sample.index}`,
    pciBusId: info?.pciBusId ?? '',
    lost: sample.lost,
    memoryTotal: sample.memory?.total ?? info?.memoryTotal ?? 0,
    memoryUsed: sample.memory?.used ?? null,
    memoryFree: sample.memory?.free ?? null,
    utilizationGpu: sample.utilization?.gpu ?? null,
    utilizationMemory: sample.utilization?.memory ?? null,
    temperatureC: sample.temperatureC,
    powerWatts: sample.powerMilliwatts === null ? null : sample.powerMilliwatts / 1000,
    powerLimitWatts: sample.powerLimitMilliwatts === null ? null : sample.powerLimitMilliwatts / 1000,
    smClockMHz: sample.smClockMHz,
    memClockMHz: sample.memClockMHz,
    smCount: gpuSmCount(info),
    computeMode: sample.computeMode,
    migEnabled: sample.migMode?.current ?? info?.migMode?.current ?? null,
    migPending: sample.migMode?.pending ?? info?.migMode?.pending ?? null,
    migComputeSlices: info?.migMode?.current ? (info.migComputeSlices ?? migTable?.computeSlices ?? null) : null,
    migSlices: (info?.migDevices ?? []).map((m) => {
      const live = migUsed.get(`${m.gpuInstanceId}/${m.computeInstanceId}`);
      return {
        uuid: m.uuid,
        name: m.name,
        profileName: m.profileName,
        gpuInstanceId: m.gpuInstanceId,
        computeInstanceId: m.computeInstanceId,
        smCount: m.smCount,
        placement: m.placement,
        computeSlices: m.computeSlices ?? migTable?.profiles.find((p) => p.name === m.profileName)?.computeSlices ?? null,
        memoryTotal: live?.memoryTotal ?? m.memoryTotal,
        memoryUsed: live?.memoryUsed ?? null,
        smPercent: sliceSm(live),
      };
    }),
    errors: sample.errors.map((e) => e.message),
  };
}

function unreachableGpu(index: number, info: DeviceInfo | null, message: string): GpuView {
  return { ...gpuView(emptySample(index), info), errors: [message] };
}

function emptySample(index: number): DeviceSample {
  return {
    index,
    lost: true,
    memory: null,
    utilization: null,
    temperatureC: null,
    powerMilliwatts: null,
    powerLimitMilliwatts: null,
    smClockMHz: null,
    memClockMHz: null,
    computeMode: null,
    migMode: null,
    processes: [],
    processUtilization: [],
    migDevices: [],
    processSource: null,
    errors: [],
  };
}
