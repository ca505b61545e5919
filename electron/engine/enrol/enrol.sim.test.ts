// Enrolment on a personal engine over the simulated driver: processes gpushare did not start, with the
// preload library loaded as `gpushare enrol --shell` loads it, join jobs at their first CUDA call and get
// the real mechanisms. Asserts on job states, what the library published in the gate slot, /proc run
// states and the simulated driver's execution record, never on a latency.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import type { JobView } from '../../../shared/jobs.js';
import { enqueuedUnderHigh, ensurePreloadBuilt, preloadProbePath, recordsOf } from '../gate/testing/launch-gate-sim.js';
import { LaunchGate, preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { listenOnSocket } from '../server/socket-server.js';
import { schedulerRig } from '../testing/scheduler-rig.js';
import { useSimulatedRig } from '../testing/simulated-rig.js';
import { shellLine } from './shell-line.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const MiB = 1024 ** 2;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-enrol-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

/** A rig with a gate and its socket: what a personal engine is. */
async function engineWithSocket(name: string) {
  const gate = LaunchGate.create({ dir: join(dir, name), heartbeatIntervalMs: 200 });
  const r = schedulerRig({ driver, nvml, dir }, name, { gate }, cleanups);
  const socketPath = join(dir, name, 'engine.sock');
  const server = await listenOnSocket(r.engine, socketPath);
  cleanups.push(() => server.close());
  return { r, gate, socketPath };
}

/** `script` run by a plain shell in a session of its own, with the library loaded as `gpushare enrol --shell bash` prints it. */
function plainShell(script: string, socketPath: string): ChildProcess {
  const env = { PATH: '/usr/bin:/bin', ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000' }; // the engine shares this busy test process: no flake from its 50 ms
  const child = spawn('bash', ['-c', `${shellLine('bash', preloadLibraryPath())}\n${script}\nwait`], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  return child;
}

function lines(child: ChildProcess): { next(): Promise<Record<string, unknown>>; all: Array<Record<string, unknown>> } {
  const all: Array<Record<string, unknown>> = [];
  const waiting: Array<(l: Record<string, unknown>) => void> = [];
  let read = 0;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    all.push(JSON.parse(line) as Record<string, unknown>);
    const w = waiting.shift();
    if (w) w(all[read++]);
  });
  return { all, next: () => (read < all.length ? Promise.resolve(all[read++]) : new Promise((resolve) => waiting.push(resolve))) };
}

const runState = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1][0];
const byPid = (jobs: JobView[], pid: number): JobView | undefined => jobs.find((j) => j.pid === pid && j.enrolled);

test('a script from a plain shell enrols; dragged to Best-effort beside a high job its launches are gated and its CPU runs on; dragged back it runs at once', { skip }, async () => {
  const { r, gate, socketPath } = await engineWithSocket('lanes');
  const high = await r.engine.call('jobs.submit', { argv: [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60'], cwd: dir, gpu: 0, priority: 'high' });
  await r.until('the high job runs', async () => (await r.job(high.id))?.state === 'running');
  const shell = plainShell(`"${FAKEJOB}" --mem 1G train --kernel-ms 2 --duration 60 &`, socketPath);
  const ready = await lines(shell).next();
  const pid = Number(ready.pid);
  const enrolled = await r.until('the script enrolled', async () => byPid(await r.engine.call('jobs.list', {}), pid));
  assert.ok(enrolled.managed && enrolled.enrolled?.by === 'tree', `an ordinary job, marked enrolled: ${JSON.stringify(enrolled.enrolled)}`);
  assert.equal(enrolled.owner, (await r.engine.call('session.whoami', {})).user);
  await r.engine.call('jobs.setPriority', { job: enrolled.id, priority: 'best-effort' });
  const states: string[] = [];
  const runStates: string[] = [];
  for (let i = 0; i < 16; i++) {
    await r.tick();
    states.push((await r.job(enrolled.id))!.state);
    runStates.push(runState(pid));
  }
  const slot = gate.slotsInUse().find((s) => gate.readSlot(s).processes.some((p) => p.pid === pid))!;
  assert.notEqual(slot, undefined, 'its process is in a gate slot');
  assert.ok(states.includes('gated'), `gated while the high job ran: ${states.join(' ')}`);
  assert.ok(gate.readSlot(slot).gatedNs > 0, 'its launches waited at the gate');
  assert.ok(!runStates.some((s) => s === 'T' || s === 't'), `never stopped: ${runStates.join('')}`);
  const highPid = (await r.job(high.id))!.pid!;
  const log = await driver.execlog(0);
  assert.ok(recordsOf(log, highPid).length > 0, 'the high job ran');
  assert.deepEqual(enqueuedUnderHigh(recordsOf(log, highPid), recordsOf(log, pid)), [], 'no enrolled kernel was enqueued under a high one');
  const before = gate.readSlot(slot).launches;
  await r.engine.call('jobs.setPriority', { job: enrolled.id, priority: 'high' });
  await r.tick();
  await r.tick();
  const after = gate.readSlot(slot);
  assert.ok(after.launches > before, `it launches again once dragged back (${before} → ${after.launches})`);
  assert.equal((await r.job(enrolled.id))!.state, 'running');
});

test('the quota holds across an enrolled job: a second process of its process group is refused CUDA_ERROR_OUT_OF_MEMORY past it', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('quota');
  const probe = preloadProbePath();
  // A holds 256 MiB; after the test's line, B (same shell, same process group) asks for 256 MiB more
  const shell = plainShell(`"${probe}" alloc:${256 * MiB} sleep:60000000 &\nread go\n"${probe}" alloc:${256 * MiB}`, socketPath);
  const out = lines(shell);
  const readyA = await out.next();
  const allocA = await out.next();
  assert.equal(allocA.code, 0, 'A allocates within no quota');
  const job = await r.until('A enrolled', async () => byPid(await r.engine.call('jobs.list', {}), Number(readyA.pid)));
  await r.engine.call('jobs.setQuota', { job: job.id, bytes: 384 * MiB });
  shell.stdin!.write('go\n');
  const readyB = await out.next();
  const allocB = await out.next();
  assert.equal(allocB.code, 2, `B is refused past the job's quota (CUDA_ERROR_OUT_OF_MEMORY): ${JSON.stringify(allocB)}`);
  const jobs = await r.engine.call('jobs.list', {});
  assert.equal(jobs.filter((j) => j.enrolled).length, 1, 'one job for both');
  assert.equal(byPid(jobs, Number(readyA.pid))?.id, job.id);
  await r.until('the refusal is counted as an out-of-memory alert', async () => (await r.engine.call('alerts.list', {})).some((a) => a.kind === 'out-of-memory' && a.jobId === job.id));
  assert.notEqual(readyB.pid, readyA.pid);
});

test('the job ends when its last process exits', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('ends');
  const shell = plainShell(`"${preloadProbePath()}" alloc:${64 * MiB} sleep:300000`, socketPath);
  const ready = await lines(shell).next();
  const job = await r.until('it enrolled', async () => byPid(await r.engine.call('jobs.list', {}), Number(ready.pid)));
  const ended = await r.until('it ended', async () => {
    const j = await r.job(job.id);
    return j && j.state === 'finished' ? j : undefined;
  });
  assert.match(ended.history.at(-1)!.reason, /last process exited/);
});
