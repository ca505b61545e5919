// Idle memory given back (oversubscription). A managed job that has neither launched nor computed
// for `idleMs` is parked (its GPU memory moved to host memory by the driver's checkpoint calls)
// when a queued job needs that memory, and unparked as soon as its program calls CUDA again: a
// parked process's call waits inside the driver, and the preload library says it is in one (the
// launch gate's in_launch for launches, the job's park file for the other calls it hooks): that is
// its request to have its memory back.
//
// When the memory it asks for is taken, the restore waits: other idle jobs on that GPU are parked
// for it, and otherwise it is restored once the job holding the memory ends or goes idle itself.
//
// A policy of the control loop: each step it returns the parks and unparks it wants (ParkAction);
// the loop carries them out (parking.ts) and tells it how each ended (settled).
//
// Never parked (protected): high priority, opted out (keepResident), jobs without a launch gate
// (nothing would ask for their memory back: an unmanaged process would wait in its next call until
// a person unparks it, so unmanaged processes are left to the lab's idle-holder policy), and jobs
// of higher priority than the one that needs the memory.
import { formatByteSize, PRIORITY_RANK } from '../../../shared/jobs.js';
import type { Snapshot } from '../../../shared/snapshot.js';
import type { JobRecord, JobTable } from './job-table.js';
import { declaredNeed } from './policies.js';

export interface AutoParkPolicy {
  /** A job with no launch and no SM time for this long is idle and may be parked for a job that needs its memory. */
  idleMs: number;
  /** While a job is parked by this policy, its launch activity is looked at this often (default 20 ms). */
  wakePollMs?: number;
}

type GpuView = Snapshot['gpus'][number];

/** What auto-park reads of the loop that runs it. */
export interface AutoParkContext {
  readonly table: JobTable;
  /** Threads of the job inside a CUDA call now and when one last returned (ms); null: nothing to read. */
  cudaCalls(record: JobRecord): { inCall: number; lastCallAt: number | null } | null;
  /** A parked job asks for its memory back between ticks: the loop should take a step. */
  wake(): void;
}

/** A park or unpark auto-park wants; `by` is what the job's history says asked for it. */
export interface ParkAction {
  record: JobRecord;
  want: 'park' | 'unpark';
  by: string;
  /** What an unpark brings back to its GPU (bytes). */
  bytes?: number;
}

/** Why a job may never be parked for another job, or null when it may. */
export function protectedFromAutoPark(record: JobRecord): string | null {
  const job = record.view;
  if (job.priority === 'high') return 'it runs at high priority';
  if (job.keepResident) return 'it asked to keep its memory (keep resident)';
  if (!job.managed) return 'gpushare did not start it, so nothing would ask for its memory back';
  return null;
}

/**
 * Idle victims on `gpu` to free at least `need` bytes for a job of `priority`, longest idle first;
 * null when those there are not enough.
 */
export function chooseVictims(candidates: ReadonlyArray<{ record: JobRecord; idleSince: number }>, need: number, priority: JobRecord['view']['priority']): JobRecord[] | null {
  if (need <= 0) return [];
  const eligible = candidates.filter((c) => PRIORITY_RANK[c.record.view.priority] >= PRIORITY_RANK[priority]).sort((a, b) => a.idleSince - b.idleSince);
  const chosen: JobRecord[] = [];
  let freed = 0;
  for (const c of eligible) {
    if (freed >= need) break;
    chosen.push(c.record);
    freed += c.record.view.usedMemory ?? 0;
  }
  return freed >= need ? chosen : null;
}

export class AutoPark {
  /** Job id → when this policy first saw it running (it is not idle before that). */
  private readonly firstSeen = new Map<string, number>();
  /** Job id → the start of the latest sampling interval in which it had SM time (a long kernel with no call). */
  private readonly smSeen = new Map<string, number>();
  /** Jobs parked by this policy (the ones it unparks on demand). */
  private readonly parkedHere = new Set<string>();
  /** Parks and unparks in flight: nothing more is decided for their GPU until they settle. */
  private readonly inFlight = new Map<string, number>();
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Bytes a finished park (+) or unpark (−) moved on a GPU, until a snapshot newer than `seq` shows it. */
  private moved: Array<{ gpu: number; bytes: number; seq: number }> = [];
  /** The latest snapshot's number: what a move is measured against. */
  private seq = -1;
  /** What this step wants done (collected by the helpers below). */
  private actions: ParkAction[] = [];

  constructor(private readonly loop: AutoParkContext, readonly policy: AutoParkPolicy) {}

  /** One step of the loop: follow activity, give restores their memory, then park for waiting jobs. Returns what it wants done. */
  step(snapshot: Snapshot, waiting: ReadonlySet<string>, now: number): ParkAction[] {
    this.actions = [];
    this.seq = snapshot.seq;
    const live = this.loop.table.live();
    this.moved = this.moved.filter((m) => m.seq >= snapshot.seq);
    this.observe(live, snapshot, now);
    for (const id of this.parkedHere) {
      const r = this.loop.table.get(id);
      if (!r || r.view.state !== 'parked') this.parkedHere.delete(id); // ended, or a person unparked it
    }
    for (const r of live) if (this.parkedHere.has(r.view.id) && this.wantsBack(r)) this.restore(r, snapshot, now);
    for (const r of live) if (waiting.has(r.view.id)) this.makeRoom(r, snapshot, now);
    this.pollWhileParked();
    return this.actions;
  }

  /** How a park or unpark it asked for ended (ok: done; else refused or failed, already in the job's history). */
  settled(action: ParkAction, ok: boolean): void {
    const { record, want } = action;
    const gpu = this.inFlight.get(record.view.id);
    this.inFlight.delete(record.view.id);
    if (!ok || gpu === undefined) return;
    if (want === 'park') {
      this.noteMoved(gpu, record.parked?.bytes ?? 0);
      this.parkedHere.add(record.view.id);
      this.pollWhileParked();
      return;
    }
    this.noteMoved(gpu, -(action.bytes ?? 0));
    this.parkedHere.delete(record.view.id);
    this.firstSeen.set(record.view.id, Date.now()); // idle afresh from its restore
    this.smSeen.delete(record.view.id); // readings from before the park say nothing now
  }

  /** Why a queued job may not start on `gpu` now: a parked job there waits in a CUDA call for its memory, which comes first. */
  admissionBlock(gpu: number): string | null {
    for (const id of this.parkedHere) {
      const r = this.loop.table.get(id);
      if (r?.view.gpus.includes(gpu) && r.view.state !== 'running' && (this.inFlight.has(id) || this.wantsBack(r))) return `${id}, parked, is getting its memory on GPU ${gpu} back first`;
    }
    return null;
  }

  stop(): void {
    this.stopped = true;
    this.stopPolling();
  }

  private stopPolling(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
  }

  /** Its program waits in a CUDA call (a launch, a synchronisation, an allocation or free). */
  private wantsBack(record: JobRecord): boolean {
    return (this.loop.cudaCalls(record)?.inCall ?? 0) > 0;
  }

  private observe(live: readonly JobRecord[], snapshot: Snapshot, now: number): void {
    const seen = new Set<string>();
    for (const r of live) {
      if (r.view.state !== 'running' && r.view.state !== 'gated') continue;
      seen.add(r.view.id);
      if (!this.firstSeen.has(r.view.id)) this.firstSeen.set(r.view.id, now);
      // SM time is a share of the whole interval: it was busy at some point after the interval began
      if ((r.view.smPercent ?? 0) > 0) this.smSeen.set(r.view.id, snapshot.takenAt - (snapshot.intervalMs ?? snapshot.nominalIntervalMs));
    }
    for (const id of this.firstSeen.keys()) if (!seen.has(id)) this.firstSeen.delete(id);
    for (const id of this.smSeen.keys()) if (!seen.has(id)) this.smSeen.delete(id);
  }

  /** When it was last active: its last CUDA call, its last SM time, or when first seen running. */
  private activeAt(record: JobRecord): number | null {
    const first = this.firstSeen.get(record.view.id);
    const calls = this.loop.cudaCalls(record);
    if (first === undefined || calls === null) return null;
    if (calls.inCall > 0) return Date.now(); // inside a call now
    return Math.max(first, this.smSeen.get(record.view.id) ?? 0, calls.lastCallAt ?? 0);
  }

  /** Jobs on `gpu` that may be parked now, with when they went idle. */
  private idleOn(gpu: number, except: string, now: number): Array<{ record: JobRecord; idleSince: number }> {
    const out: Array<{ record: JobRecord; idleSince: number }> = [];
    for (const r of this.loop.table.live()) {
      if (r.view.id === except || !r.view.gpus.includes(gpu) || r.view.state !== 'running') continue; // a job on several GPUs frees each of them when parked
      if (r.holds.size > 0 || protectedFromAutoPark(r) !== null) continue;
      const activeAt = this.activeAt(r);
      if (activeAt === null || now - activeAt < this.policy.idleMs || (r.view.usedMemory ?? 0) <= 0) continue;
      out.push({ record: r, idleSince: activeAt });
    }
    return out;
  }

  private busy(gpu: number): boolean {
    return [...this.inFlight.values()].includes(gpu);
  }

  private restore(record: JobRecord, snapshot: Snapshot, now: number): void {
    const gpu = record.view.gpu!;
    if (this.busy(gpu)) return;
    const bytes = record.parked?.bytes ?? 0;
    const free = this.freeOn(snapshot, gpu);
    if (bytes <= free) {
      this.want({ record, want: 'unpark', by: 'gpushare: its program called CUDA again', bytes }, gpu);
      return;
    }
    const victims = chooseVictims(this.idleOn(gpu, record.view.id, now), bytes - free, record.view.priority);
    if (victims?.length) this.park(victims, gpu, `${record.view.id}, parked before, needs its ${formatByteSize(bytes)} back`);
    // else: it waits in its launch until the memory frees (the job holding it ends or goes idle)
  }

  private makeRoom(record: JobRecord, snapshot: Snapshot, now: number): void {
    const job = record.view;
    if (job.mode === 'mig' || job.mode === 'exclusive' || record.parked) return;
    const need = declaredNeed(job);
    if (need <= 0) return;
    const gpus = job.requestedGpu === 'auto' ? snapshot.gpus.filter((g) => !g.lost && !g.migEnabled) : snapshot.gpus.filter((g) => g.index === job.requestedGpu);
    for (const g of gpus) {
      if (this.busy(g.index) || g.lost || g.migEnabled) continue;
      const free = this.freeOn(snapshot, g.index);
      if (need <= free) return; // it waits for something else than memory
      if (need > g.memoryTotal) continue;
      const victims = chooseVictims(this.idleOn(g.index, job.id, now), need - free, job.priority);
      if (!victims?.length) continue;
      this.park(victims, g.index, `${job.id} is queued for ${formatByteSize(need)} of GPU ${g.index}`);
      return;
    }
  }

  private park(victims: JobRecord[], gpu: number, why: string): void {
    const idleS = Math.round(this.policy.idleMs / 100) / 10;
    for (const v of victims) this.want({ record: v, want: 'park', by: `gpushare: idle for over ${idleS} s and ${why}` }, gpu);
  }

  /**
   * Free memory on a GPU: the latest snapshot's, with what parks and unparks since moved, less what
   * started jobs declared and have not allocated yet (as admission counts it).
   */
  private freeOn(snapshot: Snapshot, gpu: number): number {
    const g: GpuView | undefined = snapshot.gpus.find((x) => x.index === gpu);
    if (!g) return 0;
    const moved = this.moved.filter((m) => m.gpu === gpu && m.seq >= snapshot.seq).reduce((sum, m) => sum + m.bytes, 0);
    let spoken = 0;
    for (const r of this.loop.table.live()) {
      const { state, managed } = r.view;
      if (managed && r.view.gpu === gpu && (state === 'starting' || state === 'running' || state === 'gated')) spoken += Math.max(0, declaredNeed(r.view) - (r.view.usedMemory ?? 0));
    }
    return (g.memoryFree ?? g.memoryTotal - (g.memoryUsed ?? 0)) + moved - spoken;
  }

  private noteMoved(gpu: number, bytes: number): void {
    this.moved.push({ gpu, bytes, seq: this.seq });
  }

  /** Ask the loop for a park or unpark of `record`; one at a time per GPU, until it is settled. */
  private want(action: ParkAction, gpu: number): void {
    this.inFlight.set(action.record.view.id, gpu);
    this.actions.push(action);
  }

  /** Parked jobs ask back between ticks: look every wakePollMs while any is parked here. */
  private pollWhileParked(): void {
    if (this.parkedHere.size === 0 || this.stopped) return this.stopPolling();
    if (this.poll) return;
    this.poll = setInterval(() => {
      for (const id of this.parkedHere) {
        const r = this.loop.table.get(id);
        if (r && this.wantsBack(r) && !this.inFlight.has(id)) {
          this.loop.wake(); // a step on the latest snapshot, with what was parked since
          return;
        }
      }
    }, this.policy.wakePollMs ?? 20);
    this.poll.unref?.();
  }
}
