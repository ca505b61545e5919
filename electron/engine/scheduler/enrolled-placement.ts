// Where an enrolled job runs is the driver's word. Enrolment places it by a hint, before it has a context the
// driver could list: its CUDA_VISIBLE_DEVICES at exec (its owner's to set, changeable before the first CUDA
// call, and an index, a UUID, a MIG UUID or nothing) or Slurm's allocation. A hint, not "GPU not yet known":
// its gate slot needs a domain before the library's first launch, and a job must count on some GPU meanwhile;
// the driver's process list overrides it at the first snapshot that lists one of the job's processes.
// A job's first GPU (JobView.gpu) is the one where its processes hold most memory; the other whole GPUs the driver
// lists it on follow in JobView.gpus, and its gate slot counts on each (a higher job on any holds it back).
import { placeOnGpus, type EnrolledPlace, type JobView } from '../../../shared/jobs.js';
import type { GpuProcessView, Snapshot } from '../../../shared/snapshot.js';

/** Samples in a row (each listing the job) that must place it elsewhere before it moves: a real move is followed within a few ticks, while memory split across GPUs or a process list that flickers never moves its gate slot back and forth. */
export const PLACEMENT_MOVE_SAMPLES = 3;

/** Per job: the place the latest samples in a row named instead of its own, and how many did. */
const pendingMoves = new WeakMap<JobView, { key: string; samples: number }>();
/** Per job: the GPUs the latest samples in a row listed it on, fewer than it is gated on, and how many did (a GPU leaves its gate slot as a move does). */
const pendingDrops = new WeakMap<JobView, { key: string; samples: number }>();

/** The GPU, or MIG slice of it, the driver lists `p` on, with its memory there. */
export function placeOfProcess(snapshot: Snapshot, p: GpuProcessView): EnrolledPlace {
  const gpu = snapshot.gpus.find((g) => g.index === p.gpuIndex);
  const slice = p.gpuInstanceId === null ? undefined : gpu?.migSlices.find((s) => s.gpuInstanceId === p.gpuInstanceId && s.computeInstanceId === p.computeInstanceId);
  return { gpu: p.gpuIndex, migSlice: slice?.uuid ?? null, usedMemory: p.usedMemory ?? 0 };
}

/** Adds a process's place to a job's places (memory summed per GPU or slice). */
export function addPlace(places: EnrolledPlace[], place: EnrolledPlace): void {
  const same = places.find((q) => q.gpu === place.gpu && q.migSlice === place.migSlice);
  if (same) same.usedMemory += place.usedMemory;
  else places.push({ ...place });
}

/**
 * The job's place from where the driver lists its processes: most memory first, then where it is now (no
 * flapping between equals), then the lowest GPU. Null: the driver lists none of them (not yet, or parked).
 */
export function decidePlacement(places: readonly EnrolledPlace[], now: Pick<JobView, 'gpu' | 'migSlice'>): { place: EnrolledPlace; alsoOn: EnrolledPlace[] } | null {
  if (places.length === 0) return null;
  const here = (p: EnrolledPlace): number => (p.gpu === now.gpu && p.migSlice === now.migSlice ? 1 : 0);
  const sorted = [...places].sort((a, b) => b.usedMemory - a.usedMemory || here(b) - here(a) || a.gpu - b.gpu || (a.migSlice ?? '').localeCompare(b.migSlice ?? ''));
  return { place: sorted[0], alsoOn: sorted.slice(1) };
}

/**
 * Puts the decision into the job's view (one call a sample); returns why it moved (for its history and gate slot),
 * or null when it stays where it was. The driver's first word moves it at once (it was a hint); after that, only a
 * place decided PLACEMENT_MOVE_SAMPLES samples in a row does. Its view changed either way when it returns `changed`.
 */
export function applyPlacement(job: JobView, decided: { place: EnrolledPlace; alsoOn: EnrolledPlace[] }): { changed: boolean; moved: string | null } {
  const e = job.enrolled!;
  const { gpu, migSlice } = decided.place;
  let moved = gpu !== job.gpu || migSlice !== job.migSlice;
  let beside = decided.alsoOn;
  if (moved && e.gpuFrom === 'driver' && !seenInARow(pendingMoves, job, `${gpu}/${migSlice}`)) {
    moved = false; // held where it is: every place listed but its own is beside it
    beside = [decided.place, ...decided.alsoOn].filter((p) => p.gpu !== job.gpu || p.migSlice !== job.migSlice);
  } else pendingMoves.delete(job);
  const alsoOn = beside.length > 0 ? beside : undefined;
  // its slot counts on every whole GPU it is listed on: a new one at once, one it left only after PLACEMENT_MOVE_SAMPLES
  // samples in a row without it (a flickering list never takes it in and out); a slot in a MIG slice is on that GPU alone
  const [mainGpu, mainSlice] = moved ? [gpu, migSlice] : [job.gpu ?? gpu, job.migSlice];
  const listed = mainSlice === null ? [...new Set([mainGpu, ...beside.filter((p) => p.migSlice === null).map((p) => p.gpu)])] : [mainGpu];
  const left = mainSlice === null ? job.gpus.filter((g) => !listed.includes(g)) : [];
  const holdLeft = !moved && left.length > 0 && e.gpuFrom === 'driver' && !seenInARow(pendingDrops, job, listed.join(','));
  if (!holdLeft) pendingDrops.delete(job);
  const gpus = holdLeft ? [...listed, ...left] : listed;
  const regated = gpus.length !== job.gpus.length || gpus.some((g, i) => g !== job.gpus[i]);
  const where = (places: EnrolledPlace[] | undefined): string => (places ?? []).map((p) => `${p.gpu}/${p.migSlice}`).join(',');
  const changed = moved || regated || e.gpuFrom !== 'driver' || where(e.alsoOn) !== where(alsoOn); // memory alone changes every sample: shown, not kept each time
  const was = e.gpuFrom === 'driver' ? 'the driver showed it on' : `its ${e.gpuFrom === 'slurm' ? 'Slurm allocation' : 'CUDA_VISIBLE_DEVICES'} named`;
  const from = `${was} ${placeName(job.gpu, job.migSlice)}`;
  const before = job.gpus;
  e.gpuFrom = 'driver';
  if (alsoOn) e.alsoOn = alsoOn;
  else delete e.alsoOn;
  placeOnGpus(job, gpus);
  const gated = gpus.length > 1 ? `gated on GPUs ${gpus.join(',')}` : 'gated there alone';
  if (!moved) {
    if (!regated) return { changed, moved: null };
    const added = gpus.filter((g) => !before.includes(g));
    const listed = added.length ? `on GPU ${added.join(', ')} too` : `on GPU ${gpus.join(', ')}${gpus.length === 1 ? ' alone now' : ' now'}`;
    return { changed: true, moved: `the driver lists its processes ${listed}: ${gated}` };
  }
  Object.assign(job, { requestedGpu: gpu, migSlice, mode: migSlice ? 'mig' : job.mode === 'mig' ? 'shared' : job.mode }); // in a slice as a job started there is (its quota spoken for in the slice)
  return { changed: true, moved: `the driver lists its processes on ${placeName(gpu, migSlice)} (${from})${gpus.length > 1 ? `; ${gated}` : ''}` };
}

/** This sample names `key` instead of what the job has (its place, its GPUs): true once PLACEMENT_MOVE_SAMPLES in a row have. */
function seenInARow(pending: WeakMap<JobView, { key: string; samples: number }>, job: JobView, key: string): boolean {
  const was = pending.get(job);
  const samples = was?.key === key ? was.samples + 1 : 1;
  pending.set(job, { key, samples });
  return samples >= PLACEMENT_MOVE_SAMPLES;
}

export function placeName(gpu: number | null, migSlice: string | null): string {
  return `GPU ${gpu ?? '?'}${migSlice ? ` (MIG slice ${migSlice})` : ''}`;
}
