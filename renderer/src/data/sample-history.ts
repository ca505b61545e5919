// Per-GPU, per-process samples kept OUT of React state: fixed-size typed-array rings,
// filled by the transport and read by the timelines when they draw. Arrays are
// allocated once per process slot and recycled, so the heap stays flat for hours.
import type { Snapshot } from '../../../shared/snapshot.js';
import { processColor, OTHERS_COLOR } from '../colors.js';

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

export function ingestSnapshot(snapshot: Snapshot): void {
  for (const gpu of snapshot.gpus) {
    let history = histories.get(gpu.index);
    if (!history) histories.set(gpu.index, (history = new GpuHistory()));
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
    if (!history) continue;
    const slot = (history.ticks - 1) % HISTORY_CAPACITY;
    let series = history.series.get(process.pid);
    if (!series) {
      series = spareSeries.pop() ?? new ProcessSeries();
      series.sm.fill(NaN);
      series.memory.fill(NaN);
      series.pid = process.pid;
      history.series.set(process.pid, series);
    }
    series.label = `${process.command ?? 'pid ' + process.pid} · ${process.user ?? '?'} · ${process.pid}`;
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

/** Oldest and newest sample time held for a GPU, or null before the first tick. */
export function historySpan(gpuIndex: number): { first: number; last: number } | null {
  const history = histories.get(gpuIndex);
  if (!history || history.ticks === 0) return null;
  const count = Math.min(history.ticks, HISTORY_CAPACITY);
  return { first: history.times[(history.ticks - count) % HISTORY_CAPACITY], last: history.times[(history.ticks - 1) % HISTORY_CAPACITY] };
}

/** Ring slots inside the window, reused by every read (a read never outlives the call). */
const windowSlots = new Int32Array(HISTORY_CAPACITY);
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
 */
export function readTimeline(gpuIndex: number, metric: TimelineMetric, start: number, end: number, buckets: number, pinned: number | null = null): TimelineData {
  const history = histories.get(gpuIndex);
  if (!history || history.ticks === 0 || buckets < 1 || end <= start) return { rows: [], series: [], reported: true };
  const count = Math.min(history.ticks, HISTORY_CAPACITY);
  let slotCount = 0;
  for (let i = history.ticks - count; i < history.ticks; i++) {
    const slot = i % HISTORY_CAPACITY;
    const t = history.times[slot];
    if (t >= start && t <= end) windowSlots[slotCount++] = slot;
  }
  const all: ProcessSeries[] = [];
  const totals: number[] = [];
  let reported = metric === 'memory';
  for (const series of history.series.values()) {
    const values = metric === 'sm' ? series.sm : series.memory;
    let sum = 0;
    let seen = false;
    for (let k = 0; k < slotCount; k++) {
      const v = values[windowSlots[k]];
      if (v === v) {
        sum += v;
        seen = true;
      }
    }
    if (seen && metric === 'sm') reported = true;
    if (sum > 0 || (pinned !== null && series.pid === pinned && seen)) {
      all.push(series);
      totals.push(sum);
    }
  }
  const order = all.map((_, i) => i).sort((a, b) => totals[b] - totals[a] || all[a].pid - all[b].pid);
  const shown = order.slice(0, TIMELINE_TOP_PROCESSES);
  let rest = order.slice(TIMELINE_TOP_PROCESSES);
  const pinnedAt = pinned === null ? -1 : rest.findIndex((i) => all[i].pid === pinned);
  if (pinnedAt >= 0) {
    shown.push(rest[pinnedAt]);
    rest = rest.filter((_, k) => k !== pinnedAt);
  }
  const series: TimelineSeries[] = shown.map((i) => seriesOf(`p${all[i].pid}`, all[i].pid, all[i].label, processColor(all[i].pid)));
  if (rest.length > 0) series.push(seriesOf('others', null, `${rest.length} other processes`, OTHERS_COLOR));

  const columns = series.length;
  const sums = new Float64Array(buckets * columns);
  const samples = new Uint32Array(buckets);
  const width = (end - start) / buckets;
  const shownValues = shown.map((i) => (metric === 'sm' ? all[i].sm : all[i].memory));
  const restValues = rest.map((i) => (metric === 'sm' ? all[i].sm : all[i].memory));
  for (let k = 0; k < slotCount; k++) {
    const slot = windowSlots[k];
    const bucket = Math.min(buckets - 1, Math.floor((history.times[slot] - start) / width));
    const base = bucket * columns;
    samples[bucket]++;
    for (let c = 0; c < shownValues.length; c++) {
      const v = shownValues[c][slot];
      if (v === v) sums[base + c] += v;
    }
    if (restValues.length > 0) {
      let other = 0;
      for (const values of restValues) {
        const v = values[slot];
        if (v === v) other += v;
      }
      sums[base + columns - 1] += other;
    }
  }
  const rows: Array<Record<string, number>> = [];
  for (let b = 0; b < buckets; b++) {
    if (samples[b] === 0) continue;
    const row: Record<string, number> = { t: start + (b + 0.5) * width };
    for (let c = 0; c < columns; c++) row[series[c].key] = sums[b * columns + c] / samples[b];
    rows.push(row);
  }
  return { rows, series, reported };
}

/** Forget everything (a new engine connection starts afresh). */
export function clearHistory(): void {
  for (const history of histories.values()) for (const series of history.series.values()) spareSeries.push(series);
  histories.clear();
}
