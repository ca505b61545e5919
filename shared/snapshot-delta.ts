// What changed from one published snapshot to the next, small enough to send every tick to many
// clients: the scalars, the GPUs' changed fields, processes added, changed and removed (by pid and GPU).
// applySnapshotDelta(prev, snapshotDelta(prev, next)) is deep-equal to next; unchanged parts are prev's own objects.
import type { GpuProcessView, GpuView, Snapshot } from './snapshot.js';

/** An object's fields that differ: the new values, and the keys it no longer has. */
export interface FieldChanges {
  set?: Record<string, unknown>;
  unset?: string[];
}

/** A process's key in a snapshot: its pid and its GPU's index (one process on two GPUs is two rows). */
export type ProcessKey = [pid: number, gpuIndex: number];

export interface SnapshotDelta {
  /** The seq of the snapshot this applies to; a client whose last snapshot has another seq asks for the whole one. */
  baseSeq: number;
  seq: number;
  takenAt: number;
  /** The snapshot's other fields that changed (intervalMs, nominalIntervalMs, driver, …). */
  fields?: FieldChanges;
  /** The whole GPU list, when GPUs came or went; otherwise `gpuChanges`, by position. */
  gpus?: GpuView[];
  gpuChanges?: [position: number, changes: FieldChanges][];
  processes: {
    removed: ProcessKey[];
    /** New rows and where they stand in the next list (ascending), inserted after removal. */
    added: [position: number, process: GpuProcessView][];
    changed: [...key: ProcessKey, changes: FieldChanges][];
    /** The next list's keys in order, when the rows kept did not keep their order. */
    order?: ProcessKey[];
  };
}

/** Two JSON values the same (snapshots are plain data). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    return a.length === bs.length && a.every((x, i) => sameJson(x, bs[i]));
  }
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && sameJson((a as Record<string, unknown>)[k], bo[k]));
}

/** The fields of `next` that differ from `prev`; null when none do. */
export function fieldChanges(prev: object, next: object): FieldChanges | null {
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  let set: Record<string, unknown> | undefined;
  let unset: string[] | undefined;
  for (const k of Object.keys(n)) if (!Object.hasOwn(p, k) || !sameJson(p[k], n[k])) (set ??= {})[k] = n[k];
  for (const k of Object.keys(p)) if (!Object.hasOwn(n, k)) (unset ??= []).push(k);
  if (!set && !unset) return null;
  return { ...(set ? { set } : {}), ...(unset ? { unset } : {}) };
}

/** `prev` with `changes` made, as a new object. */
export function withChanges<T extends object>(prev: T, changes: FieldChanges): T {
  const next: Record<string, unknown> = { ...prev, ...changes.set };
  for (const k of changes.unset ?? []) delete next[k];
  return next as T;
}

const keyOf = (p: { pid: number; gpuIndex: number }): string => `${p.pid}:${p.gpuIndex}`;

/** Each process by its key; null when two rows share one (a delta could not tell them apart). */
function byKey(processes: readonly GpuProcessView[]): Map<string, GpuProcessView> | null {
  const map = new Map<string, GpuProcessView>();
  for (const p of processes) {
    const k = keyOf(p);
    if (map.has(k)) return null;
    map.set(k, p);
  }
  return map;
}

/** A snapshot's fields besides the ones a delta carries apart. */
function otherFields(snapshot: Snapshot): Record<string, unknown> {
  const { seq: _seq, takenAt: _takenAt, gpus: _gpus, processes: _processes, ...rest } = snapshot;
  return rest;
}

/** What changed from `prev` to `next`; null when a delta cannot say it (two processes with one key): send `next` whole. */
export function snapshotDelta(prev: Snapshot, next: Snapshot): SnapshotDelta | null {
  const before = byKey(prev.processes);
  const after = byKey(next.processes);
  if (!before || !after) return null;
  const removed: ProcessKey[] = [];
  for (const p of prev.processes) if (!after.has(keyOf(p))) removed.push([p.pid, p.gpuIndex]);
  const added: [number, GpuProcessView][] = [];
  const changed: [number, number, FieldChanges][] = [];
  const keptInNextOrder: string[] = [];
  next.processes.forEach((p, position) => {
    const old = before.get(keyOf(p));
    if (!old) return void added.push([position, p]);
    keptInNextOrder.push(keyOf(p));
    const changes = fieldChanges(old, p);
    if (changes) changed.push([p.pid, p.gpuIndex, changes]);
  });
  const keptInPrevOrder = prev.processes.filter((p) => after.has(keyOf(p))).map(keyOf);
  const reordered = keptInPrevOrder.some((k, i) => k !== keptInNextOrder[i]);
  const sameGpus = prev.gpus.length === next.gpus.length && prev.gpus.every((g, i) => g.uuid === next.gpus[i].uuid);
  const gpuChanges: [number, FieldChanges][] = [];
  if (sameGpus)
    next.gpus.forEach((g, i) => {
      const changes = fieldChanges(prev.gpus[i], g);
      if (changes) gpuChanges.push([i, changes]);
    });
  const fields = fieldChanges(otherFields(prev), otherFields(next));
  return {
    baseSeq: prev.seq,
    seq: next.seq,
    takenAt: next.takenAt,
    ...(fields ? { fields } : {}),
    ...(sameGpus ? { gpuChanges } : { gpus: next.gpus }),
    processes: { removed, added, changed, ...(reordered ? { order: next.processes.map((p): ProcessKey => [p.pid, p.gpuIndex]) } : {}) },
  };
}

/** Thrown when a delta does not fit the snapshot it is applied to: the client asks for the whole one. */
export class DeltaMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeltaMismatch';
  }
}

/** The snapshot `delta` makes of `prev`; prev is not changed. Throws DeltaMismatch when delta was not made from prev. */
export function applySnapshotDelta(prev: Snapshot, delta: SnapshotDelta): Snapshot {
  if (delta.baseSeq !== prev.seq) throw new DeltaMismatch(`the delta is from snapshot ${delta.baseSeq}, not ${prev.seq}`);
  const rows = new Map(prev.processes.map((p) => [keyOf(p), p]));
  for (const [pid, gpu] of delta.processes.removed) if (!rows.delete(`${pid}:${gpu}`)) throw new DeltaMismatch(`process ${pid} on GPU ${gpu} to remove is not there`);
  for (const [pid, gpu, changes] of delta.processes.changed) {
    const old = rows.get(`${pid}:${gpu}`);
    if (!old) throw new DeltaMismatch(`process ${pid} on GPU ${gpu} to change is not there`);
    rows.set(`${pid}:${gpu}`, withChanges(old, changes));
  }
  let processes: GpuProcessView[];
  if (delta.processes.order) {
    const addedByKey = new Map(delta.processes.added.map(([, p]) => [keyOf(p), p]));
    processes = delta.processes.order.map(([pid, gpu]) => {
      const p = rows.get(`${pid}:${gpu}`) ?? addedByKey.get(`${pid}:${gpu}`);
      if (!p) throw new DeltaMismatch(`process ${pid} on GPU ${gpu} is in the order but nowhere else`);
      return p;
    });
  } else {
    processes = [...rows.values()]; // a Map keeps prev's order
    for (const [position, p] of delta.processes.added) processes.splice(position, 0, p);
  }
  let gpus = delta.gpus ?? prev.gpus;
  if (delta.gpuChanges?.length) {
    gpus = [...prev.gpus];
    for (const [i, changes] of delta.gpuChanges) {
      if (!gpus[i]) throw new DeltaMismatch(`GPU position ${i} to change is not there`);
      gpus[i] = withChanges(gpus[i], changes);
    }
  }
  return { ...withChanges(prev, delta.fields ?? {}), seq: delta.seq, takenAt: delta.takenAt, gpus, processes };
}
