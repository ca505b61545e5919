// MIG GPU-instance profile tables: built in for the GPUs we know, or built from what the driver reports.

export interface MigProfile {
  /** Short name as nvidia-smi prints it after "MIG ", e.g. "3g.40gb". */
  name: string;
  /** GPU instance profile id the driver reports and `nvidia-smi mig -cgi` takes, e.g. 9 for 3g.40gb. */
  id: number;
  /** NVML_GPU_INSTANCE_PROFILE_* index for nvmlDeviceGetGpuInstanceProfileInfo, e.g. 0x2 (3_SLICE). */
  nvmlProfile: number;
  /** Compute slices (GPCs) out of the table's computeSlices. */
  computeSlices: number;
  /** Memory slices out of the table's memorySlices; every placement spans this many. */
  memorySlices: number;
  memoryMiB: number;
  smCount: number;
  maxInstances: number;
  /** Memory slices where an instance of this profile may start. */
  placementStarts: number[];
  /** Carries the GPU's one set of media engines (+me); the planner leaves it to whoever needs video. */
  mediaExtensions: boolean;
}

export interface MigProfileTable {
  /** "H100-80GB" for the built-ins, the driver's device name otherwise. */
  model: string;
  source: 'built-in' | 'driver';
  memorySlices: number;
  computeSlices: number;
  profiles: MigProfile[];
}

/** NVML_GPU_INSTANCE_PROFILE_* indexes (nvml.h). */
export const NVML_GPU_INSTANCE_PROFILE = {
  SLICE_1: 0x0,
  SLICE_2: 0x1,
  SLICE_3: 0x2,
  SLICE_4: 0x3,
  SLICE_7: 0x4,
  SLICE_1_REV1: 0x7,
  SLICE_1_REV2: 0x9,
} as const;

const P = NVML_GPU_INSTANCE_PROFILE;
const ANY_1G = [0, 1, 2, 3, 4, 5, 6];

// Shape shared by A100, H100 and H200 (8 memory slices, 7 compute slices): MIG user guide,
// "Supported MIG Profiles", and `nvidia-smi mig -lgipp` on these GPUs:
// ID 19/20 {0..6}:1, 15 {0,2,4,6}:2, 14 {0,2,4}:2, 9 {0,4}:4, 5 {0}:4, 0 {0}:8.
const SHAPE = [
  { nvmlProfile: P.SLICE_1, id: 19, g: 1, memorySlices: 1, maxInstances: 7, placementStarts: ANY_1G, me: false },
  { nvmlProfile: P.SLICE_1_REV1, id: 20, g: 1, memorySlices: 1, maxInstances: 1, placementStarts: ANY_1G, me: true },
  { nvmlProfile: P.SLICE_1_REV2, id: 15, g: 1, memorySlices: 2, maxInstances: 4, placementStarts: [0, 2, 4, 6], me: false },
  { nvmlProfile: P.SLICE_2, id: 14, g: 2, memorySlices: 2, maxInstances: 3, placementStarts: [0, 2, 4], me: false },
  { nvmlProfile: P.SLICE_3, id: 9, g: 3, memorySlices: 4, maxInstances: 2, placementStarts: [0, 4], me: false },
  { nvmlProfile: P.SLICE_4, id: 5, g: 4, memorySlices: 4, maxInstances: 1, placementStarts: [0], me: false },
  { nvmlProfile: P.SLICE_7, id: 0, g: 7, memorySlices: 8, maxInstances: 1, placementStarts: [0], me: false },
];

type Row = [name: string, memoryMiB: number, smCount: number];

/** Per model, in SHAPE order: name, MiB and SMs as `nvidia-smi mig -lgip` reports them. */
const BUILT_IN: Record<string, Row[]> = {
  // MIG user guide's -lgip listing for A100-SXM4-40GB (R470+; 1g.10gb needs R525+).
  'A100-40GB': [['1g.5gb', 4864, 14], ['1g.5gb+me', 4864, 14], ['1g.10gb', 9856, 14], ['2g.10gb', 9856, 28],
    ['3g.20gb', 19968, 42], ['4g.20gb', 19968, 56], ['7g.40gb', 40192, 98]],
  // -lgip captured on an A100-SXM4-80GB (9.50/19.50/39.25/78.75 GiB).
  'A100-80GB': [['1g.10gb', 9728, 14], ['1g.10gb+me', 9728, 14], ['1g.20gb', 19968, 14], ['2g.20gb', 19968, 28],
    ['3g.40gb', 40192, 42], ['4g.40gb', 40192, 56], ['7g.80gb', 80640, 98]],
  // -lgip captured on an "NVIDIA H100 80GB HBM3" (9.75/19.62/39.50/79.25 GiB; 1g.20gb has 26 SMs).
  'H100-80GB': [['1g.10gb', 9984, 16], ['1g.10gb+me', 9984, 16], ['1g.20gb', 20096, 26], ['2g.20gb', 20096, 32],
    ['3g.40gb', 40448, 60], ['4g.40gb', 40448, 64], ['7g.80gb', 81152, 132]],
  // -lgip captured on H200 / H200 NVL (16.00/32.50/69.75/140.00 GiB); 4g.71gb's 64 SMs assumed as on H100.
  'H200-141GB': [['1g.18gb', 16384, 16], ['1g.18gb+me', 16384, 16], ['1g.35gb', 33280, 26], ['2g.35gb', 33280, 32],
    ['3g.71gb', 71424, 60], ['4g.71gb', 71424, 64], ['7g.141gb', 143360, 132]],
};

export const BUILT_IN_MIG_MODELS = Object.keys(BUILT_IN);

function builtInTable(model: string): MigProfileTable {
  const profiles = BUILT_IN[model].map(([name, memoryMiB, smCount], i): MigProfile => {
    const s = SHAPE[i];
    return {
      name, id: s.id, nvmlProfile: s.nvmlProfile, computeSlices: s.g, memorySlices: s.memorySlices, memoryMiB, smCount,
      maxInstances: s.maxInstances, placementStarts: [...s.placementStarts], mediaExtensions: s.me,
    };
  });
  return { model, source: 'built-in', memorySlices: 8, computeSlices: 7, profiles };
}

/**
 * The built-in table for a device name ("NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200")
 * or a short name ("H100-80GB"); memoryTotalBytes tells 40 GB from 80 GB A100s when the name does not.
 * null when we have no table for it.
 */
export function builtInMigProfileTable(modelName: string, memoryTotalBytes?: number): MigProfileTable | null {
  const name = modelName.toUpperCase();
  const family = /\b(A100|H100|H200)/.exec(name)?.[1];
  if (!family) return null;
  const named = /(\d+)\s*GB\b/.exec(name.replace(family, ''))?.[1];
  const gib = named !== undefined ? Number(named) : memoryTotalBytes !== undefined ? memoryTotalBytes / 2 ** 30 : undefined;
  const model = (() => {
    if (family === 'A100') return gib === undefined ? null : gib < 60 ? 'A100-40GB' : gib < 100 ? 'A100-80GB' : null;
    // H100 NVL (94 GB) and GH200 (96 GB) have other tables; a bare "H100 PCIe" is the 80 GB card.
    if (family === 'H100') return /NVL|GH200/.test(name) ? null : gib === undefined || (gib >= 70 && gib < 90) ? 'H100-80GB' : null;
    return gib === undefined || (gib >= 130 && gib < 150) ? 'H200-141GB' : null;
  })();
  return model ? builtInTable(model) : null;
}

/** One GPU instance profile as NVML describes it: nvmlDeviceGetGpuInstanceProfileInfoV + possible placements. */
export interface NvmlGpuInstanceProfile {
  /** The NVML_GPU_INSTANCE_PROFILE_* index it was read with. */
  nvmlProfile: number;
  /** info.id: the id GPU instances report and `nvidia-smi mig -cgi` takes. */
  id: number;
  /** info.name, e.g. "MIG 1g.10gb"; derived from the counts when absent. */
  name?: string | null;
  sliceCount: number;
  instanceCount: number;
  multiprocessorCount: number;
  memorySizeMB: number;
  /** nvmlDeviceGetGpuInstancePossiblePlacements_v2 for info.id. */
  placements: { start: number; size: number }[];
}

/** The table the driver reports wins over the built-ins: build one from NVML's profile infos and placements. */
export function migProfileTableFromNvml(model: string, reported: NvmlGpuInstanceProfile[]): MigProfileTable {
  const profiles: MigProfile[] = [];
  for (const info of reported) {
    if (info.placements.length === 0 || info.instanceCount === 0) continue; // nothing to place: not offered here
    const size = info.placements[0].size;
    if (info.placements.some((p) => p.size !== size)) throw new Error(`MIG profile ${info.id} reports placements of different sizes.`);
    const name = info.name?.replace(/^MIG\s+/, '') || `${info.sliceCount}g.${Math.round(info.memorySizeMB / 1024)}gb`;
    profiles.push({
      name,
      id: info.id,
      nvmlProfile: info.nvmlProfile,
      computeSlices: info.sliceCount,
      memorySlices: size,
      memoryMiB: info.memorySizeMB,
      smCount: info.multiprocessorCount,
      maxInstances: info.instanceCount,
      placementStarts: [...new Set(info.placements.map((p) => p.start))].sort((a, b) => a - b),
      mediaExtensions: /\+me\b/.test(name) || info.nvmlProfile === NVML_GPU_INSTANCE_PROFILE.SLICE_1_REV1,
    });
  }
  if (profiles.length === 0) throw new Error(`${model} reports no MIG profile that can be placed.`);
  const memorySlices = Math.max(...profiles.flatMap((p) => p.placementStarts.map((s) => s + p.memorySlices)));
  const computeSlices = Math.max(...profiles.map((p) => p.computeSlices));
  return { model, source: 'driver', memorySlices, computeSlices, profiles };
}

/** SMs of the whole GPU in MIG mode (its largest profile): what a job's SM share is a fraction of. */
export const fullGpuSmCount = (table: MigProfileTable): number => Math.max(...table.profiles.map((p) => p.smCount));

export const largestProfile = (table: MigProfileTable): MigProfile =>
  table.profiles.reduce((a, b) => (b.memoryMiB > a.memoryMiB || (b.memoryMiB === a.memoryMiB && b.smCount > a.smCount) ? b : a));
