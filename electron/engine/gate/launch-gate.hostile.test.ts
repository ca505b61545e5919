// Hostile jobs on a box daemon's launch gate: the engine is root, two hostile jobs run as uid 65534
// and as a user the test creates, and attack every file of the gate they can open or map (fakejob
// hostile), while a high and a best-effort job of root run beside them. They change no other job's
// behaviour: each can write only its own activity file, the one stuck "mid-launch" holds the high
// job back once (1 s in all), and the one that truncates its file crashes nobody. Deterministic: asserts on the hostile job's own record of its attempts, the
// gate's bytes and counters, and the simulated driver's execution record.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fakegpuBuildDir } from '../paths.js';
import { until } from '../../testing/until.js';
import { SimulatedDriver, simulatedDriverBuilt } from '../gpu/simulated-driver.js';
import { LaunchGate, preloadLibraryPath } from './launch-gate.js';
import * as L from './launch-gate-layout.js';
import { ensurePreloadBuilt, enqueuedUnderHigh, recordsOf } from './testing/launch-gate-sim.js';

const GiB = 1024 ** 3;
const NOBODY = { uid: 65534, gid: 65534 };
const userName = `gpst-hostile${process.pid % 100000}`;
let other: { uid: number; gid: number }; // a second user, so that neither hostile job can write the other's file
const skip =
  process.getuid?.() !== 0
    ? 'needs root: the engine gives a slot to uid 65534 and the hostile job runs as that user'
    : !(simulatedDriverBuilt() && ensurePreloadBuilt())
      ? 'the simulated driver or the preload library is not built (npm run build:native)'
      : false;

let box: string; // every user can traverse it: the gate, the driver's state and the hostile job's binaries
let bin: string;
let driver: SimulatedDriver;
let gate: LaunchGate;

before(async () => {
  if (skip) return;
  box = mkdtempSync('/tmp/gpushare-hostile-');
  chmodSync(box, 0o755);
  bin = join(box, 'bin');
  mkdirSync(bin, { mode: 0o755 });
  for (const [from, name] of [
    [join(fakegpuBuildDir(), 'fakejob'), 'fakejob'],
    [join(fakegpuBuildDir(), 'libcuda.so.1'), 'libcuda.so.1'],
    [join(fakegpuBuildDir(), 'libnvidia-ml.so.1'), 'libnvidia-ml.so.1'],
    [preloadLibraryPath(), 'libgpushare-preload.so'],
  ]) {
    copyFileSync(from, join(bin, name));
    chmodSync(join(bin, name), 0o755);
  }
  driver = await SimulatedDriver.create({ scenario: 'a100-40gb', statePath: join(box, 'state') });
  chmodSync(driver.statePath, 0o666); // the simulated GPUs serve every user, as /dev/nvidia* does
  gate = LaunchGate.create({ dir: box, jobsOfOtherUsers: true, heartbeatIntervalMs: 200, activeWindowMs: 50, windowPolicy: 'fixed' }); // held back behind the high trainer throughout
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', userName]);
  const id = (flag: string) => Number(execFileSync('id', [flag, userName], { encoding: 'utf8' }));
  other = { uid: id('-u'), gid: id('-g') };
});

after(async () => {
  if (skip) return;
  if (other) execFileSync('userdel', [userName]);
  gate?.close();
  await driver?.dispose();
  rmSync(box, { recursive: true, force: true });
});

interface Hostile {
  child: ChildProcess;
  events: Array<Record<string, unknown>>;
  waitFor(event: string): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/** fakejob hostile as `user`, from the copies in `bin`, with its slot's environment. */
function spawnHostile(user: { uid: number; gid: number }, args: string[], slotEnv: Record<string, string>): Hostile {
  const env = {
    PATH: '/usr/bin:/bin',
    ...slotEnv,
    LD_PRELOAD: join(bin, 'libgpushare-preload.so'),
    LD_LIBRARY_PATH: bin,
    GPUSHARE_FAKEGPU_STATE: driver.statePath,
  };
  const child = spawn('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', join(bin, 'fakejob'), 'hostile', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const events: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line) as Record<string, unknown>));
  const waitFor = (event: string) =>
    until(`hostile job ${child.pid}'s ${event} event`, () => {
      const seen = events.find((e) => e.event === event);
      if (!seen && child.exitCode !== null) throw new Error(`hostile job ${child.pid}: no ${event} event (exit ${child.exitCode}): ${stderr.trim()}`);
      return seen;
    }, { timeoutMs: 10_000, intervalMs: 25, detail: () => stderr.trim() });
  return { child, events, waitFor, exited };
}

/** How long to wait for the gate to act on what the hostile jobs did. */
const GATE_WAIT = { timeoutMs: 15_000, intervalMs: 25 };

/** What the engine owns in the control file: every slot's engine half and the domains' member masks. */
function engineHalves(): Buffer {
  const control = readFileSync(gate.controlPath);
  const members = Buffer.concat(Array.from({ length: L.GATE_MAX_DOMAINS }, (_, d) => control.subarray(L.GATE_DOMAIN_OFFSET + d * L.GATE_DOMAIN_SIZE, L.GATE_DOMAIN_OFFSET + d * L.GATE_DOMAIN_SIZE + 24)));
  return Buffer.concat([members, control.subarray(L.GATE_SLOT_OFFSET)]);
}

test('hostile jobs of other users write nothing another job obeys, hold the high job back once, and crash nobody', { skip }, async () => {
  const hs = gate.allocateSlot({ gpu: 0, priority: 'high', quotaBytes: 2 * GiB });
  const bs = gate.allocateSlot({ gpu: 0, priority: 'best-effort', quotaBytes: GiB });
  const ss = gate.allocateSlot({ gpu: 0, priority: 'best-effort', owner: NOBODY }); // claims to be mid-launch for ever
  const ts = gate.allocateSlot({ gpu: 0, priority: 'best-effort', owner: other }); // truncates its file when told
  const hostile = [spawnHostile(NOBODY, ['--in-launch', '1'], ss.env), spawnHostile(other, ['--in-launch', '0'], ts.env)];
  try {
    const engineWrote = engineHalves();
    await Promise.all(hostile.map((h) => h.waitFor('hostile')));

    // what the hostile jobs could open or map: their own activity file, nothing else
    for (const [h, own] of [[hostile[0], ss.slot], [hostile[1], ts.slot]] as const) {
      const ownFile = `${L.GATE_ACTIVITY_PREFIX}${own}`;
      const attempts = h.events.filter((e) => e.event === 'attempt');
      const allowed = attempts.filter((e) => e.ok === true).map((e) => `${String(e.file)} ${String(e.what)}`);
      assert.deepEqual(allowed.sort(), [`${ownFile} map-write`, `${ownFile} open-rdwr`], 'only its own activity file opened and mapped for writing');
      const others = attempts.filter((e) => e.file !== ownFile);
      const files = new Set(others.filter((e) => e.what === 'open-rdwr').map((e) => e.file));
      assert.deepEqual([...files].sort(), [L.GATE_CONTROL_FILE, ...[hs, bs, ss, ts].filter((s) => s.slot !== own).map((s) => `${L.GATE_ACTIVITY_PREFIX}${s.slot}`)].sort(), 'it tried every other file');
      for (const what of ['open-rdwr', 'map-write', 'mprotect-write', 'create', 'unlink']) {
        const tried = others.filter((e) => e.what === what);
        assert.ok(tried.length > 0, `it tried ${what}`);
        assert.deepEqual([...new Set(tried.map((e) => e.errno))], ['EACCES'], `${what} on others' files: EACCES`);
      }
      assert.deepEqual([...new Set(others.filter((e) => e.what === 'chmod').map((e) => e.errno))], ['EPERM']);
      assert.ok(others.filter((e) => e.what === 'truncate').every((e) => e.ok === false));
    }
    assert.ok(engineHalves().equals(engineWrote), 'the control file (priorities, pauses, quotas, domains) is what the engine wrote');

    const be = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '120'], bs.env);
    await be.ready;
    const high = driver.spawnFakejob(['train', '--kernel-ms', '1', '--duration', '120'], hs.env);
    await high.ready;
    await until('the engine to mark the stuck job', () => gate.readSlot(ss.slot).stuck, GATE_WAIT);
    await until('the high job to launch', () => gate.readSlot(hs.slot).launches > 20, GATE_WAIT);
    process.kill(hostile[1].child.pid!, 'SIGUSR1');
    assert.equal((await hostile[1].waitFor('truncated')).ok, true, 'the hostile job truncated its own activity file');
    const atTruncation = gate.readSlot(hs.slot).launches;
    await until('the high job to launch on after the truncation', () => gate.readSlot(hs.slot).launches > atTruncation + 50, GATE_WAIT);
    high.kill('SIGTERM');
    assert.equal(await high.exited, 0, 'the high job ran to its end: no SIGBUS');
    const highEnd = recordsOf(await driver.execlog(0), high.pid).at(-1)!.endNs;
    await until('the best-effort job to run once the high job left', () => gate.readSlot(bs.slot).launches > 0 && gate.readSlot(bs.slot).lastLaunchNs > BigInt(highEnd), GATE_WAIT);
    be.kill('SIGTERM');
    assert.equal(await be.exited, 0, 'the best-effort job ran to its end: no SIGBUS');

    const h = gate.readSlot(hs.slot);
    const b = gate.readSlot(bs.slot);
    assert.equal(h.stuckWaits, 1, 'the stuck hostile job held the high job back once (1 s in all), then never again');
    assert.equal(h.truncatedCount, 1, 'the truncated file read as idle to the high job');
    assert.deepEqual([h.priority, h.paused, h.quotaBytes, h.member, h.stuck], ['high', false, 2 * GiB, true, false]);
    assert.deepEqual([b.priority, b.paused, b.quotaBytes, b.member, b.stuck], ['best-effort', false, GiB, true, false]);
    assert.deepEqual([b.heldNs, b.stuckWaits], [0, 0], 'the hostile jobs are the best-effort job’s equals: it never waited for them');
    assert.deepEqual([gate.readSlot(ss.slot).stuck, gate.readSlot(ts.slot).stuck], [true, false], 'its reports against every slot marked none but itself');
    const log = await driver.execlog(0);
    assert.equal(recordsOf(log, high.pid).length, h.launches);
    assert.deepEqual(enqueuedUnderHigh(recordsOf(log, high.pid), recordsOf(log, be.pid)), [], 'the gate still holds the best-effort job back under the high one');
    assert.deepEqual(hostile.map((x) => x.child.exitCode), [null, null], 'the hostile jobs ran all along');
  } finally {
    for (const h of hostile) h.child.kill('SIGKILL');
    await Promise.all(hostile.map((h) => h.exited));
    for (const s of [hs, bs, ss, ts]) gate.releaseSlot(s.slot);
  }
});
