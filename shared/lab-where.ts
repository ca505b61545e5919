// "Where can I run now" across the lab: from every box's published snapshot, jobs and lab policy,
// the places that can start a job now, as each box's scheduler (electron/engine/scheduler/policies.ts)
// would decide. A place is whole GPUs, or one MIG slice of a GPU in MIG mode (a job there runs in mode mig).
import { FINAL_STATES, PRIORITIES, formatByteSize, gpuDemand, type JobView, type Priority } from './jobs.js';
import { describeBoxState, isQueued, type LabBox, type LabSnapshot } from './lab.js';
import type { GpuView, MigSliceView, Snapshot } from './snapshot.js';

export interface WhereRequest {
  /** GPU memory the job needs on each GPU (bytes; 0: not said). */
  memoryBytes: number;
  /** GPUs it needs on one box. */
  gpus: number;
  priority: Priority;
}

/** The MIG slice a place is, by what `gpushare run --mig-slice` and `gpushare mig layout` name it. */
export interface WhereSlice {
  uuid: string;
  profile: string | null;
  gpuInstanceId: number;
  computeInstanceId: number;
}

export interface WherePlace {
  box: string;
  /** The GPUs that can start it now, the best first (as many as it asked for); a slice's GPU alone. */
  gpus: number[];
  /** The MIG slice of gpus[0] it would run in (mode mig); null: whole GPUs. */
  slice: WhereSlice | null;
  /** Their free memory once the queue ahead of it took its share (a slice's own), in the same order. */
  freeBytes: number[];
  /** Queued jobs on the box that go before it (same or higher priority). */
  queueAhead: number;
  /** Mean utilization of the chosen GPUs now, or the slice's own SM activity (null: unknown). */
  utilization: number | null;
}

export interface WhereAnswer {
  /** Best first: the fewest queued ahead, then the idlest (in quarters of utilization), then the most free memory on its tightest GPU or slice. */
  places: WherePlace[];
  /** Every other box, and why it cannot start the job now. */
  notNow: Array<{ box: string; reason: string }>;
}

/** `gpushare run`'s flags that start the job in this place (the command comes after `--`). */
export function runFlags(place: WherePlace, request: WhereRequest, memory: string): string[] {
  return [
    '--box', place.box,
    ...(place.slice ? ['--mig-slice', place.slice.uuid] : []),
    // a job on several GPUs is started on the ones this place found, in index order (its CUDA_VISIBLE_DEVICES order)
    ...(place.gpus.length > 1 ? ['--gpu', [...place.gpus].sort((a, b) => a - b).join(',')] : []),
    ...(request.memoryBytes > 0 ? ['--mem', memory] : []),
    ...(request.priority === 'normal' ? [] : ['--priority', request.priority]),
  ];
}

const rank = (p: Priority): number => PRIORITIES.indexOf(p);
/** How busy a GPU or slice is, in quarters of its utilization (unknown: the busiest): a job that fits runs faster on an idle one than on a busy one with more memory free; within a quarter, more free memory wins. */
const busyness = (utilization: number | null): number => (utilization === null ? 4 : Math.min(3, Math.floor(utilization / 25)));
/** Memory a job declared: its quota, else its request. */
const declared = (job: JobView): number => job.memoryQuotaBytes ?? job.memoryRequestBytes ?? 0;
const liveOnGpu = (job: JobView): boolean => !FINAL_STATES.has(job.state) && job.state !== 'queued' && job.state !== 'parked' && job.gpu !== null;
/** The GPUs a live job is on (a box older than jobs on several GPUs sends gpu alone). */
const gpusOf = (job: JobView): number[] => (job.gpus?.length ? job.gpus : [job.gpu!]);

/** Where a job can start on a box: a whole GPU (not in MIG mode), or one slice of a GPU in MIG mode. */
interface Spot {
  gpu: GpuView;
  slice: MigSliceView | null;
  /** Free memory after what started jobs declared and the queue ahead takes. */
  free: number;
  utilization: number | null;
}

/** A job's spot: its slice in mode mig, else its GPU (slice UUIDs start "MIG-", never a digit). */
const spotKey = (gpu: number, slice: string | null): string => slice ?? String(gpu);
const jobSpot = (job: JobView, gpu: number): string => spotKey(gpu, job.mode === 'mig' ? job.migSlice : null);
const spotName = (s: Spot): string => (s.slice ? `GPU ${s.gpu.index} slice ${s.slice.profileName ?? s.slice.uuid}` : `GPU ${s.gpu.index}`);

/**
 * A slice's utilization: its own SM activity (GPM, Hopper and later) where the driver gives it; with
 * no process in it, idle (nothing else can run there: slices are isolated); else unknown.
 */
function sliceUtilization(occupied: ReadonlySet<string>, gpu: GpuView, slice: MigSliceView): number | null {
  if (slice.smPercent !== undefined && slice.smPercent !== null) return slice.smPercent;
  return occupied.has(instanceKey(gpu.index, slice.gpuInstanceId, slice.computeInstanceId)) ? null : 0;
}

const instanceKey = (gpu: number, gi: number | null, ci: number | null): string => `${gpu}/${gi}/${ci}`;
/** The MIG instances some process runs in, once per box (a slice's processes, without a pass over them per slice). */
const occupiedInstances = (snapshot: Snapshot): Set<string> => new Set(snapshot.processes.filter((p) => p.gpuInstanceId !== null).map((p) => instanceKey(p.gpuIndex, p.gpuInstanceId, p.computeInstanceId)));

/**
 * The boxes and places that can start a job now, as each box's scheduler would decide from what it
 * published: a place fits when its free memory (less what started jobs declared and have not
 * allocated yet, and less what the jobs queued ahead take first) holds the job, its GPU is neither
 * lost nor held exclusively nor waited for by a job ahead, and the person's limits on that box
 * (GPUs, memory, high-priority jobs) leave room. On a GPU in MIG mode the places are its slices, for
 * a job on one GPU.
 *
 * A slice is ranked by the same rule as whole GPUs, by its own figures: its SMs and memory are its
 * own (isolated from the other slices), so its busyness is its own SM activity and its free memory
 * its own. A slice that fits and runs nothing ranks with idle GPUs; among those the most free memory
 * wins, which for a slice is also its size (a bigger slice has more SMs), so a roomy idle whole GPU
 * comes before it and a busy or nearly full one after it.
 */
export function whereCanIRun(lab: LabSnapshot, request: WhereRequest): WhereAnswer {
  const places: WherePlace[] = [];
  const notNow: WhereAnswer['notNow'] = [];
  for (const box of lab.boxes) {
    const verdict = placeOnBox(box, request, lab.takenAt);
    if (typeof verdict === 'string') notNow.push({ box: box.name, reason: verdict });
    else places.push(verdict);
  }
  places.sort(
    (a, b) =>
      a.queueAhead - b.queueAhead ||
      busyness(a.utilization) - busyness(b.utilization) ||
      Math.min(...b.freeBytes) - Math.min(...a.freeBytes) ||
      a.box.localeCompare(b.box),
  );
  return { places, notNow };
}

function placeOnBox(box: LabBox, request: WhereRequest, now: number): WherePlace | string {
  if (box.connection.state === 'connecting') return 'not connected yet';
  if (box.connection.state !== 'connected') return describeBoxState(box, now);
  const snapshot = box.snapshot;
  if (!snapshot) return 'no snapshot yet';
  const spots = new Map<string, Spot>();
  /** GPU → why nothing more starts on it now (nor in any slice of it). */
  const blocked = new Map<number, string>();
  const occupied = snapshot.gpus.some((g) => g.migEnabled) ? occupiedInstances(snapshot) : new Set<string>();
  for (const gpu of snapshot.gpus) {
    if (gpu.lost) blocked.set(gpu.index, `GPU ${gpu.index} is lost`);
    else if (gpu.migEnabled) {
      if (gpu.migSlices.length === 0) blocked.set(gpu.index, `GPU ${gpu.index} is in MIG mode with no slices`);
      for (const slice of gpu.migSlices) spots.set(spotKey(gpu.index, slice.uuid), { gpu, slice, free: (slice.memoryTotal ?? 0) - (slice.memoryUsed ?? 0), utilization: sliceUtilization(occupied, gpu, slice) });
    } else spots.set(spotKey(gpu.index, null), { gpu, slice: null, free: gpu.memoryFree ?? gpu.memoryTotal - (gpu.memoryUsed ?? 0), utilization: gpu.utilizationGpu });
  }
  for (const job of box.jobs) {
    if (!liveOnGpu(job)) continue;
    const on = gpusOf(job);
    for (const g of on) {
      const spot = spots.get(jobSpot(job, g));
      // declared per GPU; what it allocated, spread over its GPUs
      if (spot && job.managed) spot.free -= Math.max(0, declared(job) - (job.usedMemory ?? 0) / on.length);
      if (job.mode === 'exclusive') blocked.set(g, `GPU ${g} runs ${job.id} exclusively`);
    }
  }
  /** A job ahead takes its memory on `spot`; one on several GPUs that waits for the rest and runs exclusively keeps the whole GPU. */
  const takeFor = (job: JobView, spot: Spot, need: number, waiting: boolean): void => {
    spot.free -= need;
    if (waiting && job.mode === 'exclusive') blocked.set(spot.gpu.index, `GPU ${spot.gpu.index} is held for ${job.id} (${job.owner}), which waits for the rest of its GPUs`);
  };
  // the jobs queued ahead take their places first, as the box's scheduler would start them
  const ahead = box.jobs.filter((j) => isQueued(j) && rank(j.priority) <= rank(request.priority)).sort((a, b) => rank(a.priority) - rank(b.priority) || a.history[0]!.at - b.history[0]!.at);
  for (const job of ahead) {
    const need = declared(job);
    const demand = gpuDemand(job);
    if (demand.named === null && job.mode !== 'mig') {
      const targets = [...spots.values()].filter((s) => s.slice === null && !blocked.has(s.gpu.index) && s.free >= need).sort((a, b) => b.free - a.free);
      // it starts on them, or (on several GPUs) waits keeping what fits it now, as the scheduler does
      for (const target of targets.slice(0, demand.count)) takeFor(job, target, need, targets.length < demand.count);
      continue;
    }
    if (demand.count > 1) {
      const named = demand.named!.map((g) => spots.get(spotKey(g, null)));
      const fitting = named.filter((spot): spot is Spot => !!spot && !blocked.has(spot.gpu.index) && spot.free >= need);
      for (const spot of fitting) takeFor(job, spot, need, fitting.length < named.length);
      if (fitting.length < named.length && rank(job.priority) < rank(request.priority)) for (const g of demand.named!) blocked.set(g, `${job.id} (${job.owner}) waits for GPUs ${demand.named!.join(',')} first`);
      continue;
    }
    const gpu = job.mode === 'mig' ? (snapshot.gpus.find((g) => g.migSlices.some((s) => s.uuid === job.migSlice))?.index ?? job.requestedGpu) : job.requestedGpu;
    if (gpu === 'auto' || blocked.has(gpu)) continue;
    const spot = spots.get(jobSpot(job, gpu));
    if (spot && spot.free >= need) spot.free -= need;
    // a higher job waiting for a GPU holds back every lower job there, in any slice of it (planAdmission's blockedBelow)
    else if (rank(job.priority) < rank(request.priority)) blocked.set(gpu, `${job.id} (${job.owner}) waits for ${spot ? spotName(spot) : `GPU ${gpu}`} first`);
  }
  // a job on several GPUs runs on whole ones: a slice is part of one GPU
  const usable = [...spots.values()].filter((s) => !blocked.has(s.gpu.index) && (request.gpus === 1 || s.slice === null));
  const fits = usable.filter((s) => s.free >= request.memoryBytes).sort((a, b) => busyness(a.utilization) - busyness(b.utilization) || b.free - a.free || a.gpu.index - b.gpu.index || (a.slice?.gpuInstanceId ?? 0) - (b.slice?.gpuInstanceId ?? 0));
  const policyReason = limitReason(box, request, fits.map((s) => s.gpu));
  if (policyReason) return policyReason;
  if (fits.length < request.gpus) {
    if (snapshot.gpus.length < request.gpus) return `has ${snapshot.gpus.length} GPU${snapshot.gpus.length === 1 ? '' : 's'}`;
    const migOut = request.gpus > 1 ? snapshot.gpus.filter((g) => g.migEnabled && !blocked.has(g.index)).map((g) => `GPU ${g.index} is in MIG mode: its slices take one-GPU jobs`) : [];
    const best = usable.sort((a, b) => b.free - a.free)[0];
    if (!best) return [...blocked.values(), ...migOut].join('; ');
    const where = usable.some((s) => s.slice) ? 'GPU or MIG slice' : 'GPU';
    const short = `${fits.length === 0 ? `no ${where} has` : `only ${fits.length} GPU${fits.length === 1 ? ' has' : 's have'}`} ${formatByteSize(request.memoryBytes)} free now (the most: ${spotName(best)}, ${formatByteSize(Math.max(0, best.free))})`;
    return [short, ...blocked.values(), ...migOut].join('; ');
  }
  const chosen = fits.slice(0, request.gpus);
  const utils = chosen.map((s) => s.utilization).filter((u): u is number => u !== null);
  const slice = chosen[0]!.slice;
  return {
    box: box.name,
    gpus: chosen.map((s) => s.gpu.index),
    slice: slice ? { uuid: slice.uuid, profile: slice.profileName, gpuInstanceId: slice.gpuInstanceId, computeInstanceId: slice.computeInstanceId } : null,
    freeBytes: chosen.map((s) => s.free),
    queueAhead: ahead.length,
    utilization: utils.length ? utils.reduce((s, u) => s + u, 0) / utils.length : null,
  };
}

/** Why the person's limits on this box keep the job from starting now, or null. */
function limitReason(box: LabBox, request: WhereRequest, fits: readonly GpuView[]): string | null {
  const you = box.policy?.enforced ? box.policy.you : null;
  if (!you) return null;
  const { limits, using } = you;
  const rule = (from: string): string => `(lab policy on ${box.name}, ${from})`;
  if (limits.maxGpus) {
    // GPUs the person already uses cost nothing more; prefer them when counting
    const mine = new Set(box.jobs.filter((j) => j.owner === you.user && liveOnGpu(j)).flatMap(gpusOf));
    const extra = Math.max(0, request.gpus - fits.filter((g) => mine.has(g.index)).length);
    if (using.gpus + extra > limits.maxGpus.value) return `${you.user} may use at most ${limits.maxGpus.value} GPU${limits.maxGpus.value === 1 ? '' : 's'} at once ${rule(limits.maxGpus.from)} and already uses ${using.gpus}`;
  }
  if (limits.maxMemory && request.memoryBytes * request.gpus + using.memoryBytes > limits.maxMemory.value)
    return `${you.user} may hold at most ${formatByteSize(limits.maxMemory.value)} of GPU memory ${rule(limits.maxMemory.from)} and holds ${formatByteSize(using.memoryBytes)}`;
  if (request.priority === 'high' && limits.maxHighPriorityJobs && using.highPriorityJobs + 1 > limits.maxHighPriorityJobs.value) // one job, on however many GPUs
    return `${you.user} may run at most ${limits.maxHighPriorityJobs.value} high-priority job${limits.maxHighPriorityJobs.value === 1 ? '' : 's'} at once ${rule(limits.maxHighPriorityJobs.from)}`;
  return null;
}
