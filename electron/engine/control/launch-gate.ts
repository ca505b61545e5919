// The launch gate, engine side: the shared file through which the engine sets
// each managed job's priority, pause and memory quota, and reads back what the
// job's preload library (native/preload) publishes. Protocol: gate_abi.h.
//
// Node cannot mmap, so the engine writes with pwrite at fixed offsets; on Linux
// a write to a page-cache file is seen at once by every MAP_SHARED mapping.
// Single writer per field: the engine writes the header, the domain table and
// the first 64 bytes of each slot; the job's processes write the rest.
// A gate domain is a whole GPU or one MIG slice of it: the engine numbers them
// as slots need them (a domain with no slot left is free for the next).
import { closeSync, fchmodSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { nativeDir } from '../paths.js';
import * as L from './launch-gate-layout.js';

export type JobPriority = 'high' | 'normal' | 'best-effort';
export const JOB_PRIORITIES: readonly JobPriority[] = ['high', 'normal', 'best-effort'];

export class LaunchGateError extends Error {
  override name = 'LaunchGateError';
}

/** Absolute path of libgpushare-preload.so in this checkout or installed package. */
export function preloadLibraryPath(): string {
  return join(nativeDir(), 'preload', 'build', 'libgpushare-preload.so');
}

export interface LaunchGateOptions {
  /** Directory for the gate file, e.g. $XDG_RUNTIME_DIR/gpushare (created 0700 if missing). */
  dir: string;
  fileName?: string;
  /** A job that launched within this window is active (default 5 ms). */
  activeWindowMs?: number;
  /** Launched work not yet seen complete keeps a job active at most this long (default 1000 ms). */
  outstandingMaxMs?: number;
  /** Lower-priority jobs synchronise about every this much queued work (default 2 ms). */
  bestEffortSyncWindowMs?: number;
  /** Jobs run ungated once the heartbeat is older than this (default 2000 ms). */
  engineGoneMs?: number;
  /** Heartbeat on a timer every this many ms (0 or absent: call heartbeat() yourself). */
  heartbeatIntervalMs?: number;
  /** Pid the jobs check for liveness (default this process). */
  enginePid?: number;
  /**
   * Take over the gate file an earlier engine left (its jobs still map it): the header is this
   * engine's, its slots wait for adoptSlot(); releaseLeftovers() frees the rest. A missing or
   * foreign file is replaced by a fresh one, as without this option.
   */
  resume?: boolean;
}

/** A job of an earlier engine whose slot this engine takes over: what the slot must say, what to set. */
export interface SlotAdoption {
  pid: number;
  gpu: number;
  migSlice?: string | null;
  priority: JobPriority;
}

export interface SlotRequest {
  /** The job's pid, when already known (else 0 until setPid). */
  pid?: number;
  gpu: number;
  /** The MIG slice the job runs in (e.g. its UUID): its own gate domain. Null or absent: the whole GPU. */
  migSlice?: string | null;
  priority: JobPriority;
  /** Hard device-memory quota in bytes for the whole job (all its processes); null or absent: none. */
  quotaBytes?: number | bigint | null;
}

export interface SlotGrant {
  slot: number;
  generation: number;
  /** Environment to start the job with (merge into its env; LD_PRELOAD is ours alone). */
  env: Record<string, string>;
}

/** One process of a job, as its preload library keeps it in the slot. */
export interface SlotProcess {
  pid: number;
  /** The pid still runs (checked by the engine now). False: it died without giving its share back; a sibling will. */
  alive: boolean;
  inLaunch: number;
  usedBytes: number;
  launches: number;
  syncedLaunches: number;
  /** Streams of this process capturing a graph now (its launches pass the gate unsynchronised). */
  capturing: number;
}

export interface SlotState {
  slot: number;
  inUse: boolean;
  generation: number;
  pid: number;
  gpu: number;
  /** The MIG slice it was allocated in (engine memory, not in the file), or null. */
  migSlice: string | null;
  domain: number;
  /** Counts in its domain (false: taken out while stopped, parked or locked). */
  member: boolean;
  priority: JobPriority;
  paused: boolean;
  quotaBytes: number | null;
  // published by the job's preload library: sums over the job's processes
  attachedPid: number;
  attachCount: number;
  inLaunch: number;
  usedBytes: number;
  launches: number;
  syncedLaunches: number;
  lastLaunchNs: bigint;
  gatedNs: number;
  pausedNs: number;
  failOpenCount: number;
  /** Allocations the job's quota refused. */
  oomCount: number;
  /** Processes that died without giving their share back, reclaimed by a sibling. */
  reclaimedCount: number;
  /** Processes that found the slot's process table full (counted in the sums only). */
  untrackedCount: number;
  /** Waits for a lower job stuck mid-launch that were given up after 1 s. */
  stuckWaits: number;
  processes: SlotProcess[];
}

interface SlotRecord {
  inUse: boolean;
  generation: number;
  gpu: number;
  migSlice: string | null;
  domain: number;
  member: boolean;
  priority: number;
  configSeq: number;
}

interface DomainRecord {
  key: string;
  slots: number;
  members: bigint[];
}

const msToNs = (ms: number | undefined, fallback: bigint, what: string): bigint => {
  if (ms === undefined) return fallback;
  if (!Number.isFinite(ms) || ms <= 0) throw new LaunchGateError(`${what} must be a positive number of milliseconds (got ${ms}).`);
  return BigInt(Math.round(ms * 1e6));
};

export class LaunchGate {
  private fd: number | null;
  private readonly slots: SlotRecord[] = Array.from({ length: L.GATE_MAX_SLOTS }, () => ({
    inUse: false, generation: 0, gpu: 0, migSlice: null, domain: 0, member: false, priority: 0, configSeq: 0,
  }));
  private readonly domains: Array<DomainRecord | null> = Array.from({ length: L.GATE_MAX_DOMAINS }, () => null);
  private timer: NodeJS.Timeout | null = null;
  private readonly scratch = Buffer.alloc(8);

  private constructor(readonly path: string, fd: number) {
    this.fd = fd;
  }

  /** Creates a fresh gate file (atomically replacing an old one: jobs still mapping that one fail open), or resumes one. */
  static create(options: LaunchGateOptions): LaunchGate {
    if (!options || typeof options.dir !== 'string' || !options.dir) throw new LaunchGateError('LaunchGate.create needs a directory (options.dir).');
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const path = join(options.dir, options.fileName ?? 'gate');
    const resumed = options.resume ? LaunchGate.resume(path, options) : null;
    if (resumed) return resumed;
    const image = Buffer.alloc(L.GATE_FILE_SIZE);
    image.writeBigUInt64LE(L.GATE_MAGIC, L.HEADER.magic);
    image.writeUInt32LE(L.GATE_VERSION, L.HEADER.version);
    image.writeUInt32LE(L.GATE_MAX_SLOTS, L.HEADER.maxSlots);
    image.writeUInt32LE(L.GATE_MAX_DOMAINS, L.HEADER.maxDomains);
    image.writeInt32LE(options.enginePid ?? process.pid, L.HEADER.enginePid);
    image.writeBigUInt64LE(process.hrtime.bigint(), L.HEADER.heartbeatNs);
    image.writeBigUInt64LE(msToNs(options.activeWindowMs, L.GATE_DEFAULT_ACTIVE_WINDOW_NS, 'activeWindowMs'), L.HEADER.activeWindowNs);
    image.writeBigUInt64LE(msToNs(options.outstandingMaxMs, L.GATE_DEFAULT_OUTSTANDING_MAX_NS, 'outstandingMaxMs'), L.HEADER.outstandingMaxNs);
    image.writeBigUInt64LE(msToNs(options.bestEffortSyncWindowMs, L.GATE_DEFAULT_BE_SYNC_WINDOW_NS, 'bestEffortSyncWindowMs'), L.HEADER.beSyncWindowNs);
    image.writeBigUInt64LE(msToNs(options.engineGoneMs, L.GATE_DEFAULT_ENGINE_GONE_NS, 'engineGoneMs'), L.HEADER.engineGoneNs);
    image.writeUInt32LE(L.GATE_ENGINE_RUNNING, L.HEADER.state);
    image.writeUInt32LE(L.GATE_FILE_SIZE, L.HEADER.fileSize);
    const tmp = `${path}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'wx+', 0o600);
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, image, 0, image.length, 0);
      renameSync(tmp, path);
    } catch (error) {
      closeSync(fd);
      rmSync(tmp, { force: true });
      throw error;
    }
    const gate = new LaunchGate(path, fd);
    if (options.heartbeatIntervalMs) gate.startHeartbeat(options.heartbeatIntervalMs);
    return gate;
  }

  /** The slots an earlier engine left in use in a resumed file, until adopted or released. */
  private readonly leftovers = new Set<number>();

  /** Opens the file an earlier engine left, if it is a gate of this layout: this engine's header, no member counted yet. */
  private static resume(path: string, options: LaunchGateOptions): LaunchGate | null {
    let fd: number;
    try {
      fd = openSync(path, 'r+');
    } catch {
      return null; // none left: a fresh file
    }
    const image = Buffer.alloc(L.GATE_FILE_SIZE);
    const valid =
      readSync(fd, image, 0, image.length, 0) === image.length &&
      image.readBigUInt64LE(L.HEADER.magic) === L.GATE_MAGIC &&
      image.readUInt32LE(L.HEADER.version) === L.GATE_VERSION &&
      image.readUInt32LE(L.HEADER.fileSize) === L.GATE_FILE_SIZE;
    if (!valid) {
      closeSync(fd);
      return null;
    }
    const gate = new LaunchGate(path, fd);
    gate.writeI32(L.HEADER.enginePid, options.enginePid ?? process.pid);
    gate.heartbeat();
    gate.writeU64(L.HEADER.activeWindowNs, msToNs(options.activeWindowMs, L.GATE_DEFAULT_ACTIVE_WINDOW_NS, 'activeWindowMs'));
    gate.writeU64(L.HEADER.outstandingMaxNs, msToNs(options.outstandingMaxMs, L.GATE_DEFAULT_OUTSTANDING_MAX_NS, 'outstandingMaxMs'));
    gate.writeU64(L.HEADER.beSyncWindowNs, msToNs(options.bestEffortSyncWindowMs, L.GATE_DEFAULT_BE_SYNC_WINDOW_NS, 'bestEffortSyncWindowMs'));
    gate.writeU64(L.HEADER.engineGoneNs, msToNs(options.engineGoneMs, L.GATE_DEFAULT_ENGINE_GONE_NS, 'engineGoneMs'));
    // members are counted again as their jobs are adopted
    gate.write(L.GATE_DOMAIN_OFFSET, Buffer.alloc(L.GATE_MAX_DOMAINS * L.GATE_DOMAIN_SIZE));
    for (let slot = 0; slot < L.GATE_MAX_SLOTS; slot++) {
      const base = slotBase(slot);
      if (image.readUInt32LE(base + L.SLOT.state) !== L.GATE_SLOT_IN_USE) continue;
      gate.leftovers.add(slot);
      gate.slots[slot].generation = image.readUInt32LE(base + L.SLOT.generation);
      gate.slots[slot].configSeq = image.readUInt32LE(base + L.SLOT.configSeq);
    }
    gate.writeU32(L.HEADER.state, L.GATE_ENGINE_RUNNING);
    if (options.heartbeatIntervalMs) gate.startHeartbeat(options.heartbeatIntervalMs);
    return gate;
  }

  /**
   * Reconnect a job an earlier engine started: its slot (from a resumed file) must still be in use
   * by its pid. It counts in its domain again with this engine's view of its priority. False: not its slot.
   */
  adoptSlot(slot: number, job: SlotAdoption): boolean {
    checkSlot(slot);
    if (!this.leftovers.has(slot)) return false;
    const base = slotBase(slot);
    const image = Buffer.alloc(L.GATE_SLOT_SIZE);
    readSync(this.openFd(), image, 0, image.length, base);
    if (image.readUInt32LE(L.SLOT.state) !== L.GATE_SLOT_IN_USE || image.readInt32LE(L.SLOT.pid) !== checkPid(job.pid)) return false;
    this.leftovers.delete(slot);
    const rec = this.slots[slot];
    const migSlice = checkMigSlice(job.migSlice);
    rec.gpu = checkGpu(job.gpu);
    rec.migSlice = migSlice;
    rec.domain = this.adoptDomain(migSlice === null ? `${rec.gpu}` : `${rec.gpu}/${migSlice}`, image.readUInt32LE(L.SLOT.domain));
    rec.priority = priorityIndex(job.priority);
    rec.inUse = true;
    rec.member = true;
    this.writeU32(base + L.SLOT.domain, rec.domain);
    this.writeU32(base + L.SLOT.priority, rec.priority);
    this.writeU32(base + L.SLOT.paused, 0);
    this.writeMember(rec.domain, rec.priority, slot, true);
    return true;
  }

  /** Slots of a resumed file that no job was adopted into: freed, their processes (if any) run ungated. */
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

  startHeartbeat(intervalMs = 500): void {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new LaunchGateError(`Heartbeat interval must be a positive number of milliseconds (got ${intervalMs}).`);
    this.stopHeartbeat();
    this.heartbeat();
    this.timer = setInterval(() => this.heartbeat(), intervalMs);
    this.timer.unref();
  }

  stopHeartbeat(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reserves a slot for a job about to start; returns its index and the env to start it with. */
  allocateSlot(request: SlotRequest): SlotGrant {
    if (!request || typeof request !== 'object') throw new LaunchGateError('allocateSlot needs { gpu, migSlice?, priority, quotaBytes? }.');
    const gpu = checkGpu(request.gpu);
    const migSlice = checkMigSlice(request.migSlice);
    const priority = priorityIndex(request.priority);
    const quota = quotaValue(request.quotaBytes);
    const pid = request.pid === undefined ? 0 : checkPid(request.pid);
    const slot = this.slots.findIndex((s, i) => !s.inUse && !this.leftovers.has(i));
    if (slot < 0) throw new LaunchGateError(`All ${L.GATE_MAX_SLOTS} launch-gate slots are in use: wait for a managed job to end.`);
    const rec = this.slots[slot];
    const domain = this.takeDomain(migSlice === null ? `${gpu}` : `${gpu}/${migSlice}`);
    rec.generation = (rec.generation + 1) >>> 0 || 1;
    rec.gpu = gpu;
    rec.migSlice = migSlice;
    rec.domain = domain;
    rec.priority = priority;
    const base = slotBase(slot);
    // the slot is free: no job writes its job half now, so the engine may clear it
    this.write(base + L.JOB_HALF_OFFSET, Buffer.alloc(L.GATE_SLOT_SIZE - L.JOB_HALF_OFFSET));
    this.writeU32(base + L.SLOT.generation, rec.generation);
    this.writeI32(base + L.SLOT.pid, pid);
    this.writeU32(base + L.SLOT.gpu, gpu);
    this.writeU32(base + L.SLOT.domain, domain);
    this.writeU32(base + L.SLOT.priority, priority);
    this.writeU32(base + L.SLOT.paused, 0);
    this.writeQuota(slot, quota);
    this.writeU32(base + L.SLOT.state, L.GATE_SLOT_IN_USE);
    rec.inUse = true;
    rec.member = true;
    this.writeMember(domain, priority, slot, true);
    const env: Record<string, string> = {
      LD_PRELOAD: preloadLibraryPath(),
      GPUSHARE_GATE: this.path,
      GPUSHARE_GATE_SLOT: String(slot),
      GPUSHARE_GATE_GEN: String(rec.generation),
      GPUSHARE_PRIORITY: JOB_PRIORITIES[priority],
    };
    if (quota !== L.GATE_NO_QUOTA) env.GPUSHARE_MEM_QUOTA = quota.toString();
    return { slot, generation: rec.generation, env };
  }

  setPid(slot: number, pid: number): void {
    this.inUse(slot);
    this.writeI32(slotBase(slot) + L.SLOT.pid, checkPid(pid));
  }

  setPriority(slot: number, priority: JobPriority): void {
    const rec = this.inUse(slot);
    const next = priorityIndex(priority);
    if (next === rec.priority) return;
    if (rec.member) this.writeMember(rec.domain, next, slot, true);
    this.writeU32(slotBase(slot) + L.SLOT.priority, next);
    if (rec.member) this.writeMember(rec.domain, rec.priority, slot, false);
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
    this.writeMember(rec.domain, rec.priority, slot, member);
    rec.member = member;
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

  readSlot(slot: number): SlotState {
    checkSlot(slot);
    const b = Buffer.alloc(L.GATE_SLOT_SIZE);
    readSync(this.openFd(), b, 0, b.length, slotBase(slot));
    const quota = b.readBigUInt64LE(L.SLOT.quotaBytes);
    const num = (off: number) => Number(b.readBigUInt64LE(off));
    const rec = this.slots[slot];
    const inUse = b.readUInt32LE(L.SLOT.state) === L.GATE_SLOT_IN_USE;
    const processes: SlotProcess[] = [];
    for (let i = 0; i < L.GATE_MAX_PROCS; i++) {
      const at = L.SLOT.procs + i * L.GATE_PROC_SIZE;
      const pid = b.readInt32LE(at + L.PROC.pid);
      if (pid <= 0) continue; // free, or being reclaimed
      processes.push({
        pid,
        alive: pidAlive(pid),
        inLaunch: b.readUInt32LE(at + L.PROC.inLaunch),
        usedBytes: num(at + L.PROC.usedBytes),
        launches: num(at + L.PROC.launches),
        syncedLaunches: num(at + L.PROC.syncedLaunches),
        capturing: b.readUInt32LE(at + L.PROC.capturing),
      });
    }
    return {
      slot,
      inUse,
      generation: b.readUInt32LE(L.SLOT.generation),
      pid: b.readInt32LE(L.SLOT.pid),
      gpu: b.readUInt32LE(L.SLOT.gpu),
      migSlice: inUse && rec.inUse ? rec.migSlice : null,
      domain: b.readUInt32LE(L.SLOT.domain),
      member: inUse && rec.inUse && rec.member,
      priority: JOB_PRIORITIES[Math.min(2, b.readUInt32LE(L.SLOT.priority))],
      paused: b.readUInt32LE(L.SLOT.paused) !== 0,
      quotaBytes: quota === L.GATE_NO_QUOTA ? null : Number(quota),
      attachedPid: b.readInt32LE(L.SLOT.attachedPid),
      attachCount: b.readUInt32LE(L.SLOT.attachCount),
      inLaunch: b.readUInt32LE(L.SLOT.inLaunch),
      usedBytes: num(L.SLOT.usedBytes),
      launches: num(L.SLOT.launches),
      syncedLaunches: num(L.SLOT.syncedLaunches),
      lastLaunchNs: b.readBigUInt64LE(L.SLOT.lastLaunchNs),
      gatedNs: num(L.SLOT.gatedNs),
      pausedNs: num(L.SLOT.pausedNs),
      failOpenCount: b.readUInt32LE(L.SLOT.failOpenCount),
      oomCount: b.readUInt32LE(L.SLOT.oomCount),
      reclaimedCount: b.readUInt32LE(L.SLOT.reclaimedCount),
      untrackedCount: b.readUInt32LE(L.SLOT.untrackedCount),
      stuckWaits: b.readUInt32LE(L.SLOT.stuckWaits),
      processes,
    };
  }

  /** The job has ended (or is no longer managed): nobody waits for it, and it stops being gated. */
  releaseSlot(slot: number): void {
    const rec = this.inUse(slot);
    if (rec.member) this.writeMember(rec.domain, rec.priority, slot, false);
    this.writeU32(slotBase(slot) + L.SLOT.state, L.GATE_SLOT_FREE);
    this.writeU32(slotBase(slot) + L.SLOT.paused, 0);
    rec.inUse = false;
    rec.member = false;
    this.dropDomain(rec.domain);
  }

  slotsInUse(): number[] {
    return this.slots.flatMap((s, i) => (s.inUse ? [i] : []));
  }

  /** Engine shutdown: jobs run on ungated at once (fail open). Removes the file unless keepFile. */
  close(options: { keepFile?: boolean } = {}): void {
    this.stopHeartbeat();
    if (this.fd === null) return;
    this.writeU32(L.HEADER.state, L.GATE_ENGINE_CLOSED);
    closeSync(this.fd);
    this.fd = null;
    if (!options.keepFile) rmSync(this.path, { force: true });
  }

  // ---- writes ----

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

  private writeMember(domain: number, priority: number, slot: number, on: boolean): void {
    const bit = 1n << BigInt(slot);
    const masks = this.domains[domain]!.members;
    masks[priority] = on ? masks[priority] | bit : masks[priority] & ~bit;
    this.writeU64(L.GATE_DOMAIN_OFFSET + domain * L.GATE_DOMAIN_SIZE + L.DOMAIN.members + priority * 8, masks[priority]);
  }

  /** The domain of `key` (a GPU, or GPU/slice), numbered afresh (lowest free) when no slot holds it. */
  private takeDomain(key: string): number {
    let index = this.domains.findIndex((d) => d?.key === key);
    if (index < 0) {
      index = this.domains.findIndex((d) => d === null);
      // never reached: a domain is held by at least one of at most GATE_MAX_SLOTS slots
      if (index < 0) throw new LaunchGateError(`All ${L.GATE_MAX_DOMAINS} launch-gate domains are in use.`);
      this.domains[index] = { key, slots: 0, members: [0n, 0n, 0n] };
    }
    this.domains[index]!.slots++;
    return index;
  }

  /** The domain of `key` at the number a resumed file gave it (another number if that one is taken by another key). */
  private adoptDomain(key: string, index: number): number {
    const held = index < L.GATE_MAX_DOMAINS ? this.domains[index] : undefined;
    if (held === null) {
      this.domains[index] = { key, slots: 1, members: [0n, 0n, 0n] };
      return index;
    }
    if (held?.key === key) {
      held.slots++;
      return index;
    }
    return this.takeDomain(key);
  }

  private dropDomain(index: number): void {
    const d = this.domains[index]!;
    if (--d.slots === 0) this.domains[index] = null; // its member masks are all zero by now
  }
}

const slotBase = (slot: number): number => L.GATE_SLOT_OFFSET + slot * L.GATE_SLOT_SIZE;

function checkSlot(slot: number): void {
  if (!Number.isInteger(slot) || slot < 0 || slot >= L.GATE_MAX_SLOTS) {
    throw new LaunchGateError(`Launch-gate slot must be an integer from 0 to ${L.GATE_MAX_SLOTS - 1} (got ${String(slot)}).`);
  }
}

function checkGpu(gpu: number): number {
  if (!Number.isInteger(gpu) || gpu < 0 || gpu >= L.GATE_MAX_GPUS) {
    throw new LaunchGateError(`GPU index must be an integer from 0 to ${L.GATE_MAX_GPUS - 1} (got ${String(gpu)}).`);
  }
  return gpu;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // someone else's: alive
  }
}

function checkMigSlice(slice: string | null | undefined): string | null {
  if (slice === null || slice === undefined) return null;
  if (typeof slice !== 'string' || !slice) throw new LaunchGateError(`A MIG slice must be a non-empty string (its UUID), or null for the whole GPU (got ${JSON.stringify(slice)}).`);
  return slice;
}

function checkPid(pid: number): number {
  if (!Number.isInteger(pid) || pid <= 0 || pid > 0x7fffffff) throw new LaunchGateError(`A job pid must be a positive integer (got ${String(pid)}).`);
  return pid;
}

function priorityIndex(priority: JobPriority): number {
  const i = JOB_PRIORITIES.indexOf(priority);
  if (i < 0) throw new LaunchGateError(`Priority must be one of ${JOB_PRIORITIES.map((p) => `'${p}'`).join(', ')} (got ${JSON.stringify(priority)}).`);
  return i;
}

function quotaValue(quota: number | bigint | null | undefined): bigint {
  if (quota === null || quota === undefined) return L.GATE_NO_QUOTA;
  if (typeof quota === 'number') {
    if (!Number.isSafeInteger(quota) || quota < 0) throw new LaunchGateError(`A memory quota must be a whole number of bytes ≥ 0 (got ${quota}).`);
    return BigInt(quota);
  }
  if (typeof quota === 'bigint' && quota >= 0n && quota < L.GATE_NO_QUOTA) return quota;
  throw new LaunchGateError(`A memory quota must be a whole number of bytes ≥ 0, or null for none (got ${String(quota)}).`);
}
