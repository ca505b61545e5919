// The engine's recent samples, as the console's timelines need them when a page opens:
// compact (one tuple per process per tick) so ten minutes of a busy box stay one message.

/** One process in one tick: [pid, GPU index, SM % (null where the driver cannot tell), used memory in bytes]. */
export type ProcessSample = [pid: number, gpuIndex: number, smPercent: number | null, usedMemory: number | null];

/** One sampler tick. */
export interface SampleTick {
  takenAt: number;
  /** The GPUs sampled in this tick, by index. */
  gpus: number[];
  processes: ProcessSample[];
}

export interface RecentSamples {
  /** Oldest first. */
  ticks: SampleTick[];
  /** Command and user of every pid in ticks, as last sampled. */
  processes: Array<{ pid: number; command: string | null; user: string | null }>;
}

/** The longest history the engine keeps and serves: the console's 10-minute window. */
export const RECENT_SAMPLES_MAX_SECONDS = 600;
