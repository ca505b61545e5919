// LaunchGate, the engine side of the launch gate: the file it writes, slot
// bookkeeping and argument checks. (The preload side: launch-gate.preload.test.ts.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { PRIORITIES, PRIORITY_RANK } from '../../../shared/jobs.js';
import { priorityIndex } from './launch-gate-checks.js';
import { LaunchGate, LaunchGateError, preloadLibraryPath } from './launch-gate.js';
import * as L from './launch-gate-layout.js';
import { ensurePreloadBuilt, preloadBuildDir } from './testing/launch-gate-sim.js';

let dir: string;
let gate: LaunchGate;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpushare-gate-unit-'));
  gate = LaunchGate.create({ dir: join(dir, 'gpushare') });
});

afterEach(() => {
  gate.close();
  rmSync(dir, { recursive: true, force: true });
});

const image = (): Buffer => readFileSync(gate.controlPath);
const slotAt = (slot: number): Buffer => image().subarray(L.GATE_SLOT_OFFSET + slot * L.GATE_SLOT_SIZE, L.GATE_SLOT_OFFSET + (slot + 1) * L.GATE_SLOT_SIZE);
const activityAt = (slot: number): Buffer => readFileSync(gate.activityPath(slot));
const members = (domain: number): bigint[] => [0, 1, 2].map((p) => image().readBigUInt64LE(L.GATE_DOMAIN_OFFSET + domain * L.GATE_DOMAIN_SIZE + p * 8));
const domainOf = (slot: number): number => slotAt(slot).readUInt32LE(L.SLOT.domain);

describe('gate files', () => {
  test('matches native/include/gate_abi.h byte for byte, priorities included (the one list in shared/jobs.ts)', { skip: ensurePreloadBuilt() ? false : 'native/preload is not built' }, () => {
    const c = JSON.parse(execFileSync(join(preloadBuildDir(), 'gate_layout'), { encoding: 'utf8' })) as {
      constants: Record<string, number | string>;
      priorities: Record<string, number>;
      offsets: Record<string, number>;
    };
    assert.deepEqual(c.offsets, L.C_FIELD_NAMES);
    // GATE_PRIORITY_<NAME> is the name's place in PRIORITIES, and the gate has as many lanes as the list names
    assert.deepEqual(c.priorities, { count: PRIORITIES.length, ...PRIORITY_RANK });
    for (const p of PRIORITIES) assert.equal(priorityIndex(p), PRIORITY_RANK[p], `the gate writes ${p} as GATE_PRIORITY_${p.toUpperCase().replace('-', '_')}`);
    assert.deepEqual(c.constants, {
      magic: L.GATE_MAGIC.toString(),
      activityMagic: L.GATE_ACTIVITY_MAGIC.toString(),
      version: L.GATE_VERSION,
      maxSlots: L.GATE_MAX_SLOTS,
      maxGpus: L.GATE_MAX_GPUS,
      maxDomains: L.GATE_MAX_DOMAINS,
      maxProcs: L.GATE_MAX_PROCS,
      domainOffset: L.GATE_DOMAIN_OFFSET,
      domainSize: L.GATE_DOMAIN_SIZE,
      slotOffset: L.GATE_SLOT_OFFSET,
      slotSize: L.GATE_SLOT_SIZE,
      slotDomainsOffset: L.GATE_SLOT_DOMAINS_OFFSET,
      slotDomainsSize: L.GATE_SLOT_DOMAINS_SIZE,
      controlSize: L.GATE_CONTROL_SIZE,
      activitySize: L.GATE_ACTIVITY_SIZE,
      procOffset: L.GATE_PROC_OFFSET,
      procSize: L.GATE_PROC_SIZE,
      stuckOffset: L.GATE_STUCK_OFFSET,
      gapOffset: L.GATE_GAP_OFFSET,
      gapBuckets: L.GATE_GAP_BUCKETS,
      noQuota: L.GATE_NO_QUOTA.toString(),
      procReclaiming: L.GATE_PROC_RECLAIMING,
      holdMaxNs: L.GATE_HOLD_MAX_NS.toString(),
      controlFile: L.GATE_CONTROL_FILE,
      activityPrefix: L.GATE_ACTIVITY_PREFIX,
    });
  });

  test('a personal engine’s gate is private (directory 0700); its control file 0644, the engine’s, with a header the jobs can check', () => {
    const own = LaunchGate.create({ dir: join(dir, 'personal'), jobsOfOtherUsers: false });
    try {
      assert.equal(statSync(own.path).mode & 0o777, 0o700);
      assert.equal(statSync(join(dir, 'personal')).mode & 0o777, 0o700);
      assert.equal(statSync(own.controlPath).mode & 0o777, 0o644);
      assert.equal(statSync(own.controlPath).uid, process.getuid!());
    } finally {
      own.close();
    }
    const b = image();
    assert.equal(b.length, L.GATE_CONTROL_SIZE);
    assert.equal(b.readBigUInt64LE(L.HEADER.magic), L.GATE_MAGIC);
    assert.equal(b.readUInt32LE(L.HEADER.version), L.GATE_VERSION);
    assert.equal(b.readInt32LE(L.HEADER.enginePid), process.pid);
    assert.equal(b.readUInt32LE(L.HEADER.state), L.GATE_ENGINE_RUNNING);
    assert.equal(b.readBigUInt64LE(L.HEADER.activeWindowNs), L.GATE_DEFAULT_ACTIVE_WINDOW_NS);
    assert.equal(b.readBigUInt64LE(L.HEADER.engineGoneNs), L.GATE_DEFAULT_ENGINE_GONE_NS);
  });

  test('heartbeat() writes the monotonic clock', () => {
    const before = process.hrtime.bigint();
    gate.heartbeat();
    const beat = image().readBigUInt64LE(L.HEADER.heartbeatNs);
    assert.ok(beat >= before && beat <= process.hrtime.bigint());
  });

  test('the box daemon’s gate (jobs of other users) is a directory every user can enter, none can write', () => {
    const shared = LaunchGate.create({ dir: join(dir, 'daemon'), jobsOfOtherUsers: true });
    try {
      assert.equal(statSync(shared.path).mode & 0o777, 0o755);
      assert.equal(statSync(shared.controlPath).mode & 0o777, 0o644);
      const { slot } = shared.allocateSlot({ gpu: 0, priority: 'normal' });
      assert.equal(statSync(shared.activityPath(slot)).mode & 0o777, 0o644);
      assert.equal(statSync(shared.activityPath(slot)).uid, process.getuid!(), 'no owner given: the engine’s own user');
    } finally {
      shared.close();
    }
  });

  test('close() tells the jobs at once (state closed), then removes the files', () => {
    const other = LaunchGate.create({ dir, name: 'kept' });
    other.allocateSlot({ gpu: 0, priority: 'high' });
    other.close({ keepFile: true });
    assert.equal(readFileSync(other.controlPath).readUInt32LE(L.HEADER.state), L.GATE_ENGINE_CLOSED);
    assert.ok(existsSync(other.activityPath(0)), 'kept: its jobs live on for the next engine');
    const path = gate.path;
    gate.close();
    assert.equal(existsSync(path), false);
    assert.throws(() => gate.heartbeat(), /closed/);
    gate = LaunchGate.create({ dir: join(dir, 'gpushare') }); // for afterEach
  });

  test('a new engine replaces the gate; the old files stay intact for jobs that still map them', () => {
    const first = image();
    const slot = gate.allocateSlot({ gpu: 0, priority: 'high' }).slot;
    const second = LaunchGate.create({ dir: join(dir, 'gpushare') });
    assert.equal(image().readUInt32LE(L.GATE_SLOT_OFFSET + slot * L.GATE_SLOT_SIZE + L.SLOT.state), L.GATE_SLOT_FREE);
    assert.equal(existsSync(second.activityPath(slot)), false);
    assert.equal(first.length, L.GATE_CONTROL_SIZE);
    gate.setPaused(slot, true); // the old engine still writes its own (unlinked) file without error
    assert.equal(gate.readSlot(slot).paused, true);
    second.close({ keepFile: true });
  });

  test('a version-2 gate file where the directory goes is replaced, also when resuming', () => {
    const parent = join(dir, 'v2');
    const v2 = LaunchGate.create({ dir: parent });
    v2.close();
    writeFileSync(join(parent, 'gate'), Buffer.alloc(40960));
    const fresh = LaunchGate.create({ dir: parent, resume: true });
    try {
      assert.ok(statSync(fresh.path).isDirectory());
      assert.equal(readFileSync(fresh.controlPath).readUInt32LE(L.HEADER.version), L.GATE_VERSION);
    } finally {
      fresh.close();
    }
  });
});

describe('slots', () => {
  test('allocateSlot writes the slot and gives the job its environment', () => {
    const grant = gate.allocateSlot({ gpu: 3, priority: 'best-effort', quotaBytes: 1024 ** 3, pid: 4242 });
    assert.equal(grant.slot, 0);
    assert.equal(grant.env.LD_PRELOAD, preloadLibraryPath());
    assert.ok(isAbsolute(grant.env.LD_PRELOAD) && grant.env.LD_PRELOAD.endsWith('native/preload/build/libgpushare-preload.so'));
    assert.deepEqual(
      { ...grant.env, LD_PRELOAD: undefined },
      { LD_PRELOAD: undefined, GPUSHARE_GATE: gate.path, GPUSHARE_GATE_SLOT: '0', GPUSHARE_GATE_GEN: String(grant.generation), GPUSHARE_PRIORITY: 'best-effort', GPUSHARE_MEM_QUOTA: '1073741824' },
    );
    const s = gate.readSlot(0);
    assert.deepEqual(
      [s.inUse, s.gpu, s.priority, s.paused, s.quotaBytes, s.pid, s.usedBytes, s.launches],
      [true, 3, 'best-effort', false, 1024 ** 3, 4242, 0, 0],
    );
    assert.deepEqual(members(domainOf(0)), [0n, 0n, 1n]);
    assert.equal(slotAt(0).readUInt32LE(L.SLOT.gpu), 3);
    assert.equal(slotAt(0).readUInt32LE(L.SLOT.configSeq) % 2, 0, 'quota seqlock at rest is even');
  });

  test('no quota: no GPUSHARE_MEM_QUOTA, and the slot says none', () => {
    const grant = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    assert.equal(grant.env.GPUSHARE_MEM_QUOTA, undefined);
    assert.equal(gate.readSlot(grant.slot).quotaBytes, null);
    assert.equal(slotAt(grant.slot).readBigUInt64LE(L.SLOT.quotaBytes), L.GATE_NO_QUOTA);
  });

  test('setPriority moves the slot between the GPU’s priority lanes; setQuota, setPaused and setPid update it', () => {
    const { slot } = gate.allocateSlot({ gpu: 1, priority: 'normal' });
    assert.deepEqual(members(domainOf(slot)), [0n, 1n, 0n]);
    gate.setPriority(slot, 'high');
    assert.deepEqual(members(domainOf(slot)), [1n, 0n, 0n]);
    gate.setQuota(slot, 5n * 1024n ** 3n);
    gate.setPaused(slot, true);
    gate.setPid(slot, 99);
    const s = gate.readSlot(slot);
    assert.deepEqual([s.priority, s.quotaBytes, s.paused, s.pid], ['high', 5 * 1024 ** 3, true, 99]);
    gate.setQuota(slot, null);
    assert.equal(gate.readSlot(slot).quotaBytes, null);
  });

  test('releaseSlot frees it for the next job, with a new generation and a fresh activity file the last job cannot write', () => {
    const a = gate.allocateSlot({ gpu: 0, priority: 'high' });
    const domain = domainOf(a.slot);
    gate.setPaused(a.slot, true);
    const lastJob = openSync(gate.activityPath(a.slot), 'r+'); // a process of the last job still holds its file
    gate.releaseSlot(a.slot);
    assert.deepEqual(members(domain), [0n, 0n, 0n]);
    assert.equal(gate.readSlot(a.slot).inUse, false);
    const b = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    assert.equal(b.slot, a.slot);
    assert.notEqual(b.generation, a.generation);
    const noise = Buffer.alloc(L.GATE_ACTIVITY_SIZE - L.ACTIVITY.inLaunch, 0xff);
    writeSync(lastJob, noise, 0, noise.length, L.ACTIVITY.inLaunch);
    closeSync(lastJob);
    const s = gate.readSlot(b.slot);
    assert.deepEqual([s.paused, s.inLaunch, s.usedBytes, s.launches, s.processes], [false, 0, 0, 0, []]);
    const file = activityAt(b.slot);
    assert.deepEqual([file.length, file.readBigUInt64LE(L.ACTIVITY.magic), file.readUInt32LE(L.ACTIVITY.slot), file.readUInt32LE(L.ACTIVITY.generation)], [L.GATE_ACTIVITY_SIZE, L.GATE_ACTIVITY_MAGIC, b.slot, b.generation]);
    assert.equal(slotAt(b.slot).readBigUInt64LE(L.SLOT.activityIno), statSync(gate.activityPath(b.slot), { bigint: true }).ino, 'the control file names the current file');
    assert.deepEqual(gate.slotsInUse(), [b.slot]);
  });

  test('a fresh gate’s generations are not an earlier gate’s: a process of an old job cannot join a new one', () => {
    const first = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    const again = LaunchGate.create({ dir: join(dir, 'gpushare') });
    try {
      assert.notEqual(again.allocateSlot({ gpu: 0, priority: 'normal' }).generation, first.generation);
    } finally {
      again.close({ keepFile: true });
    }
  });

  test('all 64 slots in use: a clear error', () => {
    for (let i = 0; i < L.GATE_MAX_SLOTS; i++) gate.allocateSlot({ gpu: i % 16, priority: 'normal' });
    assert.throws(() => gate.allocateSlot({ gpu: 0, priority: 'normal' }), /All 64 launch-gate slots are in use/);
  });
});

describe('gate domains (a GPU, or one MIG slice of it)', () => {
  test('each MIG slice is its own domain, apart from its GPU and from the other slices', () => {
    const whole = gate.allocateSlot({ gpu: 0, priority: 'high' }).slot;
    const wholeToo = gate.allocateSlot({ gpu: 0, priority: 'best-effort', migSlice: null }).slot;
    const a = gate.allocateSlot({ gpu: 0, priority: 'high', migSlice: 'MIG-aaaa' }).slot;
    const aToo = gate.allocateSlot({ gpu: 0, priority: 'best-effort', migSlice: 'MIG-aaaa' }).slot;
    const b = gate.allocateSlot({ gpu: 0, priority: 'best-effort', migSlice: 'MIG-bbbb' }).slot;
    const other = gate.allocateSlot({ gpu: 1, priority: 'best-effort' }).slot;
    assert.equal(domainOf(whole), domainOf(wholeToo));
    assert.equal(domainOf(a), domainOf(aToo));
    assert.equal(new Set([whole, a, b, other].map(domainOf)).size, 4);
    assert.deepEqual(members(domainOf(a)), [1n << BigInt(a), 0n, 1n << BigInt(aToo)]);
    assert.deepEqual(members(domainOf(b)), [0n, 0n, 1n << BigInt(b)]);
    assert.deepEqual([gate.readSlot(b).gpu, gate.readSlot(b).migSlice, gate.readSlot(whole).migSlice], [0, 'MIG-bbbb', null]);
  });

  test('a domain whose last slot is released is numbered afresh for the next (more domains than GPUs)', () => {
    const used: number[] = [];
    for (let i = 0; i < 60; i++) {
      const { slot } = gate.allocateSlot({ gpu: i % 8, priority: 'normal', migSlice: `MIG-${i}` });
      used.push(domainOf(slot));
      gate.releaseSlot(slot);
    }
    assert.ok(used.every((d) => d === used[0]), 'released domains are reused');
    const slots = Array.from({ length: 64 }, (_, i) => gate.allocateSlot({ gpu: i % 8, priority: 'normal', migSlice: `MIG-${i}` }).slot);
    assert.equal(new Set(slots.map(domainOf)).size, 64);
  });

  test('moveSlot takes a slot into the domain of the GPU or slice it runs on, out of its old one, which is freed with its last slot', () => {
    const moving = gate.allocateSlot({ gpu: 0, priority: 'best-effort' }).slot;
    const high = gate.allocateSlot({ gpu: 1, priority: 'high', migSlice: 'MIG-aaaa' }).slot;
    const old = domainOf(moving);
    gate.moveSlot(moving, 1, 'MIG-aaaa');
    assert.equal(domainOf(moving), domainOf(high), 'in the slice\'s domain, beside the high job there');
    assert.deepEqual(members(domainOf(high)), [1n << BigInt(high), 0n, 1n << BigInt(moving)]);
    assert.deepEqual(members(old), [0n, 0n, 0n], 'out of GPU 0\'s');
    assert.deepEqual([gate.readSlot(moving).gpu, gate.readSlot(moving).migSlice, slotAt(moving).readUInt32LE(L.SLOT.gpu)], [1, 'MIG-aaaa', 1]);
    const next = gate.allocateSlot({ gpu: 5, priority: 'normal' }).slot;
    assert.equal(domainOf(next), old, 'GPU 0\'s domain had no slot left: numbered afresh for the next');
    gate.setMember(moving, false);
    gate.moveSlot(moving, 2); // out of its domain (parked, stopped): it stays out in the new one
    assert.deepEqual(members(domainOf(moving)), [0n, 0n, 0n]);
    gate.setMember(moving, true);
    assert.deepEqual(members(domainOf(moving)), [0n, 0n, 1n << BigInt(moving)]);
    assert.throws(() => gate.moveSlot(moving, -1), LaunchGateError);
  });

  test('a slot on several GPUs counts in each one\'s domain, at its priority, with its other domains in its mask; moveSlot and release follow', () => {
    const alsoMask = (slot: number): bigint[] => [0, 8].map((o) => image().readBigUInt64LE(L.GATE_SLOT_DOMAINS_OFFSET + slot * L.GATE_SLOT_DOMAINS_SIZE + o));
    const solo = gate.allocateSlot({ gpu: 2, priority: 'high' }).slot;
    const { slot } = gate.allocateSlot({ gpu: 0, alsoOn: [2], priority: 'normal' });
    const [d0, d2] = [domainOf(slot), domainOf(solo)];
    assert.deepEqual(members(d0), [0n, 1n << BigInt(slot), 0n]);
    assert.deepEqual(members(d2), [1n << BigInt(solo), 1n << BigInt(slot), 0n], 'beside the high job of GPU 2, below it');
    assert.deepEqual(alsoMask(slot), [1n << BigInt(d2), 0n]);
    gate.setPriority(slot, 'best-effort');
    assert.deepEqual([members(d0)[2], members(d2)[2], members(d2)[1]], [1n << BigInt(slot), 1n << BigInt(slot), 0n], 'its lane moves on every GPU');
    gate.setMember(slot, false);
    assert.deepEqual([members(d0), members(d2)], [[0n, 0n, 0n], [1n << BigInt(solo), 0n, 0n]]);
    gate.setMember(slot, true);
    gate.moveSlot(slot, 0, null, [1]); // the driver lists it on GPUs 0 and 1 now
    const d1 = gate.allocateSlot({ gpu: 1, priority: 'high' }).slot;
    assert.deepEqual(members(domainOf(d1))[2], 1n << BigInt(slot));
    assert.deepEqual(members(d2), [1n << BigInt(solo), 0n, 0n], 'out of GPU 2\'s');
    assert.deepEqual(alsoMask(slot), [1n << BigInt(domainOf(d1)), 0n]);
    assert.throws(() => gate.allocateSlot({ gpu: 0, alsoOn: [0], priority: 'normal' }), /distinct/);
    assert.throws(() => gate.allocateSlot({ gpu: 0, alsoOn: [1], migSlice: 'MIG-a', priority: 'normal' }), /one GPU/);
    gate.releaseSlot(slot);
    assert.deepEqual([members(d0), members(domainOf(d1))[2], alsoMask(slot)], [[0n, 0n, 0n], 0n, [0n, 0n]]);
  });

  test('a resumed gate adopts a job on two GPUs into both domains again', () => {
    const { slot } = gate.allocateSlot({ gpu: 1, alsoOn: [3], priority: 'normal', pid: 4242 });
    gate.close({ keepFile: true }); // the engine stops; the job runs on
    gate = LaunchGate.create({ dir: join(dir, 'gpushare'), resume: true });
    assert.deepEqual([0, 8].map((o) => image().readBigUInt64LE(L.GATE_SLOT_DOMAINS_OFFSET + slot * L.GATE_SLOT_DOMAINS_SIZE + o)), [0n, 0n], 'nothing counts until it is adopted');
    assert.equal(gate.adoptSlot(slot, { pid: 4242, gpu: 1, alsoOn: [3], priority: 'best-effort' }), true);
    const on3 = gate.allocateSlot({ gpu: 3, priority: 'high' }).slot;
    assert.deepEqual(members(domainOf(slot))[2], 1n << BigInt(slot));
    assert.deepEqual(members(domainOf(on3)), [1n << BigInt(on3), 0n, 1n << BigInt(slot)], 'on GPU 3 too, below the high job there');
    assert.deepEqual([0, 8].map((o) => image().readBigUInt64LE(L.GATE_SLOT_DOMAINS_OFFSET + slot * L.GATE_SLOT_DOMAINS_SIZE + o)), [1n << BigInt(domainOf(on3)), 0n]);
  });

  test('setMember takes a slot out of its domain and puts it back, at its current priority', () => {
    const { slot } = gate.allocateSlot({ gpu: 2, priority: 'best-effort', migSlice: 'MIG-x' });
    const d = domainOf(slot);
    gate.setMember(slot, false);
    assert.deepEqual(members(d), [0n, 0n, 0n]);
    assert.equal(gate.readSlot(slot).member, false);
    gate.setPriority(slot, 'high'); // priority changes while out: it comes back in the new lane
    assert.deepEqual(members(d), [0n, 0n, 0n]);
    gate.setMember(slot, true);
    assert.deepEqual(members(d), [1n << BigInt(slot), 0n, 0n]);
    assert.equal(gate.readSlot(slot).member, true);
    gate.setMember(slot, true); // idempotent
    gate.setMember(slot, false);
    gate.releaseSlot(slot);
    assert.deepEqual(members(d), [0n, 0n, 0n]);
  });

  test('readSlot gives oomCount and the process table from the job half', () => {
    const { slot } = gate.allocateSlot({ gpu: 0, priority: 'normal' });
    const s = gate.readSlot(slot);
    assert.deepEqual([s.oomCount, s.usedBytes, s.processes, s.reclaimedCount], [0, 0, [], 0]);
  });
});

describe('slot owners (the user a job runs as)', () => {
  const root = process.getuid?.() === 0;
  test('as root, a shared gate gives the slot’s activity file to the job’s user, and the control file says whose it is', { skip: root ? false : 'needs root: only root can give a file to another user' }, () => {
    const open = mkdtempSync('/tmp/gpushare-gate-owner-'); // under a directory every user can traverse
    chmodSync(open, 0o755);
    const shared = LaunchGate.create({ dir: open, jobsOfOtherUsers: true });
    try {
      const { slot } = shared.allocateSlot({ gpu: 0, priority: 'normal', owner: { uid: 65534, gid: 65534 } });
      const st = statSync(shared.activityPath(slot));
      assert.deepEqual([st.uid, st.gid, st.mode & 0o777], [65534, 65534, 0o644]);
      assert.equal(shared.readSlot(slot).ownerUid, 65534);
      assert.equal(statSync(shared.controlPath).uid, 0, 'the control file stays root’s');
    } finally {
      shared.close();
      rmSync(open, { recursive: true, force: true });
    }
  });

  test('a job of another user that could not reach the gate is refused with the reason, and nothing is allocated', () => {
    const refusals: Array<[LaunchGate, RegExp]> = root
      ? [
          [LaunchGate.create({ dir: join(dir, 'private'), jobsOfOtherUsers: false }), /private to this engine's user \(mode 0700\)/],
          [LaunchGate.create({ dir: join(dir, 'hidden'), jobsOfOtherUsers: true }), /cannot reach the launch gate .* is not searchable by that user/],
        ]
      : [[gate, /This engine runs as uid \d+: it cannot give a launch-gate slot to uid 65534/]];
    for (const [g, why] of refusals) {
      try {
        chmodSync(dir, 0o700); // mkdtemp's mode: no other user gets in
        assert.throws(() => g.allocateSlot({ gpu: 0, priority: 'normal', owner: { uid: 65534, gid: 65534 } }), (e: unknown) => e instanceof LaunchGateError && why.test(e.message));
        assert.deepEqual(g.slotsInUse(), []);
      } finally {
        if (g !== gate) g.close();
      }
    }
  });

  test('the engine’s own user as owner changes nothing', () => {
    const { slot } = gate.allocateSlot({ gpu: 0, priority: 'normal', owner: { uid: process.getuid!(), gid: process.getgid!() } });
    assert.equal(statSync(gate.activityPath(slot)).uid, process.getuid!());
  });
});

describe('argument checks', () => {
  const bad: Array<[string, () => unknown, RegExp]> = [
    ['unknown priority', () => gate.allocateSlot({ gpu: 0, priority: 'urgent' as never }), /Priority must be one of 'high', 'normal', 'best-effort'/],
    ['negative quota', () => gate.allocateSlot({ gpu: 0, priority: 'high', quotaBytes: -1 }), /quota must be a whole number of bytes/],
    ['fractional quota', () => gate.allocateSlot({ gpu: 0, priority: 'high', quotaBytes: 1.5 }), /quota must be a whole number of bytes/],
    ['GPU out of range', () => gate.allocateSlot({ gpu: 16, priority: 'high' }), /GPU index must be an integer from 0 to 15/],
    ['empty MIG slice', () => gate.allocateSlot({ gpu: 0, priority: 'high', migSlice: '' }), /MIG slice must be a non-empty string/],
    ['MIG slice not a string', () => gate.allocateSlot({ gpu: 0, priority: 'high', migSlice: 3 as never }), /MIG slice must be a non-empty string/],
    ['setMember not a boolean', () => { const { slot } = gate.allocateSlot({ gpu: 0, priority: 'high' }); gate.setMember(slot, 'no' as never); }, /setMember needs true or false/],
    ['setMember on a free slot', () => gate.setMember(7, false), /slot 7 is not allocated/],
    ['bad pid', () => gate.allocateSlot({ gpu: 0, priority: 'high', pid: 0 }), /pid must be a positive integer/],
    ['slot out of range', () => gate.readSlot(64), /slot must be an integer from 0 to 63/],
    ['slot not allocated', () => gate.setPaused(5, true), /slot 5 is not allocated/],
    ['release twice', () => { const { slot } = gate.allocateSlot({ gpu: 0, priority: 'high' }); gate.releaseSlot(slot); gate.releaseSlot(slot); }, /is not allocated/],
    ['bad heartbeat interval', () => gate.startHeartbeat(0), /Heartbeat interval must be a positive number/],
    ['bad window', () => LaunchGate.create({ dir, name: 'x', activeWindowMs: -5 }), /activeWindowMs must be a positive number/],
    ['bad owner', () => gate.allocateSlot({ gpu: 0, priority: 'high', owner: { uid: -1, gid: 0 } }), /owner must be \{ uid, gid \} with whole numbers/],
  ];
  for (const [what, call, message] of bad) {
    test(what, () => {
      assert.throws(call, (e: unknown) => e instanceof LaunchGateError && message.test(e.message));
    });
  }
});
