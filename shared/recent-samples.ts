// The engine's recent samples, as the console's timelines need them when a page opens:
// compact (per process arrays, memory in MiB) so ten minutes of a busy box stay one small
// message. A tuple per process per tick ([pid, gpu, sm, bytes]) was 7.9 MB for 8 GPUs × 64
// processes over 600 ticks; per process arrays repeat no pid or GPU, and MiB are 4–5 digits.

const MIB = 1024 ** 2;

/** One process on one GPU over the ticks it was sampled in. */
export interface ProcessSamples {
  pid: number;
  gpuIndex: number;
  /** Command and user as last sampled. */
  command: string | null;
  user: string | null;
  /** Index (in RecentSamples.takenAt) of this process's first sample; sm and memoryMiB run on from there, one entry per tick. */
  from: number;
  /** SM % to one decimal; null where the driver gave none. */
  sm: Array<number | null>;
  /** Used memory in MiB (to a thousandth: NVML's figures, whole MiB, stay exact); null where the driver gave none. */
  memoryMiB: Array<number | null>;
  /** Ticks (indices in takenAt) between `from` and the last sample in which the process was not sampled at all. */
  absent: number[];
}

export interface RecentSamples {
  /** Each tick's time, oldest first. */
  takenAt: number[];
  /** The GPUs sampled in each tick, by index. */
  gpus: number[][];
  processes: ProcessSamples[];
}

/** One tick, as the console's sample rings take it. */
export interface RecentTick {
  takenAt: number;
  gpus: number[];
  processes: Array<{ pid: number; gpuIndex: number; smPercent: number | null; usedMemory: number | null; command: string | null; user: string | null }>;
}

/** The ticks again, oldest first (an answer in another shape, from an older engine, gives none). */
export function recentTicks(recent: RecentSamples): RecentTick[] {
  if (!recent || !Array.isArray(recent.takenAt) || !Array.isArray(recent.gpus) || !Array.isArray(recent.processes)) return [];
  const ticks: RecentTick[] = recent.takenAt.map((takenAt, i) => ({ takenAt, gpus: recent.gpus[i] ?? [], processes: [] }));
  for (const p of recent.processes) {
    const absent = new Set(p.absent);
    for (let k = 0; k < p.sm.length; k++) {
      const tick = ticks[p.from + k];
      if (!tick || absent.has(p.from + k)) continue;
      const mib = p.memoryMiB[k];
      tick.processes.push({ pid: p.pid, gpuIndex: p.gpuIndex, smPercent: p.sm[k], usedMemory: mib === null || mib === undefined ? null : Math.round(mib * MIB), command: p.command, user: p.user });
    }
  }
  return ticks;
}

/** Bytes as MiB to a thousandth (whole MiB, as NVML reports them, stay whole). */
export const toMiB = (bytes: number): number => Math.round((bytes / MIB) * 1000) / 1000;

/** The longest history the engine keeps and serves: the console's 10-minute window. */
export const RECENT_SAMPLES_MAX_SECONDS = 600;
