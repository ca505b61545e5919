// The last minutes of samples, held by the engine so a console opened now draws its timelines
// from history instead of an empty chart. Bounded in time and in ticks; typed arrays per tick.
import { RECENT_SAMPLES_MAX_SECONDS, toMiB, type ProcessSamples, type RecentSamples } from '../../../shared/recent-samples.js';
import type { Snapshot } from '../../../shared/snapshot.js';

/** At most this many ticks (10 minutes at 1 Hz; less time at a faster rate), whatever the rate. */
export const RECENT_TICKS_KEPT = 600;

interface HeldTick {
  takenAt: number;
  gpus: number[];
  pids: Int32Array;
  gpuOf: Uint8Array;
  /** NaN where the driver gave no SM %. */
  sm: Float32Array;
  /** NaN where the driver gave no memory figure. */
  memory: Float64Array;
}

export class RecentSampleRing {
  private readonly ticks: HeldTick[] = [];
  private readonly labels = new Map<number, { command: string | null; user: string | null }>();

  constructor(private readonly keptTicks = RECENT_TICKS_KEPT, private readonly keptMs = RECENT_SAMPLES_MAX_SECONDS * 1000) {}

  add(snapshot: Snapshot): void {
    const n = snapshot.processes.length;
    const tick: HeldTick = {
      takenAt: snapshot.takenAt,
      gpus: snapshot.gpus.map((g) => g.index),
      pids: new Int32Array(n),
      gpuOf: new Uint8Array(n),
      sm: new Float32Array(n),
      memory: new Float64Array(n),
    };
    snapshot.processes.forEach((p, i) => {
      tick.pids[i] = p.pid;
      tick.gpuOf[i] = p.gpuIndex;
      tick.sm[i] = p.smPercent ?? NaN;
      tick.memory[i] = p.usedMemory ?? NaN;
      const label = this.labels.get(p.pid);
      if (!label || label.command !== p.command || label.user !== p.user) this.labels.set(p.pid, { command: p.command, user: p.user });
    });
    this.ticks.push(tick);
    const oldest = snapshot.takenAt - this.keptMs;
    let drop = Math.max(0, this.ticks.length - this.keptTicks);
    while (drop < this.ticks.length && this.ticks[drop].takenAt < oldest) drop++;
    if (drop > 0) this.ticks.splice(0, drop);
  }

  /** The ticks of the last `seconds` before the newest, oldest first: per process arrays (see shared/recent-samples.ts). */
  read(seconds = RECENT_SAMPLES_MAX_SECONDS): RecentSamples {
    const newest = this.ticks.at(-1)?.takenAt ?? 0;
    const since = newest - Math.min(seconds, RECENT_SAMPLES_MAX_SECONDS) * 1000;
    const held = new Set<number>();
    const recent: RecentSamples = { takenAt: [], gpus: [], processes: [] };
    /** Series by GPU and pid: a process using two GPUs has one on each. */
    const series = new Map<string, ProcessSamples>();
    for (const tick of this.ticks) {
      for (const pid of tick.pids) held.add(pid);
      if (tick.takenAt < since) continue;
      const index = recent.takenAt.length;
      recent.takenAt.push(tick.takenAt);
      recent.gpus.push(tick.gpus);
      for (let i = 0; i < tick.pids.length; i++) {
        const key = `${tick.gpuOf[i]}:${tick.pids[i]}`;
        let samples = series.get(key);
        if (!samples) {
          const label = this.labels.get(tick.pids[i]) ?? { command: null, user: null };
          samples = { pid: tick.pids[i], gpuIndex: tick.gpuOf[i], command: label.command, user: label.user, from: index, sm: [], memoryMiB: [], absent: [] };
          series.set(key, samples);
          recent.processes.push(samples);
        }
        // ticks it missed since its last sample are marked absent, not drawn as zero
        while (samples.from + samples.sm.length < index) {
          samples.absent.push(samples.from + samples.sm.length);
          samples.sm.push(null);
          samples.memoryMiB.push(null);
        }
        const sm = tick.sm[i];
        const memory = tick.memory[i];
        // a Float32 SM % to one decimal: 33.3, not 33.29999923706055 on the wire
        samples.sm.push(sm === sm ? Math.round(sm * 10) / 10 : null);
        samples.memoryMiB.push(memory === memory ? toMiB(memory) : null);
      }
    }
    // labels of pids gone from every held tick are forgotten, so the map stays as small as the ring
    for (const pid of this.labels.keys()) if (!held.has(pid)) this.labels.delete(pid);
    return recent;
  }
}
