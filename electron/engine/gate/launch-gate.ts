// The launch gate, engine side: through it the engine sets each managed job's
// priority, pause and memory quota, and reads back what the job's preload
// library (native/preload) announces. Protocol and files: gate_abi.h.
//
// Node cannot mmap, so the engine writes the control file with pwrite at fixed
// offsets; on Linux a write to a page-cache file is seen at once by every
// MAP_SHARED mapping. Jobs map the control file read-only: priorities, pauses,
// quotas and domains are the engine's alone. Each job writes only its own
// activity file (launch-gate-files.ts), which the engine reads.
// A gate domain is a whole GPU or one MIG slice of it: the engine numbers them
// as slots need them (a domain with no slot left is free for the next).
import { closeSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { nativeDir } from '../paths.js';
import { checkGpu, checkMigSlice, checkPid, checkSlot, JOB_PRIORITIES, msToNs, priorityIndex, quotaValue, type JobPriority } from './launch-gate-checks.js';
import { GateDomains } from './launch-gate-domains.js';
import * as F from './launch-gate-files.js';
import { LaunchGateError, type SlotOwner } from './launch-gate-files.js';
import * as L from './launch-gate-layout.js';
import { slotState, type SlotState } from './launch-gate-state.js';

export { JOB_PRIORITIES, LaunchGateError, type JobPriority, type SlotOwner, type SlotState };
export type { SlotProcess } from './launch-gate-state.js';

/** Absolute path of libgpushare-preload.so in this checkout or installed package. */
export function preloadLibraryPath(): string {
  return join(nativeDir(), 'preload', 'build', 'libgpushare-preload.so');
}

export interface LaunchGateOptions {
  /** Directory the gate's own directory is made in, e.g. $XDG_RUNTIME_DIR/gpushare (created if missing). */
  dir: string;
  /** Name of the gate's directory inside `dir` (default 'gate'). */
  name?: string;
  /**
   * Jobs of other users share this gate (the box daemon): its directory is 0755 and each slot's
   * file belongs to the job's user. Default: when the engine runs as root. Otherwise 0700.
   */
  jobsOfOtherUsers?: boolean;
  /** A job that launched within this window is active (default 5 ms). */
  activeWindowMs?: number;
  /**
   * 'fixed': a job stays active activeWindowMs after every launch. 'learned' (default): after its work is
   * seen complete, only as long as the gaps inside its requests last, as it learned them (at most activeWindowMs).
   */
  windowPolicy?: GateWindowPolicy;
  /** Launched work not yet seen complete keeps a job active at most this long (default 1000 ms). */
  outstandingMaxMs?: number;
  /** Lower-priority jobs synchronise about every this much queued work (default 2 ms). */
  bestEffortSyncWindowMs?: number;
  /** Jobs run ungated once the heartbeat is older than this (default 2000 ms). */
  engineGoneMs?: number;
  /** Heartbeat (and review of stuck reports) on a timer every this many ms (0 or absent: call them yourself). */
  heartbeatIntervalMs?: number;
  /** Pid the jobs check for liveness (default this process). */
  enginePid?: number;
  /**
   * Take over the gate an earlier engine left (its jobs still map its files): the header is this
   * engine's, its slots wait for adoptSlot(); releaseLeftovers() frees the rest. A missing or
   * foreign gate is replaced by a fresh one, as without this option.
   */
  resume?: boolean;
}

/** A job of an earlier engine whose slot this engine takes over: what the slot must say, what to set. */
export interface SlotAdoption {
  pid: number;
  gpu: number;
  /** The other GPUs of a job on several (whole GPUs). */
  alsoOn?: readonly number[];
  migSlice?: string | null;
  priority: JobPriority;
}

export interface SlotRequest {
  /** The job's pid, when already known (else 0 until setPid). */
  pid?: number;
  gpu: number;
  /** The other GPUs of a job on several (whole GPUs, no slice): its slot counts in each one's domain too. */
  alsoOn?: readonly number[];
  /** The MIG slice the job runs in (e.g. its UUID): its own gate domain. Null or absent: the whole GPU. */
  migSlice?: string | null;
  priority: JobPriority;
  /** Hard device-memory quota in bytes for the whole job (all its processes); null or absent: none. */
  quotaBytes?: number | bigint | null;
  /** The user the job runs as: its slot's activity file is theirs. Absent: the engine's own user. */
  owner?: SlotOwner | null;
}

/** A slot's files and generation, handed to an enrolled process as descriptors. */
export interface SlotFiles {
  dir: string;
  control: string;
  activity: string;
  generation: number;
}

export interface SlotGrant {
  slot: number;
  generation: number;
  /** Environment to start the job with (merge into its env; LD_PRELOAD is ours alone). */
  env: Record<string, string>;
}

interface SlotRecord {
  inUse: boolean;
  generation: number;
  gpu: number;
  migSlice: string | null;
  domain: number;
  /** A job on several GPUs: the domains of its other GPUs (it counts in each, as in `domain`). */
  also: Array<{ gpu: number; domain: number }>;
  member: boolean;
  /** Held a higher job back GATE_HOLD_MAX_NS mid-launch: higher jobs no longer wait for its launches. */
  stuck: boolean;
  priority: number;
  configSeq: number;
  /** Its activity file, open for reading (null: none could be opened). */
  activity: F.ActivityFile | null;
}

const engineUid = (): number => process.geteuid?.() ?? -1;

export class LaunchGate {
  private fd: number | null;
  private readonly slots: SlotRecord[] = Array.from({ length: L.GATE_MAX_SLOTS }, () => ({
    inUse: false, generation: 0, gpu: 0, migSlice: null, domain: 0, also: [], member: false, stuck: false, priority: 0, configSeq: 0, activity: null,
  }));
  private readonly domains = new GateDomains((position, value) => this.writeU64(position, value));
  private timer: NodeJS.Timeout | null = null;
  private readonly scratch = Buffer.alloc(8);
  /** The slots an earlier engine left in use in a resumed gate, until adopted or released. */
  private readonly leftovers = new Set<number>();

  /** `path`: the gate's directory (GPUSHARE_GATE), holding `control` and one `slot-N` per slot. */
  private constructor(readonly path: string, readonly shared: boolean, fd: number) {
    this.fd = fd;
  }

  get controlPath(): string {
    return F.controlPath(this.path);
  }

  activityPath(slot: number): string {
    checkSlot(slot);
    return F.activityPath(this.path, slot);
  }

  /** Creates a fresh gate (swapped in whole: jobs still mapping an old one fail open), or resumes one. */
  static create(options: LaunchGateOptions): LaunchGate {
    if (!options || typeof options.dir !== 'string' || !options.dir) throw new LaunchGateError('LaunchGate.create needs a directory (options.dir).');
    const path = join(options.dir, options.name ?? 'gate');
    const shared = options.jobsOfOtherUsers ?? engineUid() === 0;
    const header = headerWindows(options);
    const windowPolicy = windowPolicyValue(options.windowPolicy); // before any file is made: a bad one changes nothing
    const resumed = options.resume ? F.openGateDir(path, shared) : null;
    const gate = resumed ? new LaunchGate(path, shared, resumed.fd) : new LaunchGate(path, shared, F.createGateDir(path, shared, F.controlImage(options.enginePid ?? process.pid, header)));
    if (resumed) gate.takeOver(resumed.image, options, header);
    else for (const rec of gate.slots) rec.generation = (Math.random() * 0xffff_fff0) >>> 0; // apart from an earlier gate's generations
    gate.writeU32(L.HEADER.windowPolicy, windowPolicy);
    if (options.heartbeatIntervalMs) gate.startHeartbeat(options.heartbeatIntervalMs);
    return gate;
  }

  /** A resumed gate: this engine's header, no member counted until its job is adopted. */
  private takeOver(image: Buffer, options: LaunchGateOptions, header: bigint[]): void {
    this.writeI32(L.HEADER.enginePid, options.enginePid ?? process.pid);
    this.heartbeat();
    F.HEADER_WINDOWS.forEach((at, i) => this.writeU64(at, header[i]));
    this.write(L.GATE_DOMAIN_OFFSET, Buffer.alloc(L.GATE_MAX_DOMAINS * L.GATE_DOMAIN_SIZE));
    this.write(L.GATE_SLOT_DOMAINS_OFFSET, Buffer.alloc(L.GATE_MAX_SLOTS * L.GATE_SLOT_DOMAINS_SIZE)); // the earlier engine's domain numbers mean nothing here
    for (let slot = 0; slot < L.GATE_MAX_SLOTS; slot++) {
      const base = slotBase(slot);
      this.slots[slot].generation = image.readUInt32LE(base + L.SLOT.generation);
      this.slots[slot].configSeq = image.readUInt32LE(base + L.SLOT.configSeq);
      if (image.readUInt32LE(base + L.SLOT.state) === L.GATE_SLOT_IN_USE) this.leftovers.add(slot);
    }
    this.writeU32(L.HEADER.state, L.GATE_ENGINE_RUNNING);
  }

  /**
   * Reconnect a job an earlier engine started: its slot (from a resumed gate) must still be in use
   * by its pid. It counts in its domain again with this engine's view of its priority. False: not its slot.
   */
  adoptSlot(slot: number, job: SlotAdoption): boolean {
    checkSlot(slot);
    if (!this.leftovers.has(slot)) return false;
    const base = slotBase(slot);
    const image = Buffer.alloc(L.GATE_SLOT_SIZE);
    readSync(this.openFd(), image, 0, image.length, base);
    const [pid, gpu, migSlice, priority] = [checkPid(job.pid), checkGpu(job.gpu), checkMigSlice(job.migSlice), priorityIndex(job.priority)];
    if (image.readUInt32LE(L.SLOT.state) !== L.GATE_SLOT_IN_USE || image.readInt32LE(L.SLOT.pid) !== pid) return false;
    this.leftovers.delete(slot);
    const rec = this.slots[slot];
    rec.gpu = gpu;
    rec.migSlice = migSlice;
    rec.domain = this.domains.adopt(migSlice === null ? `${gpu}` : `${gpu}/${migSlice}`, image.readUInt32LE(L.SLOT.domain));
    rec.also = alsoGpus(job.alsoOn, gpu, migSlice).map((g) => ({ gpu: g, domain: this.domains.take(`${g}`) }));
    this.writeAlso(slot, rec);
    rec.priority = priority;
    rec.inUse = true;
    rec.member = true;
    rec.stuck = false;
    this.setActivity(slot, F.openActivity(this.path, slot, image.readBigUInt64LE(L.SLOT.activityIno)));
    this.clearReserved(slot); // an earlier engine's MPS client identity: its library would let the job skip the gate
    this.writeU32(base + L.SLOT.domain, rec.domain);
    this.writeU32(base + L.SLOT.priority, rec.priority);
    this.writeU32(base + L.SLOT.paused, 0);
    this.writeU32(base + L.SLOT.unconfirmed, 0); // this engine has not judged its claims yet
    this.setMemberEverywhere(rec, rec.priority, slot, true);
    return true;
  }

  /** Zeros in the slot's reserved bytes (gate_abi.h, "MPS clients"). */
  private clearReserved(slot: number): void {
    const zeros = Buffer.alloc(L.SLOT.unconfirmed - L.SLOT.reserved);
    writeSync(this.openFd(), zeros, 0, zeros.length, slotBase(slot) + L.SLOT.reserved);
  }

  /** Slots of a resumed gate that no job was adopted into: freed, their processes (if any) run ungated. */
  releaseLeftovers(): number[] {
    const released = [...this.leftovers];
    for (const slot of released) this.writeU32(slotBase(slot) + L.SLOT.state, L.GATE_SLOT_FREE);
    this.leftovers.clear();
    return released;
  }

  /** Tells the jobs the engine is alive (call every ~500 ms, or use startHeartbeat). */
  heartbeat(): void {
    this.writeU64(L.HEADER.heartbeatNs, process.hrtime.bigint());
  }

  /** Beats every `intervalMs`, and reviews what the jobs report of slots stuck mid-launch. */
  startHeartbeat(intervalMs = 500): void {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new LaunchGateError(`Heartbeat interval must be a positive number of milliseconds (got ${intervalMs}).`);
    this.stopHeartbeat();
    this.heartbeat();
    this.timer = setInterval(() => {
      this.heartbeat();
      this.reviewStuckReports();
    }, intervalMs);
    this.timer.unref();
  }

  stopHeartbeat(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reserves a slot for a job about to start; returns its index and the env to start it with. */
  allocateSlot(request: SlotRequest): SlotGrant {
    if (!request || typeof request !== 'object') throw new LaunchGateError('allocateSlot needs { gpu, migSlice?, priority, quotaBytes?, owner? }.');
    const gpu = checkGpu(request.gpu);
    const migSlice = checkMigSlice(request.migSlice);
    const priority = priorityIndex(request.priority);
    const quota = quotaValue(request.quotaBytes);
    const pid = request.pid === undefined ? 0 : checkPid(request.pid);
    const owner = F.slotOwner(request.owner);
    if (owner && owner.uid !== engineUid()) F.checkOwnerCanReach(this.path, this.shared, owner);
    const slot = this.slots.findIndex((s, i) => !s.inUse && !this.leftovers.has(i));
    if (slot < 0) throw new LaunchGateError(`All ${L.GATE_MAX_SLOTS} launch-gate slots are in use: wait for a managed job to end.`);
    const rec = this.slots[slot];
    const generation = (rec.generation + 1) >>> 0 || 1;
    const activity = F.createActivity(this.path, slot, generation, owner); // the slot is free: nobody counts its activity
    const alsoOn = alsoGpus(request.alsoOn, gpu, migSlice); // checked before anything is taken
    const domain = this.domains.take(migSlice === null ? `${gpu}` : `${gpu}/${migSlice}`);
    const also = alsoOn.map((g) => ({ gpu: g, domain: this.domains.take(`${g}`) }));
    Object.assign(rec, { generation, gpu, migSlice, domain, also, priority, stuck: false });
    this.writeAlso(slot, rec);
    this.setActivity(slot, activity);
    const base = slotBase(slot);
    this.writeU64(base + L.SLOT.activityIno, activity.ino);
    this.writeU32(base + L.SLOT.ownerUid, owner ? owner.uid : engineUid());
    this.writeI32(base + L.SLOT.pid, pid);
    this.writeU32(base + L.SLOT.gpu, gpu);
    this.writeU32(base + L.SLOT.domain, domain);
    this.writeU32(base + L.SLOT.priority, priority);
    this.writeU32(base + L.SLOT.paused, 0);
    this.writeU32(base + L.SLOT.unconfirmed, 0);
    this.clearReserved(slot);
    this.writeQuota(slot, quota);
    this.writeU32(base + L.SLOT.generation, generation); // after the inode: a job that sees it opens the new file
    this.writeU32(base + L.SLOT.state, L.GATE_SLOT_IN_USE);
    rec.inUse = true;
    rec.member = true;
    this.setMemberEverywhere(rec, priority, slot, true);
    const env: Record<string, string> = {
      LD_PRELOAD: preloadLibraryPath(),
      GPUSHARE_GATE: this.path,
      GPUSHARE_GATE_SLOT: String(slot),
      GPUSHARE_GATE_GEN: String(generation),
      GPUSHARE_PRIORITY: JOB_PRIORITIES[priority],
    };
    if (quota !== L.GATE_NO_QUOTA) env.GPUSHARE_MEM_QUOTA = quota.toString();
    return { slot, generation, env };
  }

  setPid(slot: number, pid: number): void {
    this.inUse(slot);
    this.writeI32(slotBase(slot) + L.SLOT.pid, checkPid(pid));
  }

  setPriority(slot: number, priority: JobPriority): void {
    const rec = this.inUse(slot);
    const next = priorityIndex(priority);
    if (next === rec.priority) return;
    if (rec.member) this.setMemberEverywhere(rec, next, slot, true);
    this.writeU32(slotBase(slot) + L.SLOT.priority, next);
    if (rec.member) this.setMemberEverywhere(rec, rec.priority, slot, false);
    rec.priority = next;
  }

  /**
   * False: the slot stops counting in its domain, so a job stopped, parked or
   * checkpoint-locked (perhaps inside a launch call) holds back nobody. True: it counts again
   * (call before the job runs again).
   */
  setMember(slot: number, member: boolean): void {
    const rec = this.inUse(slot);
    if (typeof member !== 'boolean') throw new LaunchGateError(`setMember needs true or false (got ${String(member)}).`);
    if (member === rec.member) return;
    this.setMemberEverywhere(rec, rec.priority, slot, member);
    rec.member = member;
  }

  /**
   * The job runs elsewhere than its slot said (an enrolled job, placed by the driver's process list): its slot
   * counts in the domain of `gpu` (or its slice) from now, and in those of `alsoOn` (other whole GPUs the driver
   * lists it on). In the new domains before out of the old ones, so it is never in none; the library reads its
   * domains at every launch.
   */
  moveSlot(slot: number, gpu: number, migSlice?: string | null, alsoOn?: readonly number[]): void {
    const rec = this.inUse(slot);
    const [to, slice] = [checkGpu(gpu), checkMigSlice(migSlice)];
    const others = alsoGpus(alsoOn, to, slice);
    if (rec.gpu === to && rec.migSlice === slice && sameList(rec.also.map((a) => a.gpu), others)) return;
    const before = { domain: rec.domain, also: rec.also };
    const domain = this.domains.take(slice === null ? `${to}` : `${to}/${slice}`);
    const also = others.map((g) => ({ gpu: g, domain: this.domains.take(`${g}`) }));
    const after = { ...rec, domain, also };
    const left = domainsOf(before).filter((d) => !domainsOf(after).includes(d));
    if (rec.member) this.setMemberEverywhere(after, rec.priority, slot, true);
    this.writeU32(slotBase(slot) + L.SLOT.gpu, to);
    this.writeU32(slotBase(slot) + L.SLOT.domain, domain);
    this.writeAlso(slot, after);
    if (rec.member) for (const d of left) this.domains.setMember(d, rec.priority, slot, false);
    if (rec.stuck) for (const d of domainsOf(before)) this.domains.setStuck(d, slot, false); // judged against the old domains' jobs
    Object.assign(rec, { gpu: to, migSlice: slice, domain, also, stuck: false });
    for (const d of domainsOf(before)) this.domains.drop(d); // each take above holds its own count
  }

  /** Takes effect at the job's next allocation; null removes the quota. */
  setQuota(slot: number, quotaBytes: number | bigint | null): void {
    this.inUse(slot);
    this.writeQuota(slot, quotaValue(quotaBytes));
  }

  /** A paused job launches nothing until resumed (its launch calls wait). */
  setPaused(slot: number, paused: boolean): void {
    this.inUse(slot);
    if (typeof paused !== 'boolean') throw new LaunchGateError(`setPaused needs true or false (got ${String(paused)}).`);
    this.writeU32(slotBase(slot) + L.SLOT.paused, paused ? 1 : 0);
  }

  /**
   * True: the driver has not confirmed the activity the job claims in its activity file (the rule:
   * scheduler/activity-claims.ts), so its claims hold nobody back; it still yields to higher jobs. False: trusted again.
   */
  setUnconfirmed(slot: number, unconfirmed: boolean): void {
    this.inUse(slot);
    if (typeof unconfirmed !== 'boolean') throw new LaunchGateError(`setUnconfirmed needs true or false (got ${String(unconfirmed)}).`);
    this.writeU32(slotBase(slot) + L.SLOT.unconfirmed, unconfirmed ? 1 : 0);
  }

  /**
   * A job whose launches waited GATE_HOLD_MAX_NS in all for a lower slot mid-launch names that slot in
   * its activity. A report that holds (same domain, the named slot lower and still of that generation)
   * marks the slot stuck: no higher job waits for its launches any more (it keeps its place otherwise).
   * Runs with the heartbeat timer; returns the slots marked now.
   */
  reviewStuckReports(): number[] {
    if (this.fd === null) return [];
    const marked: number[] = [];
    const reports = Buffer.alloc(L.GATE_MAX_SLOTS * 4);
    for (const [r, reporter] of this.slots.entries()) {
      if (!reporter.inUse || !reporter.activity) continue;
      F.readActivity(reporter.activity.fd, reports, L.ACTIVITY.stuckGen);
      for (let i = 0; i < L.GATE_MAX_SLOTS; i++) {
        const generation = reports.readUInt32LE(i * 4);
        const rec = this.slots[i];
        if (!generation || i === r || !rec.inUse || rec.stuck || rec.generation !== generation) continue;
        if (!domainsOf(rec).some((d) => domainsOf(reporter).includes(d)) || rec.priority <= reporter.priority) continue;
        rec.stuck = true;
        for (const d of domainsOf(rec)) this.domains.setStuck(d, i, true);
        marked.push(i);
      }
    }
    return marked;
  }

  readSlot(slot: number): SlotState {
    checkSlot(slot);
    const control = Buffer.alloc(L.GATE_SLOT_SIZE);
    readSync(this.openFd(), control, 0, control.length, slotBase(slot));
    const rec = this.slots[slot];
    const activity = F.readActivity(rec.activity?.fd ?? null, Buffer.alloc(L.ACTIVITY.gapHist + 4 * L.GATE_GAP_BUCKETS), 0);
    return slotState(slot, control, activity, rec.inUse ? rec : null);
  }

  /** The job has ended (or is no longer managed): nobody waits for it, and it stops being gated. */
  releaseSlot(slot: number): void {
    const rec = this.inUse(slot);
    if (rec.member) this.setMemberEverywhere(rec, rec.priority, slot, false);
    if (rec.stuck) for (const d of domainsOf(rec)) this.domains.setStuck(d, slot, false);
    this.writeU32(slotBase(slot) + L.SLOT.state, L.GATE_SLOT_FREE);
    this.writeU32(slotBase(slot) + L.SLOT.paused, 0);
    this.writeU32(slotBase(slot) + L.SLOT.unconfirmed, 0);
    rec.inUse = false;
    rec.member = false;
    rec.stuck = false;
    for (const d of domainsOf(rec)) this.domains.drop(d);
    rec.also = [];
    this.writeAlso(slot, rec);
  }

  /** What an enrolled process of `slot` is handed as descriptors (server/enrol-answer.ts): the gate's directory, control file and the slot's activity, and its generation. */
  slotFiles(slot: number): SlotFiles {
    const rec = this.inUse(slot);
    return { dir: this.path, control: this.controlPath, activity: this.activityPath(slot), generation: rec.generation };
  }

  slotsInUse(): number[] {
    return this.slots.flatMap((s, i) => (s.inUse ? [i] : []));
  }

  /** Engine shutdown: jobs run on ungated at once (fail open). Removes the gate's files unless keepFile. */
  close(options: { keepFile?: boolean } = {}): void {
    this.stopHeartbeat();
    if (this.fd === null) return;
    this.writeU32(L.HEADER.state, L.GATE_ENGINE_CLOSED);
    closeSync(this.fd);
    this.fd = null;
    for (let slot = 0; slot < L.GATE_MAX_SLOTS; slot++) this.setActivity(slot, null);
    if (!options.keepFile) F.removeGateDir(this.path);
  }

  // ---- writes ----

  /** In (or out of) every domain the slot counts in, at `priority`. */
  private setMemberEverywhere(rec: Pick<SlotRecord, 'domain' | 'also'>, priority: number, slot: number, on: boolean): void {
    for (const d of domainsOf(rec)) this.domains.setMember(d, priority, slot, on);
  }

  /** The slot's other domains, as the library reads them (gate_slot_domains_t): a mask of domain numbers. */
  private writeAlso(slot: number, rec: Pick<SlotRecord, 'also'>): void {
    const mask = [0n, 0n];
    for (const { domain } of rec.also) mask[domain >> 6] |= 1n << BigInt(domain & 63);
    const base = L.GATE_SLOT_DOMAINS_OFFSET + slot * L.GATE_SLOT_DOMAINS_SIZE;
    this.writeU64(base, mask[0]);
    this.writeU64(base + 8, mask[1]);
  }

  private openFd(): number {
    if (this.fd === null) throw new LaunchGateError(`The launch gate ${this.path} is closed.`);
    return this.fd;
  }

  private inUse(slot: number): SlotRecord {
    checkSlot(slot);
    const rec = this.slots[slot];
    if (!rec.inUse) throw new LaunchGateError(`Launch-gate slot ${slot} is not allocated to a job.`);
    return rec;
  }

  private setActivity(slot: number, activity: F.ActivityFile | null): void {
    const rec = this.slots[slot];
    if (rec.activity) closeSync(rec.activity.fd);
    rec.activity = activity;
  }

  private write(position: number, data: Buffer): void {
    writeSync(this.openFd(), data, 0, data.length, position);
  }

  private writeU32(position: number, value: number): void {
    this.scratch.writeUInt32LE(value >>> 0, 0);
    writeSync(this.openFd(), this.scratch, 0, 4, position);
  }

  private writeI32(position: number, value: number): void {
    this.scratch.writeInt32LE(value, 0);
    writeSync(this.openFd(), this.scratch, 0, 4, position);
  }

  private writeU64(position: number, value: bigint): void {
    this.scratch.writeBigUInt64LE(value, 0);
    writeSync(this.openFd(), this.scratch, 0, 8, position);
  }

  /** Seqlock: odd config_seq while the 8-byte quota is being written. */
  private writeQuota(slot: number, quota: bigint): void {
    const rec = this.slots[slot];
    const base = slotBase(slot);
    const writing = (rec.configSeq + 1) >>> 0; // odd
    this.writeU32(base + L.SLOT.configSeq, writing);
    this.writeU64(base + L.SLOT.quotaBytes, quota);
    rec.configSeq = (writing + 1) >>> 0; // even again
    this.writeU32(base + L.SLOT.configSeq, rec.configSeq);
  }
}

export type GateWindowPolicy = 'fixed' | 'learned';

function windowPolicyValue(policy: unknown): number {
  if (policy === undefined || policy === 'learned') return L.GATE_WINDOW_LEARNED;
  if (policy === 'fixed') return L.GATE_WINDOW_FIXED;
  throw new LaunchGateError(`windowPolicy must be 'fixed' or 'learned', not ${JSON.stringify(policy)}.`);
}

/** Every domain a slot counts in: its own, then its other GPUs'. */
const domainsOf = (rec: Pick<SlotRecord, 'domain' | 'also'>): number[] => [rec.domain, ...rec.also.map((a) => a.domain)];
const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** The other GPUs of a job on several, checked: distinct, not its first, and whole GPUs (a MIG slice is one GPU's). */
function alsoGpus(alsoOn: readonly number[] | undefined, gpu: number, migSlice: string | null): number[] {
  if (alsoOn === undefined || alsoOn.length === 0) return [];
  if (!Array.isArray(alsoOn)) throw new LaunchGateError(`alsoOn must be a list of GPU indexes (got ${String(alsoOn)}).`);
  const list = alsoOn.map((g) => checkGpu(g));
  if (migSlice !== null) throw new LaunchGateError(`A slot in MIG slice ${migSlice} is on one GPU: it cannot also count on GPU ${list.join(', ')}.`);
  if (new Set([gpu, ...list]).size !== list.length + 1) throw new LaunchGateError(`A slot's GPUs must be distinct (got ${[gpu, ...list].join(', ')}).`);
  return list;
}

const slotBase = (slot: number): number => L.GATE_SLOT_OFFSET + slot * L.GATE_SLOT_SIZE;

/** The windows the header carries, in ns: active, outstanding, best-effort sync, engine gone. */
function headerWindows(options: LaunchGateOptions): bigint[] {
  return [
    msToNs(options.activeWindowMs, L.GATE_DEFAULT_ACTIVE_WINDOW_NS, 'activeWindowMs'),
    msToNs(options.outstandingMaxMs, L.GATE_DEFAULT_OUTSTANDING_MAX_NS, 'outstandingMaxMs'),
    msToNs(options.bestEffortSyncWindowMs, L.GATE_DEFAULT_BE_SYNC_WINDOW_NS, 'bestEffortSyncWindowMs'),
    msToNs(options.engineGoneMs, L.GATE_DEFAULT_ENGINE_GONE_NS, 'engineGoneMs'),
  ];
}
