// Loads the NVML addon (native/nvml) and turns its failures into NvmlError.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { nvmlAddonPath } from '../paths.js';
import type {
  ComputeMode,
  DeviceInfo,
  DeviceSample,
  GpuProcessKind,
  GpuProcessRecord,
  MigDeviceSample,
  NvmlBinding,
  NvmlErrorInfo,
  NvmlSystemInfo,
  ProcessUtilizationSample,
} from './nvml-types.js';

/**
 * library-missing: libnvidia-ml.so.1 could not be dlopen'ed; library-invalid: it is not NVML;
 * addon-missing: the .node is not built; call-failed: an NVML call returned an error.
 */
export type NvmlErrorKind = 'library-missing' | 'library-invalid' | 'addon-missing' | 'call-failed';

export class NvmlError extends Error {
  override readonly name = 'NvmlError';
  readonly kind: NvmlErrorKind;
  /** The NVML entry point that failed ("dlopen" when the library itself could not be loaded). */
  readonly call: string;
  /** NVML return code, e.g. 15. */
  readonly code: number;
  /** e.g. "NVML_ERROR_GPU_IS_LOST". */
  readonly codeName: string;

  constructor(message: string, details: { kind: NvmlErrorKind; call: string; code: number; codeName: string }, options?: ErrorOptions) {
    super(message, options);
    this.kind = details.kind;
    this.call = details.call;
    this.code = details.code;
    this.codeName = details.codeName;
  }
}

const KINDS: readonly NvmlErrorKind[] = ['library-missing', 'library-invalid', 'addon-missing', 'call-failed'];

/** The native side throws Errors carrying {kind, call, code, codeName}; anything else passes through. */
function asNvmlError(error: unknown): unknown {
  if (error instanceof NvmlError || !(error instanceof Error)) return error;
  const e = error as Error & { kind?: unknown; call?: unknown; code?: unknown; codeName?: unknown };
  if (typeof e.call !== 'string' || typeof e.code !== 'number' || typeof e.codeName !== 'string') return error;
  const kind = KINDS.includes(e.kind as NvmlErrorKind) ? (e.kind as NvmlErrorKind) : 'call-failed';
  return new NvmlError(e.message, { kind, call: e.call, code: e.code, codeName: e.codeName }, { cause: error });
}

function guard<T>(body: () => T): T {
  try {
    return body();
  } catch (error) {
    throw asNvmlError(error);
  }
}

/** What the .node exports (native/nvml/src/addon.cc). */
interface NvmlNative {
  readonly packedLayout: { version: number; deviceFields: number; processFields: number; utilFields: number; migFields: number };
  open(libraryPath?: string): NvmlSystemInfo;
  close(): void;
  isOpen(): boolean;
  system(): NvmlSystemInfo;
  deviceCount(): number;
  describeDevice(index: number): DeviceInfo;
  /** Samples one GPU (or all) into a re-used buffer: see native/nvml/src/packed.h. */
  samplePacked(index?: number): ArrayBuffer;
  /** The errors of GPU `index` in the last samplePacked. */
  sampleErrors(index: number): NvmlErrorInfo[];
  /** GPM SM readings of GPU `index`'s MIG slices in the last samplePacked (only slices with one); absent in older builds. */
  migActivity?(index: number): Array<{ gpuInstanceId: number; computeInstanceId: number; smUtil: number | null; smOccupancy: number | null }>;
}

// The packed layout (native/nvml/src/packed.h): [version, deviceCount], then per device
// DEVICE_FIELDS numbers and its processes, utilization samples and MIG devices. NaN is null.
const LAYOUT = { version: 1, deviceFields: 21, processFields: 5, utilFields: 4, migFields: 4 };
const F = {
  index: 0, lost: 1, memTotal: 2, memUsed: 3, memFree: 4, memReserved: 5, utilGpu: 6, utilMem: 7,
  temperature: 8, power: 9, powerLimit: 10, smClock: 11, memClock: 12, computeMode: 13, migCurrent: 14,
  migPending: 15, processSource: 16, processCount: 17, utilCount: 18, migCount: 19, errorCount: 20,
} as const;
const PROCESS_KINDS: readonly GpuProcessKind[] = ['compute', 'graphics', 'mps'];
const COMPUTE_MODES: readonly ComputeMode[] = ['default', 'exclusive-thread', 'prohibited', 'exclusive-process'];
const PROCESS_SOURCES = [
  'nvmlDeviceGetRunningProcessDetailList',
  'nvmlDeviceGetComputeRunningProcesses_v3',
  'nvmlDeviceGetComputeRunningProcesses_v2',
  'nvmlDeviceGetComputeRunningProcesses',
];

const orNull = (v: number): number | null => (v === v ? v : null); // NaN is the only value not equal to itself

function decodeSamples(native: NvmlNative, v: Float64Array): DeviceSample[] {
  const count = v[1];
  const samples: DeviceSample[] = new Array(count);
  let o = 2;
  for (let d = 0; d < count; d++) {
    const index = v[o + F.index];
    const processCount = v[o + F.processCount];
    const utilCount = v[o + F.utilCount];
    const migCount = v[o + F.migCount];
    const source = v[o + F.processSource];
    const migCurrent = v[o + F.migCurrent];
    const sample: DeviceSample = {
      index,
      lost: v[o + F.lost] === 1,
      memory:
        v[o + F.memTotal] === v[o + F.memTotal]
          ? { total: v[o + F.memTotal], used: v[o + F.memUsed], free: v[o + F.memFree], reserved: orNull(v[o + F.memReserved]) }
          : null,
      utilization: v[o + F.utilGpu] === v[o + F.utilGpu] ? { gpu: v[o + F.utilGpu], memory: v[o + F.utilMem] } : null,
      temperatureC: orNull(v[o + F.temperature]),
      powerMilliwatts: orNull(v[o + F.power]),
      powerLimitMilliwatts: orNull(v[o + F.powerLimit]),
      smClockMHz: orNull(v[o + F.smClock]),
      memClockMHz: orNull(v[o + F.memClock]),
      computeMode: COMPUTE_MODES[v[o + F.computeMode]] ?? null,
      migMode: migCurrent === migCurrent ? { current: migCurrent === 1, pending: v[o + F.migPending] === 1 } : null,
      processes: new Array<GpuProcessRecord>(processCount),
      processUtilization: new Array<ProcessUtilizationSample>(utilCount),
      migDevices: new Array<MigDeviceSample>(migCount),
      processSource: PROCESS_SOURCES[source] ?? null,
      errors: v[o + F.errorCount] > 0 ? native.sampleErrors(index) : [],
    };
    o += LAYOUT.deviceFields;
    for (let i = 0; i < processCount; i++, o += LAYOUT.processFields) {
      sample.processes[i] = {
        pid: v[o],
        kind: PROCESS_KINDS[v[o + 1]],
        usedMemory: orNull(v[o + 2]),
        gpuInstanceId: orNull(v[o + 3]),
        computeInstanceId: orNull(v[o + 4]),
      };
    }
    for (let i = 0; i < utilCount; i++, o += LAYOUT.utilFields) {
      sample.processUtilization[i] = { pid: v[o], smUtil: v[o + 1], memUtil: v[o + 2], timestampUs: v[o + 3] };
    }
    for (let i = 0; i < migCount; i++, o += LAYOUT.migFields) {
      sample.migDevices[i] = { gpuInstanceId: v[o], computeInstanceId: v[o + 1], memoryUsed: orNull(v[o + 2]), memoryTotal: orNull(v[o + 3]) };
    }
    if (migCount > 0 && native.migActivity) {
      for (const activity of native.migActivity(index)) {
        const slice = sample.migDevices.find((m) => m.gpuInstanceId === activity.gpuInstanceId && m.computeInstanceId === activity.computeInstanceId);
        if (slice) Object.assign(slice, { smUtil: activity.smUtil, smOccupancy: activity.smOccupancy });
      }
    }
    samples[d] = sample;
  }
  return samples;
}

let nativeBinding: NvmlNative | null = null;

/** The .node's exports as loaded, for the calls that share it (NVML, peer credentials); NvmlError when it is not built. */
export function requireNativeAddon(): Record<string, unknown> {
  const path = nvmlAddonPath();
  if (!existsSync(path)) {
    throw new NvmlError(`The NVML addon is not built (${path} is missing). Run \`npm run build:native\`.`, {
      kind: 'addon-missing',
      call: 'dlopen',
      code: 12,
      codeName: 'NVML_ERROR_LIBRARY_NOT_FOUND',
    });
  }
  return createRequire(import.meta.url)(path) as Record<string, unknown>;
}

function loadNative(): NvmlNative {
  if (nativeBinding) return nativeBinding;
  const path = nvmlAddonPath();
  const native = requireNativeAddon() as unknown as NvmlNative;
  const layout = native.packedLayout;
  if (!layout || Object.entries(LAYOUT).some(([key, value]) => layout[key as keyof typeof LAYOUT] !== value)) {
    throw new NvmlError(`The NVML addon at ${path} is out of date (its sample layout differs). Run \`npm run build:native\`.`, {
      kind: 'addon-missing',
      call: 'dlopen',
      code: 12,
      codeName: 'NVML_ERROR_LIBRARY_NOT_FOUND',
    });
  }
  nativeBinding = native;
  return native;
}

/**
 * The addon, not yet opened. There is one NVML session per JS environment: every
 * binding returned here shares it (open() when open re-uses it, close() closes it).
 */
export function loadNvmlAddon(): NvmlBinding {
  const native = loadNative();
  let buffer: ArrayBuffer | null = null;
  let view = new Float64Array(0);
  const sample = (index?: number): DeviceSample[] => {
    const packed = native.samplePacked(index);
    if (packed !== buffer) {
      buffer = packed; // the addon re-uses one buffer until it needs a bigger one
      view = new Float64Array(packed);
    }
    if (view[0] !== LAYOUT.version) throw new Error(`NVML addon: unexpected sample layout ${view[0]}`);
    return decodeSamples(native, view);
  };
  return {
    open: (libraryPath?: string) => guard(() => native.open(libraryPath)),
    close: () => guard(() => native.close()),
    isOpen: () => native.isOpen(),
    system: () => guard(() => native.system()),
    deviceCount: () => guard(() => native.deviceCount()),
    describeDevice: (index: number) => guard(() => native.describeDevice(index)),
    sampleDevice: (index: number) => guard(() => sample(Number.isInteger(index) ? index : -1)[0]),
    sampleAll: () => guard(() => sample()),
  };
}

/** Loads the addon and opens NVML (libraryPath, else GPUSHARE_NVML_LIB, else libnvidia-ml.so.1). */
export function openNvml(libraryPath?: string): NvmlBinding {
  const binding = guard(loadNvmlAddon);
  binding.open(libraryPath);
  return binding;
}
