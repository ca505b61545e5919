// Enrolment on a personal engine over the simulated driver: processes gpushare did not start, with the
// preload library loaded as `gpushare enrol --shell` loads it, join jobs at their first CUDA call and get
// the real mechanisms. Asserts on job states, what the library published in the gate slot, /proc run
// states and the simulated driver's execution record, never on a latency.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import type { ApiParams } from '../../../shared/api.js';
import type { JobView } from '../../../shared/jobs.js';
import { enqueuedUnderHigh, ensurePreloadBuilt, preloadProbePath, recordsOf } from '../gate/testing/launch-gate-sim.js';
import { LaunchGate, preloadLibraryPath } from '../gate/launch-gate.js';
import type { NvmlBinding } from '../gpu/nvml-types.js';
import type { SimulatedDriver } from '../gpu/simulated-driver.js';
import { fakegpuBuildDir } from '../paths.js';
import { listenOnSocket } from '../server/socket-server.js';
import type { AttachSchedulerOptions } from '../scheduler/attach.js';
import { schedulerRig, socketSchedulerRig, type SchedulerRig } from '../testing/scheduler-rig.js';
import { killJobProcessesOn, useSimulatedRig } from '../testing/simulated-rig.js';
import { CLI_ENV, CLI_PATH } from '../../cli/testing/compiled-cli.js';
import { JobStore } from '../store/job-store.js';
import { UsageStore } from '../store/usage-store.js';
import { MAX_ENROLLED_JOBS_TOTAL } from './enrolment.js';
import { shellLine } from './shell-line.js';

const FAKEJOB = join(fakegpuBuildDir(), 'fakejob');
const MiB = 1024 ** 2;
let driver: SimulatedDriver;
let nvml: NvmlBinding;
let dir: string;
const cleanups = useSimulatedRig('a100-40gb', 'gpushare-enrol-', (rig) => ({ driver, nvml, dir } = rig));
const skip = ensurePreloadBuilt() ? false : 'native/preload is not built (make -C native/preload)';

/** A rig with a gate and its socket: what a personal engine is. */
const engineWithSocket = (name: string, options: Partial<AttachSchedulerOptions> = {}) => socketSchedulerRig({ driver, nvml, dir }, name, options, cleanups);

/** A `gpushare run` job: managed jobs outlive their engine by design, so the file's cleanups end it. */
async function submit(r: SchedulerRig, params: ApiParams<'jobs.submit'>) {
  const job = await r.engine.call('jobs.submit', params);
  cleanups.push(() => killJobProcessesOn(driver, job.id));
  return job;
}

/** `script` run by a plain shell in a session of its own, with the library loaded as `gpushare enrol --shell bash` prints it. */
function plainShell(script: string, socketPath: string): ChildProcess {
  const env = { PATH: '/usr/bin:/bin', HOME: dir, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', GPUSHARE_PRELOAD_DEBUG: '1' }; // the engine shares this busy test process: no flake from its 50 ms
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
  const high = await submit(r, { argv: [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '60'], cwd: dir, gpu: 0, priority: 'high' });
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
  const shell = plainShell(`"${probe}" alloc:${256 * MiB} sleep:60000000 &\nread go\n"${probe}" alloc:${64 * MiB} alloc:${256 * MiB} sleep:60000000`, socketPath);
  const out = lines(shell);
  const readyA = await out.next();
  const allocA = await out.next();
  assert.equal(allocA.code, 0, 'A allocates within no quota');
  const job = await r.until('A enrolled', async () => byPid(await r.engine.call('jobs.list', {}), Number(readyA.pid)));
  await r.engine.call('jobs.setQuota', { job: job.id, bytes: 384 * MiB });
  shell.stdin!.write('go\n');
  const readyB = await out.next();
  assert.equal((await out.next()).code, 0, 'B allocates within the quota');
  const allocB = await out.next();
  assert.equal(allocB.code, 2, `B is refused past the job's quota (CUDA_ERROR_OUT_OF_MEMORY): ${JSON.stringify(allocB)}`);
  const jobs = await r.engine.call('jobs.list', {});
  assert.equal(jobs.filter((j) => j.enrolled).length, 1, 'one job for both');
  assert.equal(byPid(jobs, Number(readyA.pid))?.id, job.id);
  await r.until('the refusal is counted as an out-of-memory alert', async () => (await r.engine.call('alerts.list', {})).some((a) => a.kind === 'out-of-memory' && a.jobId === job.id));
  assert.notEqual(readyB.pid, readyA.pid);
  const used = await r.until('both processes\' memory is the job\'s', async () => {
    const j = await r.job(job.id);
    return j && (j.usedMemory ?? 0) >= 320 * MiB ? j.usedMemory : undefined;
  });
  assert.equal(used, 320 * MiB, 'A\'s 256 MiB and B\'s 64 MiB, as the driver shows them');
  const listed = await r.engine.call('jobs.list', {});
  assert.equal(listed.some((j) => j.id === `p${readyB.pid}`), false, 'B is no unmanaged process of its own');
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

test('gpushare enrol -- CMD: its options reach the engine from the enrol process itself, and the command enrols with them', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('command');
  const env = { ...process.env, ...CLI_ENV, ...driver.env, GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', GPUSHARE_PRELOAD_DEBUG: '1' };
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI_PATH, 'enrol', '--priority', 'best-effort', '--mem', '512M', '--', preloadProbePath(), `alloc:${256 * MiB}`, `alloc:${384 * MiB}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  assert.equal(out.code, 0, out.stderr);
  const allocs = out.stdout.split('\n').filter((l) => l.includes('"op":"alloc"')).map((l) => JSON.parse(l) as { code: number });
  assert.deepEqual(allocs.map((a) => a.code), [0, 2], 'the second allocation passes the 512M quota: CUDA_ERROR_OUT_OF_MEMORY');
  const id = /enrolled as (j\d+)/.exec(out.stderr)?.[1];
  assert.ok(id, out.stderr);
  const job = (await r.job(id))!;
  assert.equal(job.enrolled?.by, 'command');
  assert.equal(job.priority, 'best-effort');
  assert.equal(job.memoryQuotaBytes, 512 * MiB);
});

test('no engine answering: the process runs on untouched, and says why once with GPUSHARE_PRELOAD_DEBUG=1', { skip }, async () => {
  const env = { PATH: '/usr/bin:/bin', ...driver.env, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: join(dir, 'nobody', 'engine.sock'), GPUSHARE_PRELOAD_DEBUG: '1' };
  const out = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
    const child = spawn(preloadProbePath(), [`alloc:${64 * MiB}`, 'launch:3:100', `alloc:${64 * MiB}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', () => resolve({ stdout, stderr }));
  });
  assert.equal(out.stdout.split('\n').filter((l) => l.includes('"code":0')).length, 3, out.stdout);
  assert.equal(out.stderr.match(/not enrolled/g)?.length, 1, `said once: ${out.stderr}`);
  assert.match(out.stderr, /not enrolled: no engine answers; running unmanaged/);
});

/** `command` in a private mount namespace whose /etc is an overlay of the real one (nothing of this machine's /etc changes), after `setup` there. */
function inPrivateEtc(name: string, setup: string, command: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const upper = join(dir, name, 'etc-upper');
  const work = join(dir, name, 'etc-work');
  mkdirSync(upper, { recursive: true });
  mkdirSync(work, { recursive: true });
  const script = `mount --make-rprivate / && mount -t overlay overlay -o lowerdir=/etc,upperdir=${upper},workdir=${work} /etc && ${setup} && "$@"`; // not exec: a direct child of the engine (this test) is one of its own
  return new Promise((resolve) => {
    const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', ...command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', () => resolve({ stdout, stderr }));
  });
}

test('the administrator\'s kill switch: with /etc/gpushare/preload-off present nothing enrols; without it the same program does', { skip: skip || (process.getuid?.() === 0 ? false : 'needs root for a private mount namespace') }, async () => {
  const { r, socketPath } = await engineWithSocket('killswitch');
  const env = { PATH: '/usr/bin:/bin', ...driver.env, LD_PRELOAD: preloadLibraryPath(), GPUSHARE_SOCKET: socketPath, GPUSHARE_ENROL_WAIT_MS: '3000', GPUSHARE_PRELOAD_DEBUG: '1' };
  const probeRun = [preloadProbePath(), `alloc:${64 * MiB}`];
  const off = await inPrivateEtc('off', 'mkdir -p /etc/gpushare && touch /etc/gpushare/preload-off', probeRun, env);
  assert.match(off.stderr, /not enrolled: the administrator's kill switch \/etc\/gpushare\/preload-off is present/);
  assert.match(off.stdout, /"op":"alloc".*"code":0/, 'it runs on untouched');
  assert.equal((await r.engine.call('jobs.list', { includeFinished: true })).filter((j) => j.enrolled).length, 0, 'nothing enrolled');
  const on = await inPrivateEtc('on', 'true', probeRun, env);
  assert.match(on.stderr, /enrolled as j\d+/);
  assert.equal((await r.engine.call('jobs.list', { includeFinished: true })).filter((j) => j.enrolled).length, 1);
  assert.equal(existsSync('/etc/gpushare/preload-off'), false, "this machine's /etc is untouched");
});

test('an enrolled job survives an engine restart: re-adopted in its own slot, joined by its group\'s next process, ended by its last', { skip }, async () => {
  const dbPath = join(dir, 'restart.db');
  const open = async () => {
    const usage = await UsageStore.open({ path: dbPath }); // migrates the schema the job store keeps its jobs in
    const jobStore = await JobStore.open(dbPath);
    return { jobStore, close: async () => (await jobStore.close(), await usage.close()) };
  };
  const socketPath = join(dir, 'restart-engine.sock');
  const engine = async (store: JobStore) => {
    const r = schedulerRig({ driver, nvml, dir }, 'restart', { gate: undefined, jobStore: store }, cleanups); // the gate in its runtime dir, resumed by the next engine
    await r.attached.ready;
    const server = await listenOnSocket(r.engine, socketPath);
    cleanups.push(() => server.close().catch(() => undefined)); // the second engine's socket too: left open it kept the test file from ever exiting
    return { r, server, gate: r.attached.scheduler.act.options.gate as LaunchGate };
  };
  const first = await open();
  const a = await engine(first.jobStore);
  const probe = preloadProbePath();
  const shell = plainShell(`"${probe}" alloc:${64 * MiB} sleep:60000000 &\nread go\n"${probe}" alloc:${64 * MiB} sleep:60000000`, socketPath);
  const out = lines(shell);
  const pid = Number((await out.next()).pid);
  const job = await a.r.until('it enrolled', async () => byPid(await a.r.engine.call('jobs.list', {}), pid));
  await a.r.engine.call('jobs.setPriority', { job: job.id, priority: 'best-effort' });
  const slot = a.gate.slotsInUse().find((s) => a.gate.readSlot(s).processes.some((p) => p.pid === pid))!;
  assert.notEqual(slot, undefined);
  await a.server.close();
  assert.deepEqual(await a.r.stop(), []);
  await first.close();

  const second = await open();
  cleanups.push(() => second.close());
  const b = await engine(second.jobStore);
  const adopted = (await b.r.job(job.id))!;
  assert.equal(adopted.pid, pid, 'the same process');
  assert.ok(adopted.enrolled, 'still marked enrolled');
  assert.equal(adopted.priority, 'best-effort');
  assert.match(adopted.history.at(-1)!.reason, /re-adopted by a new engine/);
  assert.ok(b.gate.readSlot(slot).processes.some((p) => p.pid === pid && p.alive), 'in the slot it had');
  assert.equal(b.gate.slotFiles(slot).generation > 0, true);
  shell.stdin!.write('go\n');
  await out.next(); // A's alloc
  const pidB = Number((await out.next()).pid);
  const joined = await b.r.until('the group\'s next process enrolled', async () => byPid(await b.r.engine.call('jobs.list', {}), pidB) ?? (b.gate.readSlot(slot).processes.some((p) => p.pid === pidB) ? adopted : undefined));
  assert.equal(joined.id, job.id, 'it joined the adopted job');
  process.kill(-shell.pid!, 'SIGKILL');
  const ended = await b.r.until('it ended', async () => {
    const j = await b.r.job(job.id);
    return j && j.state === 'finished' ? j : undefined;
  });
  assert.match(ended.history.at(-1)!.reason, /last process exited/);
});

test('a process of a job gpushare started never enrols, even with its managed-job marks removed from its environment', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('managed');
  const script = `GPUSHARE_SOCKET='${socketPath}' GPUSHARE_ENROL_WAIT_MS=3000 GPUSHARE_PRELOAD_DEBUG=1 env -u GPUSHARE_JOB_ID -u GPUSHARE_GATE -u GPUSHARE_GATE_SLOT '${preloadProbePath()}' alloc:${MiB}; echo done`;
  const job = await submit(r, { argv: ['sh', '-c', script], cwd: dir, gpu: 0 });
  const ended = await r.until('the managed job ended', async () => {
    const j = await r.job(job.id);
    return j && j.state === 'finished' ? j : undefined;
  });
  const log = readFileSync(ended.logPath!, 'utf8');
  assert.match(log, new RegExp(`not enrolled: the engine refused: process \\d+ belongs to ${job.id}, which gpushare started`), log);
  assert.equal((await r.engine.call('jobs.list', { includeFinished: true })).filter((j) => j.enrolled).length, 0);
});

test('past the gate\'s capacity a process runs unmanaged and the engine raises an alert naming it and why', { skip }, async () => {
  const { r, gate, socketPath } = await engineWithSocket('full');
  const taken: number[] = [];
  for (;;) {
    try {
      taken.push(gate.allocateSlot({ gpu: 0, priority: 'normal' }).slot);
    } catch {
      break; // every slot is in use
    }
  }
  cleanups.push(() => taken.forEach((s) => gate.releaseSlot(s)));
  const shell = plainShell(`"${preloadProbePath()}" alloc:${MiB}`, socketPath);
  const out = lines(shell);
  await out.next();
  assert.equal((await out.next()).code, 0, 'it runs on');
  const alert = await r.until('the alert', async () => (await r.engine.call('alerts.list', {})).find((a) => a.message.startsWith('Enrolment refused')));
  assert.match(alert.message, /preload_probe.*could not enrol and runs unmanaged: All 64 launch-gate slots are in use/);
  assert.equal((await r.engine.call('jobs.list', { includeFinished: true })).filter((j) => j.enrolled).length, 0, 'no job left behind');
});

test('terminating an enrolled job ends its processes, not the process group of the shell that started them', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('terminate');
  const probe = preloadProbePath();
  const shell = plainShell(`"${probe}" alloc:${MiB} sleep:60000000 &\nsleep 0.3\n"${probe}" alloc:${MiB} sleep:60000000 &\nsleep 60`, socketPath);
  const out = lines(shell);
  const a = Number((await out.next()).pid);
  await out.next();
  const b = Number((await out.next()).pid);
  const job = await r.until('one job for both', async () => {
    const j = byPid(await r.engine.call('jobs.list', {}), a);
    return j && (r.attached.scheduler.act.options.gate!.readSlot!(r.attached.scheduler.table.get(j.id)!.slot!).processes.filter((p) => p.alive).length === 2) ? j : undefined;
  });
  await r.engine.call('jobs.terminate', { job: job.id });
  await r.until('its processes ended', async () => !existsSync(`/proc/${a}`) && !existsSync(`/proc/${b}`));
  assert.equal(shell.exitCode, null, 'the shell that started them runs on');
  assert.ok(existsSync(`/proc/${shell.pid}`));
  const ended = await r.until('the job ended', async () => {
    const j = await r.job(job.id);
    return j && j.state === 'finished' ? j : undefined;
  });
  assert.equal(ended.id, job.id);
});

test('an idle enrolled job is parked for a job that needs its memory; its next call, seen through the park file it was handed, brings it back', { skip }, async () => {
  const GiB = 1024 ** 3;
  const { r, socketPath } = await engineWithSocket('park', { autoPark: { idleMs: 300, wakePollMs: 10 } });
  const probe = preloadProbePath();
  const shell = plainShell(`"${probe}" alloc:${30 * GiB} wait alloc:${MiB} sleep:60000000`, socketPath);
  const out = lines(shell);
  const pid = Number((await out.next()).pid);
  assert.equal((await out.next()).code, 0);
  const job = await r.until('it enrolled, holding 30 GiB', async () => {
    const j = byPid(await r.engine.call('jobs.list', {}), pid);
    return j && j.usedMemory === 30 * GiB ? j : undefined;
  });
  const other = await submit(r, { argv: [FAKEJOB, '--mem', '20G', 'train', '--kernel-ms', '2', '--duration', '1'], cwd: dir, gpu: 0, memoryRequestBytes: 20 * GiB });
  await r.until('the enrolled job parked for it', async () => (await r.job(job.id))?.state === 'parked', 80);
  await r.until('the other job finished', async () => (await r.job(other.id))?.state === 'finished', 120);
  shell.stdin!.write('go\n'); // its next allocation: the process waits inside the driver, the park file says so
  let alloc = await out.next();
  if (alloc.op === 'wait') alloc = await out.next();
  assert.equal(alloc.code, 0, `its call returns once restored: ${JSON.stringify(alloc)}`);
  const back = await r.until('it runs again', async () => {
    const j = await r.job(job.id);
    return j?.state === 'running' ? j : undefined;
  });
  const states = back.history.map((h) => h.state);
  assert.ok(states.includes('parked') && states.includes('unparking'), states.join(' '));
  assert.match(back.history.find((h) => h.state === 'unparking')!.reason, /its program called CUDA again/, 'woken by its call, not by a person');
});

test('a program that only reads NVML (a monitor like nvidia-smi) never enrols: enrolment waits for the CUDA driver', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('nvml-only');
  const script = `import ctypes
n = ctypes.CDLL('libnvidia-ml.so.1')
h = ctypes.c_void_p()
ok = n.nvmlInit_v2() == 0 and n.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
m = (ctypes.c_ulonglong * 3)()
print('{"op":"nvml","code":%d,"init":%d}' % (n.nvmlDeviceGetMemoryInfo(h, m), ok), flush=True)`;
  const shell = plainShell(`/usr/bin/python3 -c "${script.replace(/"/g, '\\"')}"`, socketPath);
  let stderr = '';
  shell.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const reading = await lines(shell).next();
  assert.deepEqual(reading, { op: 'nvml', code: 0, init: 1 }, stderr);
  await r.tick();
  assert.match(stderr, /dlsym\(nvmlDeviceGetMemoryInfo\) -> hook/, 'its NVML call went through the library');
  assert.doesNotMatch(stderr, /enrolled as|not enrolled/, 'it did not ask to enrol');
  assert.equal((await r.engine.call('jobs.list', { includeFinished: true })).filter((j) => j.enrolled).length, 0);
});

test('enrolled jobs take at most 48 of the gate\'s 64 slots: the rest stay for gpushare run jobs', { skip }, async () => {
  const { r, socketPath } = await engineWithSocket('total');
  const probe = preloadProbePath();
  const shells = Array.from({ length: MAX_ENROLLED_JOBS_TOTAL }, () => plainShell(`"${probe}" alloc:${MiB} sleep:60000000`, socketPath));
  await Promise.all(shells.map(async (sh) => (await lines(sh).next(), undefined)));
  await r.until('48 enrolled jobs', async () => (await r.engine.call('jobs.list', {})).filter((j) => j.enrolled).length === MAX_ENROLLED_JOBS_TOTAL || undefined, 80);
  const extra = lines(plainShell(`"${probe}" alloc:${MiB}`, socketPath));
  await extra.next();
  assert.equal((await extra.next()).code, 0, 'the 49th runs on, unmanaged');
  const alert = await r.until('the alert', async () => (await r.engine.call('alerts.list', {})).find((a) => a.message.startsWith('Enrolment refused')));
  assert.match(alert.message, /48 enrolled jobs run, the most this box takes/);
  const managed = await submit(r, { argv: [FAKEJOB, '--mem', '1G', 'train', '--kernel-ms', '2', '--duration', '5'], cwd: dir, gpu: 0 });
  await r.until('a gpushare run job still gets a slot', async () => (await r.job(managed.id))?.state === 'running');
  for (const sh of shells) process.kill(-sh.pid!, 'SIGKILL');
});
