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
let version = 0;

/** Changes whenever a tick is added; components re-read the rings when it moves. */
export const historyVersion = (): number => version;

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
  version++;
}

/** Oldest and newest sample time held for a GPU, or null before the first tick. */
export function historySpan(gpuIndex: number): { first: number; last: number } | null {
  const history = histories.get(gpuIndex);
  if (!history || history.ticks === 0) return null;
  const count = Math.min(history.ticks, HISTORY_CAPACITY);
  return { first: history.times[(history.ticks - count) % HISTORY_CAPACITY], last: history.times[(history.ticks - 1) % HISTORY_CAPACITY] };
}

/**
 * The samples in [start, end] averaged into at most `buckets` columns (one per couple of
 * pixels), the busiest processes one by one and the rest summed as "others".
 */
export function readTimeline(gpuIndex: number, metric: TimelineMetric, start: number, end: number, buckets: number): TimelineData {
  const history = histories.get(gpuIndex);
  if (!history || history.ticks === 0 || buckets < 1 || end <= start) return { rows: [], series: [], reported: true };
  const count = Math.min(history.ticks, HISTORY_CAPACITY);
  const first = history.ticks - count;
  const slots: number[] = [];
  for (let i = first; i < history.ticks; i++) {
    const slot = i % HISTORY_CAPACITY;
    const t = history.times[slot];
    if (t >= start && t <= end) slots.push(slot);
  }
  const all = [...history.series.values()];
  const totals = all.map((series) => {
    const values = metric === 'sm' ? series.sm : series.memory;
    let sum = 0;
    for (const slot of slots) if (!Number.isNaN(values[slot])) sum += values[slot];
    return sum;
  });
  const reported = metric === 'memory' || all.some((series) => slots.some((slot) => !Number.isNaN(series.sm[slot])));
  const order = all.map((_, i) => i).filter((i) => totals[i] > 0).sort((a, b) => totals[b] - totals[a]);
  const shown = order.slice(0, TIMELINE_TOP_PROCESSES);
  const rest = order.slice(TIMELINE_TOP_PROCESSES);
  const series: TimelineSeries[] = shown.map((i) => ({ key: `p${all[i].pid}`, pid: all[i].pid, label: all[i].label, color: processColor(all[i].pid) }));
  if (rest.length > 0) series.push({ key: 'others', pid: null, label: `${rest.length} other processes`, color: OTHERS_COLOR });

  const columns = series.length;
  const sums = new Float64Array(buckets * columns);
  const samples = new Uint32Array(buckets);
  const width = (end - start) / buckets;
  for (const slot of slots) {
    const bucket = Math.min(buckets - 1, Math.floor((history.times[slot] - start) / width));
    samples[bucket]++;
    for (let c = 0; c < shown.length; c++) {
      const v = (metric === 'sm' ? all[shown[c]].sm : all[shown[c]].memory)[slot];
      if (!Number.isNaN(v)) sums[bucket * columns + c] += v;
    }
    if (rest.length > 0) {
      let other = 0;
      for (const i of rest) {
        const v = (metric === 'sm' ? all[i].sm : all[i].memory)[slot];
        if (!Number.isNaN(v)) other += v;
      }
      sums[bucket * columns + columns - 1] += other;
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
  version++;
}
