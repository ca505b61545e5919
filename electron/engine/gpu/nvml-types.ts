// What the NVML addon (native/nvml) returns. Byte counts are plain numbers:
// 2^53 bytes is far beyond any GPU's memory.

export interface NvmlErrorInfo {
  /** The NVML entry point that failed, e.g. "nvmlDeviceGetTemperature". */
  call: string;
  /** NVML return code, e.g. 15. */
  code: number;
  /** Symbolic name, e.g. "NVML_ERROR_GPU_IS_LOST". */
  name: string;
  /** One readable sentence naming the call, the device and the error. */
  message: string;
}

export interface NvmlSystemInfo {
  driverVersion: string;
  nvmlVersion: string;
  /** e.g. 12040 for CUDA 12.4; null when the driver cannot tell. */
  cudaDriverVersion: number | null;
  /** The library that was opened (GPUSHARE_NVML_LIB or libnvidia-ml.so.1). */
  libraryPath: string;
}

export interface MigPlacement {
  start: number;
  size: number;
}

export interface MigDeviceInfo {
  /** Index of the MIG device handle under its parent GPU. */
  index: number;
  uuid: string;
  name: string;
  /** e.g. "3g.40gb"; null when the driver does not say. */
  profileName: string | null;
  profileId: number | null;
  gpuInstanceId: number;
  computeInstanceId: number;
  memoryTotal: number;
  smCount: number | null;
  placement: MigPlacement | null;
  /** Compute slices of its GPU-instance profile (3 for a 3g slice); null or absent when the driver does not say. */
  computeSlices?: number | null;
}

export interface MigMode {
  current: boolean;
  pending: boolean;
}

/** What rarely changes: read once per device and on demand. */
export interface DeviceInfo {
  index: number;
  uuid: string;
  name: string;
  pciBusId: string;
  memoryTotal: number;
  smCount: number | null;
  migMode: MigMode | null;
  migDevices: MigDeviceInfo[];
  /** In MIG mode, the GPU's compute slices (its largest GPU-instance profile's: 7 on an A100 or H100); null or absent when unknown. */
  migComputeSlices?: number | null;
  /** Failures other than NOT_SUPPORTED while describing the device. */
  errors: NvmlErrorInfo[];
}

export type GpuProcessKind = 'compute' | 'graphics' | 'mps';

export interface GpuProcessRecord {
  pid: number;
  kind: GpuProcessKind;
  /** null where the driver reports NVML_VALUE_NOT_AVAILABLE. */
  usedMemory: number | null;
  /** null when the GPU is not in MIG mode (NVML's 0xFFFFFFFF). */
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
}

export interface ProcessUtilizationSample {
  pid: number;
  /** 0..100, clamped. */
  smUtil: number;
  memUtil: number;
  /** The driver's timestamp in µs. */
  timestampUs: number;
}

export interface MigDeviceSample {
  gpuInstanceId: number;
  computeInstanceId: number;
  memoryUsed: number | null;
  memoryTotal: number | null;
  /** GPM since the previous sample, 0..100 (Hopper and later; absent or null before, and on a slice's first sample). */
  smUtil?: number | null;
  smOccupancy?: number | null;
}

export type ComputeMode = 'default' | 'exclusive-thread' | 'prohibited' | 'exclusive-process';

/** One reading of one GPU. A field is null when the driver does not support it. */
export interface DeviceSample {
  index: number;
  /** NVML_ERROR_GPU_IS_LOST: every other field is empty. */
  lost: boolean;
  memory: { total: number; used: number; free: number; reserved: number | null } | null;
  utilization: { gpu: number; memory: number } | null;
  temperatureC: number | null;
  powerMilliwatts: number | null;
  powerLimitMilliwatts: number | null;
  smClockMHz: number | null;
  memClockMHz: number | null;
  computeMode: ComputeMode | null;
  migMode: MigMode | null;
  processes: GpuProcessRecord[];
  /** Per-process samples newer than the previous call for this device; [] when none. */
  processUtilization: ProcessUtilizationSample[];
  migDevices: MigDeviceSample[];
  /** Which NVML call produced `processes`, e.g. "nvmlDeviceGetRunningProcessDetailList". */
  processSource: string | null;
  /** Failures other than NOT_SUPPORTED (which only empties the field). */
  errors: NvmlErrorInfo[];
}

/** The addon's surface. Every failure it throws is an NvmlError. */
export interface NvmlBinding {
  /** dlopen the library (GPUSHARE_NVML_LIB or libnvidia-ml.so.1 unless given) and nvmlInit_v2. */
  open(libraryPath?: string): NvmlSystemInfo;
  close(): void;
  isOpen(): boolean;
  system(): NvmlSystemInfo;
  deviceCount(): number;
  describeDevice(index: number): DeviceInfo;
  sampleDevice(index: number): DeviceSample;
  sampleAll(): DeviceSample[];
}
