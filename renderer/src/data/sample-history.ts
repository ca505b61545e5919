// Per-GPU, per-process samples kept OUT of React state: fixed-size typed-array rings,
// filled by the transport and read by the timelines when they draw. Arrays are
// allocated once per process slot and recycled, so the heap stays flat for hours.
import { recentTicks, type RecentSamples } from '../../../shared/recent-samples.js';
import type { GpuProcessView } from '../../../shared/snapshot.js';
import { noteProcesses, processColor, OTHERS_COLOR } from '../colors.js';
import { jobIdOfPid, processLabel } from './process-label.js';

/** Ticks kept per GPU: one hour at the default 1 Hz. */
export const HISTORY_CAPACITY = 3600;
/** Processes drawn one by one in a timeline; the rest are stacked as "others". */
export const TIMELINE_TOP_PROCESSES = 7;

export type TimelineMetric = 'sm' | 'memory';

export interface TimelineSeries {
  key: string;
  pid: number | null;
  label: string;
  color: string;
}

export interface TimelineData {
  rows: Array<Record<string, number>>;
  series: TimelineSeries[];
  /** False when no process on this GPU reports the metric (SM % on MIG slices). */
  reported: boolean;
}

class ProcessSeries {
  readonly sm = new Float32Array(HISTORY_CAPACITY);
  readonly memory = new Float32Array(HISTORY_CAPACITY);
  pid = 0;
  label = '';
  command: string | null | undefined = undefined;
  user: string | null | undefined = undefined;
  jobId = '';
  lastSeenTick = 0;
}

class GpuHistory {
  readonly times = new Float64Array(HISTORY_CAPACITY);
  readonly series = new Map<number, ProcessSeries>();
  /** Ticks written so far; the newest is at slot (ticks - 1) % capacity. */
  ticks = 0;
}

const BYTES_PER_GIB = 1024 ** 3;
const histories = new Map<number, GpuHistory>();
const spareSeries: ProcessSeries[] = [];

/** What the rings take from a tick: a live snapshot, or a tick of the engine's recent history. */
export interface TickSamples {
  takenAt: number;
  gpus: ReadonlyArray<{ index: number }>;
  processes: ReadonlyArray<Pick<GpuProcessView, 'pid' | 'gpuIndex' | 'command' | 'user' | 'smPercent' | 'usedMemory'>>;
}

export function ingestSnapshot(snapshot: TickSamples): void {
  noteProcesses(snapshot.processes); // newcomers get their colours before anything draws them
  const fresh = new Set<number>();
  for (const gpu of snapshot.gpus) {
    let history = histories.get(gpu.index);
    if (!history) histories.set(gpu.index, (history = new GpuHistory()));
    // the rings hold time order: a tick already held (history and live overlap) is skipped
    if (history.ticks > 0 && history.times[(history.ticks - 1) % HISTORY_CAPACITY] >= snapshot.takenAt) continue;
    fresh.add(gpu.index);
    const slot = history.ticks % HISTORY_CAPACITY;
    history.times[slot] = snapshot.takenAt;
    for (const series of history.series.values()) {
      series.sm[slot] = NaN;
      series.memory[slot] = NaN;
    }
    history.ticks++;
  }
  for (const process of snapshot.processes) {
    const history = histories.get(process.gpuIndex);
    if (!history || !fresh.has(process.gpuIndex)) continue;
    const slot = (history.ticks - 1) % HISTORY_CAPACITY;
    let series = history.series.get(process.pid);
    if (!series) {
      series = spareSeries.pop() ?? new ProcessSeries();
      series.sm.fill(NaN);
      series.memory.fill(NaN);
      series.pid = process.pid;
      series.command = series.user = undefined;
      history.series.set(process.pid, series);
    }
    // a new label only when the process's name, user or job changed, not a string per process per tick
    const jobId = jobIdOfPid(process.pid);
    if (series.command !== process.command || series.user !== process.user || series.jobId !== jobId) {
      series.command = process.command;
      series.user = process.user;
      series.jobId = jobId;
      series.label = processLabel(process);
    }
    series.lastSeenTick = history.ticks;
    series.sm[slot] = process.smPercent ?? NaN;
    series.memory[slot] = (process.usedMemory ?? 0) / BYTES_PER_GIB;
  }
  for (const history of histories.values()) {
    for (const [pid, series] of history.series) {
      if (history.ticks - series.lastSeenTick >= HISTORY_CAPACITY) {
        history.series.delete(pid);
        spareSeries.push(series);
      }
    }
  }
}

/** The engine's recent samples, into the rings (before live snapshots newer than them). */
export function ingestRecent(recent: RecentSamples): void {
  for (const tick of recentTicks(recent)) ingestSnapshot({ takenAt: tick.takenAt, gpus: tick.gpus.map((index) => ({ index })), processes: tick.processes });
}

/** Oldest and newest sample time held for a GPU, or null before the first tick. */
export function historySpan(gpuIndex: number): { first: number; last: number } | null {
  const history = histories.get(gpuIndex);
  if (!history || history.ticks === 0) return null;
  const count = Math.min(history.ticks, HISTORY_CAPACITY);
  return { first: history.times[(history.ticks - count) % HISTORY_CAPACITY], last: history.times[(history.ticks - 1) % HISTORY_CAPACITY] };
}

/** Per-series column sums, reused by every read (a read never outlives the call). */
let columnSums = new Float64Array(0);
/** Shown series per key, reused while their label stays the same. */
const seriesCache = new Map<string, TimelineSeries>();

function seriesOf(key: string, pid: number | null, label: string, color: string): TimelineSeries {
  const cached = seriesCache.get(key);
  if (cached && cached.label === label) return cached;
  const series = { key, pid, label, color };
  if (seriesCache.size > 4096) seriesCache.clear();
  seriesCache.set(key, series);
  return series;
}

/**
 * The samples in [start, end] averaged into at most `buckets` columns (one per couple of
 * pixels), the busiest processes one by one and the rest summed as "others". `pinned`
 * (the highlighted process) gets its own series even when it is not among the busiest.
 * One pass over the window's samples: each process's values are summed per column, and
 * its total over the window (which decides who is drawn alone) is the sum of its columns.
 */
export function readTimeline(gpuIndex: number, metric: TimelineMetric, start: number, end: number, buckets: number, pinned: number | null = null): TimelineData {
  const history = histories.get(gpuIndex);
  if (!history || history.ticks === 0 || buckets < 1 || end <= start) return { rows: [], series: [], reported: true };
  const count = Math.min(history.ticks, HISTORY_CAPACITY);
  const width = (end - start) / buckets;
  // the ring holds ticks in time order: walk back from the newest until the window's start
  const samples = new Uint32Array(buckets);
  const slotBucket: number[] = [];
  const slots: number[] = [];
  for (let i = history.ticks - 1; i >= history.ticks - count; i--) {
    const slot = i % HISTORY_CAPACITY;
    const t = history.times[slot];
    if (t < start) break;
    if (t > end) continue;
    const bucket = Math.min(buckets - 1, Math.floor((t - start) / width));
    slots.push(slot);
    slotBucket.push(bucket);
    samples[bucket]++;
  }
  const all = [...history.series.values()];
  if (columnSums.length < all.length * buckets) columnSums = new Float64Array(all.length * buckets * 2);
  columnSums.fill(0, 0, all.length * buckets);
  const totals = new Float64Array(all.length);
  const seen = new Uint8Array(all.length);
  let reported = metric === 'memory';
  for (let s = 0; s < all.length; s++) {
    const values = metric === 'sm' ? all[s].sm : all[s].memory;
    const base = s * buckets;
    let total = 0;
    for (let k = 0; k < slots.length; k++) {
      const v = values[slots[k]];
      if (v === v) {
        columnSums[base + slotBucket[k]] += v;
        total += v;
        seen[s] = 1;
      }
    }
    totals[s] = total;
    if (seen[s] && metric === 'sm') reported = true;
  }
  const drawn = all.map((_, i) => i).filter((i) => totals[i] > 0 || (pinned !== null && all[i].pid === pinned && seen[i]));
  const order = drawn.sort((a, b) => totals[b] - totals[a] || all[a].pid - all[b].pid);
  const shown = order.slice(0, TIMELINE_TOP_PROCESSES);
  let rest = order.slice(TIMELINE_TOP_PROCESSES);
  const pinnedAt = pinned === null ? -1 : rest.findIndex((i) => all[i].pid === pinned);
  if (pinnedAt >= 0) {
    shown.push(rest[pinnedAt]);
    rest = rest.filter((_, k) => k !== pinnedAt);
  }
  const series: TimelineSeries[] = shown.map((i) => seriesOf(`p${all[i].pid}`, all[i].pid, all[i].label, processColor(all[i].pid)));
  if (rest.length > 0) series.push(seriesOf('others', null, `${rest.length} other processes`, OTHERS_COLOR));

  const rows: Array<Record<string, number>> = [];
  for (let b = 0; b < buckets; b++) {
    if (samples[b] === 0) continue;
    const row: Record<string, number> = { t: start + (b + 0.5) * width };
    for (let c = 0; c < shown.length; c++) row[series[c].key] = columnSums[shown[c] * buckets + b] / samples[b];
    if (rest.length > 0) {
      let other = 0;
      for (const i of rest) other += columnSums[i * buckets + b];
      row.others = other / samples[b];
    }
    rows.push(row);
  }
  return { rows, series, reported };
}

/** Forget everything (a new engine connection starts afresh). */
export function clearHistory(): void {
  for (const history of histories.values()) for (const series of history.series.values()) spareSeries.push(series);
  histories.clear();
}
