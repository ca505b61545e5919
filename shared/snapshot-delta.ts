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
    if (a.length !== bs.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], bs[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let keys = 0;
  for (const k in ao) {
    if (!Object.hasOwn(bo, k) || !sameJson(ao[k], bo[k])) return false;
    keys++;
  }
  for (const _k in bo) keys--;
  return keys === 0;
}

/** The fields of `next` that differ from `prev`; null when none do. */
export function fieldChanges(prev: object, next: object): FieldChanges | null {
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  let set: Record<string, unknown> | undefined;
  let unset: string[] | undefined;
  // for…in over plain data: no key arrays made for each of the hundreds of rows a tick compares
  let kept = 0;
  for (const k in n) {
    const was = p[k];
    const is = n[k];
    // the same value, or the same object (a row's argv and context are kept while its process lives): nothing to look into
    if (was === is && (was !== undefined || Object.hasOwn(p, k))) kept++;
    else if (!Object.hasOwn(p, k)) (set ??= {})[k] = is;
    else {
      kept++;
      if (!sameJson(was, is)) (set ??= {})[k] = is;
    }
  }
  let prevKeys = 0;
  for (const _k in p) prevKeys++;
  if (prevKeys > kept) for (const k in p) if (!Object.hasOwn(n, k)) (unset ??= []).push(k);
  if (!set && !unset) return null;
  return { ...(set ? { set } : {}), ...(unset ? { unset } : {}) };
}

/** `prev` with `changes` made, as a new object. */
export function withChanges<T extends object>(prev: T, changes: FieldChanges): T {
  const next: Record<string, unknown> = { ...prev, ...changes.set };
  for (const k of changes.unset ?? []) delete next[k];
  return next as T;
}

/** One number for pid and GPU index (an index is below 64; a pid below 2^22 on Linux). */
const key = (pid: number, gpuIndex: number): number => pid * 64 + gpuIndex;
const keyOf = (p: { pid: number; gpuIndex: number }): number => key(p.pid, p.gpuIndex);

/** Each process by its key; null when two rows share one (a delta could not tell them apart) or one has no key. */
function byKey(processes: readonly GpuProcessView[]): Map<number, GpuProcessView> | null {
  const map = new Map<number, GpuProcessView>();
  for (const p of processes) {
    if (!Number.isInteger(p.gpuIndex) || p.gpuIndex < 0 || p.gpuIndex >= 64 || !Number.isSafeInteger(p.pid)) return null; // one number would not name it
    const k = keyOf(p);
    if (map.has(k)) return null;
    map.set(k, p);
  }
  return map;
}

// A published snapshot is the next one's base a tick later: its rows' index is built once, not once as next and again as prev.
const indexes = new WeakMap<readonly GpuProcessView[], Map<number, GpuProcessView> | null>();

function indexOf(processes: readonly GpuProcessView[]): Map<number, GpuProcessView> | null {
  let index = indexes.get(processes);
  if (index === undefined) indexes.set(processes, (index = byKey(processes)));
  return index;
}

// Whether each row's key names it alone; a list with the same keys in the same order as one known so inherits it, unbuilt.
const keyed = new WeakMap<readonly GpuProcessView[], boolean>();

function keysNameRows(processes: readonly GpuProcessView[]): boolean {
  let known = keyed.get(processes);
  if (known === undefined) keyed.set(processes, (known = indexOf(processes) !== null));
  return known;
}

/** The same processes in the same order (the usual tick): rows compare by position, with no search. */
function sameKeysInOrder(prev: readonly GpuProcessView[], next: readonly GpuProcessView[]): boolean {
  if (prev.length !== next.length) return false;
  for (let i = 0; i < next.length; i++) if (prev[i].pid !== next[i].pid || prev[i].gpuIndex !== next[i].gpuIndex) return false;
  return true;
}

/** A row's changes, or null; a row that is the same object as before (the sampler keeps unchanged ones, a rebuilt snapshot does) is not looked into. */
const rowChanges = (old: GpuProcessView, p: GpuProcessView): FieldChanges | null => (old === p ? null : fieldChanges(old, p));

/** A snapshot's fields besides the ones a delta carries apart. */
function otherFields(snapshot: Snapshot): Record<string, unknown> {
  const { seq: _seq, takenAt: _takenAt, gpus: _gpus, processes: _processes, ...rest } = snapshot;
  return rest;
}

/** What changed from `prev` to `next`; null when a delta cannot say it (two processes with one key): send `next` whole. */
export function snapshotDelta(prev: Snapshot, next: Snapshot): SnapshotDelta | null {
  const removed: ProcessKey[] = [];
  const added: [number, GpuProcessView][] = [];
  const changed: [number, number, FieldChanges][] = [];
  let reordered = false;
  if (sameKeysInOrder(prev.processes, next.processes)) {
    if (!keysNameRows(prev.processes)) return null;
    keyed.set(next.processes, true);
    for (let i = 0; i < next.processes.length; i++) {
      const p = next.processes[i];
      const changes = rowChanges(prev.processes[i], p);
      if (changes) changed.push([p.pid, p.gpuIndex, changes]);
    }
  } else {
    const before = indexOf(prev.processes);
    const after = indexOf(next.processes);
    if (!before || !after) return null;
    for (const p of prev.processes) if (!after.has(keyOf(p))) removed.push([p.pid, p.gpuIndex]);
    const keptInNextOrder: number[] = [];
    next.processes.forEach((p, position) => {
      const old = before.get(keyOf(p));
      if (!old) return void added.push([position, p]);
      keptInNextOrder.push(keyOf(p));
      const changes = rowChanges(old, p);
      if (changes) changed.push([p.pid, p.gpuIndex, changes]);
    });
    const keptInPrevOrder = prev.processes.filter((p) => after.has(keyOf(p))).map(keyOf);
    reordered = keptInPrevOrder.some((k, i) => k !== keptInNextOrder[i]);
  }
  const sameGpus = prev.gpus.length === next.gpus.length && prev.gpus.every((g, i) => g.uuid === next.gpus[i].uuid);
  const gpuChanges: [number, FieldChanges][] = [];
  if (sameGpus)
    next.gpus.forEach((g, i) => {
      const changes = prev.gpus[i] === g ? null : fieldChanges(prev.gpus[i], g);
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
  for (const [pid, gpu] of delta.processes.removed) if (!rows.delete(key(pid, gpu))) throw new DeltaMismatch(`process ${pid} on GPU ${gpu} to remove is not there`);
  for (const [pid, gpu, changes] of delta.processes.changed) {
    const old = rows.get(key(pid, gpu));
    if (!old) throw new DeltaMismatch(`process ${pid} on GPU ${gpu} to change is not there`);
    rows.set(key(pid, gpu), withChanges(old, changes));
  }
  let processes: GpuProcessView[];
  if (delta.processes.order) {
    const addedByKey = new Map(delta.processes.added.map(([, p]) => [keyOf(p), p]));
    processes = delta.processes.order.map(([pid, gpu]) => {
      const p = rows.get(key(pid, gpu)) ?? addedByKey.get(key(pid, gpu));
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
