// MPS inside MIG slices on the simulated driver (two H100s, GPU 1 in MIG mode: GI 1 is a 3g.40gb, GI 2 a
// 2g.20gb): a daemon per slice (`fakegpu mps --gi`), its clients overlap on that slice's engine within
// their shares, a process in another slice is neither a client nor held back, and a slice whose daemon
// runs cannot be destroyed. Everything is read from the driver's execution record and its MPS table.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { FakejobHandle, KernelRecord, SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';

let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('h100x2-mig', 'gpushare-mig-mps-driver-', (rig) => ({ driver, nvml, dir } = rig));
const FAKEGPU = join(fakegpuBuildDir(), 'fakegpu');

const fakegpuMps = (...args: string[]): string => execFileSync(FAKEGPU, ['mps', '--state', driver.statePath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const sliceUuid = (gi: number): string => nvml.describeDevice(1).migDevices.find((m) => m.gpuInstanceId === gi)!.uuid;

interface SliceDaemon {
  gpuInstanceId: number;
  running: boolean;
  user: string;
  pipeDir: string;
  clients: Array<{ pid: number; share: number; active: boolean }>;
}
const sliceDaemons = (): SliceDaemon[] => (JSON.parse(fakegpuMps('status')) as Array<{ device: number; instances?: SliceDaemon[] }>)[1].instances ?? [];

function startSliceDaemon(gi: number, name: string): string {
  const pipeDir = join(dir, name, 'pipe');
  mkdirSync(pipeDir, { recursive: true });
  fakegpuMps('--device', '1', '--gi', String(gi), 'start', '--user', 'tester', '--pipe-dir', pipeDir);
  cleanups.push(() => fakegpuMps('--device', '1', '--gi', String(gi), 'stop'));
  return pipeDir;
}

/** Train loops of 10 ms kernels in slice `gi`, as MPS clients of `pipeDir` with these shares (no pipe: plain processes of the slice). */
function trainIn(gi: number, pipeDir: string | null, shares: number[]): FakejobHandle[] {
  return shares.map((share) => {
    const job = driver.spawnFakejob(['--mem', '1G', 'train', '--kernel-ms', '10', '--duration', '120'], {
      CUDA_VISIBLE_DEVICES: sliceUuid(gi),
      ...(pipeDir ? { CUDA_MPS_PIPE_DIRECTORY: pipeDir, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: String(share) } : {}),
    });
    cleanups.push(async () => {
      job.kill('SIGKILL');
      await job.exited;
    });
    return job;
  });
}

/** The slice's record once each of these pids has `kernels` kernels there after all of them had started (so all ran at once), or whether that never came. */
async function whileAllRan(gi: number, pids: number[], kernels = 10): Promise<KernelRecord[]> {
  for (let i = 0; i < 400; i++) {
    const records = await driver.execlog(1, gi);
    const firsts = pids.map((pid) => Math.min(...of(records, pid).map((r) => r.startNs)));
    const allStarted = Math.max(...firsts);
    if (Number.isFinite(allStarted) && pids.every((pid) => of(records, pid).filter((r) => r.startNs > allStarted).length >= kernels)) return records;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`pids ${pids.join(', ')} never all ran ${kernels} kernels at once in GI ${gi}`);
}

const overlaps = (a: KernelRecord[], b: KernelRecord[]): boolean => a.some((x) => b.some((y) => x.startNs < y.endNs && y.startNs < x.endNs));
const of = (records: KernelRecord[], pid: number): KernelRecord[] => records.filter((r) => r.pid === pid);
/** Nanoseconds in which at least one of these kernels ran. */
function unionNs(records: KernelRecord[]): number {
  const sorted = [...records].sort((a, b) => a.startNs - b.startNs);
  let total = 0;
  let [from, to] = [-1, -1];
  for (const r of sorted) {
    if (r.startNs > to) {
      total += to - from;
      [from, to] = [r.startNs, r.endNs];
    } else to = Math.max(to, r.endNs);
  }
  return total + (to - from);
}

test('two clients of a slice daemon at 50 % overlap on that slice; a process in another slice runs beside them, not as a client', async () => {
  const pipeDir = startSliceDaemon(1, 'half');
  const jobs = [...trainIn(1, pipeDir, [50, 50]), ...trainIn(2, null, [100])];
  const [pair, other] = [jobs.slice(0, 2).map((j) => j.pid), [jobs[2].pid]];
  const slice1 = await whileAllRan(1, pair);
  const slice2 = await whileAllRan(2, other);
  assert.ok(overlaps(of(slice1, pair[0]), of(slice1, pair[1])), 'the two clients ran at the same time on the slice');
  assert.ok(!slice1.some((r) => r.pid === other[0]) && !slice2.some((r) => pair.includes(r.pid)), 'each slice records only its own processes');
  const pairRan = await whileAllRan(1, pair, of(slice1, pair[0]).length + 10); // the pair is still running: the other slice ran beside it
  assert.ok(overlaps(of(await driver.execlog(1, 2), other[0]), pairRan), 'it ran while the pair ran: nothing made it wait for them');
  for (const j of jobs) j.kill('SIGKILL');
  const daemon = sliceDaemons().find((d) => d.gpuInstanceId === 1)!;
  assert.equal(daemon.running, true);
  assert.equal(daemon.pipeDir, pipeDir);
  assert.deepEqual(daemon.clients.map((c) => [c.pid, c.share]).sort(), pair.map((pid) => [pid, 50]).sort(), 'both, and only they, are clients of the slice daemon');
  assert.ok(!sliceDaemons().some((d) => d.clients.some((c) => c.pid === other[0])), 'the other slice has no daemon and no client');
});

test("clients at 100 % each share the slice's SMs as the model says: they overlap, and their work keeps the slice busy for at least 3/4 of their nominal time", async () => {
  const pipeDir = startSliceDaemon(1, 'full');
  const jobs = trainIn(1, pipeDir, [100, 100]);
  const pair = jobs.map((j) => j.pid);
  const mine = (await whileAllRan(1, pair, 20)).filter((r) => pair.includes(r.pid));
  for (const j of jobs) j.kill('SIGKILL');
  assert.ok(overlaps(of(mine, pair[0]), of(mine, pair[1])), 'they overlap');
  // shares adding up to 200 %: each runs at half its rate while both run, so the slice is busy at least as long as
  // the kernels' nominal 10 ms each, however they met (were the shares not added up, two at once would take half that);
  // 0.75: room for the model's 1 ms steps and 50 ms staleness on a loaded machine
  const nominalNs = mine.length * 10e6;
  assert.ok(unionNs(mine) >= 0.75 * nominalNs, `slice busy ${(unionNs(mine) / 1e6).toFixed(0)} ms for ${nominalNs / 1e6} ms of nominal work`);
});

test('a slice process without the daemon running is no MPS client: processes of a slice take turns', async () => {
  const jobs = trainIn(1, join(dir, 'nobody', 'pipe'), [50, 50]);
  const pair = jobs.map((j) => j.pid);
  const mine = await whileAllRan(1, pair);
  for (const j of jobs) j.kill('SIGKILL');
  assert.equal(overlaps(of(mine, pair[0]), of(mine, pair[1])), false, 'time-sliced on the slice engine');
});

test("a slice whose MPS daemon runs cannot be destroyed; start and stop refuse what is not there", async () => {
  startSliceDaemon(3, 'busy'); // GI 3, a 1g.10gb no process of the tests above ran in
  assert.throws(() => execFileSync(FAKEGPU, ['mig', '--state', driver.statePath, '--device', '1', 'destroy-ci', '3', '0'], { stdio: 'pipe' }), (e: Error & { stderr?: Buffer }) => {
    assert.match(String(e.stderr), /GPU instance 3 \(1g\.10gb\): its MPS daemon runs \(user tester;/);
    return true;
  });
  assert.throws(() => fakegpuMps('--device', '1', '--gi', '9', 'start'), (e: Error & { stderr?: Buffer }) => {
    assert.match(String(e.stderr), /device 1 has no GPU instance 9/);
    return true;
  });
  assert.throws(() => fakegpuMps('--device', '1', '--gi', '3', 'start', '--user', 'someone-else'), (e: Error & { stderr?: Buffer }) => {
    assert.match(String(e.stderr), /GPU instance 3 already has an MPS daemon of user tester/);
    return true;
  });
  assert.throws(() => fakegpuMps('--device', '0', '--gi', '1', 'start'), (e: Error & { stderr?: Buffer }) => {
    assert.match(String(e.stderr), /device 0 is not in MIG mode/);
    return true;
  });
});

test("terminate-client through a slice's daemon ends that client's work; a pid that is not its client is refused", async () => {
  const pipeDir = startSliceDaemon(4, 'terminate');
  const [job] = trainIn(4, pipeDir, [50]);
  await whileAllRan(4, [job.pid], 3);
  assert.throws(() => fakegpuMps('--device', '1', '--gi', '3', 'terminate-client', String(job.pid)), (e: Error & { stderr?: Buffer }) => {
    assert.match(String(e.stderr), new RegExp(`pid ${job.pid} is not an MPS client on GPU instance 3 of device 1`));
    return true;
  });
  fakegpuMps('--device', '1', '--gi', '4', 'terminate-client', String(job.pid));
  assert.notEqual(await job.exited, 0, 'its next launch failed (CUDA_ERROR_LAUNCH_FAILED), so the train loop gave up');
});
